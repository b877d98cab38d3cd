"""JSON API for sweeps: create from a W&B sweep file, list, describe, pause/resume/stop/cancel; the agents' calls."""

from __future__ import annotations

import math
import time
from typing import Any

from flask import Blueprint, Response, request

from ..sweeps.config import SweepConfigError, load_text
from ..sweeps.controller import SweepController, SweepError, overview
from .api import _int_arg
from .common import ApiError, json_response, services, share_limit
from .envs_api import _body

bp = Blueprint("sweeps_api", __name__, url_prefix="/api/v1")

MAX_SWEEP_FILE = 256 * 1024
MAX_TRIALS_PAGE = 1000  # trials per describe: the page asks for fewer, newest first


def _controller() -> SweepController:
    svc = services()
    assert svc.sweeps is not None
    return svc.sweeps


def _call(fn: Any, *args: Any) -> Response:
    """Run a controller call; its refusals (and a bad sweep file, or Optuna missing) become JSON errors."""
    try:
        return json_response(fn(*args))
    except SweepError as exc:
        raise ApiError(exc.status, str(exc)) from None
    except SweepConfigError as exc:
        raise ApiError(400, str(exc)) from None
    except RuntimeError as exc:
        if "Optuna" in str(exc):
            raise ApiError(501, str(exc)) from None
        raise


def _shared(sweep_id: str | None = None) -> set[str] | None:
    """The sweeps a share link may read (None: every one, no share link or one for every env).

    A sweep is shared only when every run of its trials is in the link's scope (and it has one): its page shows
    every trial's config and value, its counts and best, so a sweep with a run outside would show that run's
    results; a link made from a sweep's runs (the runs table's tags:sweep-<id>) shares it whole."""
    limit = share_limit()
    if limit is None:
        return None
    return {s for s, runs in services().store.sweep_runs(sweep_id).items() if runs <= limit}


def _agent(body: dict[str, Any]) -> tuple[str, float]:
    agent, hb = body.get("agent"), body.get("heartbeat_s", 10.0)
    if not isinstance(agent, str) or not 1 <= len(agent) <= 128:
        raise ApiError(400, "agent must be the agent's id (1..128 characters)")
    if not isinstance(hb, (int, float)) or isinstance(hb, bool) or not math.isfinite(hb) or not 0.05 <= hb <= 600:
        raise ApiError(400, "heartbeat_s must be a number of seconds in [0.05, 600]")
    return agent, float(hb)


@bp.post("/sweeps")
def create_sweep() -> Response:
    """{"config": <W&B sweep config as an object, or the file's YAML text>, "project"?} -> the sweep (201)."""
    body = _body()
    config, project = body.get("config"), body.get("project")
    if isinstance(config, str):
        if len(config) > MAX_SWEEP_FILE:
            raise ApiError(413, f"the sweep file is over {MAX_SWEEP_FILE} bytes")
        try:
            config = load_text(config)
        except SweepConfigError as exc:
            raise ApiError(400, str(exc)) from None
    if project is not None and not isinstance(project, str):
        raise ApiError(400, "project must be a string")

    def create() -> dict[str, Any]:
        return _controller().create(config, project).to_json()

    resp = _call(create)
    resp.status_code = 201
    return resp


@bp.get("/sweeps")
def list_sweeps() -> Response:
    """Every sweep (a share link's: those whose runs it may all read), newest first, with its counts, best trial
    and agents alive: {"sweeps": [...]}."""
    store = services().store
    now = time.time()
    shared = _shared()
    return json_response({"sweeps": [{**sweep.to_json(), **overview(store, sweep, now)} for sweep in store.list_sweeps()
                                     if shared is None or sweep.id in shared]})


@bp.get("/sweeps/<sweep_id>")
def get_sweep(sweep_id: str) -> Response:
    """The sweep: state, config, counts, best trial so far, the agents running trials, every trial's value, and
    a page of its trials: ?limit= (1..1000, default 1000) from ?offset=, by number (?newest=1: newest first)."""
    limit, offset = _int_arg("limit", MAX_TRIALS_PAGE), _int_arg("offset", 0)
    if not 1 <= limit <= MAX_TRIALS_PAGE:
        raise ApiError(400, f"limit must be between 1 and {MAX_TRIALS_PAGE}")
    if offset < 0:
        raise ApiError(400, "offset must be 0 or more")
    newest = request.args.get("newest", "") in ("1", "true")
    shared = _shared(sweep_id)
    if shared is not None and sweep_id not in shared:
        raise ApiError(404, f"no sweep {sweep_id!r}")  # as a missing one: a share link cannot probe for sweeps
    return _call(_controller().describe, sweep_id, limit, offset, newest)


@bp.post("/sweeps/<sweep_id>/state")
def set_sweep_state(sweep_id: str) -> Response:
    """{"action": "pause" | "resume" | "stop" | "cancel"}: stop lets running trials finish, cancel stops them."""
    return _call(_controller().set_state, sweep_id, _body().get("action"))


@bp.post("/sweeps/<sweep_id>/next")
def next_trial(sweep_id: str) -> Response:
    """An agent claims its next trial: {"agent", "heartbeat_s"} -> {"trial": {...} | null, "state"}."""
    agent, hb = _agent(_body())
    return _call(_controller().next_trial, sweep_id, agent, hb)


@bp.post("/sweeps/<sweep_id>/trials/<int:number>/heartbeat")
def heartbeat(sweep_id: str, number: int) -> Response:
    """The agent's trial still runs: its metric is read and reported -> {"action": "continue" | "stop"}."""
    agent, hb = _agent(_body())
    return _call(_controller().heartbeat, sweep_id, number, agent, hb)


@bp.post("/sweeps/<sweep_id>/trials/<int:number>/finish")
def finish(sweep_id: str, number: int) -> Response:
    """The trial's program ended: {"agent", "exit_code": int | null (stopped as told)}."""
    body = _body()
    agent, _ = _agent(body)
    code = body.get("exit_code")
    if code is not None and (type(code) is not int):
        raise ApiError(400, "exit_code must be an integer or null")
    return _call(_controller().finish, sweep_id, number, agent, code)
