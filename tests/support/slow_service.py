"""A service whose `/slow` answers after a delay: the files of a project that builds it.

Used by the sharding tests and scripts/bench/shards.py (suites that take a known time per call).
"""

from __future__ import annotations

__all__ = ["DOCKERFILE", "serve_py"]

DOCKERFILE = """
FROM preflight-base/python
COPY serve.py /app/serve.py
CMD ["python3", "-u", "/app/serve.py"]
"""


def serve_py(delay: float) -> str:
    """The server's source: GET /slow waits `delay` seconds; every other path answers at once."""
    return f"""
import http.server, time
class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/slow"):
            time.sleep({delay})
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("", 8000), Slow).serve_forever()
"""
