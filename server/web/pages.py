"""The browser pages: the runs table (the home page), Visdom's env list, one run and the multi-run views; all the
same shell booted with a JSON blob."""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

import plotly
from flask import Blueprint, Response, g, render_template, request

from .. import __version__
from ..commands.envelope import EventError, check_name
from .common import ApiError, env_visible, services
from .static_assets import static_base

bp = Blueprint("pages", __name__)

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def _boot_json(boot: dict) -> str:
    # Safe inside <script type="application/json">: no "</script>" or "<!--" can appear.
    return json.dumps(boot).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _page(page: str, env: str | None, embed: bool = False, win: str | None = None) -> str:
    base = request.script_root.rstrip("/") + "/"
    shared = g.get("share") is not None  # a read-only share link (web/auth.py check_shared)
    boot = {"page": page, "env": env, "base": base, "version": __version__,
            "points": services().settings.default_points, "embed": embed, "win": win,
            "readonly": shared or embed}  # an embed page writes nothing, whoever frames it
    return render_template("app.html", base=base, static=static_base(base), boot_json=_boot_json(boot), page=page,
                           env=env, embed=embed, win=win, shared=shared)


def not_found_page() -> Response | None:
    """An HTML 404 for a browser's GET of an unknown page; None for API paths and non-browser clients (JSON)."""
    if not wants_page():
        return None  # SDKs, curl and the Visdom client send */* (or JSON): they keep the JSON error
    base = request.script_root.rstrip("/") + "/"
    page = render_template("not_found.html", base=base, static=static_base(base), path=request.path)
    return Response(page, 404, mimetype="text/html")


def wants_page() -> bool:
    """A browser's GET of a page (not an API path; SDKs, curl and the Visdom client keep their JSON answers)."""
    if request.method not in ("GET", "HEAD") or request.path.startswith("/api/"):
        return False
    return request.accept_mimetypes.best_match(["application/json", "text/html"]) == "text/html"


def not_shared_page(revoked: bool = False) -> Response | None:
    """For a share link's reader who left the share (a run it does not list, or a missing one: the same answer) or
    whose link was revoked, an HTML page saying so; None where the caller keeps its JSON error."""
    if not wants_page():
        return None
    base = request.script_root.rstrip("/") + "/"
    if revoked:
        title, message = "This share link was revoked", "Ask whoever shared it for a new link."
    else:
        title, message = "Not shared with this link", "This page is outside what the read-only link you followed shares."
    page = render_template("not_shared.html", base=base, static=static_base(base), title=title, message=message,
                           back=not revoked)
    return Response(page, 401 if revoked else 404, mimetype="text/html")


@bp.get("/")
def index() -> str:
    """The home page is the runs table, grouped by project (static/js/pages/runs.js)."""
    return _page("runs", None)


@bp.get("/envs")
def envs_page() -> str:
    """Visdom's env list (fork, rename, delete), where a Visdom user looks for it (static/js/pages/envlist.js)."""
    return _page("envs", None)


# The multi-run pages name their runs as /runs does: ?q=<run query>, ?sel=<saved selection> or ?envs=a,b
# (static/js/scope.js; server/web/scope_api.py for the APIs).
@bp.get("/compare")
def compare_page() -> str:
    return _page("compare", None)


@bp.get("/scalars")
def scalars_page() -> str:
    """TensorBoard-style Scalars view of the runs in view, every run when the URL names none."""
    return _page("scalars", None)


@bp.get("/hparams")
def hparams_page() -> str:
    """HParams view: the runs in view (their sessions, axes, default metric, importance)."""
    return _page("hparams", None)


@bp.get("/runs")
def runs_page() -> str:
    """The runs table: one row per run, filtered by ?q=<run query> (static/js/pages/runs.js)."""
    return _page("runs", None)


@bp.get("/sweeps")
def sweeps_page() -> str:
    """Every sweep: state, method, metric, best value, trials by state, agents alive (static/js/pages/sweeps.js)."""
    return _page("sweeps", None)


@bp.get("/sweeps/<sweep_id>")
def sweep_page(sweep_id: str) -> str:
    """One sweep: state and controls, best so far, the trials (static/js/pages/sweep.js)."""
    return _page("sweep", None)


def _env_page(page: str, name: str) -> str:
    """A page about one env, its name checked as an env name (400 otherwise)."""
    try:
        check_name(name, "env")
    except EventError as exc:
        raise ApiError(400, str(exc)) from None
    return _page(page, name)


@bp.get("/env/<path:name>")
def env_page(name: str) -> str:
    return _env_page("env", name)


@bp.get("/console/<path:name>")
def console_page(name: str) -> str:
    """A run's console: searchable, following live, with a download (static/js/pages/console.js)."""
    return _env_page("console", name)


# Notebooks on another origin (Jupyter on :8888) frame the embed page: it alone may be framed by any page. It is
# read-only (no header tools, no pane menus), and the Host check and the token still decide who may read.
EMBED_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
             "media-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors *")


@bp.get("/embed/<path:name>")
def embed_page(name: str) -> Response:
    """One env (or one pane: /embed/<env>/<win> or ?win=) without the page chrome, for notebooks and iframes."""
    win = request.args.get("win") or None
    try:
        check_name(name, "env")
        # An env a share token may not read is treated exactly as a missing one (same answer, no probe).
        store = services().store

        def readable(env: str) -> bool:
            return env_visible(env) and store.get_env(env) is not None
        if win is None and not readable(name) and "/" in name:
            env, _, last = name.rpartition("/")  # /embed/<env>/<win>: env names may hold "/" too
            if readable(env):
                name, win = env, last
        if win is not None:
            check_name(win, "win")
    except EventError as exc:
        raise ApiError(400, str(exc)) from None
    resp = Response(_page("env", name, embed=True, win=win), mimetype="text/html")
    resp.headers["Content-Security-Policy"] = EMBED_CSP
    return resp


@lru_cache(maxsize=1)
def _plotly_gz() -> bytes:
    return gzip.compress(PLOTLY_JS.read_bytes(), 6)


@bp.get("/static/vendor/plotly.min.js")
def plotly_js() -> Response:
    """Plotly from the installed `plotly` package (never a CDN); gzipped, it is 1.5 MB instead of 4.8."""
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        resp = Response(_plotly_gz(), mimetype="text/javascript")
        resp.headers["Content-Encoding"] = "gzip"
    else:
        resp = Response(PLOTLY_JS.read_bytes(), mimetype="text/javascript")
    resp.headers["Vary"] = "Accept-Encoding"
    resp.headers["Cache-Control"] = "public, max-age=86400"
    return resp
