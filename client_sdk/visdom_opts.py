"""Visdom plot opts on our wire: per-trace Plotly styles, trace names, and the opts a pane keeps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

# opts keys that become per-trace Plotly style (and, like Visdom, are not kept in the stored opts).
STYLE_ONLY = frozenset(("dash", "linecolor", "markercolor"))
STYLE_KEYS = STYLE_ONLY | {"markersize", "markersymbol", "fillarea", "mode"}


def rgb_hex(c: Any) -> str:
    if isinstance(c, str):
        return c
    a = np.asarray(c, dtype=np.float64).ravel()
    if a.size != 3:
        raise ValueError(f"a color must be a string or 3 ints (R, G, B), got {c!r}")
    r, g, b = (int(v) for v in np.clip(np.rint(a), 0, 255))
    return f"#{r:02x}{g:02x}{b:02x}"


def per_trace(opts: Mapping[str, Any], key: str, k: int, n: int, color: bool = False) -> Any:
    """Value of a per-trace style option for trace k of n: one value for all, or a list/array of n values."""
    v = opts.get(key)
    if v is None or isinstance(v, str):
        return v
    if color:
        a = np.asarray(v)
        if a.ndim == 1 and a.size == 3 and a.dtype.kind in "iuf":
            return rgb_hex(a)  # one RGB triple for every trace
        if len(a) != n:
            raise ValueError(f"opts.{key} needs one entry per trace ({n}), got {len(a)}")
        return rgb_hex(a[k].tolist() if a.ndim == 2 else str(a[k]))
    if isinstance(v, (list, tuple, np.ndarray)):
        if len(v) != n:
            raise ValueError(f"opts.{key} needs one entry per trace ({n}), got {len(v)}")
        return v[k].item() if isinstance(v[k], np.generic) else v[k]
    return v


def trace_styles(opts: Mapping[str, Any] | None, n: int, mode: str) -> list[dict[str, Any]]:
    """Plotly trace styles from Visdom opts (mode, dash, linecolor, markersize, markersymbol, markercolor)."""
    if not opts:
        return [{"mode": mode} for _ in range(n)]
    out = []
    for k in range(n):
        st: dict[str, Any] = {"mode": opts.get("mode") or mode}
        line = {"dash": per_trace(opts, "dash", k, n), "color": per_trace(opts, "linecolor", k, n, True)}
        marker = {"size": opts.get("markersize"), "symbol": opts.get("markersymbol"),
                  "color": per_trace(opts, "markercolor", k, n, True)}
        if any(v is not None for v in line.values()):
            st["line"] = {a: v for a, v in line.items() if v is not None}
        if any(v is not None for v in marker.values()):
            st["marker"] = {a: v for a, v in marker.items() if v is not None}
        if opts.get("fillarea"):
            st["fill"] = "tonexty"
        out.append(st)
    return out


def trace_name(opts: Mapping[str, Any] | None, name: str | None, k: int, n: int, label: int | None = None) -> str:
    """Visdom naming: `name` for a single trace, else opts.legend[k], else "1".."n" (or the scatter label)."""
    if name is not None:
        if n != 1:
            raise ValueError("name= names one trace; use opts['legend'] to name several")
        return str(name)
    legend = opts.get("legend") if opts else None
    if legend is not None and k < len(legend):
        return str(legend[k])
    return str(label if label is not None else k + 1)


def check_opts(opts: Any) -> None:
    if opts is not None and not isinstance(opts, Mapping):
        raise TypeError(f"opts must be a dict, got {type(opts).__name__}")


def wire_opts(opts: Mapping[str, Any] | None, drop: frozenset[str] = frozenset()) -> Mapping[str, Any]:
    # No defensive copy: put() encodes the event before the call returns.
    if not opts:
        return {}
    return {k: v for k, v in opts.items() if k not in drop} if drop & opts.keys() else opts
