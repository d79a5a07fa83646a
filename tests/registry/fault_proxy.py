#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# A fault-injecting HTTP proxy in front of the test registry, loopback only,
# for the retry, resume and redirect tests: python3 fault_proxy.py PORT
# UPSTREAM MODE LOG. Every request is logged to LOG as one line
# "METHOD PATH range=R auth=yes|no".
#   errors:   each blob's first GET answers 500, its second 429 with
#             Retry-After: 1, then requests pass.
#   cut:      each blob's first GET sends the headers and half the body,
#             then closes the connection; later GETs pass (Range included).
#   pass:     nothing injected (a request counter for the tests).
#   slow:     every blob GET waits 2 s before it is answered (an import
#             long enough to be killed in the middle).
#   norange:  each blob's first GET is cut as in `cut`; later GETs ignore
#             Range and send the whole blob again (200).
#   norange-flip: as norange, but the whole blob sent again has one byte
#             changed in its first quarter (what the first GET delivered).
#   stall:    each blob of more than 100 kB is sent in two halves; the
#             second goes only once the file LOG.release exists (a reader
#             has seen entries from the first half). After 20 s without it
#             the proxy logs "stall-timeout" and sends it anyway.
#   redirect: /v2/ paths need HTTP Basic auth (any user, password "pw");
#             blob GETs are redirected (307) to http://localhost:PORT/r/…,
#             another host name, which serves the blob without auth.
import http.server, sys, threading, time, urllib.error, urllib.request

port, upstream, mode, log_path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
seen = {}
lock = threading.Lock()


def log(line):
    with lock, open(log_path, 'a') as f:
        f.write(line + '\n')


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def forward(self, path, with_range=True):
        req = urllib.request.Request(upstream + path)
        for h in ('Accept', 'Range') if with_range else ('Accept',):
            if self.headers.get(h):
                req.add_header(h, self.headers[h])
        try:
            resp = urllib.request.urlopen(req)
            status, headers, body = resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as e:
            status, headers, body = e.code, e.headers, e.read()
        return status, headers, body

    def send(self, status, headers, body, cut=False):
        self.send_response(status)
        for h in ('Content-Type', 'Docker-Content-Digest', 'Content-Range', 'WWW-Authenticate', 'Retry-After',
                  'Location'):
            if headers and headers.get(h):
                self.send_header(h, headers[h])
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        if cut:
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(body)

    def do_GET(self):
        auth = 'yes' if self.headers.get('Authorization') else 'no'
        log('GET %s range=%s auth=%s host=%s' % (self.path, self.headers.get('Range', '-'), auth,
                                                 self.headers.get('Host', '-')))
        path = self.path
        if mode == 'redirect':
            if path.startswith('/r/'):
                status, headers, body = self.forward(path[2:])
                return self.send(status, headers, body)
            import base64
            a = self.headers.get('Authorization', '')
            if not (a.startswith('Basic ') and base64.b64decode(a[6:]).decode().endswith(':pw')):
                return self.send(401, {'WWW-Authenticate': 'Basic realm="proxy"'}, b'{}')
            if '/blobs/' in path:
                return self.send(307, {'Location': 'http://localhost:%d/r%s' % (port, path)}, b'')
        is_blob = '/blobs/' in path
        with lock:
            n = seen[path] = seen.get(path, 0) + 1
        if is_blob and mode == 'slow':
            time.sleep(2)
        if is_blob and mode == 'errors' and n == 1:
            return self.send(500, None, b'{"errors":[{"code":"UNKNOWN","message":"injected"}]}')
        if is_blob and mode == 'errors' and n == 2:
            return self.send(429, {'Retry-After': '1'}, b'')
        if is_blob and mode in ('norange', 'norange-flip'):
            status, headers, body = self.forward(path, with_range=False)
            if n > 1 and mode == 'norange-flip' and len(body) > 1000:
                body = body[:len(body) // 4] + bytes([body[len(body) // 4] ^ 1]) + body[len(body) // 4 + 1:]
            return self.send(status, headers, body, cut=(n == 1 and len(body) > 1000))
        status, headers, body = self.forward(path)
        if is_blob and mode == 'stall' and status == 200 and len(body) > 100000:
            return self.send_stalled(status, headers, body)
        self.send(status, headers, body, cut=(is_blob and mode == 'cut' and n == 1 and len(body) > 1000))

    def send_stalled(self, status, headers, body):
        self.send_response(status)
        for h in ('Content-Type', 'Docker-Content-Digest'):
            if headers.get(h):
                self.send_header(h, headers[h])
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body[:len(body) // 2])
        self.wfile.flush()
        import os
        for _ in range(400):
            if os.path.exists(log_path + '.release'):
                break
            time.sleep(0.05)
        else:
            log('stall-timeout %s' % self.path)
        self.wfile.write(body[len(body) // 2:])


http.server.ThreadingHTTPServer(('127.0.0.1', port), Handler).serve_forever()
