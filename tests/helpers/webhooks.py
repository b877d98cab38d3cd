"""Webhook receivers on loopback for the notifier's tests: one that takes posts, hangs, or answers a redirect."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Hook:
    """Records every request (method, path, JSON body); `behaviour` is "ok", "hang" (until release()) or a URL
    to redirect to with a 302."""

    def __init__(self, behaviour: str = "ok") -> None:
        self.behaviour = behaviour
        self.requests: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        self.released = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def handle_one(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with owner.cond:
                    owner.requests.append({"method": self.command, "path": self.path, "body": body})
                    owner.cond.notify_all()
                if owner.behaviour == "hang":
                    owner.released.wait(120)
                if owner.behaviour.startswith("http"):
                    self.send_response(302)
                    self.send_header("Location", owner.behaviour)
                else:
                    self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = handle_one

            def log_message(self, *args: Any) -> None:
                pass

        ThreadingHTTPServer.daemon_threads = True
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        threading.Thread(target=self.httpd.serve_forever, name="test-hook", daemon=True).start()

    def events(self) -> list[dict[str, Any]]:
        with self.cond:
            return [json.loads(r["body"]) for r in self.requests if r["method"] == "POST"]

    def wait_for(self, n: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """The first `n` posts' events (fewer if they did not come within `timeout`: the caller's assert says so)."""
        with self.cond:
            self.cond.wait_for(lambda: len(self.requests) >= n, timeout)
        return self.events()

    def close(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()
