"""The console's tees: a piped (buffered) stdout and a write-through one both reach their stream whole and in
order, and the console in the order stdout and stderr were written; a forked child prints to its own streams."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from paneboard.protocol import MAX_CONSOLE_LINE

JOB = textwrap.dedent("""
    import os, sys, paneboard
    c = paneboard.Client(port=int(sys.argv[1]), env=sys.argv[2], spool_dir=False)
    kind = type(sys.stdout).__name__
    for i in range(200):
        print("out", i, "of", 200)
        if i % 50 == 0:
            print(f"err {i}", file=sys.stderr)
    sys.stdout.writelines(["x" * 70_000, "\\n"])  # past the StringIO's swap size
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        print("from the child", flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
    print("last")
    c.close_connection(30)
    sys.__stderr__.write(kind + "\\n")
""")


@pytest.mark.parametrize("unbuffered", [False, True], ids=["piped", "write-through"])
def test_both_tees_keep_the_order_on_the_stream_and_in_the_console(server: Any, tmp_path: Any, unbuffered: bool):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    name = f"tee-{unbuffered}"
    job = subprocess.run([sys.executable, "-c", JOB, str(server.port), name], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert job.returncode == 0, job.stderr[-3000:]
    err = job.stderr.splitlines()
    assert err[-1] == ("_Tee" if unbuffered else "_BufferedTee")
    want = []
    for i in range(200):
        want.append(("stdout", f"out {i} of 200"))
        if i % 50 == 0:
            want.append(("stderr", f"err {i}"))
    want += [("stdout", "x" * 70_000), ("stdout", "last")]
    # What reached the real streams: all of it, in order (the forked child printed to its own streams).
    outs = [t for s, t in want if s == "stdout"]
    assert job.stdout.splitlines() == outs[:-1] + ["from the child", "last"]
    assert err[:-1] == [t for s, t in want if s == "stderr"]
    # The console has both, interleaved as they were written.
    body = server.get_text(f"/api/v1/envs/{name}/console?limit=10000")
    want[-2] = ("stdout", "x" * MAX_CONSOLE_LINE)  # a line's last 16 Ki characters are kept
    assert [(g["stream"], g["text"]) for g in map(json.loads, body.splitlines())] == want
