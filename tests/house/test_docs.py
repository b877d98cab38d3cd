"""The docs site builds strictly (broken links, missing pages, stale API references fail) and the quickstart's code
runs as written, each block a job of its own against a real server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import urllib.parse
from pathlib import Path

from helpers.paths import ROOT
from helpers.waiting import wait_for

QUICKSTART = ROOT / "docs" / "quickstart.md"
# A ```python fence at any indent (the tabbed blocks are indented by four spaces); its lines, dedented.
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```python\n(?P<code>.*?)^(?P=indent)```", re.S | re.M)


def python_blocks(markdown: str) -> list[str]:
    return [textwrap.dedent(m.group("code")) for m in _FENCE.finditer(markdown)]


def test_the_docs_site_builds_with_strict_checks(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cli = (tmp_path / "reference" / "cli" / "index.html").read_text()
    http = (tmp_path / "reference" / "http" / "index.html").read_text()
    sdk = (tmp_path / "reference" / "sdk" / "index.html").read_text()
    assert "dash-server import" in cli and "paneboard sync" in cli  # generated from the parsers
    assert "/api/v1/envs/{env}" in http and "/api/v1/runs" in http  # generated from the OpenAPI description
    assert "add_scalar" in sdk and "Client" in sdk  # mkdocstrings read the SDK's docstrings
    page = (tmp_path / "index.html").read_text()
    assert "fonts.googleapis" not in page and "cdn." not in page  # no data leaves the machine


def _points(server, env: str, win: str) -> int:
    path = f"/api/v1/envs/{urllib.parse.quote(env, safe='')}/panes/{urllib.parse.quote(win, safe='')}"
    try:
        pane = server.get_json(path)
    except Exception:
        return 0
    return sum(len(trace.get("x") or []) for trace in pane.get("data", {}).get("traces", []))


def _envs(server) -> list[str]:
    return [e["name"] if isinstance(e, dict) else e for e in server.get_json("/api/v1/envs")["envs"]]


def test_the_quickstart_runs_as_written(server, tmp_path: Path) -> None:
    blocks = python_blocks(QUICKSTART.read_text())
    assert len(blocks) == 4, "the quickstart's blocks changed: update what this test expects of them"
    env = {**os.environ, "PANEBOARD_URL": server.url, "PANEBOARD_SPOOL_DIR": str(tmp_path / "spool")}
    for var in ("PANEBOARD_MODE", "WANDB_MODE", "PANEBOARD_PROJECT", "WANDB_PROJECT", "WANDB_NAME"):
        env.pop(var, None)
    for i, code in enumerate(blocks):
        proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, f"block {i}:\n{code}\n{proc.stderr}"
    expected = [("quickstart/first-run", "train/loss", 200), ("quickstart/first-run", "val/acc", 4),
                ("quickstart/wandb-style", "loss", 10), ("quickstart-visdom", "loss", 100)]
    for env_name, win, n in expected:
        got = wait_for(lambda e=env_name, w=win, k=n: _points(server, e, w) == k)
        assert got, (env_name, win, _points(server, env_name, win), _envs(server))
    tb = [e for e in _envs(server) if "quickstart-tb" in e]
    assert len(tb) == 1 and wait_for(lambda: _points(server, tb[0], "loss") == 100), (tb, _points(server, tb[0], "loss"))
    run = server.get_json("/api/v1/envs/quickstart%2Ffirst-run/run")
    assert run["status"] == "finished" and run["config"]["lr"] == 1e-3, run
