"""A job's run end to end with the real SDK and a real server: provenance, config and tags from the Client,
finished on a clean exit (close or atexit), crashed when the job is killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.parse

import pytest

from helpers.waiting import wait_for

JOB = textwrap.dedent("""
    import sys, time
    import paneboard
    c = paneboard.Client(port=int(sys.argv[1]), env=sys.argv[2], config={"lr": 0.01, "seed": 3},
                         tags=["baseline"], spool_dir=False)
    for step in range(20):
        c.line(X=[step], Y=[1.0 / (step + 1)], win="loss", update="append")
    assert c.flush(30)
    print("ready", flush=True)
    if sys.argv[3] == "hang":
        time.sleep(600)
    # else: fall off the end; the atexit handler ends the run
""")


def git(repo, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                   capture_output=True)


def run_of(srv, env):
    return srv.get_json(f"/api/v1/envs/{env}/run")


def test_client_records_config_tags_and_finishes_on_close(server):
    import torch  # imported by the job: its version is recorded (the SDK never imports torch itself)

    c = server.client("exp")
    c2 = server.client("exp")  # a second client of the same job joins the run
    import paneboard

    c3 = paneboard.Client(port=server.port, env="plain", capture=False, spool_dir=False)
    from pathlib import Path

    import numpy as np

    c.set_config({"lr": np.float32(0.1).item(), "optim": {"name": "adam"}})
    c.set_config({"steps": np.int64(3), "out": Path("/tmp/o")})  # numpy scalars and objects: numbers and text
    c.add_tags("baseline", "cifar")
    c.note("first **note**")
    c.line(X=[0, 1], Y=[0.5, 0.25], win="loss")
    c3.line(X=[0], Y=[1.0], win="loss")
    assert c.flush(30) and c2.flush(30) and c3.flush(30)
    run = run_of(server, "exp")
    assert run["status"] == "running"
    assert run["config"] == {"lr": np.float32(0.1).item(), "optim": {"name": "adam"}, "steps": 3, "out": "/tmp/o"}
    assert run["tags"] == ["baseline", "cifar"] and "<strong>note</strong>" in run["notes_html"]
    prov = run["provenance"]
    assert prov["pid"] == os.getpid() and prov["host"] and prov["python"] == ".".join(map(str, sys.version_info[:3]))
    assert any(p.startswith("numpy==") for p in prov["packages"])
    assert prov["torch"] == torch.__version__ and "cuda" in prov
    c.close_connection(10)
    assert run_of(server, "exp")["status"] == "running"  # c2 still runs it
    c2.close_connection(10)
    run = run_of(server, "exp")
    assert run["status"] == "finished" and run["ended"] >= run["started"]
    c3.close_connection(10)
    assert run_of(server, "plain")["status"] is None  # capture=False: no run record of a job


def test_summary_writer_is_a_run_and_add_hparams_feeds_its_config(server):
    import paneboard

    with paneboard.SummaryWriter(log_dir="runs/tb", server="http://127.0.0.1", port=server.port) as w:
        w.add_scalar("train/loss", 0.5, 0)
        w.add_scalar("train/loss", 0.25, 1)
        w.add_hparams({"lr": 0.01, "bs": 64, "amp": True}, {"hparam/acc": 0.9})
        assert w.client.flush(30)
        assert run_of(server, "runs/tb")["status"] == "running"
    run = run_of(server, "runs/tb")
    assert run["status"] == "finished" and run["config"] == {"lr": 0.01, "bs": 64, "amp": True}
    found = server.get_json("/api/v1/runs?q=" + urllib.parse.quote("amp = true and train/loss.min <= 0.25"))
    assert [r["env"] for r in found["runs"]] == ["runs/tb"]


def test_job_in_a_git_repo_finishes_at_exit_with_its_commit(server, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text(JOB)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "train.py")
    git(repo, "commit", "-q", "-m", "first")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    (repo / "train.py").write_text(JOB + "\n# edited\n")  # dirty: the diff is recorded
    done = subprocess.run([sys.executable, "train.py", str(server.port), "git_job", "exit"], cwd=repo,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = run_of(server, "git_job")
    assert run["status"] == "finished"
    git_info = run["provenance"]["git"]
    assert (git_info["commit"], git_info["branch"], git_info["dirty"]) == (commit, "main", True)
    assert "+# edited" in git_info["diff"]
    assert run["provenance"]["argv"] == ["train.py", str(server.port), "git_job", "exit"]
    assert run["config"] == {"lr": 0.01, "seed": 3} and run["tags"] == ["baseline"]
    listed = {r["env"]: r for r in server.get_json("/api/v1/runs?q=lr%20%3C%200.3")["runs"]}
    assert set(listed) == {"git_job"} and listed["git_job"]["summaries"]["loss"]["min"] == pytest.approx(0.05)


def test_job_killed_with_sigkill_shows_crashed(make_server, tmp_path):
    srv = make_server("crash", run_crash_grace_s=1.0)
    job = subprocess.Popen([sys.executable, "-c", JOB, str(srv.port), "killed", "hang"], cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert job.stdout.readline().strip() == "ready", job.stderr.read() if job.poll() is not None else ""
        assert run_of(srv, "killed")["status"] == "running"
        killed_at = time.monotonic()
        job.send_signal(signal.SIGKILL)
        job.wait(30)
        run = wait_for(lambda: (r := run_of(srv, "killed"))["status"] == "crashed" and r, timeout=60)
        assert run and run["status"] == "crashed", run_of(srv, "killed")
        assert time.monotonic() - killed_at < 60
        assert run["ended"] is not None
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()


def test_two_servers_on_postgresql_share_their_clients(postgres, make_server_process, tmp_path):
    url = postgres.new_database()
    a = make_server_process("a", db_url=url, extra_args=["--crash-grace", "1.5"]).start()
    job = subprocess.Popen([sys.executable, "-c", JOB, str(a.port), "shared", "hang"], cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert job.stdout.readline().strip() == "ready"
        # B starts with the run already running: its client is A's, which tells B so within the grace.
        b = make_server_process("b", db_url=url, extra_args=["--crash-grace", "1.5"]).start()
        time.sleep(4)
        assert run_of(b, "shared")["status"] == "running", b.log()[-2000:]
        job.send_signal(signal.SIGKILL)
        job.wait(30)
        run = wait_for(lambda: (r := run_of(b, "shared"))["status"] == "crashed" and r, timeout=30)
        assert run and run["status"] == "crashed"
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
