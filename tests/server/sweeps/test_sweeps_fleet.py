"""Several `paneboard agent` processes on one sweep: no trial run twice, none lost, every run linked to it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import urllib.parse
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("optuna")

AGENTS, TRIALS = 3, 6
PROGRAM = textwrap.dedent('''
    import os, pathlib, paneboard
    run = paneboard.init()
    number = int(run.name.rsplit("-", 1)[1])
    (pathlib.Path(os.environ["SWEEP_MARKS"]) / f"{number}-{os.getpid()}").touch()
    for step in range(3):
        paneboard.log({"loss": float(paneboard.config.lr) * (3 - step)})
    paneboard.finish()
''')


@pytest.mark.long  # 18 trial processes and 3 agents: many seconds on a busy machine
def test_three_agents_run_every_trial_once_and_link_it(server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "train.py").write_text(PROGRAM)
    planned = AGENTS * TRIALS
    (tmp_path / "sweep.yaml").write_text(f"program: train.py\nmethod: random\nrun_cap: {planned}\n"
                                         "metric: {name: loss, goal: minimize}\nparameters: {lr: {min: 0.1, max: 1}}\n")
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("SWEEP_MARKS", str(marks))
    monkeypatch.setenv("PANEBOARD_HOME", str(tmp_path / "home"))
    cli = [sys.executable, "-m", "paneboard.cli"]
    made = subprocess.run([*cli, "sweep", "sweep.yaml", "--server", server.url], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    sweep_id = made.stdout.strip()
    # No --count: each agent asks until the sweep has no trial left, so the three share the 18 between them.
    agents = [subprocess.Popen([*cli, "agent", sweep_id, "--server", server.url, "--heartbeat", "0.5"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(AGENTS)]
    outs = [a.communicate(timeout=300)[0] for a in agents]
    assert [a.returncode for a in agents] == [0] * AGENTS, outs
    ran_by_agent = [int(o.rsplit("agent ran ", 1)[1].split()[0]) for o in outs]
    assert sum(ran_by_agent) == planned

    sweep = server.get_json(f"/api/v1/sweeps/{sweep_id}")
    trials = sweep["trials"]
    assert sweep["state"] == "finished" and sweep["counts"]["finished"] == planned == len(trials)
    ran = Counter(int(p.name.split("-")[0]) for p in marks.iterdir())
    assert sorted(ran) == list(range(planned)) and set(ran.values()) == {1}  # each trial's program ran once: 0 lost
    assert len({t["run"] for t in trials}) == planned  # no two trials on one run
    assert len({t["agent"] for t in trials}) >= 2
    linked = server.get_json("/api/v1/runs?q=" + urllib.parse.quote(f"tags:sweep-{sweep_id}"))
    assert linked["total"] == planned
    assert {r["env"] for r in linked["runs"]} == {t["run"] for t in trials}
