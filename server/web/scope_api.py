"""The runs in view of a multi-run page: ?q=<run query>, ?sel=<saved selection id> or ?envs=a,b, resolved the same
way by every page and API (Scalars, Compare, HParams, seed groups); and saved selections, the short ids that stand
for a ticked set of runs instead of a URL of names."""

from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Any

from flask import Blueprint, Response, request

from .api import _env_or_404, _name
from .common import ApiError, env_visible, json_response, services
from .envs_api import _body
from .runs_api import _query_runs
from .url_names import names_arg

bp = Blueprint("scope_api", __name__, url_prefix="/api/v1")

MAX_SELECTION = 20_000  # runs in one saved selection (a big sweep), far beyond a hand-ticked set
SELECTION_ID = re.compile(r"^[0-9a-f]{10}$")
_KEY = "selection:"  # settings-table key prefix: a selection is a small shared setting, no table of its own


def selection_id(envs: list[str]) -> str:
    """The same runs always get the same short id (their order kept: it is the order the page lists them)."""
    return hashlib.sha256(json.dumps(envs).encode()).hexdigest()[:10]


def selection_envs(sel: str) -> list[str]:
    """The runs of a saved selection this reader may see (a share link sees only its own); 404 when unknown."""
    if not SELECTION_ID.match(sel):
        raise ApiError(400, f"sel must be a saved selection id (10 hex digits), not {sel[:40]!r}")
    saved = services().store.get_setting(_KEY + sel)
    if not isinstance(saved, dict) or not isinstance(saved.get("envs"), list):
        raise ApiError(404, f"no saved selection {sel}")
    return [e for e in saved["envs"] if isinstance(e, str) and env_visible(e)]


def scoped_envs() -> list[str] | None:
    """The runs a page's request names: ?q= (the /runs query language and its 400s), ?sel=, ?envs=a,b (each must
    exist); None when it names none (every run)."""
    query, sel, listed = request.args.get("q"), request.args.get("sel"), names_arg(request, "envs")
    if sum(bool(v and v.strip()) for v in (query, sel)) + bool(listed) > 1:
        raise ApiError(400, "name the runs one way: q (a query), sel (a saved selection) or envs")
    if query and query.strip():
        return [r["env"] for r in _query_runs(query)]
    if sel and sel.strip():
        return selection_envs(sel.strip())
    if not listed:
        return None
    envs = [_name(n, "env") for n in dict.fromkeys(listed)]
    return [_env_or_404(n).name for n in envs]


@bp.get("/scope")
def scope() -> Response:
    """{"envs": [...], "total", "scoped"}: the runs ?q= / ?sel= / ?envs= name (every run's env when none)."""
    envs = scoped_envs()
    scoped = envs is not None
    if envs is None:
        envs = [r["env"] for r in _query_runs(None)]
    return json_response({"envs": envs, "total": len(envs), "scoped": scoped})


@bp.post("/selections")
def save_selection() -> Response:
    """{"envs": [...]} -> {"id", "envs", "count"}: a short id for these runs (the same runs, the same id)."""
    body = _body()
    unknown = set(body) - {"envs"}
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(sorted(unknown))}; expected envs")
    envs = body.get("envs")
    if not isinstance(envs, list) or not envs or not all(isinstance(e, str) for e in envs):
        raise ApiError(400, "envs must be a non-empty list of run names")
    if len(envs) > MAX_SELECTION:
        raise ApiError(400, f"a selection holds at most {MAX_SELECTION} runs, not {len(envs)}")
    known = {r["env"] for r in _query_runs(None)}  # one read (the run index) for a sweep's thousand names
    names = [_name(e, "env") for e in dict.fromkeys(envs)]
    missing = [e for e in names if e not in known]
    if missing:
        raise ApiError(404, f"no run {missing[0]!r}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    sel = selection_id(names)
    record: dict[str, Any] = {"envs": names, "created": time.time()}
    services().store.put_setting(_KEY + sel, record)
    return json_response({"id": sel, "envs": names, "count": len(names)}, 201)


@bp.get("/selections/<sel>")
def get_selection(sel: str) -> Response:
    envs = selection_envs(sel)
    return json_response({"id": sel, "envs": envs, "count": len(envs)})
