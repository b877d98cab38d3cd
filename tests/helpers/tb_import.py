"""Reading a TensorBoard import back: the import command, pane exports, step records and blobs of a server."""

from __future__ import annotations

import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path


def q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def import_tb(logdir: Path, db: Path, *extra: str) -> str:
    out = subprocess.run([sys.executable, "-m", "paneboard.server", "import-tb", str(logdir), "--db", str(db), *extra],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout + out.stderr


def export(srv, env: str, win: str) -> dict:
    return srv.get_json(f"/api/v1/envs/{q(env)}/panes/{q(win)}/export?format=json")["traces"][0]


def steps(srv, env: str, win: str) -> list[dict]:
    out, i0 = [], 0
    while True:
        got = srv.get_json(f"/api/v1/envs/{q(env)}/panes/{q(win)}/steps?i0={i0}&i1={i0 + 100}")["records"]
        out += got
        if len(got) < 100:
            return out
        i0 += 100


def blob(srv, src: str) -> bytes:
    with urllib.request.urlopen(srv.url + "/" + src, timeout=30) as r:
        return r.read()
