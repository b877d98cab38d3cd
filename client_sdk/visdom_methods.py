"""Visdom's remaining plot kinds and env/window queries for paneboard.Client (mixed in; figures are `figure` panes)."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Mapping
from time import time as _now
from typing import Any

import numpy as np

from .callbacks import EventListener
from .convert import as_float_array, to_numpy
from .protocol import new_win_id

_HEATMAP_UPDATES = ("appendRow", "appendColumn", "prependRow", "prependColumn")
HTTP_TIMEOUT = 30.0


def _clean(d: Any) -> Any:
    """Drop None values recursively (Visdom's _scrub_dict), so absent opts do not reach Plotly."""
    if isinstance(d, dict):
        return {k: _clean(v) for k, v in d.items() if v is not None}
    return d


def opts_to_layout(opts: Mapping[str, Any] | None, is3d: bool = False) -> dict[str, Any]:
    """Visdom's _opts2layout: title, margins, axis labels/types/ranges, stacking, layoutopts.plotly."""
    o = dict(opts or {})
    layout: dict[str, Any] = {
        "showlegend": o.get("showlegend", "legend" in o), "title": o.get("title"),
        "margin": {"l": o.get("marginleft", 0 if is3d else 60), "r": o.get("marginright", 60),
                   "t": o.get("margintop", 20 if is3d else 60), "b": o.get("marginbottom", 0 if is3d else 60)}}
    axes = {}
    for ax in ("x", "y", "z"):
        fmt = {"type": o.get(f"{ax}type"), "title": o.get(f"{ax}label"), "tickvals": o.get(f"{ax}tickvals"),
               "ticktext": o.get(f"{ax}ticklabels"), "dtick": o.get(f"{ax}tickstep")}
        if o.get(f"{ax}tickmin") is not None and o.get(f"{ax}tickmax") is not None:
            fmt["range"] = [o[f"{ax}tickmin"], o[f"{ax}tickmax"]]
        if any(v is not None for v in fmt.values()):
            axes[f"{ax}axis"] = fmt
    if is3d:
        layout["scene"] = axes
    else:
        layout.update({k: v for k, v in axes.items() if k != "zaxis"})
    if o.get("stacked"):
        layout["barmode"] = "stack"
    layout.update(((o.get("layoutopts") or {}).get("plotly")) or {})
    return _clean(layout)


def _matrix(X: Any, what: str) -> np.ndarray:
    a = as_float_array(X, what)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2:
        raise ValueError(f"{what} must be N or N×M, got shape {a.shape}")
    return a


def _nan_list(a: np.ndarray) -> list:
    """Floats with NaN as None (JSON null), which Plotly shows as a gap."""
    return [None if v != v else v for v in a.tolist()]


class VisdomMethods:
    """Visdom methods beyond line/scatter/text/image. Plots are stored whole as `figure` panes, so they suit
    figures of modest size; use line/scatter for long streamed series.

    win_exists, get_window_data, set_window_data, get_env_list, win_hash, save, update_window_opts and `_send`
    first flush the event stream (so they see or follow every earlier call), then make one synchronous HTTP
    request to the server's Visdom endpoints: unlike the plotting calls, they block and need the server up.
    """

    env: str
    transport: Any
    url: str

    # ------------------------------------------------------------------------------------ figures
    def _figure(self, data: list[dict], layout: dict, win: str | None, env: str | None,
                opts: Mapping[str, Any] | None, mode: str | None = None, name: str | None = None) -> str:

        if opts is not None and not isinstance(opts, Mapping):
            raise TypeError(f"opts must be a dict, got {type(opts).__name__}")
        if win is None:
            if mode is not None:
                raise ValueError(f"update={mode!r} needs win (the pane to update)")
            win = new_win_id()
        ev: dict[str, Any] = {"t": _now(), "op": "set" if mode is None else "update",
                              "env": self.env if env is None else env, "win": win, "kind": "figure",
                              "opts": dict(opts or {})}
        if mode is None:
            ev["figure"] = {"data": data, "layout": layout}
        else:
            ev.update(mode=mode, name=name, traces=data, layout=layout)
        self.transport.put(ev)
        return win

    def heatmap(self, X: Any, win: str | None = None, env: str | None = None, update: str | None = None,
                opts: Mapping[str, Any] | None = None) -> str:
        """Heatmap of an N×M matrix; update: None, "replace", "remove", appendRow/Column, prependRow/Column."""
        o = dict(opts or {})
        if update == "remove":
            return self._figure([], {}, win, env, None, "remove")
        z = _matrix(X, "X")
        trace = _clean({"z": [_nan_list(r) for r in z], "x": o.get("columnnames"), "y": o.get("rownames"),
                        "zmin": o.get("xmin"), "zmax": o.get("xmax"), "type": "heatmap",
                        "colorscale": o.get("colormap", "Viridis")})
        if update is None:
            return self._figure([trace], opts_to_layout(o), win, env, o)
        if update not in ("replace", *_HEATMAP_UPDATES):
            raise ValueError(f"heatmap: update must be None, replace, remove or one of {_HEATMAP_UPDATES}")
        return self._figure([trace], {}, win, env, None, update)

    def bar(self, X: Any, Y: Any = None, win: str | None = None, env: str | None = None,
            opts: Mapping[str, Any] | None = None) -> str:
        """Bars: one trace per column of X (N or N×M); Y or opts.rownames label the N groups."""
        o = dict(opts or {})
        x = _matrix(X, "X")
        labels = o.get("rownames") or (to_numpy(Y).tolist() if Y is not None else list(range(1, len(x) + 1)))
        legend = o.get("legend") or []
        data = [_clean({"y": _nan_list(x[:, k]), "x": labels, "type": "bar",
                        "name": str(legend[k]) if k < len(legend) else None}) for k in range(x.shape[1])]
        return self._figure(data, opts_to_layout(o), win, env, o)

    def histogram(self, X: Any, win: str | None = None, env: str | None = None,
                  opts: Mapping[str, Any] | None = None) -> str:
        """Histogram of the values of X in opts.numbins bins (default min(30, N))."""
        x = as_float_array(X, "X").ravel()
        o = dict(opts or {})
        bins = int(o.get("numbins", min(30, len(x))))
        counts, edges = np.histogram(x, bins=max(bins, 1))
        return self.bar(counts, Y=np.linspace(edges[0], edges[-1], len(counts)), win=win, env=env, opts=o)

    def boxplot(self, X: Any, win: str | None = None, env: str | None = None,
                opts: Mapping[str, Any] | None = None) -> str:
        """One box per column of X."""
        o = dict(opts or {})
        x = _matrix(X, "X")
        legend = o.get("legend") or []
        data = [{"y": _nan_list(x[:, k]), "type": "box",
                 "name": str(legend[k]) if k < len(legend) else f"column {k}"} for k in range(x.shape[1])]
        return self._figure(data, opts_to_layout(o), win, env, o)

    def _zplot(self, X: Any, kind: str, win: str | None, env: str | None, opts: Mapping[str, Any] | None) -> str:
        o = dict(opts or {})
        z = _matrix(X, "X")
        trace = {"z": [_nan_list(r) for r in z], "cmin": o.get("xmin", float(np.nanmin(z))),
                 "cmax": o.get("xmax", float(np.nanmax(z))), "type": kind, "colorscale": o.get("colormap", "Viridis")}
        return self._figure([trace], opts_to_layout(o, is3d=kind == "surface"), win, env, o)

    def surf(self, X: Any, win: str | None = None, env: str | None = None,
             opts: Mapping[str, Any] | None = None) -> str:
        """3-D surface of an N×M matrix."""
        return self._zplot(X, "surface", win, env, opts)

    def contour(self, X: Any, win: str | None = None, env: str | None = None,
                opts: Mapping[str, Any] | None = None) -> str:
        """Contour plot of an N×M matrix."""
        return self._zplot(X, "contour", win, env, opts)

    def pie(self, X: Any, win: str | None = None, env: str | None = None,
            opts: Mapping[str, Any] | None = None) -> str:
        """Pie chart of the N values of X; opts.legend names the slices."""
        o = dict(opts or {})
        trace = _clean({"values": _nan_list(as_float_array(X, "X").ravel()), "labels": o.get("legend"), "type": "pie"})
        return self._figure([trace], opts_to_layout(o), win, env, o)

    def sunburst(self, labels: Any, parents: Any, values: Any = None, win: str | None = None,
                 env: str | None = None, opts: Mapping[str, Any] | None = None) -> str:
        """Sunburst chart from labels and their parents (values optional)."""
        o = dict(opts or {})
        trace = _clean({"labels": list(labels), "parents": list(parents), "type": "sunburst",
                        "values": None if values is None else _nan_list(as_float_array(values, "values").ravel()),
                        "outsidetextfont": {"size": o.get("font_size"), "color": o.get("font_color")},
                        "leaf": {"opacity": o.get("opacity")}, "marker": {"line": {"width": o.get("marker_width")}}})
        return self._figure([trace], opts_to_layout(o), win, env, o)

    def mesh(self, X: Any, Y: Any = None, win: str | None = None, env: str | None = None,
             opts: Mapping[str, Any] | None = None) -> str:
        """3-D mesh: X holds N×3 vertices, Y (optional) M×3 triangle vertex indices."""
        o = dict(opts or {})
        v = _matrix(X, "X")
        if v.shape[1] != 3:
            raise ValueError("mesh: X must be N×3 (3-D vertices)")
        tri = to_numpy(Y).astype(int) if Y is not None else None
        trace = _clean({"x": v[:, 0].tolist(), "y": v[:, 1].tolist(), "z": v[:, 2].tolist(), "type": "mesh3d",
                        "i": None if tri is None else tri[:, 0].tolist(),
                        "j": None if tri is None else tri[:, 1].tolist(),
                        "k": None if tri is None else tri[:, 2].tolist(),
                        "color": o.get("color"), "opacity": o.get("opacity")})
        return self._figure([trace], opts_to_layout(o, is3d=True), win, env, o)

    def stem(self, X: Any, Y: Any = None, win: str | None = None, env: str | None = None,
             opts: Mapping[str, Any] | None = None) -> str:
        """Stem plot: a vertical segment from 0 to each value of X (N or N×M) at positions Y."""
        o = dict(opts or {})
        x = _matrix(X, "X")
        pos = as_float_array(Y, "Y").ravel() if Y is not None else np.arange(len(x), dtype=float)
        legend = o.get("legend") or []
        data = []
        for k in range(x.shape[1]):
            xs = np.repeat(pos, 3)
            ys = np.column_stack([np.zeros(len(x)), x[:, k], np.full(len(x), np.nan)]).ravel()
            xs[2::3] = np.nan  # NaN breaks the line between stems
            data.append({"x": _nan_list(xs), "y": _nan_list(ys), "type": "scatter", "mode": "lines",
                         "name": str(legend[k]) if k < len(legend) else str(k + 1)})
        return self._figure(data, opts_to_layout(o), win, env, o)

    def quiver(self, X: Any, Y: Any, gridX: Any = None, gridY: Any = None, win: str | None = None,
               env: str | None = None, opts: Mapping[str, Any] | None = None) -> str:
        """Arrows (X, Y) at the grid points (gridX, gridY), drawn as NaN-separated segments."""
        o = dict(opts or {})
        u, v = _matrix(X, "X"), _matrix(Y, "Y")
        gx = _matrix(gridX, "gridX") if gridX is not None else np.tile(np.arange(u.shape[1]), (u.shape[0], 1))
        gy = _matrix(gridY, "gridY") if gridY is not None else np.tile(np.arange(u.shape[0])[:, None], (1, u.shape[1]))
        if o.get("normalize"):
            scale = float(np.nanmax(np.hypot(u, v))) or 1.0
            u, v = u / scale, v / scale
        x0, y0 = gx.ravel(), gy.ravel()
        xs = np.column_stack([x0, x0 + u.ravel(), np.full(x0.size, np.nan)]).ravel()
        ys = np.column_stack([y0, y0 + v.ravel(), np.full(y0.size, np.nan)]).ravel()
        trace = {"x": _nan_list(xs), "y": _nan_list(ys), "type": "scatter", "mode": "lines"}
        return self._figure([trace], opts_to_layout(o), win, env, o)

    def dual_axis_lines(self, X: Any = None, Y1: Any = None, Y2: Any = None, opts: Mapping[str, Any] | None = None,
                        win: str | None = None, env: str | None = None) -> str:
        """Two lines sharing X, the second on a right-hand y axis."""
        o = {"height": 300, "width": 500, **(opts or {})}
        y1, y2 = as_float_array(Y1, "Y1").ravel(), as_float_array(Y2, "Y2").ravel()
        x = as_float_array(X, "X").ravel() if X is not None else np.arange(len(y1), dtype=float)
        data = [{"x": _nan_list(x), "y": _nan_list(y1), "type": "scatter", "name": o.get("legend1", "Y1")},
                {"x": _nan_list(x), "y": _nan_list(y2), "type": "scatter", "name": o.get("legend2", "Y2"),
                 "yaxis": "y2"}]
        layout = {"title": o.get("title"), "xaxis": {"title": o.get("xlabel")}, "yaxis": {"title": o.get("ylabel1")},
                  "yaxis2": {"title": o.get("ylabel2"), "overlaying": "y", "side": "right"}}
        return self._figure(data, _clean(layout), win, env, o)

    def svg(self, svgstr: str | None = None, svgfile: str | None = None, win: str | None = None,
            env: str | None = None, opts: Mapping[str, Any] | None = None) -> str:
        """An SVG drawing in a text pane (sanitized by the server when shown)."""
        if svgfile is not None:
            with open(svgfile, encoding="utf-8") as f:
                svgstr = f.read()
        m = re.search(r"<svg .+</svg>", svgstr or "", re.DOTALL)
        if m is None:
            raise ValueError("svg: no <svg ...>...</svg> element found")
        return self.text(m.group(0), win=win, env=env, opts=opts)  # type: ignore[attr-defined]

    def properties(self, data: list[dict[str, Any]], win: str | None = None, env: str | None = None,
                   opts: Mapping[str, Any] | None = None) -> str:
        """Property editor: fields {"type": text|number|button|checkbox|select, "name", "value"[, "values"]};
        edits in the browser arrive as PropertyUpdate events (visdom.Visdom.register_event_handler)."""

        win = new_win_id() if win is None else win
        self.transport.put({"t": _now(), "op": "set", "env": self.env if env is None else env, "win": win,
                            "kind": "properties", "opts": dict(opts or {}), "properties": list(data)})
        return win

    def graph(self, edges: Any, edgeLabels: Any = None, nodeLabels: Any = None,
              opts: Mapping[str, Any] | None = None, env: str | None = None, win: str | None = None) -> str:
        """Network graph from (source, target) pairs over nodes 0..n-1 (Visdom's graph, without networkx)."""

        pairs = [(int(a), int(b)) for a, b in edges]
        n = max((max(p) for p in pairs), default=-1) + 1
        if nodeLabels is not None and len(nodeLabels) != n:
            raise ValueError(f"graph: {len(nodeLabels)} nodeLabels for {n} nodes")
        if edgeLabels is not None and len(edgeLabels) != len(pairs):
            raise ValueError(f"graph: {len(edgeLabels)} edgeLabels for {len(pairs)} edges")
        nodes = [{"name": i, "label": str(nodeLabels[i]) if nodeLabels is not None else str(i)} for i in range(n)]
        links = [{"source": a, "target": b, "label": str(edgeLabels[k]) if edgeLabels is not None else f"{a}-{b}"}
                 for k, (a, b) in enumerate(pairs)]
        o = {"directed": False, "showVertexLabels": True, "showEdgeLabels": False, **(opts or {})}
        win = new_win_id() if win is None else win
        self.transport.put({"t": _now(), "op": "set", "env": self.env if env is None else env, "win": win,
                            "kind": "network", "opts": o, "graph": {"nodes": nodes, "edges": links}})
        return win

    def register_event_handler(self, handler: Any, target: str) -> None:
        """Call handler(event) for browser events on pane `target` (KeyPress, Click, PropertyUpdate, close...).

        Events arrive on a background thread over the server's /vis_socket, as with Visdom's client.
        """
        if getattr(self, "_events", None) is None:
            url = self.transport.url.rsplit("/ingest", 1)[0] + "/vis_socket"
            self._events = EventListener(url, self.transport.token)
        self._events.register(handler, target)

    def clear_event_handlers(self, target: str | None = None) -> None:
        if getattr(self, "_events", None) is not None:
            self._events.clear(target)

    def fork_env(self, prev_eid: str, eid: str) -> str:
        """Copy env prev_eid to eid (after every event sent before this call)."""
        self.transport.put({"t": _now(), "op": "fork_env", "env": eid, "from": prev_eid, "win": None})
        return eid

    # --------------------------------------------------------------------------- synchronous queries
    def _http(self, endpoint: str, msg: dict[str, Any]) -> str:
        self.transport.flush(HTTP_TIMEOUT)  # earlier calls are applied before the query looks
        base = re.sub(r"^ws", "http", self.url).rsplit("/ingest", 1)[0]
        req = urllib.request.Request(f"{base}/{endpoint}", data=json.dumps(msg).encode(), method="POST")
        try:
            with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as r:
                return r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.read().decode()  # as Visdom's client: the body goes to the caller

    def _send(self, msg: dict[str, Any], endpoint: str = "events", quiet: bool = False, from_log: bool = False,
              create: bool = True) -> str:
        """A raw Visdom request (e.g. an arbitrary Plotly figure to `events`), sent synchronously."""
        msg = dict(msg)
        msg["eid"] = msg.get("eid") or self.env
        return self._http(endpoint, msg)

    def win_exists(self, win: str, env: str | None = None) -> bool | None:
        return {"true": True, "false": False}.get(self._http("win_exists", {"win": win, "eid": env or self.env}))

    def win_hash(self, win: str, env: str | None = None) -> str | None:
        out = self._http("win_hash", {"win": win, "eid": env or self.env})
        return None if out == "false" else out

    def get_window_data(self, win: str | None = None, env: str | None = None) -> str:
        return self._http("win_data", {"win": win, "eid": env or self.env})

    def set_window_data(self, data: str, win: str | None = None, env: str | None = None) -> str:
        return self._http("win_data", {"win": win, "eid": env or self.env, "data": data})

    def get_env_list(self) -> list[str]:
        return json.loads(self._http("env_state", {}))

    def save(self, envs: list[str]) -> str:
        """Everything is saved as it arrives; returns the JSON list of those envs that exist, like Visdom."""
        return self._http("save", {"data": list(envs)})

    def update_window_opts(self, win: str, opts: Mapping[str, Any], env: str | None = None) -> str:
        return self._http("update", {"win": win, "eid": env or self.env, "opts": dict(opts),
                                     "layout": opts_to_layout(opts)})
