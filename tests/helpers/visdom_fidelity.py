"""What Visdom 0.2.4 draws for a window (its plotly.js 2.11 semantics, from the window dict /win_data returns), what
paneboard drew for it in Chromium, and the differences between the two."""

from __future__ import annotations

import html.parser
import json
import re
from typing import Any

import numpy as np

from .visdom_examples import (
    image,
    misc,
    plot_bar,
    plot_line,
    plot_scatter,
    plot_special,
    plot_surface,
    properties,
    text,
)

SCATTER_TYPES = ("scatter", "scattergl", "custom")  # plotly draws an unknown type ("custom") as scatter
PTS_LINESONLY = 20  # plotly.js: a scatter trace without mode is lines+markers below this many points
MATH = re.compile(r"\$[^$]+\$")
GENERATED = re.compile(r"window_[0-9a-f]{8,32}")


OFFLINE = ("misc_video_download", "misc_audio_download")  # they fetch from the internet
GROUPS = {m.__name__.rsplit(".", 1)[1]: m for m in (text, image, plot_line, plot_scatter, plot_bar, plot_surface,
                                                     plot_special, properties, misc)}
# Visdom's demo.py runs every function of these prefixes (properties_* too, when named with -run).
DEMOS = [(group, name) for group, mod in GROUPS.items() for name in vars(mod)
         if name.split("_")[0] in ("text", "image", "plot", "misc", "properties") and callable(vars(mod)[name])
         and vars(mod)[name].__module__ == mod.__name__ and name not in OFFLINE]


def run_demos(viz: Any) -> dict[str, list[tuple[str, str]]]:
    """Run every demo with numpy seeded as `demo.py -testing`, env `fid_<component file>`; returns, per demo, the
    (env, win) it created or changed, in order (generated window ids differ between servers, the order does not)."""
    touched: dict[str, list[tuple[str, str]]] = {}
    current = [""]
    send = viz._send

    def recording_send(msg, endpoint="events", quiet=False, from_log=False, create=True):
        out = send(msg, endpoint=endpoint, quiet=quiet, from_log=from_log, create=create)
        if endpoint in ("events", "update", "win_data", "close") and msg.get("win"):
            touched[current[0]].append((msg["eid"], str(msg["win"])))
        return out

    viz._send = recording_send
    np.random.seed(42)
    try:
        for group, name in DEMOS:
            current[0] = name
            touched[name] = []
            getattr(GROUPS[group], name)(viz, f"fid_{group}", [])
    finally:
        viz._send = send
    return {k: list(dict.fromkeys(v)) for k, v in touched.items()}


def env_windows(viz: Any) -> dict[str, dict[str, dict]]:
    """Every window of every demo env, as /win_data returns them."""
    out = {}
    for group in GROUPS:
        raw = json.loads(viz.get_window_data(env=f"fid_{group}"))
        out[f"fid_{group}"] = {k: json.loads(w) if isinstance(w, str) else w for k, w in raw.items()}
    return out


def pictures(touched: dict[str, list[tuple[str, str]]], windows: dict[str, dict[str, dict]]) -> dict[str, list]:
    """Per demo, the expected picture of each window it touched that exists at the end (None: gone), in order."""
    return {name: [{**expected(windows[env][win]), "facts": window_facts(windows[env][win])}
                   if win in windows.get(env, {}) else None for env, win in wins]
            for name, wins in touched.items()}


def window_facts(window: dict) -> dict:
    """The parts of a /win_data window a get_window_data user reads besides the picture: its top-level keys
    (Visdom copies every opt of an /update there) and which trace axes hold only integers."""
    content = window.get("content")
    data = content.get("data", []) if window.get("type") == "plot" and isinstance(content, dict) else []
    ints = [[a for a in ("x", "y") if isinstance(t.get(a), list) and t[a] and
             all(type(v) is int for v in t[a] if v is not None)] for t in data]
    return {"keys": sorted(k for k in window if k != "contentID"), "ints": ints}


def _title(v: Any) -> str | None:
    """An axis/layout title as plotly.js 2 read it: a string or {"text": ...}."""
    t = v.get("title") if isinstance(v, dict) else None
    if isinstance(t, dict):
        t = t.get("text")
    return None if t is None or t == "" else str(t)


class _Text(html.parser.HTMLParser):
    """The visible text of an HTML fragment: nothing inside <svg>, <style>, <script>, media."""

    HIDDEN = {"svg", "style", "script", "audio", "video"}

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1
        elif tag == "br":
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def visible_text(fragment: str) -> str:
    p = _Text()
    p.feed(fragment)
    return " ".join("".join(p.parts).split())


def _mode(t: dict) -> str:
    n = len(t.get("y") or t.get("x") or [])
    return str(t["mode"]) if t.get("mode") is not None else "lines+markers" if n < PTS_LINESONLY else "lines"


def expected(window: dict) -> dict:
    """What Visdom's browser UI shows for one window dict."""
    kind, content = window.get("type"), window.get("content")
    out: dict[str, Any] = {"type": kind, "title": window.get("title") or None}
    if kind == "plot":
        data, layout = content.get("data", []), content.get("layout", {})
        out["title"] = out["title"] or _title(layout)
        out["traces"] = [{"type": "scatter" if t.get("type", "scatter") in SCATTER_TYPES else t.get("type"),
                          "mode": _mode(t) if t.get("type", "scatter") in SCATTER_TYPES else None} for t in data]
        axes = {k: _title(v) for k, v in layout.items() if re.fullmatch(r"[xy]axis\d*", k)}
        for scene in (k for k in layout if re.fullmatch(r"scene\d*", k)):
            axes.update({f"{scene}.{a}": _title(layout[scene].get(a)) for a in ("xaxis", "yaxis", "zaxis")})
        out["axes"] = {k: v for k, v in axes.items() if v}
        out["heatmaps"] = [[len(t["z"]), len(t["z"][0]) if t["z"] else 0, len(t["x"]) if t.get("x") else None,
                            len(t["y"]) if t.get("y") else None] for t in data if t.get("type") == "heatmap"]
        show = layout.get("showlegend", len(data) > 1)
        out["legend_math"] = sum(1 for t in data if MATH.search(str(t.get("name") or ""))) if show else 0
    elif kind == "text":
        out["text"] = visible_text(content)
        out["svg"] = "<svg" in content
        out["svg_round_joins"] = "stroke-linejoin: round" in content
        out["media"] = sorted({m for m in ("audio", "video") if f"<{m}" in content})
    elif kind == "properties":
        out["properties"] = len(content)
    return out


# Run in the page for one card: what Plotly and the pane modules actually drew.
DRAWN_JS = r"""win => {
  const card = document.querySelector(`[data-win="${CSS.escape(win)}"]`);
  if (!card) return null;
  const body = card.querySelector('.card-body');
  const out = {title: card.querySelector('.card-title').textContent, kind: card.dataset.kind};
  const gd = card.querySelector('.js-plotly-plot');
  if (gd && gd._fullData) {
    const fam = (t) => (t === 'scattergl' ? 'scatter' : t);
    out.traces = gd._fullData.map((t) => ({type: fam(t.type), mode: /^scatter(gl)?$/.test(t.type) ? t.mode : null}));
    const fl = gd._fullLayout;
    out.axes = {};
    for (const k of Object.keys(fl)) {
      const m = /^([xy])axis(\d*)$/.exec(k);
      if (!m || !fl[k].title) continue;
      const id = m[1] + m[2];
      const el = gd.querySelector(`text.${id}title`);
      const math = gd.querySelector(`g.${id}title-math-group svg`);
      out.axes[k] = {text: fl[k].title.text || '', dom: el ? el.textContent : '', math: !!math};
    }
    for (const k of Object.keys(fl).filter((k) => /^scene\d*$/.test(k))) {
      for (const a of ['xaxis', 'yaxis', 'zaxis']) {
        const t = fl[k][a] && fl[k][a].title ? fl[k][a].title.text : '';
        out.axes[`${k}.${a}`] = {text: t || '', dom: t || '', math: false};  // WebGL: drawn from the layout
      }
    }
    out.heatmaps = gd.data.filter((t) => t.type === 'heatmap').map((t) => [t.z.length, t.z.length ? t.z[0].length : 0,
      Array.isArray(t.x) ? t.x.length : null, Array.isArray(t.y) ? t.y.length : null]);
    out.legend_math = gd.querySelectorAll('g.legendtext-math-group svg, g[class*="legendtext-math-group"] svg').length;
    out.plot_title = fl.title && fl.title.text ? fl.title.text : null;
    // tick labels and axis titles cut by the plot's edge (a y2 axis in a 10 px right margin)
    const g = gd.getBoundingClientRect();
    out.clipped = [...gd.querySelectorAll('g[class$="tick"] text, g[class$="tick2"] text, text[class$="title"]')]
      .map((t) => [t.textContent, t.getBoundingClientRect()])
      .filter(([s, r]) => s && r.width && (r.left < g.left - 1 || r.right > g.right + 1 || r.top < g.top - 1 ||
                                           r.bottom > g.bottom + 1)).map(([s]) => s);
  }
  const text = card.querySelector('.text-pane');
  if (text) {
    out.text = text.innerText.split(/\s+/).filter(Boolean).join(' ');
    const svg = text.querySelector('svg');
    if (svg) {
      const r = svg.getBoundingClientRect();
      const within = (b) => r.left >= b.left - 1 && r.right <= b.right + 1 && r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
      out.svg = {w: r.width, h: r.height, inside: r.width > 50 && r.height > 50 && within(body.getBoundingClientRect()) &&
                 within(text.getBoundingClientRect())};
      const path = svg.querySelector('path');
      out.svg.joins = path ? getComputedStyle(path).strokeLinejoin : null;
    }
    out.media = ['audio', 'video'].filter((m) => text.querySelector(m));
  }
  const img = card.querySelector('.image-pane img');
  if (img) out.image = img.complete && img.naturalWidth > 0;
  const props = card.querySelector('.properties-pane');
  if (props) out.properties = props.querySelectorAll('tr').length;
  return out;
}"""

# True once every card of the page has drawn (plot panes report their trace/point count when Plotly is done).
ALL_DRAWN_JS = r"""() => [...document.querySelectorAll('[data-win]')].every((card) => {
  const k = card.dataset.kind;
  if (!k) return false;
  if (['line', 'scatter', 'figure'].includes(k)) {
    const gd = card.querySelector('.js-plotly-plot');
    return !!(gd && gd._fullLayout && card.querySelector('.card-info').textContent);
  }
  if (k === 'image') { const i = card.querySelector('img'); return !!(i && i.complete && i.naturalWidth); }
  if (k === 'network') { const gd = card.querySelector('.js-plotly-plot'); return !!(gd && gd._fullLayout); }
  return !!card.querySelector('.text-pane, .properties-pane, .pane-error');
})"""


def differences(exp: dict, drawn: dict | None, win: str) -> list[str]:
    """What the reader sees differently from Visdom (empty: drawn-equal)."""
    if drawn is None:
        return [f"{win}: not drawn"]
    out = []
    title = exp.get("title")
    if title and drawn["title"] != str(title):
        out.append(f"{win}: card title {drawn['title']!r}, Visdom shows {title!r}")
    if not title and GENERATED.fullmatch(drawn["title"]):
        out.append(f"{win}: the card shows the generated id {drawn['title']!r}")
    if exp["type"] == "plot":
        if [t["type"] for t in drawn.get("traces", [])] != [t["type"] for t in exp["traces"]]:
            out.append(f"{win}: trace types {drawn.get('traces')} != {exp['traces']}")
        else:
            for i, (d, e) in enumerate(zip(drawn["traces"], exp["traces"], strict=True)):
                if e["mode"] is not None and d["mode"] != e["mode"]:
                    out.append(f"{win}: trace {i} mode {d['mode']!r}, Visdom draws {e['mode']!r}")
        for axis, text in exp["axes"].items():
            d = drawn.get("axes", {}).get(axis)
            math = MATH.search(text) is not None
            if d is None or d["text"] != text or not (d["dom"] == text or (math and d["math"])):
                out.append(f"{win}: axis {axis} title {d!r}, Visdom draws {text!r}")
        if exp["heatmaps"] != drawn.get("heatmaps", []):
            out.append(f"{win}: heatmap [rows, cols, x labels, y labels] {drawn.get('heatmaps')} != {exp['heatmaps']}")
        if drawn.get("clipped"):
            out.append(f"{win}: labels cut off at the plot's edge: {drawn['clipped'][:5]}")
        if drawn.get("legend_math", 0) < exp["legend_math"]:
            out.append(f"{win}: {drawn.get('legend_math')} of {exp['legend_math']} TeX legend entries typeset")
    elif exp["type"] == "text":
        if exp["text"] != drawn.get("text"):
            out.append(f"{win}: text {drawn.get('text')!r:.80} != {exp['text']!r:.80}")
        if exp["svg"]:
            svg = drawn.get("svg")
            if not svg or not svg["inside"]:
                out.append(f"{win}: the SVG does not fit its card: {svg}")
            elif exp["svg_round_joins"] and svg["joins"] != "round":
                out.append(f"{win}: the SVG's own <style> is lost (stroke-linejoin {svg['joins']!r})")
        if exp["media"] != sorted(drawn.get("media", [])):
            out.append(f"{win}: media {drawn.get('media')} != {exp['media']}")
    elif exp["type"] in ("image", "image_history"):
        if not drawn.get("image"):
            out.append(f"{win}: image not drawn")
    elif exp["type"] == "properties":
        if drawn.get("properties") != exp["properties"]:
            out.append(f"{win}: {drawn.get('properties')} property rows, Visdom shows {exp['properties']}")
    return out
