"""A small real JSON API to record from: ids, timestamps, a changing counter, a credential it checks.

Run as its own process: `python -m tests.support.json_upstream --port 0 [--tls CERT KEY] [--drift]`.
It prints `listening <port>` once it accepts connections. Every answer carries noise a recording
must not keep: a `Date`, an `X-Request-Id`, a `created` epoch, a `createdAt` time, a `requestId`
UUID. A fresh process starts its counters again, so two recordings of the same calls on two
fresh processes differ only in that noise.

    POST /v1/charges {amount, sku, source}
                                     201 {id: ch_<n>, amount, sku, source, status, created, createdAt, requestId}
                                     402 when amount > 1000; 401 without `Authorization: Bearer sk_…`
    GET  /v1/charges/<id>            200 the charge, 404 when unknown
    GET  /v1/balance                 200 {available, currency, calls: <n-th call>}

`--drift` changes one field of the charge (`amount` becomes a string) and adds one (`fee`), as an
upstream that moved on would.
"""

from __future__ import annotations

import argparse
import json
import ssl
import sys
import threading
import time
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHARGES: dict[str, dict[str, Any]] = {}
COUNTERS = {"charges": 0, "balance": 0}
LOCK = threading.Lock()
DRIFT = False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _reply(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Request-Id", str(uuid.uuid4()))
        self.send_header("X-RateLimit-Remaining", str(1000 - COUNTERS["charges"]))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        if (self.headers.get("Authorization") or "").startswith("Bearer sk_"):
            return True
        self._reply(401, {"error": {"code": "unauthorized", "message": "no API key"}})
        return False

    def _charge(self, charge: dict[str, Any]) -> dict[str, Any]:
        if not DRIFT:
            return charge
        return {**charge, "amount": str(charge["amount"]), "fee": 0.3}

    def do_GET(self) -> None:
        if not self._authorised():
            return
        if self.path == "/v1/balance":
            with LOCK:
                COUNTERS["balance"] += 1
                calls = COUNTERS["balance"]
            self._reply(200, {"available": 5000, "currency": "EUR", "calls": calls})
        elif self.path.startswith("/v1/charges/"):
            charge = CHARGES.get(self.path.rsplit("/", 1)[1])
            if charge is None:
                self._reply(404, {"error": {"code": "resource_missing", "message": "no such charge"}})
            else:
                self._reply(200, self._charge(charge))
        else:
            self._reply(404, {"error": {"code": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self._authorised():
            return
        if self.path != "/v1/charges":
            self._reply(404, {"error": {"code": "not_found"}})
            return
        amount = body.get("amount", 0)
        if amount > 1000:
            self._reply(402, {"error": {"code": "card_declined", "message": "the card was declined"}})
            return
        with LOCK:
            COUNTERS["charges"] += 1
            number = COUNTERS["charges"]
        now = time.time()
        charge = {
            "id": f"ch_{number}",
            "amount": amount,
            "sku": body.get("sku"),
            "source": body.get("source"),
            "status": "captured",
            "created": int(now),
            "createdAt": datetime.fromtimestamp(now, UTC).isoformat(timespec="seconds"),
            "requestId": str(uuid.uuid4()),
        }
        CHARGES[charge["id"]] = charge
        self._reply(201, self._charge(charge))


def main() -> None:
    global DRIFT
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    parser.add_argument("--drift", action="store_true")
    args = parser.parse_args()
    DRIFT = args.drift
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*args.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
