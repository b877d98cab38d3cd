"""Many agents on one sweep: a real dash-server and N `paneboard agent` processes, each running M trials.

Each trial is a tiny program that logs its metric for a few steps and leaves a mark (its trial number and pid).
Prints trials run, duplicates (a trial number run twice, or two trials on one run), lost (trials planned but not
finished), whether every trial's run is linked to the sweep, and the wall time:
`python bench/sweep_agents.py [--agents 8] [--trials 50] [--steps 3]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any

from common import _OPENER, free_port, start_server, stop

PROGRAM = textwrap.dedent('''
    import os, pathlib, paneboard
    run = paneboard.init()
    number = int(run.name.rsplit("-", 1)[1])
    (pathlib.Path(os.environ["SWEEP_MARKS"]) / f"{number}-{os.getpid()}").touch()
    steps = int(os.environ["SWEEP_STEPS"])
    for step in range(steps):
        paneboard.log({"loss": float(paneboard.config.lr) * (steps - step)})
    paneboard.finish()
''')


def get_json(base: str, path: str) -> Any:
    with _OPENER.open(base + path, timeout=60) as resp:
        return json.loads(resp.read())


def tally(base: str, sweep_id: str, marks: Path, planned: int) -> dict[str, Any]:
    """What the agents did, from the server's trials, the runs it links to the sweep, and the programs' marks."""
    sweep = get_json(base, f"/api/v1/sweeps/{sweep_id}")
    trials = sweep["trials"]
    ran = Counter(int(p.name.split("-")[0]) for p in marks.iterdir())
    runs = Counter(t["run"] for t in trials)
    finished = [t for t in trials if t["state"] == "finished"]
    linked = get_json(base, "/api/v1/runs?q=" + urllib.parse.quote(f"tags:sweep-{sweep_id}"))["total"]
    return {"trials_run": len(finished), "duplicates": sum(n - 1 for n in ran.values()) +
            sum(n - 1 for n in runs.values()), "lost": planned - sum(1 for t in finished if ran[t["number"]]),
            "linked": linked, "all_linked": linked == len(trials) == planned, "sweep_state": sweep["state"],
            "counts": sweep["counts"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agents", type=int, default=8)
    ap.add_argument("--trials", type=int, default=50, help="trials per agent")
    ap.add_argument("--steps", type=int, default=3, help="metric values each trial logs")
    args = ap.parse_args()
    planned = args.agents * args.trials
    with tempfile.TemporaryDirectory(prefix="pb-sweep-agents-") as tmp:
        root = Path(tmp)
        (root / "train.py").write_text(PROGRAM)
        (root / "sweep.yaml").write_text(textwrap.dedent(f"""
            program: train.py
            method: random
            run_cap: {planned}
            metric: {{name: loss, goal: minimize}}
            parameters:
              lr: {{min: 0.001, max: 1.0}}
        """))
        marks = root / "marks"
        marks.mkdir()
        env = {**os.environ, "SWEEP_MARKS": str(marks), "SWEEP_STEPS": str(args.steps),
               "PANEBOARD_HOME": str(root / "home")}
        port = free_port()
        server = start_server(root / "paneboard.db", port)
        base = f"http://127.0.0.1:{port}"
        cli = [sys.executable, "-m", "paneboard.cli"]
        try:
            sweep_id = subprocess.run([*cli, "sweep", "sweep.yaml", "--server", base], cwd=root, env=env, check=True,
                                      capture_output=True, text=True, timeout=60).stdout.strip()
            t0 = time.perf_counter()
            agents = [subprocess.Popen([*cli, "agent", sweep_id, "--server", base, "--count", str(args.trials),
                                        "--heartbeat", "1"], cwd=root, env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True) for _ in range(args.agents)]
            outs = [a.communicate(timeout=3600)[0] for a in agents]
            wall = time.perf_counter() - t0
            failed = [o[-500:] for a, o in zip(agents, outs, strict=True) if a.returncode != 0]
            out = {"agents": args.agents, "trials_per_agent": args.trials, **tally(base, sweep_id, marks, planned),
                   "agents_failed": len(failed), "wall_s": round(wall, 1),
                   "trials_per_s": round(planned / wall, 2)}
        finally:
            stop(server)
    print(json.dumps(out))
    for text in failed[:2]:
        print(text, file=sys.stderr)


if __name__ == "__main__":
    main()
