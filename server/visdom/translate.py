"""Visdom window JSON <-> our events and panes: plot traces become chunked line/scatter panes where they fit."""

from __future__ import annotations

import base64
import math
import re
from typing import Any

from paneboard.protocol import visdom_text

from ..commands.envelope import EventError
from ..panes.common import PLOTLY_LAYOUT as LAYOUT_KEY
from ..panes.figure import HEATMAP_MODES
from ..store import PaneRecord, Store

XY_TYPES = ("scatter", "scattergl")
# The opts Visdom's update_window copies onto the window dict on every /update (mode, legend, markersize ...):
# kept in the pane's opts under this key so /win_data returns them where get_window_data users expect them.
WINDOW_KEY = "visdom_window"
INTS_KEY = "visdom_ints"  # in an xy trace's style: the axes ("x", "y") the client sent as integers
PTS_LINESONLY = 20  # plotly.js: a scatter trace without `mode` is lines+markers below this many points, else lines
_DATA_URI = re.compile(r"^data:(image/[A-Za-z0-9.+-]+);base64,(.*)$", re.S)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _xy_trace(t: dict, strict: bool) -> dict | None:
    """One Visdom scatter trace as our xy trace, or None if it needs the generic figure kind.

    strict (creation): x must be finite numbers, because NaN-separated segments (stem, quiver) and per-point
    text/colours only make sense as a whole figure; appends may carry Visdom's all-None x mask.
    """
    if t.get("type", "scatter") not in XY_TYPES or "z" in t:
        return None
    x, y = t.get("x"), t.get("y")
    if not isinstance(y, list) or (x is not None and (not isinstance(x, list) or len(x) != len(y))):
        return None
    if strict and x is not None and not all(_is_num(v) for v in x):
        return None
    if not all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool) for v in y):
        return None
    style = {k: v for k, v in t.items() if k not in ("x", "y", "name")}
    marker = style.get("marker")
    if isinstance(style.get("text"), list) or (isinstance(marker, dict) and (
            isinstance(marker.get("color"), list) or isinstance(marker.get("size"), list))):
        if strict:
            return None
        style.pop("text", None)  # per-point attributes of an append cannot follow the points in our model
        style.pop("marker", None)
    ints = "".join(a for a, vs in (("x", x), ("y", y)) if vs and all(type(v) is int for v in vs))
    if ints:  # Visdom keeps the client's JSON as sent: integers come back as integers
        style[INTS_KEY] = ints
    name = t.get("name")
    return {"name": None if name is None else str(name), "x": x, "y": y, "style": style}


def plotly_mode(style: dict, npoints: int) -> str:
    """The trace's mode, or the one plotly.js picks when a raw trace has none (dual_axis_lines sends none)."""
    mode = style.get("mode")
    if mode is not None:
        return str(mode)
    return "lines+markers" if npoints < PTS_LINESONLY else "lines"


def xy_kind(traces: list[dict]) -> str:
    modes = (plotly_mode(t["style"] or {}, len(t["y"])) for t in traces)
    return "line" if any("lines" in m for m in modes) else "scatter"


def opts_of(body: dict) -> dict:
    opts = body.get("opts")
    return dict(opts) if isinstance(opts, dict) else {}


def image_wire(content: Any) -> dict:
    """{"src": "data:image/png;base64,..."} -> our image wire value (decoded and checked by the image kind)."""
    src = content.get("src") if isinstance(content, dict) else None
    m = _DATA_URI.match(src) if isinstance(src, str) else None
    if m is None:
        raise EventError("image: content.src must be a base64 data: URI")
    return {"mime": m.group(1), "data": m.group(2).strip()}


def create_events(env: str, win: str, body: dict) -> list[dict]:
    """The event(s) for Visdom's /events (create or overwrite a window)."""
    data = body.get("data")
    if not isinstance(data, list) or not data or not all(isinstance(t, dict) for t in data):
        raise EventError("data must be a non-empty list of objects")
    opts = opts_of(body)
    kind = data[0].get("type")
    ev: dict[str, Any] = {"op": "set", "env": env, "win": win, "opts": opts}
    if kind == "text":
        content = data[0].get("content", "")
        text = {**ev, "kind": "text", "content": visdom_text(content)}
        if isinstance(content, list):  # Visdom keeps the list: /win_data answers it as sent
            text["visdom_content"] = content
        return [text]
    if kind in ("image", "image_history"):
        content = data[0].get("content")
        # A saved image_history window holds a list: the first image creates the pane, the rest append.
        items = content if isinstance(content, list) and content else [content]
        if kind == "image_history":
            opts["store_history"] = True
        out = []
        for n, item in enumerate(items):
            caption = item.get("caption") if isinstance(item, dict) else None
            o = {**opts, "caption": caption} if caption is not None else dict(opts)
            step = {**ev, "opts": o} if n == 0 else {**ev, "op": "update", "mode": "append", "opts": o}
            out.append({**step, "kind": "image", "image": image_wire(item)})
        return out
    if kind == "properties":
        return [{**ev, "kind": "properties", "properties": data[0].get("content")}]
    if kind == "network":
        for key in ("directed", "showEdgeLabels", "showVertexLabels"):
            if key in data[0] and key not in opts:
                opts[key] = data[0][key]
        return [{**ev, "kind": "network", "graph": data[0].get("content")}]
    if kind == "embeddings":
        content = data[0].get("content")
        return [{**ev, "kind": "embeddings", "embeddings": content if isinstance(content, dict) else {}}]
    layout = body.get("layout") if isinstance(body.get("layout"), dict) else {}
    xy = [_xy_trace(t, strict=True) for t in data]
    if all(t is not None for t in xy):
        if layout:
            opts[LAYOUT_KEY] = layout
        return [{**ev, "kind": xy_kind(xy), "traces": xy}]
    return [{**ev, "kind": "figure", "figure": {"data": data, "layout": layout}}]


def update_events(env: str, win: str, body: dict, pane: PaneRecord | None, ntraces: int) -> list[dict] | str:
    """The event(s) for Visdom's /update, or the text Visdom answers when it refuses (status 200)."""
    append = bool(body.get("append"))
    if pane is None:
        if append:
            return create_events(env, win, body)
        return "win does not exist"
    if pane.kind == "embeddings":  # data is one object: {"update_type", "selected" | "points"}
        d = body.get("data") if isinstance(body.get("data"), dict) else {}
        mode = d.get("update_type")
        return [{"op": "update", "env": env, "win": win, "kind": "embeddings", "mode": mode, "embeddings": d,
                 "opts": {}}] if mode in ("EntitySelected", "RegionSelected") else []
    name = body.get("name")
    name = None if name is None else str(name)
    data = body.get("data")
    data = [t for t in data if isinstance(t, dict)] if isinstance(data, list) else []
    opts = {k: v for k, v in opts_of(body).items() if v is not None}
    if opts and pane.kind in ("line", "scatter", "figure"):  # Visdom's text/image_history updates skip update_window
        opts[WINDOW_KEY] = {**(pane.opts.get(WINDOW_KEY) or {}), **opts}
    layout = body.get("layout") if isinstance(body.get("layout"), dict) else {}
    ev: dict[str, Any] = {"op": "update", "env": env, "win": win, "kind": pane.kind, "name": name, "opts": opts}
    if pane.kind == "text":
        if not data:
            return [{**ev, "mode": "append", "content": ""}] if opts else []
        return [{**ev, "mode": "append", "content": visdom_text(data[0].get("content", ""))}]
    if pane.kind == "image":
        if not data:
            return []
        content = data[0].get("content")
        caption = content.get("caption") if isinstance(content, dict) else None
        if caption is not None:
            ev["opts"]["caption"] = caption
        mode = "append" if data[0].get("type") == "image_history" else "replace"  # store_history keeps the old
        return [{**ev, "mode": mode, "image": image_wire(content)}]
    if pane.kind == "properties":
        return [{**ev, "mode": "replace", "properties": data[0].get("content")}] if data else []
    if pane.kind == "network":
        return [{**ev, "mode": "replace", "graph": data[0].get("content")}] if data else []
    if pane.kind == "figure":
        if body.get("delete"):
            return [{**ev, "mode": "remove", "traces": []}]
        mode = body.get("updateDir") if body.get("updateDir") in HEATMAP_MODES else "append" if append else "replace"
        return [{**ev, "mode": mode if data else "layout", "traces": data, "layout": layout}]
    if pane.kind in ("line", "scatter"):
        if layout:
            opts[LAYOUT_KEY] = {**(pane.opts.get(LAYOUT_KEY) or {}), **layout}
        if body.get("delete"):
            return [{**ev, "mode": "remove", "traces": []}]
        if not data:  # update_window_opts: one masked (skipped) trace per stored trace carries the opts
            return [{**ev, "mode": "append", "traces": [{"x": [None], "y": [None]}] * max(ntraces, 1)}]
        traces = [_xy_trace(t, strict=False) for t in data]
        if any(t is None for t in traces):
            raise EventError("this update does not fit a line/scatter pane (3-D or non-numeric data)")
        if name is not None:
            traces = traces[:1]
        return [{**ev, "mode": "append" if append else "replace", "traces": traces}]
    return f"win is not scatter, heatmap, custom, image_history, embeddings, or text; was {pane.kind}"


def window_json(store: Store, pane: PaneRecord) -> dict:
    """Visdom's window dict (§2.2) rendered from our model: every stored point, images as data URIs."""
    opts = pane.opts or {}
    title = opts.get("title")
    win: dict[str, Any] = {"command": "window", "id": pane.win, "title": "" if title is None else str(title),
                           "inflate": opts.get("inflate", True), "width": opts.get("width"),
                           "height": opts.get("height"), "contentID": str(pane.version), "i": pane.position}
    content = pane.content or {}
    if pane.kind == "text":
        raw = content.get("visdom_content")
        win.update(type="text", content=raw if isinstance(raw, list) else content.get("html", ""))
    elif pane.kind == "image":
        history = content.get("history")
        if history:
            win.update(type="image_history", selected=len(history) - 1, show_slider=opts.get("show_slider", True),
                       content=[{"src": _data_uri(store, h.get("blob")), "caption": h.get("caption")} for h in history])
        else:
            win.update(type="image", content={"src": _data_uri(store, content.get("blob")),
                                              "caption": opts.get("caption")})
    elif pane.kind == "network":
        win.update(type="network", content={"nodes": content.get("nodes", []), "edges": content.get("edges", [])},
                   directed=opts.get("directed", False), showEdgeLabels=opts.get("showEdgeLabels", "hover"),
                   showVertexLabels=opts.get("showVertexLabels", True))
    elif pane.kind == "embeddings":
        win.update(type="embeddings", old_content=content.get("old_content", []),
                   content={"data": content.get("data", []), "selected": content.get("selected"),
                            "has_previous": bool(content.get("old_content"))})
    elif pane.kind == "properties":
        win.update(type="properties", content=content.get("properties", []))
    elif pane.kind == "figure":
        win.update(type="plot", content={"data": content.get("data", []), "layout": content.get("layout", {})})
    else:
        data = []
        for t in store.list_traces(pane):
            blocks = list(store.export_series(t))
            xs = [v for b in blocks for v in b[0].tolist()]
            ys = [v for b in blocks for v in b[1].tolist()]
            style = dict(t.style or {})
            ints = str(style.pop(INTS_KEY, ""))
            data.append({"type": "scatter", **style, "x": _ints(xs) if "x" in ints else xs,
                         "y": _ints(ys) if "y" in ints else ys, "name": t.name})
        layout = opts.get(LAYOUT_KEY) or {"title": pane.title}
        win.update(type="plot", content={"data": data, "layout": layout})
    extra = opts.get(WINDOW_KEY)
    if isinstance(extra, dict):  # Visdom's update_window: p[opt] = value for every opt of every /update
        win.update({k: v for k, v in extra.items() if k not in ("content", "type", "command", "id")})
    return win


def _ints(values: list) -> list:
    return [int(v) if isinstance(v, float) and v.is_integer() else v for v in values]


def _data_uri(store: Store, blob: Any) -> str:
    found = store.get_blob(blob) if isinstance(blob, str) else None
    return f"data:{found[0]};base64,{base64.b64encode(found[1]).decode()}" if found else ""


def window_events(env: str, win: str, window: Any) -> list[dict]:
    """/win_data set: a Visdom window dict back into events (what a saved window holds)."""
    if not isinstance(window, dict):
        raise EventError("window must be an object")
    opts = {k: window[k] for k in ("title", "width", "height") if window.get(k) is not None}
    kind, content = window.get("type"), window.get("content")
    if kind == "plot":
        content = content if isinstance(content, dict) else {}
        evs = create_events(env, win, {"data": content.get("data"), "layout": content.get("layout"), "opts": opts})
        # What update_window put on the window (mode, markers, markersize, fillarea ...): the opts of the /update
        # that put it there, kept as the live /update keeps them, so an imported window equals the live one.
        extra = {k: v for k, v in window.items() if k not in _WINDOW_FIELDS and v is not None}
        if extra and evs[0]["kind"] in ("line", "scatter", "figure"):
            evs[0]["opts"] = {**evs[0]["opts"], **extra, WINDOW_KEY: extra}
        return evs
    return create_events(env, win, {"data": [{"type": kind, "content": content}], "opts": opts})


# The keys Visdom's window() writes itself (server_utils.window); any other key of a saved window is an opt.
_WINDOW_FIELDS = frozenset(("command", "id", "title", "inflate", "width", "height", "contentID", "i", "type", "content",
                            "selected", "show_slider", "directed", "showEdgeLabels", "showVertexLabels", "old_content"))
