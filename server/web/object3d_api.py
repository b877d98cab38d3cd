"""3D point clouds: one record's points, thinned to the browser's budget (the step records carry no points)."""

from __future__ import annotations

from flask import Blueprint, Response

from ..panes import object3d
from .api import _pane_or_404
from .common import ApiError, int_arg, json_response, services

bp = Blueprint("object3d_api", __name__, url_prefix="/api/v1")


@bp.get("/envs/<path:env>/panes/<path:win>/points")
def cloud_points(env: str, win: str) -> Response:
    """?i= (the record's index; default the newest), ?budget= (points at most; default 50,000)."""
    pane = _pane_or_404(env, win)
    if pane.kind not in object3d.KINDS:
        raise ApiError(400, f"pane {win!r} is a {pane.kind} pane, not a point cloud")
    store = services().store
    count = int((pane.content or {}).get("count", 0))
    i = int_arg("i", count - 1, 0, max(count - 1, 0))
    budget = int_arg("budget", object3d.DEFAULT_BUDGET, 1, object3d.MAX_BUDGET)
    rows = store.read_steps(pane, [i]) if count and i is not None else []
    if not rows:
        raise ApiError(404, f"pane {win!r} has no record {i}")
    try:
        return json_response(object3d.read_points(store, rows[0], budget or object3d.DEFAULT_BUDGET))
    except ValueError as exc:  # a malformed stored record: that pane's error, never a 500
        raise ApiError(422, str(exc)) from None
