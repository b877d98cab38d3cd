"""Sweep controller bench: the next TPE suggestion with 1,000 finished trials, and the cost of one trial report.

Runs the real controller on a real SQLite store (no HTTP): `python bench/sweep_suggest.py [--trials 1000]`.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import tempfile
import time
from pathlib import Path

from common import free_port, start_server, stop

import paneboard
from paneboard.server.store import open_store
from paneboard.server.store.schema import ensure_schema
from paneboard.server.store.sweep_records import TrialRecord
from paneboard.server.sweeps.controller import SweepController
from paneboard.server.sweeps.metric import metric_values
from paneboard.server.sweeps.search import program_values

CONFIG = {"method": "bayes", "metric": {"name": "loss", "goal": "minimize"},
          "parameters": {"lr": {"distribution": "log_uniform_values", "min": 1e-5, "max": 1e-1},
                         "dropout": {"min": 0.0, "max": 0.5}, "layers": {"min": 1, "max": 8},
                         "opt": {"values": ["adam", "sgd", "adamw"]}}}


def seed(ctl: SweepController, sweep_id: str, n: int) -> None:
    """n finished trials, stored as the controller stores them (asked from Optuna, values told)."""
    with ctl._session(sweep_id) as (session, study):
        for _ in range(n):
            number, params = study.ask()
            value = (params["lr"] - 0.01) ** 2 + params["dropout"]
            study.tell(number, "finished", value)
            session.put_trial(TrialRecord(sweep_id=sweep_id, number=number, state="finished", params=params,
                                          config=program_values(study.spec, params), run=f"b/{number}",
                                          agent="seed", value=value, intermediate=(value,),
                                          system_attrs=study.system_attrs(number), created=time.time()))


def metric_read_ms(tmp: Path, steps: int, repeats: int = 50) -> float:
    """What a report adds on top of the controller: reading the trial's run's metric (`steps` values logged by
    the SDK through a real dash-server), median over `repeats` reads."""
    db = tmp / "run.db"
    port = free_port()
    server = start_server(db, port)
    try:
        client = paneboard.Client(port=port, env="bench/real", spool_dir=False)
        client.line(X=list(range(steps)), Y=[1.0 / (1 + i) for i in range(steps)], win="loss")
        assert client.flush(60)
        client.close_connection(timeout=10)
    finally:
        stop(server)
    store = open_store(f"sqlite:///{db}")
    try:
        assert len(metric_values(store, "bench/real", "loss")) == steps
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            metric_values(store, "bench/real", "loss")
            times.append(time.perf_counter() - t0)
    finally:
        store.close()
    return statistics.median(times) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--asks", type=int, default=30)
    ap.add_argument("--reports", type=int, default=5, help="reports per trial")
    ap.add_argument("--steps", type=int, default=100, help="metric values of the run whose read is timed")
    ap.add_argument("--profile", action="store_true", help="print where ten warm suggestions spend their time")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        ensure_schema(url, url)
        store = open_store(url)
        ctl = SweepController(store)
        sweep = ctl.create(CONFIG, "bench")
        seed(ctl, sweep.id, args.trials)
        times, beats = [], []
        for _ in range(args.asks):
            t0 = time.perf_counter()
            trial = ctl.next_trial(sweep.id, "bench-agent", 10.0)["trial"]
            times.append(time.perf_counter() - t0)
            for _ in range(args.reports):
                t0 = time.perf_counter()
                ctl.heartbeat(sweep.id, trial["number"], "bench-agent", 10.0)
                beats.append(time.perf_counter() - t0)
            ctl.finish(sweep.id, trial["number"], "bench-agent", 0)
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(10):
                trial = ctl.next_trial(sweep.id, "bench-agent", 10.0)["trial"]
                ctl.finish(sweep.id, trial["number"], "bench-agent", 0)
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        t0 = time.perf_counter()
        ctl._studies.clear()
        ctl.describe(sweep.id)
        with ctl._session(sweep.id):
            pass
        rebuild = time.perf_counter() - t0
        store.close()
        metric_ms = metric_read_ms(Path(tmp), args.steps)
    out = {"finished_trials": args.trials, "suggest_ms_median": statistics.median(times) * 1e3,
           "suggest_ms_max": max(times) * 1e3, "report_ms_median": statistics.median(beats) * 1e3,
           "run_metric_read_ms": metric_ms, "cold_rebuild_ms": rebuild * 1e3}
    print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in out.items()}))


if __name__ == "__main__":
    main()
