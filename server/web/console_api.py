"""A run's console: its lines as JSON lines (paged, the tail, a search) or as plain text to download."""

from __future__ import annotations

from flask import Blueprint, Response, request

from .. import jsonio
from ..runs.console import MAX_RANK
from .api import _env_or_404
from .common import ApiError, int_arg, json_response, services

bp = Blueprint("console_api", __name__, url_prefix="/api/v1")
MAX_PAGE = 10_000
MAX_HEADER_RANKS = 256  # ranks named in X-Console-Ranks (at most ~2 KB of header)


@bp.get("/envs/<path:env>/console")
def console(env: str) -> Response:
    """The lines one rank printed, in order: JSON lines of {n, t, stream, text, rank}, or text (format=text)."""
    name = _env_or_404(env).name
    fmt = request.args.get("format", "jsonl")
    if fmt not in ("jsonl", "text"):
        raise ApiError(400, "format must be jsonl or text")
    rank = int_arg("rank", 0, 0, MAX_RANK) or 0
    after = int_arg("after", 0, 0, 2**62) or 0
    limit = int_arg("limit", 1000 if fmt == "jsonl" else None, 1, MAX_PAGE)
    tail = int_arg("tail", None, 0, MAX_PAGE)
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
    ranks = store.console_ranks(name)
    # Bounded: 30,000 ranks made a 240 KB header that curl and `paneboard tail` refuse; the rest are in
    # GET .../console/ranks.
    resp.headers["X-Console-Ranks"] = ",".join(map(str, ranks[:MAX_HEADER_RANKS]))
    if len(ranks) > MAX_HEADER_RANKS:
        resp.headers["X-Console-Ranks-Total"] = str(len(ranks))
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/envs/<path:env>/console/ranks")
def console_ranks(env: str) -> Response:
    """Every rank that printed, in order: {"ranks": [...]} (X-Console-Ranks names only the first ones)."""
    name = _env_or_404(env).name
    return json_response({"ranks": services().store.console_ranks(name)})
