#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# A minimal Docker registry token server for the tests (loopback only):
# GET /token?service=S&scope=repository:NAME:pull with HTTP Basic auth
# (USER:PASSWORD from argv) answers {"token": JWT, "expires_in": N}; the JWT is
# RS256-signed with KEY and carries the signing certificate in its x5c header,
# which the registry checks against its auth.token.rootcertbundle.
# Wrong credentials: 401. Anonymous: a token with no access (the registry then
# answers 401 itself). Every request is logged to LOG (one line, no secrets).
import base64, http.server, json, sys, time, urllib.parse, uuid

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import serialization

port, key_path, cert_path, issuer, user, password, log_path = sys.argv[1:8]
key = open(key_path, 'rb').read()
cert = x509.load_pem_x509_certificate(open(cert_path, 'rb').read())
x5c = [base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        auth = self.headers.get('Authorization', '')
        who = None
        if auth.startswith('Basic '):
            u, _, p = base64.b64decode(auth[6:]).decode().partition(':')
            if (u, p) != (user, password):
                with open(log_path, 'a') as f:
                    f.write('401 %s\n' % url.path)
                self.send_response(401)
                self.end_headers()
                return
            who = u
        access = []
        for scope in q.get('scope', []):
            kind, _, rest = scope.partition(':')
            name, _, actions = rest.rpartition(':')
            if who and kind == 'repository':
                access.append({'type': kind, 'name': name, 'actions': actions.split(',')})
        now = int(time.time())
        claims = {'iss': issuer, 'sub': who or '', 'aud': q.get('service', [''])[0], 'exp': now + 300,
                  'nbf': now - 10, 'iat': now, 'jti': str(uuid.uuid4()), 'access': access}
        token = jwt.encode(claims, key, algorithm='RS256', headers={'x5c': x5c})
        body = json.dumps({'token': token, 'expires_in': 300}).encode()
        with open(log_path, 'a') as f:
            f.write('200 %s user=%s scope=%s\n' % (url.path, who or '-', ','.join(q.get('scope', []))))
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)


http.server.ThreadingHTTPServer(('127.0.0.1', int(port)), Handler).serve_forever()
