"""Console capture: a job's stdout and stderr reach its run's console, in order, per rank, bars collapsed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from typing import Any

import pytest

import paneboard
from helpers.waiting import wait_for
from paneboard.console import collapse


def lines(srv: Any, env: str, query: str = "") -> list[dict]:
    text = srv.get_text(f"/api/v1/envs/{env}/console?limit=10000{query}")
    return [json.loads(line) for line in text.splitlines()]


KILLED_JOB = textwrap.dedent("""
    import sys, time, paneboard
    c = paneboard.Client(port=int(sys.argv[1]), env="killed")
    c.flush(60)  # as in a training job, the run has started and its connection is up before the prints
    for i in range(3000):
        print(f"line {i}")
    for k in range(101):  # what tqdm writes: the bar redrawn after a carriage return
        sys.stderr.write(f"\\r{k:3d}%|{'#' * (k // 10):10s}| {k}/100")
        sys.stderr.flush()
    sys.stderr.write("\\n")
    print("after the bar")
    sys.__stdout__.write("printed\\n")
    sys.__stdout__.flush()
    time.sleep(600)
""")


def test_a_job_killed_after_printing_keeps_every_line_in_order_and_its_bar_as_one(server: Any, tmp_path: Any):
    job = subprocess.Popen([sys.executable, "-c", KILLED_JOB, str(server.port)], cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           env={**os.environ, "PANEBOARD_SPOOL_DIR": str(tmp_path / "spool")})
    try:
        assert job.stdout is not None
        while (got := job.stdout.readline()) and got.strip() != "printed":
            pass
        assert got.strip() == "printed"
        # Killed once the server holds its last line: how soon lines arrive is a speed figure (bench/console.py's
        # lag), and a fixed second here was a proxy for delivery that failed whenever the machine was busy.
        wait_for(lambda: any(line["text"] == "after the bar" for line in lines(server, "killed")), 60, 0.2)
        job.send_signal(signal.SIGKILL)
        job.wait(30)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    got = lines(server, "killed")
    texts = [line["text"] for line in got]
    assert texts[:3000] == [f"line {i}" for i in range(3000)]
    assert texts[3000:] == ["100%|##########| 100/100", "after the bar"]
    assert [line["stream"] for line in got[2999:]] == ["stdout", "stderr", "stdout"]
    assert [line["n"] for line in got] == list(range(1, 3003))
    assert all(set(line) == {"n", "t", "stream", "text", "rank"} and line["rank"] == 0 for line in got)


def test_print_and_stderr_are_captured_and_given_back_on_close(server: Any, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RANK", "3")
    before_out, before_err = sys.stdout, sys.stderr
    c = paneboard.Client(port=server.port, env="cap", spool_dir=False)
    try:
        print("hello")
        print("to stderr", file=sys.stderr)
        sys.stdout.write("a bar 1\ra bar 2\ra bar 3")  # an open bar: shipped as it stands
        assert c.flush(30)
        # The console is the whole process's: a line another thread of this test process prints meanwhile
        # (a warning, a log record) is captured too, so look at the lines this test printed.
        got = [g for g in lines(server, "cap", "&rank=3") if g["text"] in ("hello", "to stderr", "a bar 3")]
        assert [(g["stream"], g["text"]) for g in got] == [("stdout", "hello"), ("stderr", "to stderr"),
                                                          ("stdout", "a bar 3")]
        assert got[-1]["open"] is True
        sys.stdout.write("\ra bar done\n")
    finally:
        c.close_connection()
    assert sys.stdout is before_out and sys.stderr is before_err
    got = [g for g in lines(server, "cap", "&rank=3") if g["text"] in ("hello", "to stderr", "a bar done")]
    assert [g["text"] for g in got] == ["hello", "to stderr", "a bar done"] and "open" not in got[-1]
    assert lines(server, "cap") == []  # rank 0 printed nothing: ranks are kept apart
    with urllib.request.urlopen(server.url + "/api/v1/envs/cap/console?rank=3") as r:
        assert r.headers["X-Console-Ranks"] == "3"


def test_console_false_and_a_second_client_leave_the_streams_alone(server: Any):
    before = sys.stdout
    quiet = paneboard.Client(port=server.port, env="quiet", spool_dir=False, console=False)
    assert sys.stdout is before
    quiet.close_connection()
    first = paneboard.Client(port=server.port, env="first", spool_dir=False)
    second = paneboard.Client(port=server.port, env="second", spool_dir=False)
    try:
        print("once")
        assert first.flush(30) and second.flush(30)
        assert [g["text"] for g in lines(server, "first")] == ["once"]
    finally:
        second.close_connection()
        first.close_connection()
    assert sys.stdout is before


def test_the_console_api_pages_searches_tails_and_downloads(server: Any):
    rows = [[n, 1000.0 + n, "stderr" if n % 10 == 0 else "stdout", f"row {n}"] for n in range(1, 2501)]
    server.http("POST", "/api/v1/events", {"events": [
        {"op": "console", "env": "paged", "rank": 0, "lines": rows[:2000]},
        {"op": "console", "env": "paged", "rank": 0, "lines": rows[2000:]}]})
    seen, after = [], 0
    while True:
        with urllib.request.urlopen(server.url + f"/api/v1/envs/paged/console?after={after}&limit=1000") as r:
            assert r.headers["Content-Type"].startswith("application/x-ndjson")
            page = [json.loads(line) for line in r.read().decode().splitlines()]
            seen += page
            if "X-Console-Next" not in r.headers:
                break
            after = int(r.headers["X-Console-Next"])
    assert [s["n"] for s in seen] == list(range(1, 2501))
    assert [s["text"] for s in lines(server, "paged", "&tail=2")] == ["row 2499", "row 2500"]
    assert [s["text"] for s in lines(server, "paged", "&q=ROW%20250")] == ["row 250", "row 2500"]
    text = server.get_text("/api/v1/envs/paged/console?format=text")
    assert text.splitlines() == [f"row {n}" for n in range(1, 2501)]
    for bad in ("rank=-1", "after=x", "limit=0", "format=xml"):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(server.url + f"/api/v1/envs/paged/console?{bad}")
        assert err.value.code == 400 and "error" in json.loads(err.value.read())
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(server.url + "/api/v1/envs/nope/console")
    assert err.value.code == 404


def test_console_events_may_come_as_columns(server: Any):
    answer = server.http("POST", "/api/v1/events", {"events": [{"op": "console", "env": "cols", "n": [1, 2, 3],
                                                                "time": [1.0, 2.0, 3.0], "text": ["a", "b", "c"],
                                                                "stream": ["stdout", "stderr", "stdout"],
                                                                "open": [False, False, True]}]})
    assert answer["errors"] == []
    assert [(g["stream"], g["text"], g.get("open", False)) for g in lines(server, "cols")] == [
        ("stdout", "a", False), ("stderr", "b", False), ("stdout", "c", True)]


def test_bad_console_events_are_refused_with_a_reason(server: Any):
    for bad in ({"lines": []}, {"lines": [[0, 1.0, "stdout", "x"]]}, {"lines": [[1, 1.0, "tty", "x"]]},
                {"lines": [[1, 1.0, "stdout", 5]]}, {"rank": -1, "lines": [[1, 1.0, "stdout", "x"]]},
                {"lines": [[1, 1.0, "stdout", "x"]], "extra": 1}, {"n": [1, 2], "time": [1.0], "text": ["a", "b"]},
                {"n": [1], "time": [1.0], "text": ["a"], "stream": "tty"}, {"n": 1},
                {"n": [1], "time": [1.0], "text": ["a"], "lines": []}):
        answer = server.http("POST", "/api/v1/events", {"events": [{"op": "console", "env": "bad", **bad}]})
        assert answer["errors"] and "console" in answer["errors"][0]["error"], bad


@pytest.mark.parametrize(("written", "shown"), [
    ("plain", "plain"), ("a\rb", "b"), ("10%\r", "10%\r"), ("10%\r20%", "20%"), ("x\r\r", "x\r")])
def test_a_carriage_return_keeps_what_the_terminal_shows(written: str, shown: str):
    assert collapse(written) == shown


def test_an_uncaught_exception_leaves_its_traceback_in_the_console(server: Any, tmp_path: Any):
    script = textwrap.dedent("""
        import sys, paneboard
        c = paneboard.Client(port=int(sys.argv[1]), env="raises")
        print("about to fail")
        def train():
            raise ZeroDivisionError("loss went to infinity")
        train()
    """)
    done = subprocess.run([sys.executable, "-c", script, str(server.port)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PANEBOARD_SPOOL_DIR": str(tmp_path / "spool")})
    assert done.returncode == 1 and "ZeroDivisionError" in done.stderr  # the terminal still shows it too
    got = lines(server, "raises")
    assert got[0]["text"] == "about to fail"
    assert got[1] == {**got[1], "stream": "stderr", "text": "Traceback (most recent call last):"}
    assert got[-1]["text"] == "ZeroDivisionError: loss went to infinity"
    assert server.get_json("/api/v1/envs/raises/run")["status"] == "failed"
