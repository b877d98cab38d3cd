"""JSON API of run groups: runs grouped by chosen config keys (or config minus ignored ones), mean or median ± band per
series, A-vs-B tests."""

from __future__ import annotations

import re

from flask import Blueprint, Response, request

from ..seeds import groups as seed_groups
from .api import _budget, _env_or_404, env_names_arg
from .common import ApiError, json_response, services

bp = Blueprint("groups_api", __name__, url_prefix="/api/v1")

MAX_IGNORE = 32
_KEY = re.compile(r"^[^\x00-\x1f,]{1,200}$")


def _choice(arg: str, choices: tuple[str, ...]) -> str:
    value = request.args.get(arg) or choices[0]
    if value not in choices:
        raise ApiError(400, f"{arg} must be one of {', '.join(choices)}")
    return value


def _ignored() -> list[str]:
    raw = request.args.get("ignore")
    keys = ["seed"] if raw is None else [k.strip() for k in raw.split(",") if k.strip()]
    if len(keys) > MAX_IGNORE or not all(_KEY.match(k) for k in keys):
        raise ApiError(400, f"ignore must list at most {MAX_IGNORE} config keys, comma-separated")
    return keys


def _by() -> list[str] | None:
    raw = request.args.get("by")
    if not raw:
        return None
    keys = [k.strip() for k in raw.split(",") if k.strip()]
    if not keys or len(keys) > MAX_IGNORE or not all(_KEY.match(k) for k in keys):
        raise ApiError(400, f"by must list 1 to {MAX_IGNORE} config keys, comma-separated")
    return keys


@bp.get("/groups")
def groups() -> Response:
    """?envs=a,b (runs), ?by=lr,optim.name (group by these config keys) or ?ignore=seed (config keys left out),
    ?center=mean|median, ?band=std|minmax|ci, ?value=final|best; ?baseline=<group id> (each group's test against
    that one, not all pairs); ?title= (one chart: that series, or its
    `title/trace` series); ?series=0: the groups and keys alone, no reads."""
    names = env_names_arg()
    ignore = _ignored()
    by = _by()
    center = _choice("center", seed_groups.CENTERS)
    band = _choice("band", seed_groups.BANDS)
    value = _choice("value", seed_groups.VALUES)
    budget = _budget()
    store = services().store
    # One batched read of every run's meta (a sweep of 1,000 runs: a few queries, not two per run).
    metas = store.env_metas(names)
    for name in names:
        if name not in metas:
            _env_or_404(name)  # the usual 404 naming it (or its 400 for a bad name)
    configs = {name: metas[name].get("config") for name in names}
    made = seed_groups.make_groups(configs, ignore, by)
    head = {"ignore": ignore, "by": by, "center": center, "band": band, "value": value,
            "keys": seed_groups.varying_keys(configs), "groups": [g.to_json() for g in made]}
    if request.args.get("series") == "0":  # the "group these runs?" offer: no series read
        return json_response({**head, "series": [], "tests": []})
    plan = seed_groups.plan_series(store, list(configs))
    title = request.args.get("title")
    if title is not None:  # one chart's series (a page reads the charts in view one by one)
        plan = {name: members for name, members in plan.items() if name == title or name.startswith(title + "/")}
    series: list[dict] = []
    tests: list[dict] = []
    for name in sorted(plan):  # one series at a time: a sweep's points are held for one chart, not all at once
        runs = {name: seed_groups.read_series(store, plan[name], budget)}
        series += seed_groups.series_bands(made, runs, band, budget, center)
        tests += seed_groups.comparisons(made, runs, value, request.args.get("baseline") or None)
    return json_response({**head, "series": series, "tests": tests})
