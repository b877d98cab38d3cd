"""Sweeps end to end: W&B sweep files on a real server, real `paneboard agent` processes running a real program."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import urllib.error
from pathlib import Path

import pytest

import paneboard
from helpers.waiting import wait_for

pytest.importorskip("optuna")

PROGRAM = textwrap.dedent('''
    import json, os, pathlib, sys, time
    import paneboard

    run = paneboard.init(config={"lr": 100.0, "mode": "normal"})
    cfg = paneboard.config
    n = int(run.name.rsplit("-", 1)[1])
    marks = pathlib.Path(os.environ["SWEEP_TEST_DIR"])
    (marks / f"argv-{n}.json").write_text(json.dumps({"argv": sys.argv[1:], "config": dict(cfg.items()),
                                                      "env": run.env}))
    (marks / f"started-{n}").touch()
    if cfg.mode == "together":  # run beside another agent's trial: both agents must be at work at once
        deadline = time.monotonic() + 30
        while len(list(marks.glob("started-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
    if (cfg.mode == "prune" and n > 0) or (cfg.mode == "die" and n == 0):
        paneboard.log({"loss": 9.0})  # a bad first value, then wait to be stopped (or for the agent to die)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.05)
        sys.exit(3)
    for step in range(3):
        paneboard.log({"loss": float(cfg.lr) * (3 - step)})
    paneboard.finish()
''')


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "train.py").write_text(PROGRAM)
    folder = tmp_path / "marks"
    folder.mkdir()
    monkeypatch.setenv("SWEEP_TEST_DIR", str(folder))
    monkeypatch.setenv("PANEBOARD_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return folder


def _sweep_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def _cli(server, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "paneboard.cli", *args, "--server", server.url],
                          capture_output=True, text=True, timeout=120)


def _agent(server, sweep_id: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "paneboard.cli", "agent", sweep_id, "--server", server.url,
                             "--heartbeat", "0.2", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def _create(server, tmp_path: Path, text: str) -> str:
    done = _cli(server, "sweep", str(_sweep_file(tmp_path, text)))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _finish(proc: subprocess.Popen) -> str:
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    return out


def test_grid_sweep_runs_every_point_once_with_wandb_arguments(server, marks, tmp_path):
    sweep_id = _create(server, tmp_path, """
        program: train.py
        method: grid
        metric: {name: loss, goal: minimize}
        parameters:
          lr: {values: [0.5, 0.25, 2.0]}
          opt: {parameters: {name: {value: adam}}}
    """)
    _finish(_agent(server, sweep_id))
    sweep = server.get_json(f"/api/v1/sweeps/{sweep_id}")
    assert sweep["state"] == "finished" and sweep["counts"]["finished"] == 3 and sweep["total"] == 3
    assert sorted(t["config"]["lr"] for t in sweep["trials"]) == [0.25, 0.5, 2.0]
    assert sweep["best"]["config"]["lr"] == 0.25 and sweep["best"]["value"] == 0.25  # the last logged loss
    for trial in sweep["trials"]:
        seen = json.loads((marks / f"argv-{trial['number']}.json").read_text())
        lr = trial["config"]["lr"]
        assert seen["argv"] == [f"--lr={lr}", '--opt={"name": "adam"}']  # W&B's ${args}
        assert seen["config"]["lr"] == lr and seen["config"]["mode"] == "normal"  # the sweep's values win
        assert seen["env"] == trial["run"] == f"sweeps/{sweep_id}-{trial['number']}"
        run = server.get_json(f"/api/v1/envs/{trial['run']}/run")
        assert run["status"] == "finished" and f"sweep-{sweep_id}" in run["tags"]
    linked = server.get_json(f"/api/v1/runs?q=tags:sweep-{sweep_id}")
    assert linked["total"] == 3


def test_random_sweep_respects_ranges_and_run_cap(server, marks, tmp_path):
    sweep_id = _create(server, tmp_path, """
        program: train.py
        method: random
        run_cap: 3
        metric: {name: loss, goal: minimize}
        parameters:
          lr: {min: 0.1, max: 1.0}
          batch: {min: 1, max: 4}
          wd: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
    """)
    _finish(_agent(server, sweep_id, "--count", "5"))
    sweep = server.get_json(f"/api/v1/sweeps/{sweep_id}")
    assert sweep["total"] == 3 and sweep["counts"]["finished"] == 3 and sweep["state"] == "finished"
    for t in sweep["trials"]:
        c = t["config"]
        assert 0.1 <= c["lr"] <= 1.0 and c["batch"] in (1, 2, 3, 4) and 0.0001 <= c["wd"] <= 0.1
        assert t["value"] == pytest.approx(c["lr"])
    assert sweep["best"]["value"] == min(t["value"] for t in sweep["trials"])


def test_bayes_sweep_with_the_python_agent(server, tmp_path, monkeypatch):
    monkeypatch.setenv("PANEBOARD_HOME", str(tmp_path / "home"))
    sweep_id = paneboard.sweep({"method": "bayes", "metric": {"name": "loss", "goal": "minimize"},
                                "parameters": {"x": {"min": 0.0, "max": 1.0}}}, project="tpe", server=server.url)
    seen = []

    def train() -> None:
        run = paneboard.init()
        seen.append(run.env)
        paneboard.log({"loss": (paneboard.config.x - 0.3) ** 2})
        paneboard.finish()

    assert paneboard.agent(sweep_id, function=train, count=14, server=server.url, heartbeat_s=0.2) == 14
    sweep = server.get_json(f"/api/v1/sweeps/{sweep_id}")
    assert sweep["counts"]["finished"] == 14
    assert seen == [f"tpe/{sweep_id}-{n}" for n in range(14)]
    for t in sweep["trials"]:
        assert t["value"] == pytest.approx((t["config"]["x"] - 0.3) ** 2)
    assert sweep["best"]["value"] == min(t["value"] for t in sweep["trials"])


def test_hyperband_stops_a_bad_trial_early(server, marks, tmp_path):
    sweep_id = _create(server, tmp_path, """
        program: train.py
        method: random
        metric: {name: loss, goal: minimize}
        early_terminate: {type: hyperband, min_iter: 1, max_iter: 2, eta: 3}
        parameters:
          lr: {value: 0.1}
          mode: {value: prune}
    """)
    _finish(_agent(server, sweep_id, "--count", "2"))
    trials = server.get_json(f"/api/v1/sweeps/{sweep_id}")["trials"]
    assert [t["state"] for t in trials] == ["finished", "stopped"]
    assert trials[1]["reason"].startswith("pruned by hyperband at step 1: loss=9")
    assert trials[1]["steps"] == 1
    path = f"/api/v1/envs/{urllib.parse.quote(trials[1]['run'], safe='')}/run"
    wait_for(lambda: server.get_json(path)["status"] == "stopped")
    run = server.get_json(path)
    assert run["status"] == "stopped" and "pruned by hyperband" in run["error"], run


def test_two_agents_in_parallel_never_share_a_trial(server, marks, tmp_path):
    sweep_id = _create(server, tmp_path, """
        program: train.py
        method: grid
        metric: {name: loss, goal: minimize}
        parameters:
          lr: {values: [1, 2, 3, 4]}
          mode: {value: together}
    """)
    agents = [_agent(server, sweep_id), _agent(server, sweep_id)]
    for proc in agents:
        _finish(proc)
    trials = server.get_json(f"/api/v1/sweeps/{sweep_id}")["trials"]
    assert sorted(t["config"]["lr"] for t in trials) == [1, 2, 3, 4]
    assert all(t["state"] == "finished" for t in trials)
    assert len({t["agent"] for t in trials}) == 2  # the first trial waited until the other agent's started
    assert len({t["run"] for t in trials}) == 4


def test_a_killed_agents_trial_is_crashed_and_run_again_once(server, marks, tmp_path):
    sweep_id = _create(server, tmp_path, """
        program: train.py
        method: grid
        metric: {name: loss, goal: minimize}
        parameters:
          lr: {value: 0.5}
          mode: {value: die}
    """)
    first = _agent(server, sweep_id)
    assert wait_for(lambda: server.get_json(f"/api/v1/sweeps/{sweep_id}")["trials"][:1] and
                    server.get_json(f"/api/v1/sweeps/{sweep_id}")["trials"][0]["steps"] >= 1)
    first.send_signal(signal.SIGKILL)  # mid-trial: its program has logged and is still running
    first.communicate(timeout=30)
    out = _finish(_agent(server, sweep_id))
    assert "ran 1 trial" in out
    trials = server.get_json(f"/api/v1/sweeps/{sweep_id}")["trials"]
    assert [t["state"] for t in trials] == ["crashed", "finished"]
    assert trials[0]["reason"].endswith("stopped answering") and trials[1]["retry_of"] == 0
    assert trials[1]["config"] == trials[0]["config"] and trials[1]["agent"] != trials[0]["agent"]
    assert server.get_json(f"/api/v1/sweeps/{sweep_id}")["state"] == "finished"


def test_bad_sweep_files_get_clear_errors_and_nothing_is_stored(server, tmp_path):
    done = _cli(server, "sweep", str(_sweep_file(tmp_path, "method: grid\nprogram: t.py\nparameters:\n"
                                                          "  lr: {distribution: normal, mu: 0, sigma: 1}\n")))
    assert done.returncode == 1 and "parameters.lr: distribution 'normal' is not supported" in done.stderr
    with pytest.raises(urllib.error.HTTPError) as err:
        server.http("POST", "/api/v1/sweeps", {"config": "method: bayes\nprogram: t.py\nparameters: {x: {values: [1]}}"})
    assert err.value.code == 400 and "metric" in json.loads(err.value.read())["error"]
    with pytest.raises(urllib.error.HTTPError) as err:
        server.http("POST", "/api/v1/sweeps", {"config": "method: [unclosed"})
    assert err.value.code == 400
    assert server.get_json("/api/v1/sweeps")["sweeps"] == []
    with pytest.raises(urllib.error.HTTPError) as err:
        server.get_json("/api/v1/sweeps/nope")
    assert err.value.code == 404


def test_pause_resume_and_stop_from_the_cli(server, tmp_path):
    sweep_id = _create(server, tmp_path, "program: t.py\nmethod: random\nparameters: {x: {min: 0, max: 1}}\n")
    assert _cli(server, "sweep", "--pause", sweep_id).stdout.strip() == f"sweep {sweep_id}: paused"
    nxt = server.http("POST", f"/api/v1/sweeps/{sweep_id}/next", {"agent": "a", "heartbeat_s": 1})
    assert nxt["trial"] is None and nxt["state"] == "paused" and nxt["retry_s"] > 0
    assert _cli(server, "sweep", "--resume", sweep_id).stdout.strip() == f"sweep {sweep_id}: running"
    assert server.http("POST", f"/api/v1/sweeps/{sweep_id}/next", {"agent": "a", "heartbeat_s": 1})["trial"]
    assert _cli(server, "sweep", "--stop", sweep_id).stdout.strip() == f"sweep {sweep_id}: stopping"
    server.http("POST", f"/api/v1/sweeps/{sweep_id}/trials/0/finish", {"agent": "a", "exit_code": 0})
    assert server.get_json(f"/api/v1/sweeps/{sweep_id}")["state"] == "finished"
    done = _cli(server, "sweep", "--resume", sweep_id)
    assert done.returncode == 1 and "is finished" in done.stderr
    assert os.environ.get("PANEBOARD_SWEEP_RUN") is None
