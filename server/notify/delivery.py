"""POSTs to webhook receivers: no redirect followed, and one worker per receiver so a hung one delays no other."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from urllib.parse import urlsplit


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    # A receiver's 3xx would turn our POST into a GET to any address it names (blind SSRF from the server's
    # network): the 3xx is its answer, an HTTPError like a 4xx.
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int | None:
    """The receiver's HTTP status, or None when it cannot be reached (or did not answer within `timeout`)."""
    req = urllib.request.Request(url, data=body, method="POST", headers={"User-Agent": "paneboard", **headers})
    host = urlsplit(url).hostname or ""
    handlers: list[urllib.request.BaseHandler] = [_NoRedirects()]
    if host in ("localhost", "::1") or host.startswith("127."):
        handlers.append(urllib.request.ProxyHandler({}))
    try:
        with urllib.request.build_opener(*handlers).open(req, timeout=timeout) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (OSError, ValueError):
        return None


class Workers:
    """At most one delivery thread per receiver at a time; receivers run side by side."""

    def __init__(self) -> None:
        self._busy: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def busy(self, url: str) -> bool:
        with self._lock:
            thread = self._busy.get(url)
            return thread is not None and thread.is_alive()

    def start(self, url: str, work: Callable[[], None]) -> bool:
        """Run `work` on a thread of its own unless `url`'s previous one still runs; True if started."""
        with self._lock:
            thread = self._busy.get(url)
            if thread is not None and thread.is_alive():
                return False
            thread = threading.Thread(target=work, name=f"paneboard-notify-{urlsplit(url).netloc}", daemon=True)
            self._busy[url] = thread
        thread.start()
        return True

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._lock:
            threads = list(self._busy.values())
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
