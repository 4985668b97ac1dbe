"""The orders API of the shop example.

POST /orders {sku, qty, price} checks stock with the inventory service, charges the payments
service (retrying once when it is busy), and answers 201 with the order. It has a real bug on
purpose: an order without a price crashes the handler (KeyError) instead of answering 400.
"""

import json
import os
import sys
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

INVENTORY = os.environ["INVENTORY_URL"]
PAYMENTS = os.environ["PAYMENTS_URL"]
ORDERS = {}


def call(method, url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status, json.loads(reply.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


class Handler(BaseHTTPRequestHandler):
    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            return self.reply(200, {"status": "ok"})
        if self.path.startswith("/orders/"):
            order = ORDERS.get(self.path.split("/")[2])
            return self.reply(200, order) if order else self.reply(404, {"error": "no such order"})
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        try:
            if self.path == "/orders":
                return self.create(body)
            if self.path.startswith("/orders/") and self.path.endswith("/refund"):
                return self.refund(self.path.split("/")[2])
            self.reply(404, {"error": "not found"})
        except Exception as error:
            print(f"{type(error).__name__}: {error}", file=sys.stderr, flush=True)
            self.reply(500, {"error": "internal error"})

    def create(self, body):
        status, stock = call("GET", f"{INVENTORY}/stock/{body['sku']}")
        if status != 200 or stock["available"] < body.get("qty", 1):
            return self.reply(409, {"error": "out of stock", "sku": body["sku"]})
        amount = round(body["price"] * body.get("qty", 1), 2)  # the bug: no price, KeyError
        for _ in range(2):  # payments may be busy: try twice
            status, charge = call("POST", f"{PAYMENTS}/charges", {"amount": amount, "sku": body["sku"]})
            if status < 500:
                break
        if status == 402:
            return self.reply(402, {"error": "payment declined"})
        if status != 201:
            print(f"payment failed with {status}: {charge}", file=sys.stderr, flush=True)
            return self.reply(502, {"error": "payment failed"})
        order = {"id": str(uuid.uuid4())[:8], "sku": body["sku"], "qty": body.get("qty", 1), "amount": amount,
                 "status": "confirmed", "charge": charge["id"]}
        ORDERS[order["id"]] = order
        print(f"order {order['id']} confirmed: {amount}", flush=True)
        self.reply(201, order)

    def refund(self, order_id):
        order = ORDERS.get(order_id)
        if order is None:
            return self.reply(404, {"error": "no such order"})
        status, refund = call("POST", f"{PAYMENTS}/refunds", {"charge": order["charge"], "amount": order["amount"]})
        if status != 201:
            print(f"refund failed with {status}: {refund}", file=sys.stderr, flush=True)
            return self.reply(502, {"error": "refund failed", "payments": refund})
        order["status"] = "refunded"
        self.reply(200, order)

    def log_message(self, format, *args):
        print(f"{self.command} {self.path} -> {args[1] if len(args) > 1 else '?'}", flush=True)


print("orders listening on 8000", flush=True)
ThreadingHTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
