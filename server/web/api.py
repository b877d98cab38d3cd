"""JSON API v1: env list, budgeted pane reads, full export, blobs, deletes and the HTTP event path."""

from __future__ import annotations

import csv
import io
import logging
import math
from collections.abc import Iterator
from urllib.parse import quote

from flask import Blueprint, Response, request

from paneboard.protocol import MAX_BATCH_EVENTS

from .. import jsonio
from ..commands.envelope import EventError, check_name
from ..dispatch.parse import parse_event
from ..dispatch.rejections import grouped, log_grouped
from ..panes import kind_module
from ..panes.contract import MALFORMED
from ..sharing.sniff import served_type
from ..store import PaneRecord, Store, TraceRecord
from . import frame_budget
from .common import ApiError, env_visible, json_response, services, share_limit
from .frames import checked
from .url_names import names_arg

bp = Blueprint("api", __name__, url_prefix="/api/v1")
log = logging.getLogger("paneboard.api")

MAX_POINTS = 200_000
MAX_STEP_RECORDS = 100  # per /steps request: a record may hold thousands of numbers


def _name(value: str, what: str) -> str:
    try:
        return check_name(value, what)
    except EventError as exc:
        raise ApiError(400, str(exc)) from None


def env_names_arg(limit: int | None = None) -> list[str]:
    """The distinct env names of ?envs=a,b: at least one, any number unless `limit` says (a sweep has thousands)."""
    names = [_name(n, "env") for n in dict.fromkeys(names_arg(request, "envs") or [])]
    if not names:
        raise ApiError(400, "envs must name at least one env, comma-separated")
    if limit is not None and len(names) > limit:
        raise ApiError(400, f"envs must name 1..{limit} envs, comma-separated")
    return names


def _float_arg(key: str) -> float | None:
    raw = request.args.get(key)
    if raw in (None, ""):
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ApiError(400, f"{key} must be a number") from None
    if not math.isfinite(value):
        raise ApiError(400, f"{key} must be finite")
    return value


def _int_arg(key: str, default: int) -> int:
    raw = request.args.get(key)
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError:
        raise ApiError(400, f"{key} must be an integer") from None


def _budget() -> int:
    raw = request.args.get("points")
    if raw in (None, ""):
        return services().settings.default_points
    try:
        points = int(raw)
    except ValueError:
        raise ApiError(400, "points must be an integer") from None
    if not 1 <= points <= MAX_POINTS:
        raise ApiError(400, f"points must be between 1 and {MAX_POINTS}")
    return points


def _env_or_404(env: str):
    summary = services().store.get_env(_name(env, "env"))
    if summary is None:
        raise ApiError(404, f"env {env!r} not found")
    return summary


def _pane_or_404(env: str, win: str) -> PaneRecord:
    pane = services().store.get_pane(_name(env, "env"), _name(win, "win"))
    if pane is None:
        raise ApiError(404, f"pane {win!r} not found in env {env!r}")
    return pane


def render_pane(pane: PaneRecord, budget: int, x0: float | None = None, x1: float | None = None) -> dict:
    module = kind_module(pane.kind)
    if module is None:
        return {**pane.summary(), "data": {}}
    # Only the query arguments a kind declares reach it (e.g. a histogram's ?steps=).
    options = {k: request.args[k] for k in module.READ_OPTIONS if k in request.args}
    try:
        data = module.render(services().store, pane, budget, x0, x1, options)
    except EventError as exc:  # a bad read option
        raise ApiError(400, str(exc)) from None
    except MALFORMED as exc:
        # A stored value no check let through (an older server's, a hand edit): this pane's error, while the
        # env's other panes, other envs and snapshots still read.
        log.warning("pane %r of env %r holds malformed %s content: %r", pane.win, pane.env, pane.kind, exc)
        return {**pane.summary(), "data": {},
                "error": f"pane {pane.win!r} of env {pane.env!r} holds malformed {pane.kind} content "
                         f"({type(exc).__name__}); re-send it to repair it"}
    return {**pane.summary(), "data": data}


SORT_KEYS = {"name": lambda e: e.name.lower(), "updated": lambda e: e.updated, "created": lambda e: e.created,
             "size": lambda e: e.points, "points": lambda e: e.points, "panes": lambda e: e.panes}


@bp.get("/envs")
def list_envs() -> Response:
    """?q= (case-insensitive substring of the name), ?sort=name|updated|created|size|panes, ?order=asc|desc."""
    envs = [e for e in services().store.list_envs() if env_visible(e.name)]
    q = request.args.get("q", "").strip().lower()
    if q:
        envs = [e for e in envs if q in e.name.lower()]
    sort = request.args.get("sort", "")
    if sort:
        if sort not in SORT_KEYS:
            raise ApiError(400, f"sort must be one of {', '.join(SORT_KEYS)}")
        order = request.args.get("order", "asc" if sort == "name" else "desc")
        if order not in ("asc", "desc"):
            raise ApiError(400, "order must be asc or desc")
        envs.sort(key=SORT_KEYS[sort], reverse=order == "desc")
    return json_response({"envs": [e.to_json() for e in envs]})


@bp.get("/envs/<path:env>/panes/<path:win>/export")
def export_pane(env: str, win: str) -> Response:
    pane = _pane_or_404(env, win)
    fmt = request.args.get("format", "csv")
    store = services().store
    traces = store.list_traces(pane)
    if fmt not in ("csv", "json"):
        raise ApiError(400, "format must be csv or json")
    # Streamed chunk by chunk, so a pane of any size is exported in constant memory.
    body = _json_export(store, pane, traces) if fmt == "json" else _csv_export(store, traces)
    mimetype = "application/json" if fmt == "json" else "text/csv"
    return Response(body, mimetype=mimetype,
                    headers={"Content-Disposition": attachment(f"{pane.env}-{pane.win}.{fmt}")})


def _csv_export(store: Store, traces: list[TraceRecord]) -> Iterator[str]:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["trace", "x", "y", "wall"])
    for t in traces:
        for x, y, w in store.export_series(t):
            writer.writerows(zip([t.name] * len(x), x.tolist(), y.tolist(), w.tolist(), strict=False))
            yield buf.getvalue()
            buf.seek(0)
            buf.truncate()
    yield buf.getvalue()


def _json_export(store: Store, pane: PaneRecord, traces: list[TraceRecord]) -> Iterator[bytes]:
    """`{"env", "win", "traces": [{"name", "x", "y", "wall"}]}`, each column read in its own pass over the chunks."""
    yield b'{"env":' + jsonio.dumps(pane.env) + b',"win":' + jsonio.dumps(pane.win) + b',"traces":['
    for k, t in enumerate(traces):
        yield (b"," if k else b"") + b'{"name":' + jsonio.dumps(t.name)
        for col, key in enumerate((b"x", b"y", b"wall")):
            yield b',"' + key + b'":['
            first = True
            for block in store.export_series(t):
                values = block[col]
                if len(values):
                    yield (b"" if first else b",") + jsonio.dumps(values.tolist())[1:-1]
                    first = False
            yield b"]"
        yield b"}"
    yield b"]}"


def attachment(filename: str) -> str:
    """Content-Disposition for a download: an ASCII fallback and the exact name in RFC 5987 form."""
    ascii_name = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in filename)
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename, safe='')}"


@bp.get("/envs/<path:env>/panes/<path:win>/steps")
def get_steps(env: str, win: str) -> Response:
    """Records of a stepped pane: ?i0=&i1= (a range of record indices; negative counts from the end) or ?step=."""
    pane = _pane_or_404(env, win)
    module = kind_module(pane.kind)
    render_record = module.render_record if module is not None else None
    if render_record is None:
        raise ApiError(400, f"pane {win!r} is a {pane.kind} pane, which has no step records")
    store = services().store
    count = (pane.content or {}).get("count", 0) if isinstance(pane.content, dict) else 0
    count = count if isinstance(count, int) else 0
    if request.args.get("step") not in (None, ""):
        wanted = _float_arg("step")
        steps, _walls = store.step_index(pane)
        hits = [i for i, s in enumerate(steps.tolist()) if s == wanted]
        if not hits:
            raise ApiError(404, f"pane {win!r} has no record at step {wanted:g}")
        indices = [hits[-1]]
    else:
        i0, i1 = _int_arg("i0", 0), _int_arg("i1", count)
        i0, i1 = (i0 + count if i0 < 0 else i0), (i1 + count if i1 < 0 else i1)
        i0, i1 = max(0, min(i0, count)), max(0, min(i1, count))
        if i1 - i0 > MAX_STEP_RECORDS:
            raise ApiError(400, f"at most {MAX_STEP_RECORDS} records per request (i1 - i0)")
        indices = list(range(i0, i1))
    rows = store.read_steps(pane, indices)
    try:
        records = [render_record(r) for r in rows]
    except MALFORMED as exc:  # as render_pane: one pane's error, never a 500
        log.warning("pane %r of env %r holds a malformed record: %r", win, env, exc)
        raise ApiError(422, f"pane {win!r} of env {env!r} holds a malformed {pane.kind} record "
                            f"({type(exc).__name__})") from None
    return json_response({"count": count, "records": records})


@bp.get("/envs/<path:env>/panes/<path:win>")
def get_pane(env: str, win: str) -> Response:
    pane = _pane_or_404(env, win)
    return json_response(render_pane(pane, _budget(), _float_arg("x0"), _float_arg("x1")))


@bp.get("/envs/<path:env>/panes")
def get_panes(env: str) -> Response:
    summary = _env_or_404(env)
    budget = _budget()
    panes = [render_pane(p, budget) for p in services().store.list_panes(summary.name)]
    return json_response({"env": summary.to_json(), "panes": panes})


@bp.get("/envs/<path:env>")
def get_env(env: str) -> Response:
    summary = _env_or_404(env)
    panes = [p.summary() for p in services().store.list_panes(summary.name)]
    return json_response({"env": summary.to_json(), "panes": panes})


@bp.get("/blobs/<sha256>")
def get_blob(sha256: str) -> Response:
    sha256 = sha256.lower()
    limit = share_limit()
    if limit is not None and not limit & services().store.blob_envs(sha256):
        raise ApiError(404, "blob not found")  # as for a missing one: the sha256 must not confirm a file exists
    found = services().store.get_blob(sha256)
    if found is None:
        raise ApiError(404, "blob not found")
    # The stored type is what a client or an archive claimed: only the bytes decide what a browser may render
    # from our origin, and the sandbox CSP keeps even a misjudged file from running script with our cookies.
    mime, attachment = served_type(found[1])
    resp = Response(found[1], mimetype=mime)
    resp.headers["Cache-Control"] = "public, max-age=31536000, immutable"  # content-addressed
    resp.headers["X-Content-Type-Options"] = "nosniff"
    if mime != "application/pdf":  # a sandboxed PDF will not open in Chromium's viewer; a PDF runs none of ours
        resp.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
    if attachment:
        resp.headers["Content-Disposition"] = f'attachment; filename="{sha256.lower()[:64]}.bin"'
    return resp


def _write(events: list[dict]) -> Response:
    commands, errors = [], []
    for i, raw in enumerate(events):
        try:
            decoded = checked(raw)  # the websocket path's limits: nesting depth, integer range
            if decoded.error is not None:
                raise EventError(decoded.error)
            commands.append(parse_event(raw))
        except Exception as exc:  # any failure of one event's data rejects that event alone
            reason = str(exc) if isinstance(exc, EventError) else f"invalid event ({type(exc).__name__}: {exc})"
            errors.append({"index": i, "s": raw.get("s") if isinstance(raw, dict) else None, "error": reason[:1000]})
    events.clear()  # the decoded JSON (a big POST's lists of Python numbers) is not needed while the writer runs
    result = services().writer.submit_wait(commands)
    # Grouped by reason (index of the rest in "also"): a body failing alike answers and logs one line.
    log_grouped(log, errors, "index", str(request.remote_addr))
    log_grouped(log, result.errors, "s", str(request.remote_addr))
    errors = grouped(errors, "index") + grouped(result.errors, "s")
    if result.failed:
        raise ApiError(503, result.failed)
    return json_response({"ok": not errors, "errors": errors})


@bp.post("/events")
def post_events() -> Response:
    data = request.get_data()
    too_big = frame_budget.refusal(data)
    if too_big is not None:  # refused while still bytes: decoding it is what would cost
        raise ApiError(413, too_big)
    try:
        body = jsonio.loads(data)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting beyond what the parsers take
        raise ApiError(400, f"body is not valid JSON: {str(exc)[:200]}") from None
    events = body.get("events") if isinstance(body, dict) else None
    if not isinstance(events, list):
        raise ApiError(400, 'body must be {"events": [...]}')
    if len(events) > MAX_BATCH_EVENTS:  # the count above is an upper bound of this one, kept as a backstop
        raise ApiError(413, f"a batch holds at most {MAX_BATCH_EVENTS} events: send smaller batches")
    return _write(events)


@bp.delete("/envs/<path:env>/panes/<path:win>")
def delete_pane(env: str, win: str) -> Response:
    _pane_or_404(env, win)
    return _write([{"op": "close", "env": env, "win": win}])


@bp.delete("/envs/<path:env>")
def delete_env(env: str) -> Response:
    _env_or_404(env)
    return _write([{"op": "delete_env", "env": env}])
