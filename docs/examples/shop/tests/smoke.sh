#!/bin/sh
# A shell suite: plain commands against the URLs preflight passes in the environment.
set -e
python3 - <<'PY'
import json, os, urllib.request
health = json.load(urllib.request.urlopen(os.environ["PREFLIGHT_ORDERS_URL"] + "/health", timeout=10))
assert health == {"status": "ok"}, health
mock = json.load(urllib.request.urlopen(os.environ["PREFLIGHT_PAYMENTS_URL"] + "/_mock/health", timeout=10))
assert mock["status"] == "ok", mock
PY
echo "smoke ok"
