"""A run's status is true: short jobs and dropped Clients get a finished run, an uncaught exception fails it,
a crashed run's job that comes back revives it, imports judge no job, and servers on one database agree on
the crash grace."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest

from helpers.waiting import wait_for

JOBS = {
    # A Client made inside a function and dropped when it returns; the job never flushes.
    "client_in_a_function": """
        def log():
            c = paneboard.Client(port=port, env=env)
            c.line(X=[0], Y=[1.0], win="loss")
        log()
    """,
    # Logs only through the SummaryWriter and exits at once, as most TensorBoard users' scripts do.
    "summary_writer_only": """
        w = paneboard.SummaryWriter(env, server="http://127.0.0.1", port=port)
        w.add_scalar("loss", 0.5, 0)
    """,
    "raises": """
        c = paneboard.Client(port=port, env=env)
        c.line(X=[0], Y=[1.0], win="loss")
        def train():
            raise ZeroDivisionError("loss went to infinity")
        train()
    """,
}


def run_job(srv: Any, env: str, body: str, tmp_path: Any) -> subprocess.CompletedProcess:
    script = "import sys, paneboard\nport, env = int(sys.argv[1]), sys.argv[2]\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script, str(srv.port), env], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PANEBOARD_SPOOL_DIR": str(tmp_path / "spool")})


@pytest.mark.parametrize("job", ["client_in_a_function", "summary_writer_only"])
def test_short_jobs_get_a_finished_run_with_provenance(server: Any, tmp_path: Any, job: str):
    done = run_job(server, job, JOBS[job], tmp_path)
    assert done.returncode == 0, done.stderr
    run = server.get_json(f"/api/v1/envs/{job}/run")
    assert run["status"] == "finished", run
    assert run["provenance"]["argv"][0] == "-c" and run["provenance"]["python"] and run["error"] is None


def test_an_uncaught_exception_ends_the_run_failed_with_its_traceback(server: Any, tmp_path: Any):
    done = run_job(server, "raises", JOBS["raises"], tmp_path)
    assert done.returncode == 1 and "ZeroDivisionError" in done.stderr  # Python's own report is kept
    run = server.get_json("/api/v1/envs/raises/run")
    assert run["status"] == "failed", run
    assert "ZeroDivisionError: loss went to infinity" in run["error"] and "in train" in run["error"]
    assert run["ended"] >= run["started"]


def test_a_crashed_run_runs_again_when_its_job_reconnects_then_finishes(make_server: Any):
    srv = make_server("revive", run_crash_grace_s=0.3)
    c = srv.client("back")
    c.line(X=[0], Y=[1.0], win="loss")
    assert c.flush(30)

    def status() -> str:
        return srv.get_json("/api/v1/envs/back/run")["status"]

    c.transport.close(10)  # the job's connection goes away for longer than the grace (no clean end)
    assert wait_for(lambda: status() == "crashed"), status()
    c.line(X=[1], Y=[0.5], win="loss", update="append")  # it comes back: the same client reconnects
    assert c.flush(30)
    assert wait_for(lambda: status() == "running"), status()
    c.close_connection(10)
    run = srv.get_json("/api/v1/envs/back/run")
    assert (run["status"], run["error"]) == ("finished", None)
    assert [y for _, y in srv.series("back", "loss")["1"]] == [1.0, 0.5]


def test_a_job_that_came_and_went_within_one_round_of_the_watch_stays_crashed(make_server: Any):
    """The watch's rounds are 0.5 s apart, and on a loaded machine further: a client that connected and
    dropped between two of them must not revive the run its drop crashed."""
    srv = make_server("blip", run_crash_grace_s=1e6)
    c = srv.client("blip")
    c.line(X=[0], Y=[1.0], win="loss")
    assert c.flush(30)
    c.transport.close(10)
    watch, writer = srv.app.services.runs, srv.app.services.writer
    watch.stop()  # from here the rounds are this test's own
    cid = c.transport.client_id
    later = time.monotonic() + 2e6

    def status_after_a_round() -> str:
        watch.check(later)
        assert not writer.submit_wait([]).failed  # the writer has applied what that round submitted
        return srv.get_json("/api/v1/envs/blip/run")["status"]

    # Past the grace: crashed, once the server has seen the socket close.
    assert wait_for(lambda: status_after_a_round() == "crashed")
    watch.connected(cid)  # the next round sees it both come and go
    watch.disconnected(cid)
    assert status_after_a_round() == "crashed"


@pytest.mark.parametrize("command", ["import-visdom", "import-tb", "import-envs"])
def test_imports_start_no_crash_watch(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, command: str):
    from paneboard.server.cli.main import main

    source = tmp_path / "source"
    source.mkdir()
    (source / "exp.json").write_text('{"jsons": {"note": {"id": "note", "type": "text", "content": "hi"}}}')
    args = [str(source)]
    if command == "import-envs":  # an archive of that env, written beforehand
        assert main(["import-visdom", str(source), "--db", str(tmp_path / "source.db")]) == 0
        args = [str(tmp_path / "exp.tar")]
        assert main(["export-envs", "exp", "-o", args[0], "--db", str(tmp_path / "source.db")]) == 0
    started: list[str] = []
    start = threading.Thread.start

    def recording_start(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", recording_start)
    assert main([command, *args, "--db", str(tmp_path / "imported.db")]) == 0
    assert "paneboard-writer" in started  # the import ran through the store's writer
    assert "paneboard-run-watch" not in started  # and judged no job: those may be reconnecting meanwhile


JOB = textwrap.dedent("""
    import sys, time
    import paneboard
    c = paneboard.Client(port=int(sys.argv[1]), env="shared", spool_dir=False)
    c.line(X=[0], Y=[1.0], win="loss")
    assert c.flush(30)
    print("ready", flush=True)
    time.sleep(600)
""")


@pytest.mark.long
def test_servers_on_one_postgresql_database_agree_on_the_crash_grace(postgres: Any, make_server_process: Any,
                                                                    tmp_path: Any):
    url = postgres.new_database()
    a = make_server_process("a", db_url=url, extra_args=["--crash-grace", "60"]).start()
    job = subprocess.Popen([sys.executable, "-c", JOB, str(a.port)], cwd=tmp_path, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        assert job.stdout is not None and job.stdout.readline().strip() == "ready"
        b = make_server_process("b", db_url=url, extra_args=["--crash-grace", "1.5"]).start()
        # B's grace is now the database's: A takes it too (and so tells B about its clients every 0.5 s).
        assert wait_for(lambda: "crash grace: 1.5 s" in a.log(), timeout=15), a.log()[-2000:]
        # The live job stays running for several of the shared grace, seen from either server.
        deadline = time.monotonic() + 3 * 1.5
        while time.monotonic() < deadline:
            assert b.get_json("/api/v1/envs/shared/run")["status"] == "running", b.log()[-2000:]
            time.sleep(0.1)
        killed = time.monotonic()
        job.send_signal(signal.SIGKILL)
        job.wait(30)
        # A, which held its connection, now crashes it after the shared 1.5 s, not its own 60.
        assert wait_for(lambda: b.get_json("/api/v1/envs/shared/run")["status"] == "crashed", timeout=20)
        assert time.monotonic() - killed < 20
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()


def test_a_crash_grace_that_is_not_a_positive_number_is_refused(capsys: pytest.CaptureFixture[str]):
    from paneboard.server.cli.main import main

    assert main(["--crash-grace", "0"]) == 2
    assert "--crash-grace must be a positive number of seconds, got 0" in capsys.readouterr().err
