"""TensorBoard logs imported and logged live read the same: torch's own SummaryWriter files through import-tb and
paneboard.SummaryWriter make panes with one x-axis title rule, counts read "1 pane"/"1 step", and import-tb
reports TensorBoard's events and points (Chromium, real servers, real torch and tensorboard)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from torch.utils.tensorboard import SummaryWriter as TorchWriter

from helpers.browser import env_url
from helpers.tensorboard import writer

LOSS = [0.9, 0.5, 0.25]
XAXIS = """(win) => { const d = document.querySelector(`[data-win="${win}"] .js-plotly-plot`);
  const t = d && d._fullLayout && d._fullLayout.xaxis.title; return t ? (t.text || "") : null; }"""


def log(w) -> None:
    """The same calls for torch's writer and ours."""
    for step, v in enumerate(LOSS):
        w.add_scalar("loss", v, step)
    w.add_histogram("weights", np.arange(10.0), 0)


def info(tab, win: str) -> str:
    return tab.js("(w) => document.querySelector(`[data-win=\"${w}\"] .card-info`).textContent", win)


@pytest.mark.e2e  # runs `python -m paneboard.server` itself
def test_imported_and_live_scalars_read_the_same(server, server_types, tab, tmp_path: Path):
    logdir = tmp_path / "runs"
    with TorchWriter(log_dir=str(logdir / "exp")) as w:
        log(w)
    tb_events = sum(1 for f in (logdir / "exp").iterdir() for _ in EventFileLoader(str(f)).Load())
    db = tmp_path / "imported.db"
    out = subprocess.run([sys.executable, "-m", "paneboard.server", "import-tb", str(logdir), "--db", str(db),
                          "--quiet"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    # TensorBoard's units: the events in its files, the scalar points and step records they hold.
    assert re.match(rf"imported {tb_events} TensorBoard events \({len(LOSS)} scalar points, 1 step record, "
                    rf"[0-9.]+ MB\) from 1 run in [0-9.]+ s \(0 problems\)", out.stdout), out.stdout

    def axis_and_info(srv) -> str:
        tab.open(env_url(srv, "runs/exp"))
        tab.wait(f"(w) => ({XAXIS})(w) !== null", "loss")
        assert srv.get_json("/api/v1/envs/runs%2Fexp/panes/loss")["opts"].get("xlabel") == "step"
        tab.wait("() => /1 step$/.test((document.querySelector('[data-win=\"weights\"] .card-info') || {})"
                 ".textContent || '')")
        assert info(tab, "weights") == "1 step"
        return tab.js(XAXIS, "loss")

    # One server at a time: the imported one is stopped before the live one serves a page.
    imported = server_types.InProcessServer(db=db).start()
    try:
        imported_title = axis_and_info(imported)
    finally:
        tab.page.goto("about:blank")  # leave its page first: its live socket would log the refused reconnect
        imported.stop()
    with writer(server, "runs/exp") as w:
        log(w)
        assert w.flush(20)
    with writer(server, "solo") as w:  # one pane, one point
        w.add_scalar("acc", 0.5, 0)
        assert w.flush(20)
    assert imported_title == axis_and_info(server) == "step"
    tab.open(env_url(server, "solo"))
    tab.wait("() => /^1 pane · 1 point · updated/.test(document.getElementById('env-stats').textContent)")
    assert tab.errors == []
