"""One self-contained HTML file of an env or a compare view: Plotly, the data and a small renderer all inline."""

from __future__ import annotations

import base64
import hashlib
import html
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import plotly

from .. import __version__, jsonio
from .sniff import sniff

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
MAX_INLINE_BLOBS = 64 * 1024 * 1024  # images embedded as data: URIs, in all; beyond it a pane says it was left out
# The file may load nothing from anywhere: no network request can leave it, even if a pane's HTML tried. Its two
# scripts run by hash, so no other script (an inline handler slipped into a text pane) would.
CSP = ("default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; img-src data:; media-src data:; "
       "font-src data:")

_STYLE = """
body{margin:0;font:13px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;background:#f3f4f6;color:#1f2328}
header{padding:10px 14px;background:#fff;border-bottom:1px solid #d8dce1}
header h1{font-size:15px;margin:0}header p{margin:2px 0 0;color:#656d76;font-size:12px}
main{display:grid;grid-template-columns:repeat(auto-fill,minmax(440px,1fr));gap:10px;padding:10px}
section{background:#fff;border:1px solid #d8dce1;border-radius:6px;min-width:0}
section h2{font-size:13px;margin:0;padding:6px 10px;border-bottom:1px solid #eceef1}
.plot{height:320px}.body{padding:8px 10px;overflow:auto;max-height:420px}.body img{max-width:100%}
.note{color:#656d76;font-style:italic}
"""

# Draws every pane from the embedded JSON; sets body[data-drawn] to the number of panes drawn (tests read it).
_RENDER = """
(function () {
  var snap = JSON.parse(document.getElementById("snapshot").textContent);
  var main = document.querySelector("main");
  var COLORS = ["#1f77b4","#d62728","#2ca02c","#ff7f0e","#9467bd","#8c564b","#e377c2","#7f7f7f","#bcbd22","#17becf"];
  var drawn = 0;
  // Plotly reads <a href> and other tags in names and titles: escaped, they show as typed, never as links.
  function plain(s) { return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
  snap.panes.forEach(function (p, i) {
    var sec = document.createElement("section");
    sec.dataset.win = p.win; sec.dataset.kind = p.kind;
    var h = document.createElement("h2"); h.textContent = p.title || p.win; sec.appendChild(h);
    var body = document.createElement("div");
    sec.appendChild(body); main.appendChild(sec);
    var layout = {autosize: true, margin: {l: 48, r: 10, t: 10, b: 34}, font: {size: 11}, showlegend: true,
      legend: {orientation: "h", y: 1.02, yanchor: "bottom", font: {size: 10}}};
    if (p.note) {  // a pane left out (an image over the size limit, a pane whose stored content is malformed)
      body.className = "body note"; body.textContent = p.note;
    } else if (p.kind === "line" || p.kind === "scatter") {
      body.className = "plot";
      var traces = (p.traces || []).map(function (t, k) {
        var c = COLORS[(t.color === undefined ? k : t.color) % COLORS.length];
        return {type: "scatter", mode: p.kind === "scatter" ? "markers" : "lines", x: t.x, y: t.y,
          name: plain(t.label || t.name || ""), line: {width: 1.5, color: c}, marker: {size: 4, color: c}};
      });
      if ((p.opts || {}).ytype === "log") layout.yaxis = {type: "log"};
      layout.showlegend = traces.length > 1;
      Plotly.newPlot(body, traces, layout, {responsive: true, displaylogo: false}); drawn++;
    } else if (p.kind === "figure") {
      body.className = "plot";
      Plotly.newPlot(body, p.data.data || [], Object.assign(layout, p.data.layout || {}), {responsive: true, displaylogo: false});
      drawn++;
    } else if (p.kind === "text") {
      body.className = "body"; body.innerHTML = p.data.html || ""; drawn++;  // sanitized by the server (panes/text.py)
    } else if (p.kind === "image" && p.data.src) {
      body.className = "body"; var img = document.createElement("img"); img.src = p.data.src;
      img.alt = p.data.caption || p.title || ""; body.appendChild(img); drawn++;
    } else {
      body.className = "body note"; body.textContent = p.note || ("a " + p.kind + " pane: not part of snapshots");
    }
  });
  document.body.dataset.drawn = String(drawn);
})();
"""


@lru_cache(maxsize=1)
def _plotly_source() -> str:
    # Inside <script>, only "</script" could end the element early; the installed bundle has none, but be sure.
    return PLOTLY_JS.read_text(encoding="utf-8").replace("</script", "<\\/script")


def _script_hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


@lru_cache(maxsize=1)
def csp() -> str:
    """The snapshot's Content-Security-Policy (also sent as the download's header)."""
    return CSP.format(hashes=" ".join(_script_hash(src) for src in (_plotly_source(), _RENDER)))


def _json_for_script(obj: Any) -> str:
    # Safe inside <script type="application/json">: no "</script>" or "<!--" can appear.
    return jsonio.dumps(obj).decode().replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def inline_images(panes: list[dict], get_blob: Callable[[str], tuple[str, bytes] | None]) -> None:
    """Image panes' blob URLs become data: URIs (the file must open offline), within MAX_INLINE_BLOBS in all."""
    left = MAX_INLINE_BLOBS
    for p in panes:
        if p.get("kind") != "image" or p.get("note"):  # a note already says why it is not drawn
            continue
        data = p.get("data") or {}
        sha = str(data.get("src", "")).rpartition("/")[2]
        found = get_blob(sha) if sha else None
        mime = sniff(found[1]) if found is not None else None  # the bytes decide, not the stored label
        if found is None or mime is None or len(found[1]) > left or not mime.startswith("image/"):
            p["data"] = {}
            p["note"] = "image left out of this snapshot (missing or over the snapshot's size limit)"
            continue
        left -= len(found[1])
        p["data"] = {"src": f"data:{mime};base64,{base64.b64encode(found[1]).decode()}",
                     "caption": data.get("caption")}


def build(title: str, subtitle: str, panes: list[dict]) -> str:
    """The HTML file: `panes` are {kind, win, title, opts, data|traces[, note]} as the page draws them."""
    payload = {"title": title, "panes": panes, "version": __version__, "created": time.time()}
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp()}\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{html.escape(title)} · paneboard snapshot</title><style>{_STYLE}</style>"
        f"<script>{_plotly_source()}</script>"
        f"<script type=\"application/json\" id=\"snapshot\">{_json_for_script(payload)}</script>"
        "</head><body>"
        f"<header><h1>{html.escape(title)}</h1><p>{html.escape(subtitle)} · paneboard {__version__} snapshot, "
        f"{stamp}</p></header><main></main>"
        f"<script>{_RENDER}</script></body></html>\n"
    )
