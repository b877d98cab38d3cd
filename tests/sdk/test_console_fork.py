"""A fork's console: its source's lines up to the fork step, then its own job's lines after them, in order."""

from __future__ import annotations

import json
from typing import Any

import paneboard


def texts(srv: Any, env: str, rank: int = 0) -> list[str]:
    body = srv.get_text(f"/api/v1/envs/{env}/console?limit=10000&rank={rank}")
    return [json.loads(line)["text"] for line in body.splitlines()]


def post(srv: Any, *events: dict) -> None:
    answer = srv.http("POST", "/api/v1/events", {"events": list(events)})
    assert not answer.get("errors"), answer


def source_run(srv: Any) -> None:
    """Steps 0..9 logged at 1000 + step s; after each, the job printed "printed k" (rank 0) and rank 1 a line."""
    post(srv, {"op": "update", "mode": "append", "kind": "line", "env": "src", "win": "loss", "opts": {},
               "traces": [{"name": "loss", "x": list(range(10)), "y": [1.0] * 10,
                           "wall": [1000.0 + s for s in range(10)]}]},
         {"op": "console", "env": "src", "rank": 0,
          "lines": [[k + 1, 1000.5 + k, "stdout", f"printed {k}"] for k in range(10)]},
         {"op": "console", "env": "src", "rank": 1, "lines": [[1, 1000.7, "stderr", "rank 1 says"]]})


def test_a_run_fork_keeps_its_sources_console_up_to_the_step_and_its_own_after(server: Any):
    source_run(server)
    post(server, {"op": "run_fork", "env": "dst", "from": "src", "step": 4})
    # Step 5 was logged at 1005: what the source printed after that belongs to its own later history.
    assert texts(server, "dst") == [f"printed {k}" for k in range(5)]
    assert texts(server, "dst", rank=1) == ["rank 1 says"]
    # The forked job numbers its lines from 1 again: they follow the copied ones and overwrite none.
    post(server, {"op": "console", "env": "dst", "rank": 0, "lines": [[1, 2000.0, "stdout", "fork line 1"],
                                                                      [2, 2000.1, "stdout", "fork 40%", True]]})
    post(server, {"op": "console", "env": "dst", "rank": 0, "lines": [[2, 2000.2, "stdout", "fork 100%"]]})
    assert texts(server, "dst") == [f"printed {k}" for k in range(5)] + ["fork line 1", "fork 100%"]
    assert texts(server, "src") == [f"printed {k}" for k in range(10)]  # the source keeps all of its own


def test_the_sdks_forked_job_prints_after_its_sources_lines(server: Any):
    source_run(server)
    c = paneboard.Client(port=server.port, env="dst", spool_dir=False, console=False, fork_from="src")
    assert c.flush(30)
    post(server, {"op": "console", "env": "dst", "rank": 0, "lines": [[1, 3000.0, "stdout", "own"]]})
    assert texts(server, "dst") == [f"printed {k}" for k in range(10)] + ["own"]  # no step: the whole console
    c.close_connection(5)


def test_an_env_fork_copies_the_console(server: Any):
    source_run(server)
    assert server.http("POST", "/api/v1/envs/src/fork", {"to": "copy"}).get("ok", True)
    assert texts(server, "copy") == texts(server, "src") and texts(server, "copy", 1) == ["rank 1 says"]


def test_a_resumed_jobs_lines_follow_its_earlier_lifes(server: Any):
    first = paneboard.Client(port=server.port, env="job", spool_dir=False, console=False)
    post(server, {"op": "console", "env": "job", "rank": 0,
                  "lines": [[k + 1, 1000.0 + k, "stdout", f"life 1 line {k}"] for k in range(3)]})
    assert first.close_connection(30)  # the first life ends (a preempted one is marked crashed: the same here)
    assert server.get_json("/api/v1/envs/job/run")["status"] == "finished"
    again = paneboard.Client(port=server.port, env="job", spool_dir=False, console=False, resume=True)
    assert again.flush(30)
    # The resumed process numbers its lines from 1 again; a DDP rank joining the running job moves nothing.
    post(server, {"op": "console", "env": "job", "rank": 0, "lines": [[1, 2000.0, "stdout", "life 2 line 0"]]},
         {"op": "run_start", "env": "job", "client": "rank-1", "resume": True},
         {"op": "console", "env": "job", "rank": 0, "lines": [[2, 2000.1, "stdout", "life 2 line 1"]]})
    assert texts(server, "job") == [f"life 1 line {k}" for k in range(3)] + ["life 2 line 0", "life 2 line 1"]
    assert again.close_connection(30)
