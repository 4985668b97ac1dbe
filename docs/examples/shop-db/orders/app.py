"""The orders API of the shop-db example: orders live in PostgreSQL (DATABASE_URL).

GET /health, GET /orders (every order, oldest first), POST /orders {sku, quantity} (201 with the
order), GET /orders/summary (how many orders and items). The schema is the migration job's
(sql/migrate.sql); the first orders are the seed job's (sql/seed.sql).
"""

import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psycopg2

DATABASE_URL = os.environ.get("DATABASE_URL", "postgresql://postgres@db:5432/postgres")


def query(sql, args=(), *, one=False):
    with psycopg2.connect(DATABASE_URL) as conn, conn.cursor() as cur:
        cur.execute(sql, args)
        if cur.description is None:
            return None
        columns = [c.name for c in cur.description]
        rows = [dict(zip(columns, row)) for row in cur.fetchall()]
    return rows[0] if one else rows


class Handler(BaseHTTPRequestHandler):
    def send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            query("SELECT 1")
            return self.send(200, {"status": "ok"})
        if self.path == "/orders":
            return self.send(200, query("SELECT id, sku, quantity FROM orders ORDER BY id"))
        if self.path == "/orders/summary":
            row = query("SELECT count(*) AS orders, coalesce(sum(quantity), 0) AS items FROM orders", one=True)
            return self.send(200, {"orders": row["orders"], "items": int(row["items"])})
        self.send(404, {"error": "not found"})

    def do_POST(self):
        if self.path != "/orders":
            return self.send(404, {"error": "not found"})
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        sku, quantity = body.get("sku"), body.get("quantity", 1)
        if not sku or not isinstance(quantity, int) or quantity < 1:
            return self.send(400, {"error": "sku and a positive quantity are required"})
        order = query(
            "INSERT INTO orders (sku, quantity) VALUES (%s, %s) RETURNING id, sku, quantity", (sku, quantity), one=True
        )
        print("order", order["id"], sku, quantity, flush=True)
        self.send(201, order)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
