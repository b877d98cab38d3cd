"""HParams read API: every session's hparams and final metrics across envs (TensorBoard's HParams dashboard)."""

from __future__ import annotations

import math
from typing import Any

from flask import Blueprint, Response, request

from ..commands.hparams import value_type
from ..store import Store
from .api import _env_or_404, _name
from .common import env_visible, json_response, services

bp = Blueprint("hparams_api", __name__, url_prefix="/api/v1")

LINE_KINDS = ("line",)


def _sessions_of(store: Store, env: str) -> dict[str, dict]:
    sessions = (store.get_env_meta(env) or {}).get("hparams")
    return sessions if isinstance(sessions, dict) else {}


def _last_values(store: Store, env: str, wanted: set[str]) -> dict[str, float]:
    """The last stored point of line panes titled with a wanted metric (TensorBoard reads each tag's last value)."""
    found: dict[str, float] = {}
    for pane in store.list_panes(env):
        if pane.kind not in LINE_KINDS or pane.title not in wanted or pane.title in found:
            continue
        traces = store.list_traces(pane)
        if not traces:
            continue
        # A tiny budget still keeps the last stored point (WIRE §3: first and last are always kept).
        series = store.read_series(traces[0], 4)
        if len(series.y):
            value = float(series.y[-1])
            if math.isfinite(value):
                found[pane.title] = value
    return found


def _column_type(values: list[Any]) -> str:
    types = {value_type(v) for v in values}
    return types.pop() if len(types) == 1 else "string"


@bp.get("/hparams")
def hparams() -> Response:
    raw = request.args.get("envs")
    store = services().store
    if raw is None or not raw.strip():
        envs = [e.name for e in store.list_envs() if env_visible(e.name) and _sessions_of(store, e.name)]
    else:
        envs = [_name(n, "env") for n in dict.fromkeys(s.strip() for s in raw.split(",")) if n]
        envs = [_env_or_404(n).name for n in envs]
    rows: list[dict] = []
    names: dict[str, list[Any]] = {}         # hparam -> every value seen (first-seen order of names)
    domains: dict[str, list[Any]] = {}
    metric_names: dict[str, None] = {}
    for env in envs:
        for session, s in sorted(_sessions_of(store, env).items()):
            hp = s.get("hparams") or {}
            for k, v in hp.items():
                names.setdefault(k, []).append(v)
            for k, values in (s.get("domains") or {}).items():
                seen = domains.setdefault(k, [])
                keys = {(value_type(x), x) for x in seen}  # True == 1 in Python: keep bools apart from numbers
                seen += [v for v in values if (value_type(v), v) not in keys]
            metric_names.update(dict.fromkeys(s.get("metrics") or {}))
            rows.append({"env": env, "session": session, "hparams": hp, "metrics": dict(s.get("metrics") or {}),
                         "wall": s.get("wall")})
    wanted = set(metric_names)
    fallback: dict[str, dict[str, float]] = {}
    for row in rows:
        missing = {m for m in wanted if row["metrics"].get(m) is None}
        if missing:
            if row["env"] not in fallback:
                fallback[row["env"]] = _last_values(store, row["env"], wanted)
            for m in missing:
                row["metrics"][m] = fallback[row["env"]].get(m)
    columns = [{"name": k, "type": _column_type(v + domains.get(k, [])), "domain": domains.get(k)}
               for k, v in names.items()]
    return json_response({"hparams": columns, "metrics": list(metric_names), "sessions": rows})
