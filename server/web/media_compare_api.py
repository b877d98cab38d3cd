"""Images compared across runs: for one image tag and up to 16 runs, each run's steps and its pictures at one step."""

from __future__ import annotations

import bisect
import logging

from flask import Blueprint, Response, request

from ..panes import media, stepped
from ..panes.contract import MALFORMED
from ..store import PaneRecord, Store
from .api import _float_arg, env_names_arg
from .common import ApiError, env_visible, json_response, services

bp = Blueprint("media_compare_api", __name__, url_prefix="/api/v1")
log = logging.getLogger("paneboard.api")

MAX_RUNS = 16  # cells of the Compare page's image grid: more would be thumbnails too small to compare
MAX_PER_STEP = 16  # pictures of one run at one step (a logged list of images); the rest are counted, not sent


def image_panes(store: Store, env: str) -> dict[str, PaneRecord]:
    """A run's media panes of pictures by tag (the pane's title, or its win when it has none)."""
    out: dict[str, PaneRecord] = {}
    for pane in store.list_panes(env):
        if pane.kind in media.KINDS and (pane.content or {}).get("type") == "image":
            out.setdefault(pane.title or pane.win, pane)
    return out


def nearest_step(steps: list[float], wanted: float | None) -> float | None:
    """The step a run shows for the slider's `wanted` step: its last step at or before it; a run whose first step
    comes later shows that first step; None (the newest of all) shows its newest."""
    if not steps:
        return None
    if wanted is None:
        return steps[-1]
    at = bisect.bisect_right(steps, wanted)
    return steps[at - 1] if at else steps[0]


def _run(store: Store, env: str, pane: PaneRecord, wanted: float | None) -> dict:
    all_steps, _walls = store.step_index(pane)
    step_list = all_steps.tolist()
    distinct = sorted(set(step_list))
    shown = nearest_step(distinct, wanted)
    indices = [i for i, s in enumerate(step_list) if s == shown]
    head = {"env": env, "win": pane.win, "steps": [stepped.step_number(s) for s in distinct],
            "step": None if shown is None else stepped.step_number(shown), "count": len(indices)}
    try:
        records = [media.render_record(r) for r in store.read_steps(pane, indices[:MAX_PER_STEP])]
    except MALFORMED as exc:  # one run's bad record is that cell's error, never a 500 for the whole grid
        log.warning("pane %r of env %r holds a malformed record: %r", pane.win, env, exc)
        return {**head, "records": [], "error": f"malformed record ({type(exc).__name__})"}
    return {**head, "records": [r for r in records if r.get("type") == "image"]}


@bp.get("/compare/images")
def compare_images() -> Response:
    """?envs=a,b (1..16 runs), ?tag= (default: the first image tag any of them has), ?step= (default: the newest).
    The tags of those runs, and per run holding the tag: its distinct steps, the step it shows and the pictures
    (with overlays) at that step, in one answer."""
    envs = env_names_arg(limit=MAX_RUNS)
    store = services().store
    known = {e.name for e in store.list_envs()}  # one query, not one per run
    missing = next((e for e in envs if not env_visible(e) or e not in known), None)
    if missing is not None:
        raise ApiError(404, f"env {missing!r} not found")
    wanted = _float_arg("step")
    by_env = {env: image_panes(store, env) for env in envs}
    tags: dict[str, int] = {}
    for panes in by_env.values():
        for name in panes:
            tags[name] = tags.get(name, 0) + 1
    tag = request.args.get("tag") or next(iter(tags), None)
    if tag is not None and tag not in tags:
        raise ApiError(404, f"no run of these has an image tag {tag!r}")
    runs = [_run(store, env, by_env[env][tag], wanted) for env in envs if tag is not None and tag in by_env[env]]
    return json_response({"tags": [{"tag": t, "runs": n} for t, n in tags.items()], "tag": tag, "step": wanted,
                          "runs": runs})
