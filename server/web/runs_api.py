"""JSON API for runs: the runs listing with queries, one run's record, config, tags, notes, best directions,
and deletion by query."""

from __future__ import annotations

import time
from typing import Any

from flask import Blueprint, Response, request

from ..runs.budget import select
from ..runs.color import color_of
from ..runs.listing import columns_of, list_runs, sort_runs
from ..runs.query import FieldRef, QueryError, compile_query
from ..runs.query_check import check_fields
from ..runs.record import run_json
from ..runs.retention import confirmation, confirmed, delete_envs, select_runs
from .api import _env_or_404
from .common import ApiError, env_visible, int_arg, json_response, services
from .envs_api import _body, submit

bp = Blueprint("runs_api", __name__, url_prefix="/api/v1")


def _query_runs(query: str | None) -> list[dict[str, Any]]:
    svc = services()
    refs: list[FieldRef] = []
    try:
        predicate = compile_query(query or "", refs)  # first: a malformed query costs no read
        # A share link lists, checks and evaluates only the runs it may read: no timing probe of hidden ones.
        if svc.run_index is not None:
            every = svc.run_index.runs(None, env_visible)
        else:
            every = list_runs(svc.store, None, env_visible)
        check_fields(refs, every)  # an unknown field is an error naming it, not 0 runs
        return select(every, predicate)  # within the query's time budget
    except QueryError as exc:
        raise ApiError(400, str(exc), position=exc.position) from None


MAX_LIMIT = 100_000


@bp.get("/runs")
def runs() -> Response:
    """Every run (one per env), or those matching ?q=<query>: {"runs": [...], "query", "total"}.

    ?sort=<column>&order=asc|desc orders them (a run field, config:<key> or series:<name>.<stat>), and
    ?offset=&limit= returns one window of that order; with a limit the answer also lists every matching env
    ("envs", in order) and the optional columns ("columns": config keys, series and their directions).
    """
    query = request.args.get("q")
    found = _query_runs(query)
    sort, order = request.args.get("sort"), request.args.get("order", "asc")
    if order not in ("asc", "desc"):
        raise ApiError(400, "order must be asc or desc")
    if sort:
        try:
            found = sort_runs(found, sort, order == "desc")
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
    offset, limit = int_arg("offset", 0, 0, MAX_LIMIT) or 0, int_arg("limit", None, 0, MAX_LIMIT)
    out: dict[str, Any] = {"query": query or "", "total": len(found)}
    if limit is None:
        out["runs"] = found[offset:]
    else:
        out["runs"] = found[offset:offset + limit]
        out["envs"] = [r["env"] for r in found]
        out["columns"] = columns_of(found)
    return json_response(out)


def _run_of(env: str) -> dict[str, Any]:
    store = services().store
    out = {"env": env, **run_json(store.get_run(env))}
    meta = store.get_env_meta(env) or {}
    out["config"] = meta.get("config") or {}
    out["best"] = meta.get("best") or {}
    out["color"] = color_of(meta)
    # How far the job got: the furthest step of its line series (a failed run's banner says where it stopped).
    out["last_step"] = max((r.last_x for r in store.list_series([env]) if r.last_x is not None), default=None)
    return out


@bp.get("/envs/<path:env>/run")
def get_run(env: str) -> Response:
    """One run: status, times, tags, notes (Markdown and sanitized HTML), config and full provenance."""
    return json_response(_run_of(_env_or_404(env).name))


def _only(body: dict[str, Any], allowed: set[str]) -> dict[str, Any]:
    unknown = set(body) - allowed
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(sorted(unknown))}; expected {', '.join(sorted(allowed))}")
    return body


@bp.get("/envs/<path:env>/config")
def get_config(env: str) -> Response:
    return json_response({"config": _run_of(_env_or_404(env).name)["config"]})


@bp.put("/envs/<path:env>/config")
def put_config(env: str) -> Response:
    """Merge {"config": {...}} into the run's config; "replace": true makes it the whole config."""
    name = _env_or_404(env).name
    body = _only(_body(), {"config", "replace"})
    submit({"op": "run_config", "env": name, "config": body.get("config"), "replace": body.get("replace", False)})
    return json_response({"config": _run_of(name)["config"]})


@bp.get("/envs/<path:env>/tags")
def get_tags(env: str) -> Response:
    return json_response({"tags": _run_of(_env_or_404(env).name)["tags"]})


@bp.put("/envs/<path:env>/tags")
def put_tags(env: str) -> Response:
    """{"tags": [...]} sets the run's tags; {"add": [...], "remove": [...]} changes them."""
    name = _env_or_404(env).name
    body = _only(_body(), {"tags", "add", "remove"})
    event: dict[str, Any] = {"op": "run_tags", "env": name}
    if "tags" in body:
        event["set"] = body["tags"]
    event.update({k: body[k] for k in ("add", "remove") if k in body})
    submit(event)
    return json_response({"tags": _run_of(name)["tags"]})


@bp.get("/envs/<path:env>/notes")
def get_notes(env: str) -> Response:
    run = _run_of(_env_or_404(env).name)
    return json_response({"notes": run["notes"], "notes_html": run["notes_html"]})


@bp.put("/envs/<path:env>/notes")
def put_notes(env: str) -> Response:
    """{"notes": "<markdown>"} replaces the run's notes (rendered and sanitized for display)."""
    name = _env_or_404(env).name
    body = _only(_body(), {"notes"})
    submit({"op": "run_note", "env": name, "note": body.get("notes"), "append": False})
    run = _run_of(name)
    return json_response({"notes": run["notes"], "notes_html": run["notes_html"]})


@bp.put("/envs/<path:env>/best")
def put_best(env: str) -> Response:
    """{"series": name, "direction": "min" | "max" | null}: which way is better (null: inferred by name)."""
    name = _env_or_404(env).name
    body = _only(_body(), {"series", "direction"})
    submit({"op": "run_best", "env": name, "series": body.get("series"), "direction": body.get("direction")})
    return json_response({"best": _run_of(name)["best"]})


@bp.get("/runs/colors")
def run_colors() -> Response:
    """{"colors": {env: "#rrggbb"}}: the colours users chose for runs (the others take their name's colour). Every
    page reads it once, so a run is drawn alike in every browser."""
    return json_response({"colors": {r["env"]: r["color"] for r in _query_runs(None) if r.get("color")}})


@bp.put("/envs/<path:env>/color")
def put_color(env: str) -> Response:
    """{"color": "#rrggbb"} keeps a user's colour for the run; {"color": null} goes back to its name's colour."""
    name = _env_or_404(env).name
    body = _only(_body(), {"color"})
    if "color" not in body:
        raise ApiError(400, 'body must be {"color": "#rrggbb" | null}')
    submit({"op": "run_color", "env": name, "color": body["color"]})
    return json_response({"color": _run_of(name)["color"]})


@bp.post("/runs/delete")
def delete_runs() -> Response:
    """Delete the runs matching {"query", "older_than_days"} (their envs and data); "dry_run": true only lists
    them, with a "confirm" token. {"envs": [...], "confirm": token} then deletes exactly those runs, refused
    (409) if any changed since the dry run: a run that finished meanwhile is not deleted in its place."""
    body = _only(_body(), {"query", "older_than_days", "dry_run", "envs", "confirm"})
    if "confirm" in body:
        envs, token = body.get("envs"), body["confirm"]
        if not isinstance(envs, list) or not all(isinstance(e, str) for e in envs) or not isinstance(token, str):
            raise ApiError(400, "a confirmed delete needs envs (the dry run's list) and its confirm token")
        current = {r["env"]: r for r in _query_runs(None)}
        if not confirmed(envs, token, current, time.time()):
            raise ApiError(409, "these runs changed since the dry run (or the token is not its): dry-run again")
    else:
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ApiError(400, 'query must be a non-empty query string (use "name ~ \\".\\"" to mean every run)')
        days = body.get("older_than_days")
        if days is not None and (isinstance(days, bool) or not isinstance(days, (int, float)) or not days >= 0):
            raise ApiError(400, "older_than_days must be a number >= 0")
        found = _query_runs(query)
        envs = select_runs(found, days, time.time())
        if body.get("dry_run"):
            token = confirmation(envs, {r["env"]: r for r in found})
            return json_response({"dry_run": True, "count": len(envs), "envs": envs, "confirm": token})
    try:
        deleted = delete_envs(services().writer, envs)
    except RuntimeError as exc:
        raise ApiError(503, str(exc)) from None
    return json_response({"dry_run": False, "count": deleted, "envs": envs})
