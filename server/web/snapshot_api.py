"""Snapshot downloads: an env or a compare view as one self-contained HTML file (opens offline)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from ..counts import counted
from ..sharing import snapshot
from .api import _budget, _env_or_404, attachment, env_names_arg, render_pane
from .common import services

bp = Blueprint("snapshot_api", __name__, url_prefix="/api/v1")

SNAPSHOT_KINDS = ("line", "scatter", "figure", "text", "image")


def _html(body: str, filename: str) -> Response:
    resp = Response(body, mimetype="text/html")
    resp.headers["Content-Disposition"] = attachment(filename)
    resp.headers["Content-Security-Policy"] = snapshot.csp()  # its own inline scripts, nothing from anywhere
    return resp


def _pane_json(rendered: dict[str, Any]) -> dict[str, Any]:
    out = {k: rendered.get(k) for k in ("kind", "win", "title", "opts")}
    if rendered.get("error"):  # malformed stored content (render_pane): the file says so in its place
        out["note"] = rendered["error"]
    elif rendered["kind"] in ("line", "scatter"):
        out["traces"] = [{"name": t["name"], "x": t["x"], "y": t["y"]} for t in rendered["data"].get("traces", [])]
    elif rendered["kind"] in SNAPSHOT_KINDS:
        out["data"] = rendered["data"]
    return out


@bp.get("/envs/<path:env>/snapshot.html")
def env_snapshot(env: str) -> Response:
    """The env's panes (lines, scatters, figures, text, images) in one HTML file with Plotly and the data inline."""
    summary = _env_or_404(env)
    budget = _budget()
    store = services().store
    panes = [_pane_json(render_pane(p, budget)) for p in store.list_panes(summary.name)]
    snapshot.inline_images(panes, store.get_blob)
    subtitle = f"env {summary.name}: {counted(summary.panes, 'pane')}, {counted(summary.points, 'point')}"
    return _html(snapshot.build(summary.name, subtitle, panes), f"{summary.name}.html")


@bp.get("/compare/snapshot.html")
def compare_snapshot() -> Response:
    """The compare view of ?envs=a,b: panes with the same win and title overlaid, one colour per env, in one HTML file."""
    names = env_names_arg()
    budget = _budget()
    store = services().store
    groups: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(names):
        _env_or_404(name)
        for pane in store.list_panes(name):
            if pane.kind not in ("line", "scatter"):
                continue
            title = pane.title or pane.win
            # Keyed as the compare page keys: one env's two panes sharing a title (steps, epochs) stay apart.
            group = groups.setdefault(f"{pane.win}\n{title}", {"kind": pane.kind, "win": pane.win, "title": title,
                                                                "opts": pane.opts, "traces": []})
            traces = render_pane(pane, budget)["data"].get("traces", [])
            for t in traces:
                label = name if len(traces) == 1 else f"{name}/{t['name']}"
                group["traces"].append({"label": label, "x": t["x"], "y": t["y"], "color": i})
    title = "compare " + ", ".join(names)
    return _html(snapshot.build(title, f"{counted(len(names), 'env')}, {counted(len(groups), 'pane')}", list(groups.values())),
                 "compare-" + "-".join(names)[:100] + ".html")
