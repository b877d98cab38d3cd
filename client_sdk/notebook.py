"""Panes inline in Jupyter: paneboard.show() and the %paneboard magic (`%load_ext paneboard`)."""

from __future__ import annotations

import html
import os
import shlex
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from .client import Client, ingest_url

DEFAULT_PORT = 8097


def dashboard_url(server: str | None = None, port: int | None = None, base_url: str | None = None,
                  client: Client | None = None) -> str:
    """The dashboard's http(s) base URL, found as paneboard.Client finds its server (PANEBOARD_URL overrides)."""
    if client is not None:
        ws = client.url
    else:
        ws = ingest_url(server or "http://localhost", DEFAULT_PORT if port is None else port, base_url or "")
    scheme, rest = ws.split("://", 1)
    return {"ws": "http", "wss": "https"}[scheme] + "://" + rest[: -len("/ingest")] + "/"


class Embed:
    """An env (or one pane) of dash-server as an iframe: Jupyter shows it inline, repr() gives its URL."""

    def __init__(self, url: str, height: int = 600) -> None:
        self.url, self.height = url, int(height)

    def _repr_html_(self) -> str:
        src = html.escape(self.url, quote=True)
        return (f'<iframe src="{src}" width="100%" height="{self.height}" frameborder="0" '
                f'style="border: 1px solid #ddd; border-radius: 4px"></iframe>')

    def __repr__(self) -> str:
        return f"<paneboard embed {self.url}>"


def show(env: str, win: str | None = None, *, server: str | None = None, port: int | None = None,
         base_url: str | None = None, client: Client | None = None, height: int = 600) -> Embed:
    """The env `env` (or only its pane `win`) live in the notebook.

    The iframe's address is the one the notebook's browser uses: PANEBOARD_NOTEBOOK_URL replaces the server's
    own address when they differ, e.g. `/proxy/8097/` behind jupyter-server-proxy.
    """
    base = os.environ.get("PANEBOARD_NOTEBOOK_URL") or dashboard_url(server, port, base_url, client)
    path = "embed/" + urllib.parse.quote(env, safe="")
    if win is not None:
        path += "?win=" + urllib.parse.quote(win, safe="")
    return Embed(base.rstrip("/") + "/" + path, height)


def server_answers(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url + "api/v1/envs", timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True  # it answers (a token may be required)
    except OSError:
        return False


def ensure_server(port: int, wait: float = 30.0) -> tuple[str, bool]:
    """The dashboard URL on localhost:port, starting a dash-server in the background if none answers there;
    returns (url, started)."""
    url = f"http://127.0.0.1:{port}/"
    if server_answers(url):
        return url, False
    home = Path(os.environ.get("PANEBOARD_HOME") or Path.home() / ".paneboard")
    home.mkdir(parents=True, exist_ok=True)
    with open(home / f"dash-server-{port}.log", "ab") as log:
        subprocess.Popen([sys.executable, "-m", "paneboard.server", "--port", str(port)], stdout=log,
                         stderr=subprocess.STDOUT, start_new_session=True)  # outlives the kernel, like a terminal's
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if server_answers(url, 1.0):
            return url, True
        time.sleep(0.2)
    raise RuntimeError(f"dash-server did not answer on port {port} within {wait:.0f} s (log: {home})")


def paneboard_magic(line: str) -> Any:
    """%paneboard [ENV] [--port P] [--height H]: show ENV inline (attaching to, or starting, dash-server)."""
    args = shlex.split(line)
    env, port, height = None, DEFAULT_PORT, 600
    while args:
        arg = args.pop(0)
        if arg == "--port" and args:
            port = int(args.pop(0))
        elif arg == "--height" and args:
            height = int(args.pop(0))
        elif not arg.startswith("--") and env is None:
            env = arg
        else:
            raise ValueError(f"%paneboard: unexpected {arg!r}; usage: %paneboard [ENV] [--port P] [--height H]")
    url, started = ensure_server(port)
    if env is None:
        from IPython.display import HTML

        note = " (started in the background)" if started else ""
        return HTML(f'dash-server at <a href="{html.escape(url)}" target="_blank">{html.escape(url)}</a>{note}')
    return show(env, server=url.rstrip("/").rsplit(":", 1)[0], port=port, height=height)


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magic_function(paneboard_magic, "line", "paneboard")
