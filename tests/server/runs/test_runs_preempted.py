"""A preempted job, for real: a subprocess killed with SIGKILL, then restarted from its checkpoint artifact."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

JOB = textwrap.dedent("""
    import hashlib, sys, time
    import torch
    import paneboard
    port, env, life, folder = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    if life == "first":
        c = paneboard.Client(port=port, env=env)
        torch.manual_seed(0)
        model = torch.nn.Linear(8, 2)
        for step in range(300):
            c.line(X=[step], Y=[1.0 / (step + 1)], win="loss", update="append")
            if step == 250:
                path = folder + "/ckpt-250.pt"
                torch.save({"model": model.state_dict(), "step": step}, path)
                ref = c.log_artifact(path, name="ckpt", step=step)
            with torch.no_grad():
                model.weight.add_(0.01)
        print(ref.wait(30), flush=True)
        assert c.flush(30)
        print("ready", flush=True)
        time.sleep(600)  # preempted here
    else:
        c = paneboard.Client(port=port, env=env, resume=True)
        path = c.use_artifact("ckpt:latest")
        state = torch.load(path)
        print(hashlib.sha256(open(path, "rb").read()).hexdigest(), state["step"], flush=True)
        c.rewind(state["step"])
        for step in range(state["step"] + 1, 300):
            c.line(X=[step], Y=[-float(step)], win="loss", update="append")
        assert c.close_connection(30)
""")

BIG = textwrap.dedent("""
    import sys, time
    import paneboard
    port, env, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    c = paneboard.Client(port=port, env=env, resume=sys.argv[4] == "again")
    if sys.argv[4] == "first":
        c.log_artifact(path, name="big")
        time.sleep(600)  # killed while the upload goes on
    else:
        assert c.close_connection(60)  # the journaled upload resumes and is delivered first
""")


def start(script, *args):
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE, text=True)


def test_a_preempted_job_resumes_from_its_checkpoint_with_every_step_once(server, tmp_path):
    first = start(JOB, server.port, "pre", "first", tmp_path)
    try:
        assert first.stdout.readline().strip() == "ckpt:v1"
        assert first.stdout.readline().strip() == "ready"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(30)
    original = hashlib.sha256((tmp_path / "ckpt-250.pt").read_bytes()).hexdigest()
    second = start(JOB, server.port, "pre", "second", tmp_path)
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0
    assert out.split() == [original, "250"]  # the artifact's bytes are the checkpoint's
    pts = server.series("pre", "loss")["1"]
    assert [x for x, _ in pts] == list(range(300))  # every step once
    assert pts[:251] == [(s, 1.0 / (s + 1)) for s in range(251)]
    assert pts[251:] == [(s, -float(s)) for s in range(251, 300)]  # the second life's values
    assert server.get_json("/api/v1/artifacts/ckpt/versions")["versions"][0]["used_by"] == ["pre"]
    assert server.get_json("/api/v1/envs/pre/rewinds")["rewinds"][0]["points"] == 49
    assert server.get_json("/api/v1/envs/pre/run")["status"] == "finished"


@pytest.mark.skipif(not hasattr(os, "posix_fallocate"), reason="makes a large file quickly")
def test_a_kill_mid_upload_loses_nothing_once_the_job_logs_again(server, tmp_path):
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.write(os.urandom(1 << 20) * 192)  # 192 MB: still uploading when killed
    journal = tmp_path / "default-spool" / "artifacts-pending"
    first = start(BIG, server.port, "killed", big, "first")
    try:
        deadline = time.monotonic() + 30
        while not any(journal.glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(30)
    assert any(journal.glob("*.json")), "the job was journaled before its upload"
    assert server.get_json("/api/v1/artifacts/big/versions")["versions"] == []
    again = start(BIG, server.port, "killed", big, "again")
    assert again.wait(120) == 0
    (version,) = server.get_json("/api/v1/artifacts/big/versions")["versions"]
    assert version["files"][0]["sha256"] == hashlib.sha256(big.read_bytes()).hexdigest()
    assert not any(journal.glob("*.json"))
