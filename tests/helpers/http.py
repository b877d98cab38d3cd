"""Raw HTTP requests for tests that need a status and a JSON answer (errors included) without the SDK."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def request_raw(url: str, method: str = "GET", data: bytes | None = None, headers: dict[str, str] | None = None,
                timeout: float = 60) -> tuple[int, bytes]:
    """(status, body bytes) of one request; an HTTP error's body too."""
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def request_json(url: str, method: str = "GET", data: bytes | None = None, headers: dict[str, str] | None = None,
                 timeout: float = 60) -> tuple[int, Any]:
    """(status, parsed JSON body) of one request; an HTTP error's body is parsed too."""
    status, body = request_raw(url, method, data, headers, timeout)
    return status, json.loads(body)
