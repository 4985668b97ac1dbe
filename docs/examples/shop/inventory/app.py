"""The inventory service of the shop example: stock per SKU, seeded by the `seed` job."""

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STOCK = {}


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
        if self.path.startswith("/stock/"):
            sku = self.path.split("/")[2]
            return self.reply(200, {"sku": sku, "available": STOCK.get(sku, 0)})
        self.reply(404, {"error": "not found"})

    def do_PUT(self):
        if self.path.startswith("/stock/"):
            length = int(self.headers.get("Content-Length") or 0)
            STOCK[self.path.split("/")[2]] = json.loads(self.rfile.read(length))["available"]
            return self.reply(200, {"ok": True})
        self.reply(404, {"error": "not found"})

    def log_message(self, format, *args):
        print(f"{self.command} {self.path} -> {args[1] if len(args) > 1 else '?'}", flush=True)


print("inventory listening on 8000", flush=True)
ThreadingHTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
