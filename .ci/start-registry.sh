#!/usr/bin/env bash
# Starts Debian's docker-registry (the distribution registry) for the
# registry tests, loopback only, ports 5500-5503, all on one storage root:
#   5500  plain HTTP, anonymous (tests push their fixtures here with skopeo)
#   5501  HTTPS (a test CA) + htpasswd Basic auth
#   5502  plain HTTP + Bearer token auth (auth.token), token server on 5503
#   (5504-5508, 5510-5513: the fault proxies the tests start; 5509: nothing, for offline tests)
#         (tests/registry/token_server.py, RS256 JWTs with an x5c header)
# State: $TRAINIMG_REGISTRY_STATE (default ${TMPDIR:-/tmp}/trainimg-registry)
# holds env (KEY=VALUE lines the tests read), ca.pem, the configs, logs and
# pids. Stop: kill $(cat STATE/*.pid). Idempotent: answers "already running".
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
state=${TRAINIMG_REGISTRY_STATE:-${TMPDIR:-/tmp}/trainimg-registry}
user=trainimg
password=registry-test-secret
up() { curl -s -o /dev/null --max-time 2 "$@"; }
if [ -f "$state/env" ] && up http://127.0.0.1:5500/v2/ && up --cacert "$state/ca.pem" https://127.0.0.1:5501/v2/ \
  && up http://127.0.0.1:5502/v2/ && up http://127.0.0.1:5503/token; then
  echo "registry: already running ($state)"
  exit 0
fi
command -v docker-registry >/dev/null || { echo "registry: docker-registry is not installed (.ci/install-deps.sh)" >&2; exit 1; }
for f in "$state"/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
mkdir -p "$state/storage"
cd "$state"
# A test CA, a server certificate for 127.0.0.1, and the token signing pair.
if [ ! -f ca.pem ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 -subj /CN=trainimg-test-ca 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 3650 \
    -extfile san.ext 2>/dev/null
  openssl req -x509 -newkey rsa:2048 -nodes -keyout token.key -out token.pem -days 3650 -subj /CN=trainimg-token 2>/dev/null
fi
htpasswd -Bbc htpasswd "$user" "$password" 2>/dev/null
common="version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $state/storage}, delete: {enabled: true}}"
cat >anon.yml <<YML
$common
http: {addr: 127.0.0.1:5500, secret: trainimg-test}
YML
cat >basic.yml <<YML
$common
http: {addr: 127.0.0.1:5501, secret: trainimg-test, tls: {certificate: $state/server.pem, key: $state/server.key}}
auth: {htpasswd: {realm: trainimg-test, path: $state/htpasswd}}
YML
cat >token.yml <<YML
$common
http: {addr: 127.0.0.1:5502, secret: trainimg-test}
auth: {token: {realm: "http://127.0.0.1:5503/token", service: trainimg-registry, issuer: trainimg-token-server, rootcertbundle: $state/token.pem}}
YML
for name in anon basic token; do
  nohup docker-registry serve "$name.yml" >"$name.log" 2>&1 &
  echo $! >"$name.pid"
done
: >token-server.log
nohup /usr/bin/python3 "$here/tests/registry/token_server.py" 5503 token.key token.pem trainimg-token-server \
  "$user" "$password" "$state/token-requests.log" >token-server.log 2>&1 &
echo $! >token-server.pid
cat >env <<ENV
TRAINIMG_TEST_REGISTRY_ANON=127.0.0.1:5500
TRAINIMG_TEST_REGISTRY_BASIC=127.0.0.1:5501
TRAINIMG_TEST_REGISTRY_TOKEN=127.0.0.1:5502
TRAINIMG_TEST_REGISTRY_TOKEN_SERVER=127.0.0.1:5503
TRAINIMG_TEST_REGISTRY_USER=$user
TRAINIMG_TEST_REGISTRY_PASSWORD=$password
TRAINIMG_TEST_REGISTRY_CA=$state/ca.pem
TRAINIMG_TEST_REGISTRY_TOKEN_LOG=$state/token-requests.log
ENV
for _ in $(seq 1 30); do
  if up http://127.0.0.1:5500/v2/ && up --cacert ca.pem https://127.0.0.1:5501/v2/ && up http://127.0.0.1:5502/v2/ \
    && up http://127.0.0.1:5503/token; then
    echo "registry: started on 127.0.0.1:5500-5503 (state: $state)"
    exit 0
  fi
  sleep 1
done
echo "registry: did not start within 30 s; logs:" >&2
tail -5 "$state"/*.log >&2
exit 1
