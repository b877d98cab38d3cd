"""Text panes: HTML stored as sent, sanitized on every read (so policy fixes apply to old data too)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

import nh3

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, Store, StoreTx
from .common import merged_opts, no_steps, stored_object, title_of
from .contract import ReadOptions, StoredStep

KINDS = ("text",)
UPDATE_MODES = ("append", "replace")
READ_OPTIONS: tuple[str, ...] = ()
mergeable = merge = None  # each event is applied on its own
render_record = None  # not a stepped kind: no records for the /steps API
MAX_TEXT = 4 * 1024 * 1024
MAX_STORED_TEXT = 16 * MAX_TEXT  # what an import may bring: an archive member's own limit bounds it too


def validate(cmd: PaneCommand, raw: dict) -> dict:
    """The pane content: {"html"}, plus "visdom_content" when a Visdom client sent a list (the shown HTML is
    that list joined; /win_data gives the list back as Visdom does)."""
    content = raw.get("content", "")
    if not isinstance(content, str):
        raise EventError("text: content must be a string")
    if len(content) > MAX_TEXT:
        raise EventError(f"text: content longer than {MAX_TEXT} characters")
    listed = raw.get("visdom_content")
    if listed is not None and not isinstance(listed, list):
        raise EventError("text: visdom_content must be a list")
    return {"html": content} if listed is None or cmd.op != "set" else {"html": content, "visdom_content": listed}


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    pane = tx.get_pane(cmd.env, cmd.win)
    if cmd.op == "set" or pane is None:
        if cmd.op == "update" and cmd.mode != "append":
            raise EventError(f"pane {cmd.win!r} does not exist in env {cmd.env!r}")
        pane = tx.put_pane(cmd.env, cmd.win, "text", title_of(cmd.opts), cmd.opts, dict(cmd.payload))
        deltas.pane(pane.env, pane.win, pane.version)
        return
    if pane.kind not in KINDS:
        raise EventError(f"pane {cmd.win!r} is a {pane.kind} pane, not text")
    html = cmd.payload["html"]  # an append makes the content text (Visdom's own append of a list is garbled)
    if cmd.mode == "append":
        old = (pane.content or {}).get("html", "")
        html = f"{old}<br>{html}" if old else html
    opts = merged_opts(pane, cmd)
    pane = tx.update_pane(pane, content={"html": html}, opts=opts, title=title_of(opts))
    deltas.pane(pane.env, pane.win, pane.version)


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    """{"html"[, "visdom_content"]} as validate returns it; an append keeps html text too."""
    no_steps("text", steps)
    content = stored_object(content, "text", ("html", "visdom_content"))
    html = content.get("html")
    if not isinstance(html, str):
        raise EventError("text: html must be a string")
    # An append grows html past MAX_TEXT (each part was checked); a stored pane may hold some appends' worth.
    if len(html) > MAX_STORED_TEXT:
        raise EventError(f"text: html longer than {MAX_STORED_TEXT} characters")
    listed = content.get("visdom_content")
    if listed is not None and not isinstance(listed, list):
        raise EventError("text: visdom_content must be a list")
    return content


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    return {"html": sanitize((pane.content or {}).get("html", ""))}


# Visdom's svg/matplot/audio/video panes are text panes holding inline <svg> and <audio>/<video> with data: URIs:
# those elements are allowed with presentation attributes only (never event handlers), and every URL is checked
# by _url_filter (local "#id" references for SVG, data: URIs of images/media only).
_SVG_TAGS = {"svg", "g", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text", "tspan", "defs",
             "clippath", "clipPath", "use", "title", "desc", "lineargradient", "linearGradient", "radialgradient",
             "radialGradient", "stop", "symbol", "marker", "pattern", "mask"}
_SVG_ATTRS = {"width", "height", "viewbox", "viewBox", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry",
              "d", "points", "transform", "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width",
              "stroke-opacity", "stroke-linecap", "stroke-linejoin", "stroke-dasharray", "stroke-miterlimit",
              "opacity", "style", "id", "class", "font-family", "font-size", "font-weight", "font-style",
              "text-anchor", "dominant-baseline", "clip-path", "clip-rule", "offset", "stop-color", "stop-opacity",
              "preserveaspectratio", "preserveAspectRatio", "xmlns", "version", "href", "xlink:href", "dx", "dy",
              "mask", "marker-end", "marker-start", "orient", "refx", "refy", "refX", "refY", "markerwidth",
              "markerheight", "markerWidth", "markerHeight", "gradientunits", "gradientUnits", "clippathunits",
              "clipPathUnits"}
_MEDIA_ATTRS = {"controls", "autoplay", "loop", "muted", "src", "type", "width", "height", "preload"}
_TAGS = nh3.ALLOWED_TAGS | _SVG_TAGS | {"audio", "video", "source"}
_ATTRS = {**nh3.ALLOWED_ATTRIBUTES, **{t: _SVG_ATTRS for t in _SVG_TAGS},
          **{t: _MEDIA_ATTRS for t in ("audio", "video", "source")}}
_DATA_MEDIA = ("data:image/", "data:audio/", "data:video/")


def _url_filter(element: str, attribute: str, value: str) -> str | None:
    v = value.strip().lower()
    if attribute in ("href", "xlink:href") and element != "a":
        return value if v.startswith("#") else None  # SVG <use>/<pattern>: references inside the document only
    if attribute == "src" or (attribute == "href" and element == "a"):
        if v.startswith("data:"):
            return value if attribute == "src" and v.startswith(_DATA_MEDIA) and "svg" not in v[:20] else None
        return value
    if attribute == "style" and "url(" in v.replace(" ", "") and "url(#" not in v.replace(" ", ""):
        return None  # CSS that fetches something; local url(#id) paint servers are fine
    return value


def sanitize(html: str) -> str:
    """Strip scripts, event handlers and javascript: URLs; keep formatting, inline SVG and data: media, and the
    plain rules of the content's own <style> blocks (matplotlib's `*{stroke-linejoin: round}` inside an SVG,
    CycleGAN's `table td {outline: 4px solid black}` before its label table), scoped to this pane."""
    clean = nh3.clean(html, tags=_TAGS, attributes=_ATTRS, url_schemes=nh3.ALLOWED_URL_SCHEMES | {"data"},
                      attribute_filter=_url_filter, link_rel="noopener noreferrer")
    css = own_styles(html) if "<style" in html else []
    if not css:
        return clean
    rules = "".join(f"{', '.join(f'.SCOPE {sel}' for sel in sels)}{{{decls}}}" for sels, decls in css)
    scope = "svg-scope-" + hashlib.sha1(rules.encode()).hexdigest()[:10]
    rules = rules.replace("SCOPE", scope)
    return f'<div class="svg-scope {scope}"><style>{rules}</style>{clean}</div>'


_STYLE = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.S | re.I)
_SVG = re.compile(r"<svg\b.*?</svg\s*>", re.S | re.I)
_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_SELECTOR = re.compile(r"[\w.#*\- >+~:()]+")  # no quotes, brackets or escapes
_DECL = re.compile(r"([a-z-]+)\s*:\s*([\w#.,%() +-]+)")  # no url(), quotes, escapes, @ or ;
# Properties that would let a pane's rules cover or reorder the page around it (a full-window overlay).
_PAGE_PROPS = {"position", "z-index", "inset", "top", "left", "right", "bottom"}
_FETCHES = re.compile(r"url|expression", re.I)


def own_styles(html: str) -> list[tuple[list[str], str]]:
    """The rules of the content's <style> blocks as (selectors, declarations), keeping only what cannot fetch,
    escape or reach outside the pane: plain selectors (an SVG's own under "svg "; scoped by the caller) and plain
    property values."""
    svgs = [m.span() for m in _SVG.finditer(html)]
    out = []
    for m in _STYLE.finditer(html):
        in_svg = any(a <= m.start() < b for a, b in svgs)
        text = re.sub(r"/\*.*?\*/", "", m.group(1).replace("<![CDATA[", "").replace("]]>", ""), flags=re.S)
        if "@" in text or "\\" in text:
            continue  # @import, @font-face, escapes: not what logging scripts write, not worth the risk
        for sel, body in _RULE.findall(text):
            sels = [x.strip() for x in sel.split(",")]
            if not all(x and _SELECTOR.fullmatch(x) and "url" not in x.lower() for x in sels):
                continue
            decls = []
            for d in body.split(";"):
                dm = _DECL.fullmatch(d.strip())
                if dm and dm.group(1) not in _PAGE_PROPS and not _FETCHES.search(dm.group(2)):
                    decls.append(f"{dm.group(1)}: {dm.group(2).strip()}")
            if decls:
                out.append(([f"svg {x}" if in_svg else x for x in sels], "; ".join(decls)))
    return out
