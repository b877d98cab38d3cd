"""Sweep controller bench: the next TPE suggestion with 1,000 finished trials, and the cost of one trial report.

Runs the real controller on a real SQLite store (no HTTP for its calls); each report reads the metric that the SDK
logged to the trial's run through a real dash-server on the same database: `python bench/sweep_suggest.py`.
A report's cost is the whole heartbeat: the trial's row, its run's metric (the series only when the run logged a
point since the last report) and the pruner. `--profile-reports N` prints where N warm reports with new points
spend their time, by phase; `--hyperband` gives the sweep a pruner; `load_1m` is uptime's load at the end.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from common import free_port, start_server, stop

import paneboard
from paneboard.server.store import open_store
from paneboard.server.store.schema import ensure_schema
from paneboard.server.store.sweep_records import TrialRecord
from paneboard.server.sweeps.controller import SweepController
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
                                          agent="seed", value=value, steps=1, last=value,
                                          system_attrs=study.system_attrs(number), created=time.time()))


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def report_costs(ctl: SweepController, sweep_id: str, port: int, asks: int, reports: int, steps: int
                 ) -> dict[str, list[float]]:
    """Heartbeats of `asks` trials whose runs the SDK logs to through the real dash-server (on the same
    database): each report after `steps` new values ("new"), then again with none logged since ("idle")."""
    out: dict[str, list[float]] = {"new": [], "idle": []}
    for _ in range(asks):
        trial = ctl.next_trial(sweep_id, "bench-agent", 10.0)["trial"]
        client = paneboard.Client(port=port, env=trial["run"], spool_dir=False)
        for r in range(reports):
            xs = list(range(r * steps, (r + 1) * steps))
            client.line(X=xs, Y=[1.0 / (1 + x) for x in xs], win="loss", update="append" if r else None)
            assert client.flush(60)
            for kind in ("new", "idle"):
                t0 = time.perf_counter()
                answer = ctl.heartbeat(sweep_id, trial["number"], "bench-agent", 10.0)
                out[kind].append(time.perf_counter() - t0)
                assert answer["steps"] == (r + 1) * steps, answer
        client.close_connection(timeout=10)
        ctl.finish(sweep_id, trial["number"], "bench-agent", 0)
    return out


# The phases of a report, each the cumulative time of the functions that do it (file suffix, function name); the
# session's open and commit are sweep_session's own time less the parts listed after it.
PHASES = {
    "sweep-row update": [("sqla_sweeps.py", "_claim")],
    "durability setting": [("dialect.py", "relax_durability")],
    "trial-row read": [("sqla_sweeps.py", "trial")],
    "intermediate-values write": [("sqla_sweeps.py", "put_progress"), ("sqla_sweeps.py", "put_deadline")],
    "metric read": [("sqla_sweeps.py", "_metric_trace"), ("metric.py", "read_values")],
    "pruner call": [("trial/_trial.py", "should_prune")],
    "optuna bookkeeping": [("search.py", "report"), ("search.py", "system_attrs")],
}


def profile_reports(ctl: SweepController, sweep_id: str, port: int, n: int, steps: int, reports: int) -> None:
    """cProfile over `n` warm reports with new points; prints each phase's share of a report."""
    prof = cProfile.Profile()
    done = 0
    while done < n:
        trial = ctl.next_trial(sweep_id, "bench-agent", 10.0)["trial"]
        client = paneboard.Client(port=port, env=trial["run"], spool_dir=False)
        for r in range(reports):
            xs = list(range(r * steps, (r + 1) * steps))
            client.line(X=xs, Y=[1.0 / (1 + x) for x in xs], win="loss", update="append" if r else None)
            assert client.flush(60)
            if r == 0:  # the first report of a trial reads the run's trace for the first time: not a warm one
                ctl.heartbeat(sweep_id, trial["number"], "bench-agent", 10.0)
                continue
            prof.enable()
            ctl.heartbeat(sweep_id, trial["number"], "bench-agent", 10.0)
            prof.disable()
            done += 1
        client.close_connection(timeout=10)
        ctl.finish(sweep_id, trial["number"], "bench-agent", 0)
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]

    def cum(file: str, name: str) -> float:
        return sum(v[3] for (f, _line, fn), v in stats.items() if f.endswith(file) and fn == name)

    total = cum("controller.py", "heartbeat")
    phases = {k: sum(cum(f, fn) for f, fn in v) for k, v in PHASES.items()}
    phases["pruner call"] = min(phases["pruner call"], phases["optuna bookkeeping"])
    phases["optuna bookkeeping"] -= phases["pruner call"]
    session = cum("sqla_sweeps.py", "sweep_session") - phases["sweep-row update"] - phases["durability setting"]
    rows = {"store session open/commit": session, **phases}
    rows["rest (controller, records)"] = total - sum(rows.values())
    print(f"profile: {done} warm reports with new points, {total / done * 1e3:.3f} ms each under cProfile")
    for k, v in rows.items():
        print(f"  {k:28s} {v / done * 1e6:8.1f} us  {v / total * 100:5.1f}%")


def page_api_ms(port: int, sweep_id: str, query: str, repeats: int = 20) -> float:
    """The sweep page's GET through the real dash-server, median of `repeats` (one warm-up first)."""
    url = f"http://127.0.0.1:{port}/api/v1/sweeps/{sweep_id}?{query}"
    times = []
    for k in range(repeats + 1):
        t0 = time.perf_counter()
        with urllib.request.urlopen(url, timeout=60) as r:
            json.loads(r.read())
        if k:
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--asks", type=int, default=30)
    ap.add_argument("--reports", type=int, default=5, help="reports per trial")
    ap.add_argument("--steps", type=int, default=20, help="metric values the run logs between two reports")
    ap.add_argument("--profile", action="store_true", help="print where ten warm suggestions spend their time")
    ap.add_argument("--profile-reports", type=int, default=0, metavar="N",
                    help="print where N warm reports with new points spend their time, by phase")
    ap.add_argument("--hyperband", action="store_true", help="the sweep prunes (early_terminate hyperband)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        url = f"sqlite:///{db}"
        ensure_schema(url, url)
        store = open_store(url)
        ctl = SweepController(store)
        config = {**CONFIG, "early_terminate": {"type": "hyperband", "min_iter": 3}} if args.hyperband else CONFIG
        sweep = ctl.create(config, "bench")
        seed(ctl, sweep.id, args.trials)
        times = []
        for _ in range(args.asks):
            t0 = time.perf_counter()
            trial = ctl.next_trial(sweep.id, "bench-agent", 10.0)["trial"]
            times.append(time.perf_counter() - t0)
            ctl.finish(sweep.id, trial["number"], "bench-agent", 0)
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(10):
                trial = ctl.next_trial(sweep.id, "bench-agent", 10.0)["trial"]
                ctl.finish(sweep.id, trial["number"], "bench-agent", 0)
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        port = free_port()
        server = start_server(db, port)  # the runs' writer: the SDK logs each trial's metric through it
        try:
            if args.profile_reports:
                profile_reports(ctl, sweep.id, port, args.profile_reports, args.steps, args.reports)
            beats = report_costs(ctl, sweep.id, port, args.asks, args.reports, args.steps)
            page_ms = page_api_ms(port, sweep.id, "limit=100&newest=1")  # what static/js/pages/sweep.js asks
            all_rows_ms = page_api_ms(port, sweep.id, "limit=1000")
        finally:
            stop(server)
        t0 = time.perf_counter()
        ctl._studies.clear()
        ctl.describe(sweep.id)
        with ctl._session(sweep.id):
            pass
        rebuild = time.perf_counter() - t0
        store.close()
    every = beats["new"] + beats["idle"]
    out = {"finished_trials": args.trials, "suggest_ms_median": statistics.median(times) * 1e3,
           "suggest_ms_max": max(times) * 1e3,
           "report_ms_median": statistics.median(every) * 1e3, "report_ms_p95": _pct(every, 0.95) * 1e3,
           "report_new_points_ms_median": statistics.median(beats["new"]) * 1e3,
           "report_new_points_ms_p95": _pct(beats["new"], 0.95) * 1e3,
           "report_no_new_points_ms_median": statistics.median(beats["idle"]) * 1e3,
           "report_no_new_points_ms_p95": _pct(beats["idle"], 0.95) * 1e3,
           "page_api_ms_median": page_ms, "page_api_all_rows_ms_median": all_rows_ms,
           "cold_rebuild_ms": rebuild * 1e3, "load_1m": os.getloadavg()[0]}
    print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in out.items()}))


if __name__ == "__main__":
    main()
