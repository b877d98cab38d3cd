"""A run's console: its lines as JSON lines (paged, the tail, a search) or as plain text to download."""

from __future__ import annotations

from flask import Blueprint, Response, request

from .. import jsonio
from ..runs.console import MAX_RANK
from .api import _env_or_404
from .common import ApiError, services

bp = Blueprint("console_api", __name__, url_prefix="/api/v1")
MAX_PAGE = 10_000


def _int(name: str, default: int | None, low: int, high: int) -> int | None:
    raw = request.args.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name} must be an integer") from None
    if not low <= value <= high:
        raise ApiError(400, f"{name} must be between {low} and {high}")
    return value


@bp.get("/envs/<path:env>/console")
def console(env: str) -> Response:
    """The lines one rank printed, in order: JSON lines of {n, t, stream, text, rank}, or text (format=text)."""
    name = _env_or_404(env).name
    fmt = request.args.get("format", "jsonl")
    if fmt not in ("jsonl", "text"):
        raise ApiError(400, "format must be jsonl or text")
    rank = _int("rank", 0, 0, MAX_RANK) or 0
    after = _int("after", 0, 0, 2**62) or 0
    limit = _int("limit", 1000 if fmt == "jsonl" else None, 1, MAX_PAGE)
    tail = _int("tail", None, 0, MAX_PAGE)
    contains = request.args.get("q") or None
    if contains is not None and len(contains) > 1000:
        raise ApiError(400, "q must be at most 1000 characters")
    store = services().store
    if fmt == "text" and limit is None and tail is None:  # the download: every line, page by page
        chunks: list[str] = []
        cursor = after
        while True:
            page = store.read_console(name, rank, cursor, MAX_PAGE, None, contains)
            chunks.extend(line.text + "\n" for line in page)
            if len(page) < MAX_PAGE:
                break
            cursor = page[-1].n
        resp = Response("".join(chunks), mimetype="text/plain")
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        resp.headers["Content-Disposition"] = f'attachment; filename="{safe}.rank{rank}.log"'
        return resp
    lines = store.read_console(name, rank, after, limit or MAX_PAGE, tail, contains)
    if fmt == "text":
        resp = Response("".join(line.text + "\n" for line in lines), mimetype="text/plain")
    else:
        resp = Response(b"".join(jsonio.dumps(line.to_json()) + b"\n" for line in lines),
                        mimetype="application/x-ndjson")
    if tail is None and lines and len(lines) == limit:
        resp.headers["X-Console-Next"] = str(lines[-1].n)
    resp.headers["X-Console-Ranks"] = ",".join(map(str, store.console_ranks(name)))
    resp.headers["Cache-Control"] = "no-store"
    return resp
