"""Visdom's HTTP wire protocol (POST /events, /update, /win_data ...) for the unmodified `visdom` client."""

from __future__ import annotations

import hashlib
import logging
import os
import time
from typing import Any

from flask import Blueprint, Response, current_app, request

from .. import jsonio
from ..commands.envelope import EventError, check_name
from ..dispatch.parse import parse_event
from ..runs.visdom_run import seen_command
from ..web.common import json_response, services
from ..web.frames import check_shape
from .translate import create_events, update_events, window_events, window_json

log = logging.getLogger("paneboard.visdom")

bp = Blueprint("visdom_compat", __name__)


class VisdomError(Exception):
    """Bad input from a Visdom client: answered 400 with a JSON error and logged (Visdom answers an empty 500)."""


@bp.app_errorhandler(VisdomError)  # app-wide: the socket blueprint parses bodies with _body too
def _bad_request(exc: VisdomError) -> Response:
    log.warning("visdom %s: %s", request.path, exc)
    return json_response({"error": str(exc)}, 400)


def _text(body: str) -> Response:
    # The client returns the body text to the caller (window ids, "true"/"false"), whatever the status.
    return Response(body, mimetype="text/plain")


def _body() -> dict:
    """The raw JSON body (the client sends no Content-Type; NaN/Infinity literals allowed)."""
    raw = request.get_data()
    if not raw.strip():
        return {}
    try:
        body = jsonio.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting beyond what the parsers take
        raise VisdomError(f"body is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(body, dict):
        raise VisdomError("body must be a JSON object")
    try:
        check_shape(body)  # the limits of /ingest: nesting depth, integers a float can hold
    except ValueError as exc:
        raise VisdomError(str(exc)) from None
    return body


def _eid(value: Any) -> str:
    """Visdom's extract_eid: missing/empty -> "main", "/" -> "_"."""
    eid = str(value or "main").replace("/", "_")
    try:
        return check_name(eid, "eid")
    except EventError as exc:
        raise VisdomError(str(exc)) from None


def _win(body: dict) -> str:
    win = body.get("win")
    if win is None or win == "":
        return f"window_{os.urandom(8).hex()}"  # Visdom picks window_<uuid4> when the client sends none
    return str(win)


# A Visdom client's run records its last write to within this many seconds: the run record is rewritten at most
# that often per env and address, not on every append of a hot loop.
SEEN_EVERY_S = 1.0


def _seen(envs: set[str]) -> list:
    """The run notes (runs/visdom_run.py) for the envs this request writes, those not noted within SEEN_EVERY_S."""
    noted: dict[tuple[str, str | None], float] = current_app.extensions.setdefault("paneboard_visdom_seen", {})
    now, remote = time.monotonic(), request.remote_addr
    due = sorted(env for env in envs if now - noted.get((env, remote), -1e18) >= SEEN_EVERY_S)
    for env in due:
        noted[(env, remote)] = now
    if len(noted) > 10_000:  # a long-lived server's notes of envs gone quiet: the next write just notes again
        noted.clear()
    return [seen_command(env, remote, time.time()) for env in due]


def _write(events: list[dict], *, seen: bool = True) -> None:
    """Parse our events and commit them through the writer; any rejection becomes a 400. `seen`: the write
    is a Visdom client's, which starts or refreshes its env's run."""
    try:
        commands = [parse_event(ev) for ev in events]
    except EventError as exc:
        raise VisdomError(str(exc)) from None
    if not commands:
        return
    if seen:
        commands += _seen({c.env for c in commands})
    result = services().writer.submit_wait(commands)
    if result.failed:
        log.error("visdom %s: could not be stored: %s", request.path, result.failed)
        raise VisdomError(f"could not be stored: {result.failed}")
    if result.errors:
        raise VisdomError("; ".join(str(e["error"]) for e in result.errors))


def _pane(env: str, win: Any):
    if not isinstance(win, str) or not win:
        return None
    try:
        return services().store.get_pane(env, check_name(win, "win"))
    except EventError:
        return None


@bp.post("/events")
def events() -> Response:
    body = _body()
    env, win = _eid(body.get("eid")), _win(body)
    try:
        evs = create_events(env, win, body)
    except EventError as exc:
        raise VisdomError(str(exc)) from None
    _write(evs)
    return _text(win)


@bp.post("/update")
def update() -> Response:
    body = _body()
    env, win = _eid(body.get("eid")), _win(body)
    pane = _pane(env, win)
    # Only an opts-only update of an xy pane needs its trace count; appends (the hot path) skip the read.
    ntraces = len(services().store.list_traces(pane)) \
        if pane is not None and pane.kind in ("line", "scatter") and not body.get("data") else 0
    try:
        out = update_events(env, win, body, pane, ntraces)
    except EventError as exc:
        raise VisdomError(str(exc)) from None
    if isinstance(out, str):
        log.info("visdom /update %s/%s: %s", env, win, out)
        return _text(out)
    _write(out)
    return _text(win)


@bp.post("/close")
def close() -> Response:
    body = _body()
    env = _eid(body.get("eid"))
    win = body.get("win")
    if services().store.get_env(env) is not None:
        _write([{"op": "close", "env": env, "win": None if win is None else str(win)}])
    return _text("")


@bp.post("/win_exists")
def win_exists() -> Response:
    body = _body()
    return _text("true" if _pane(_eid(body.get("eid")), body.get("win")) is not None else "false")


def _window(env: str, win: str) -> dict:
    pane = _pane(env, win)
    if pane is None:
        raise VisdomError(f"window {win!r} not found in env {env!r}")
    return window_json(services().store, pane)


@bp.post("/win_data")
def win_data() -> Response:
    body = _body()
    env, win = _eid(body.get("eid")), body.get("win")
    if "data" in body:  # set: the payload is a JSON *string* (double-encoded by the client)
        try:
            data = jsonio.loads(body["data"]) if isinstance(body["data"], (str, bytes)) else body["data"]
            windows = data if win is None else {str(win): data}
            if not isinstance(windows, dict):
                raise EventError("data must hold an object of windows")
            _write([ev for w, window in windows.items() for ev in window_events(env, str(w), window)])
        except (EventError, ValueError) as exc:
            raise VisdomError(f"win_data: {exc}") from None
        return _text("")
    if win is None:
        store = services().store
        if store.get_env(env) is None:
            raise VisdomError(f"env {env!r} not found")
        return json_response({p.win: window_json(store, p) for p in store.list_panes(env)})
    return json_response(_window(env, str(win)))


@bp.post("/win_hash")
def win_hash() -> Response:
    body = _body()
    env = _eid(body.get("eid"))
    pane = _pane(env, body.get("win"))
    if pane is None:
        return _text("false")
    return _text(hashlib.md5(jsonio.dumps(window_json(services().store, pane))).hexdigest())


@bp.post("/env_state")
def env_state() -> Response:
    names = [e.name for e in services().store.list_envs()]
    names.sort(key=lambda n: n != "main")  # Visdom lists main first
    return json_response(names)


@bp.post("/save")
def save() -> Response:
    """Every change is already durable; answer the list of requested envs that exist, as Visdom does."""
    body = _body()
    wanted = body.get("data") if isinstance(body.get("data"), list) else []
    store = services().store
    return json_response([str(e) for e in wanted if isinstance(e, str) and store.get_env(_eid(e)) is not None])


@bp.post("/fork_env")
def fork_env() -> Response:
    body = _body()
    src, dst = _eid(body.get("prev_eid")), _eid(body.get("eid"))
    if services().store.get_env(src) is None:
        raise VisdomError(f"env {src!r} not found")
    _write([{"op": "fork_env", "env": dst, "from": src}])
    return _text(dst)


@bp.post("/delete_env")
def delete_env() -> Response:
    body = _body()
    env = _eid(body.get("eid"))
    if services().store.get_env(env) is not None:
        _write([{"op": "delete_env", "env": env}], seen=False)
        noted = current_app.extensions.get("paneboard_visdom_seen", {})
        for key in [k for k in noted if k[0] == env]:  # a new env of that name starts a new run
            del noted[key]
    return _text("")


@bp.post("/env/<path:eid>")
def env_create(eid: str) -> Response:
    """The client constructor's "create env" call. Our envs come into being with their first pane (an empty
    env would only clutter the env list), so this only checks the name."""
    _body()
    _eid(eid)
    return _text("")
