"""Images compared across runs: for one image tag and up to 16 runs, each run's steps and its pictures at one step."""

from __future__ import annotations

import bisect
import logging

from flask import Blueprint, Response, request

from ..panes import media, stepped
from ..panes.contract import MALFORMED
from ..store import PaneRecord, Store
from .api import _float_arg, env_names_arg
from .common import ApiError, env_visible, int_arg, json_response, services

bp = Blueprint("media_compare_api", __name__, url_prefix="/api/v1")
log = logging.getLogger("paneboard.api")

MAX_RUNS = 16  # cells of the Compare page's image grid: more would be thumbnails too small to compare
MAX_AROUND = 32  # slider positions either side read ahead in one answer: a scrub then needs few requests
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


def _shown(step_list: list[float], distinct: list[float], wanted: float | None) -> tuple[float | None, list[int]]:
    shown = nearest_step(distinct, wanted)
    return shown, [i for i, s in enumerate(step_list) if s == shown]


def _cell(shown: float | None, indices: list[int], rows: dict[int, dict], error: str | None) -> dict:
    """What one run shows at one slider step: the step, how many pictures it has there, the first MAX_PER_STEP."""
    out = {"step": None if shown is None else stepped.step_number(shown), "count": len(indices),
           "records": [rows[i] for i in indices[:MAX_PER_STEP] if i in rows]}
    return {**out, "error": error} if error else out


def _run(store: Store, env: str, pane: PaneRecord, step_list: list[float], wanted: list[float | None]
         ) -> tuple[list[float], list[dict]]:
    """A run's distinct steps and its cell at each wanted step, its records read in one query."""
    distinct = sorted(set(step_list))
    picks = [_shown(step_list, distinct, w) for w in wanted]
    needed = sorted({i for _shown_step, idx in picks for i in idx[:MAX_PER_STEP]})
    rows: dict[int, dict] = {}
    error = None
    try:
        for r in store.read_steps(pane, needed):
            rec = media.render_record(r)
            if rec.get("type") == "image":
                rows[r.idx] = rec
    except MALFORMED as exc:  # one run's bad record is that cell's error, never a 500 for the whole grid
        log.warning("pane %r of env %r holds a malformed record: %r", pane.win, env, exc)
        rows, error = {}, f"malformed record ({type(exc).__name__})"
    return distinct, [_cell(shown, idx, rows, error) for shown, idx in picks]


def frame_steps(union: list[float], wanted: float | None, around: int) -> list[float]:
    """The slider positions (union steps) within `around` positions of the wanted step's, for a scrub read ahead."""
    if not union or around <= 0:
        return []
    at = len(union) - 1 if wanted is None else max(bisect.bisect_right(union, wanted) - 1, 0)
    return union[max(at - around, 0):at + around + 1]


@bp.get("/compare/images")
def compare_images() -> Response:
    """?envs=a,b (1..16 runs), ?tag= (default: the first image tag any of them has), ?step= (default: the newest),
    ?around=K (0..32). The tags of those runs, per run holding the tag its distinct steps, the step it shows and
    the pictures (with overlays) there; with `around`, `frames`: the same cells at the K slider positions (the union
    of the runs' steps) either side, so a scrub reads ahead in one answer."""
    envs = env_names_arg(limit=MAX_RUNS)
    store = services().store
    known = {e.name for e in store.list_envs()}  # one query, not one per run
    missing = next((e for e in envs if not env_visible(e) or e not in known), None)
    if missing is not None:
        raise ApiError(404, f"env {missing!r} not found")
    wanted = _float_arg("step")
    around = int_arg("around", 0, 0, MAX_AROUND) or 0
    by_env = {env: image_panes(store, env) for env in envs}
    tags: dict[str, int] = {}
    for panes in by_env.values():
        for name in panes:
            tags[name] = tags.get(name, 0) + 1
    tag = request.args.get("tag") or next(iter(tags), None)
    if tag is not None and tag not in tags:
        raise ApiError(404, f"no run of these has an image tag {tag!r}")
    holding = {env: by_env[env][tag] for env in envs if tag is not None and tag in by_env[env]}
    indexes = {env: store.step_index(pane)[0].tolist() for env, pane in holding.items()}
    union = sorted({x for steps in indexes.values() for x in steps})
    extra = frame_steps(union, wanted, around)
    runs: list[dict] = []
    frames: list[dict] = [{"step": stepped.step_number(f), "runs": []} for f in extra]
    for env, pane in holding.items():
        distinct, cells = _run(store, env, pane, indexes[env], [wanted, *extra])
        runs.append({"env": env, "win": pane.win, "steps": [stepped.step_number(x) for x in distinct], **cells[0]})
        for frame, cell in zip(frames, cells[1:], strict=True):
            frame["runs"].append({"env": env, **cell})
    return json_response({"tags": [{"tag": t, "runs": n} for t, n in tags.items()], "tag": tag, "step": wanted,
                          "runs": runs, "frames": frames})
