"""`paneboard runs`, `status` and `tail` against a real server holding a hostile job's text: control characters
(title, clear screen, OSC 52 clipboard, 8-bit CSI) print as visible escapes; a console line's colours stay."""

from __future__ import annotations

import json
import re
from typing import Any

from helpers.hostile_http import HostileServer
from paneboard.cli import main

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # writes "rm -rf ~" to the watcher's clipboard
TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[H"
CSI8 = "\x9b2J"
RED = "\x1b[31mred\x1b[0m"
# What a terminal would obey: any control character but tab, unless part of a colour (SGR) sequence.
OBEYED = re.compile(r"\x1b\[[0-9;:]*m|([\x00-\x08\x0a-\x1f\x7f-\x9f])")


def obeyed(text: str) -> list[str]:
    return [m.group(1) for line in text.splitlines() for m in OBEYED.finditer(line) if m.group(1)]


def hostile(server: Any) -> None:
    env = "hostile"
    assert server.http("POST", "/api/v1/events", {"events": [
        {"op": "run_start", "env": env, "client": "c0", "t": 1000.0,
         "provenance": {"host": "gpu" + TITLE, "user": "ana" + CSI8, "pid": 42, "python": "3.11",
                        "git": {"commit": "abc" + CLEAR, "branch": "main" + OSC52}, "argv": ["train.py", OSC52]}},
        {"op": "run_config", "env": env, "config": {"lr" + TITLE: 0.1, "opt": "adam" + OSC52}},
        {"op": "console", "env": env, "lines": [[1, 1000.0, "stdout", "ok " + RED],
                                                 [2, 1000.0, "stdout", "title " + TITLE + CLEAR],
                                                 [3, 1000.0, "stderr", "clip " + OSC52 + CSI8]]},
        {"op": "run_end", "env": env, "client": "c0", "status": "failed", "error": "Boom " + OSC52 + "\n"}]})["ok"]


def test_status_runs_and_tail_print_no_control_character_a_job_sent(server: Any, capsys: Any):
    hostile(server)
    assert main(["status", "hostile", "--server", server.url]) == 0
    out = capsys.readouterr().out
    assert obeyed(out) == [] and "\\x1b]52;c;cm0gLXJmIH4K\\x07" in out and "gpu\\x1b]0;pwned\\x07" in out
    assert "ana\\x9b2J" in out
    assert main(["runs", "--server", server.url]) == 0
    out = capsys.readouterr().out
    assert obeyed(out) == [] and "lr\\x1b]0;pwned\\x07" in out
    assert main(["tail", "hostile", "--no-follow", "--server", server.url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert obeyed("\n".join(lines)) == []
    assert lines[0] == "ok " + RED  # colours are the job's own and harmless: kept
    assert lines[1] == "title \\x1b]0;pwned\\x07\\x1b[2J\\x1b[H"
    assert lines[2] == "clip \\x1b]52;c;cm0gLXJmIH4K\\x07\\x9b2J"


def test_tail_following_a_finished_run_escapes_too(server: Any, capsys: Any):
    hostile(server)
    assert main(["tail", "hostile", "--server", server.url]) == 0
    out = capsys.readouterr().out
    assert obeyed(out) == [] and out.splitlines()[-1] == "[run failed]"


def test_an_error_message_from_a_hostile_server_is_escaped(capsys: Any):
    # Our server quotes no control character in its errors; a hostile one (or a proxy in between) may.
    evil = HostileServer({"/api/v1/runs": (400, json.dumps({"error": "bad " + OSC52 + TITLE}).encode(),
                                           "application/json")})
    try:
        assert main(["runs", "--server", evil.url]) == 1
    finally:
        evil.close()
    err = capsys.readouterr().err
    assert obeyed(err) == [] and err.startswith("paneboard: bad \\x1b]52;")
