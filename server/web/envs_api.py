"""JSON API for the browser workspace: env search/sort, fork, rename, layout, views, config, compare."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from .. import jsonio
from ..commands.envelope import EventError
from ..dispatch.parse import parse_event
from .api import MAX_POINTS, _budget, _env_or_404, _int_arg, _name, env_names_arg, render_pane
from .charts_api import DEFAULT_BUDGET, MIN_PER_SERIES
from .common import ApiError, json_response, services

bp = Blueprint("envs_api", __name__, url_prefix="/api/v1")

COMPARE_KINDS = ("line", "scatter")


def _body() -> dict[str, Any]:
    try:
        body = jsonio.loads(request.get_data() or b"{}")
    except ValueError as exc:
        raise ApiError(400, f"body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "body must be a JSON object")
    return body


def _status_for(message: str) -> int:
    if "not found" in message or "no view" in message:
        return 404
    if "already exists" in message:
        return 409
    return 400


def submit(event: dict[str, Any]) -> None:
    """Validate and apply one event through the writer (the one path that writes); errors become 4xx JSON."""
    try:
        cmd = parse_event(event)
    except EventError as exc:
        raise ApiError(400, str(exc)) from None
    result = services().writer.submit_wait([cmd])
    if result.failed:
        raise ApiError(503, result.failed)
    if result.errors:
        message = result.errors[0]["error"]
        raise ApiError(_status_for(message), message)


def _target(body: dict[str, Any]) -> str:
    to = body.get("to")
    if not isinstance(to, str):
        raise ApiError(400, 'body must be {"to": "<env name>"}')
    return _name(to, "to")


@bp.post("/envs/<path:env>/fork")
def fork_env(env: str) -> Response:
    source = _env_or_404(env).name
    to = _target(_body())
    submit({"op": "fork_env", "env": to, "from": source})
    return json_response({"ok": True, "env": services().store.get_env(to).to_json()})


@bp.post("/envs/<path:env>/rename")
def rename_env(env: str) -> Response:
    old = _env_or_404(env).name
    to = _target(_body())
    submit({"op": "rename_env", "env": old, "to": to})
    return json_response({"ok": True, "env": services().store.get_env(to).to_json()})


@bp.put("/envs/<path:env>/panes/<path:win>/layout")
def put_layout(env: str, win: str) -> Response:
    # A JSON null forgets the pane's layout (the workspace's "repack" sends one per placed pane).
    body = None if request.get_data().strip() == b"null" else _body()
    if body is not None and "layout" in body:
        body = body["layout"]  # accept {"layout": {...}} as well as the bare {x, y, w, h}
    submit({"op": "layout", "env": _name(env, "env"), "win": _name(win, "win"), "layout": body or None})
    return json_response({"ok": True, "layout": services().store.get_pane(env, win).layout})


@bp.get("/envs/<path:env>/meta")
def get_meta(env: str) -> Response:
    summary = _env_or_404(env)
    return json_response({"env": summary.name, "meta": services().store.get_env_meta(summary.name) or {}})


@bp.put("/envs/<path:env>/meta")
def put_meta(env: str) -> Response:
    submit({"op": "set_meta", "env": _name(env, "env"), "meta": _body().get("config")})
    return json_response({"ok": True, "meta": services().store.get_env_meta(env) or {}})


@bp.post("/envs/<path:env>/views")
def save_view(env: str) -> Response:
    name = _env_or_404(env).name
    body = _body()
    view = body.get("name")
    if not isinstance(view, str):
        raise ApiError(400, 'body must be {"name": "<view name>"}')
    event = {"op": "save_view", "env": name, "name": view}
    if body.get("scalars") is not None:  # a Scalars view: its overlaid-tag charts
        event["scalars"] = body["scalars"]
    submit(event)
    return json_response({"ok": True, "views": (services().store.get_env_meta(name) or {}).get("views", {})})


@bp.post("/envs/<path:env>/views/<path:view>/load")
def load_view(env: str, view: str) -> Response:
    name = _env_or_404(env).name
    submit({"op": "load_view", "env": name, "name": view})
    return json_response({"ok": True})


@bp.get("/compare")
def compare() -> Response:
    """Panes with the same title (or win id) from several envs, one trace per env trace, labelled by env."""
    names = env_names_arg()
    store = services().store
    envs = [_env_or_404(name).to_json() for name in names]
    # The chart budget, shared by every trace as /chart shares it (?budget=, default 24,000 points), each trace at
    # most ?points: a sweep of 1,000 runs read 2,000 points a trace (6M points) where a chart draws 24,000.
    shared = _int_arg("budget", DEFAULT_BUDGET)
    if not 1 <= shared <= MAX_POINTS:
        raise ApiError(400, f"budget must be between 1 and {MAX_POINTS}")
    listed = store.chart_panes(names, COMPARE_KINDS)  # a few queries for any number of runs
    ntraces = sum(len(traces) for panes in listed.values() for _, traces in panes)
    budget = max(MIN_PER_SERIES, min(_budget(), shared // max(1, ntraces)))
    groups: dict[str, dict[str, Any]] = {}
    for name in names:
        for pane in store.list_panes(name):
            if pane.kind not in COMPARE_KINDS:
                continue
            key = pane.title or pane.win
            group = groups.setdefault(key, {"title": key, "kind": pane.kind, "opts": pane.opts, "members": [],
                                            "traces": []})
            rendered = render_pane(pane, budget)
            group["members"].append({"env": name, "win": pane.win, "version": pane.version})
            traces = rendered["data"].get("traces", [])
            for t in traces:
                label = name if len(traces) == 1 else f"{name}/{t['name']}"
                group["traces"].append({**t, "env": name, "win": pane.win, "label": label})
    return json_response({"envs": envs, "panes": list(groups.values())})
