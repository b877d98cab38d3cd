"""The UI's scripts and styles under a fingerprinted prefix, cached by browsers until the files change."""

from __future__ import annotations

import hashlib
import os
import time

from flask import Blueprint, Response, send_from_directory

from .. import STATIC_DIR

bp = Blueprint("static_assets", __name__)
YEAR = 365 * 86400
# A page and the ~60 module requests that follow it share one digest a second instead of walking the folder each;
# an edit shows in the next page loaded a second later.
_current: tuple[float, str] = (-1.0, "")


def fingerprint() -> str:
    """A digest of every static file's path, size and modification time: it changes when any of them does."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(STATIC_DIR):
        dirs.sort()
        for name in sorted(files):
            st = os.stat(os.path.join(root, name))
            digest.update(f"{os.path.relpath(os.path.join(root, name), STATIC_DIR)}\0{st.st_size}\0"
                          f"{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:12]


def current_fingerprint() -> str:
    global _current
    at, fp = _current
    now = time.monotonic()
    if now - at >= 1.0:
        _current = (now, fp := fingerprint())  # threads racing here compute the same digest
    return fp


def static_base(base: str) -> str:
    """Where a page loads app.js and app.css from. ES modules import one another by relative paths, so every
    module the page loads comes from under the same prefix."""
    return f"{base}static/v/{current_fingerprint()}/"


@bp.get("/static/v/<fp>/<path:filename>")
def versioned(fp: str, filename: str) -> Response:
    """A static file under a fingerprint. Under the current one it never changes, so browsers keep it without
    asking again: a page otherwise revalidated each of its ~60 modules, a round trip each over a tunnel, on
    every load. Under an old fingerprint (a page loaded before the files changed) it is served uncached."""
    current = fp == current_fingerprint()
    resp = send_from_directory(STATIC_DIR, filename, max_age=YEAR if current else 0)
    resp.cache_control.immutable = current
    if current:
        resp.cache_control.public = True
    else:
        resp.cache_control.no_cache = True
    return resp
