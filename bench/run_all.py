"""One benchmark suite: paneboard, Visdom and TensorBoard on this machine in the same run -> RESULTS.md + JSON.

    python bench/run_all.py [--quick] [--runs N] [--out DIR] [--no-profile]

Starts every server itself on loopback (dash-server with a temp SQLite file (bench/console.py's with --notify), Visdom's server with a temp
env_path, tensorboard with --load_fast=false and, when RustBoard's binary is installed, true), installs nothing,
and writes DIR/RESULTS.md and DIR/results.json (DIR defaults to bench/). Each figure is the median of the runs;
ratios are taken within each run, then their median. Peers that are not installed are reported as n/a.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import console as console_bench  # noqa: E402
import ingest  # noqa: E402
import ours  # noqa: E402
import peers  # noqa: E402
import report  # noqa: E402
import report_notes  # noqa: E402
import soak  # noqa: E402
import spy  # noqa: E402
from common import (  # noqa: E402
    data_server_binary,
    free_port,
    guarded,
    has_module,
    loadavg,
    median_of,
    start_server,
    start_visdom,
    stop,
    temp_dir,
    tensorboard_cmd,
)

FULL = {"runs": 3, "call_n": 90_000, "sw_n": 20_000, "tb_n": 100_000, "visdom_n": 1000, "sustained_n": 100_000,
        "bulk_total": 5_000_000, "bulk_per_call": 100_000, "visdom_bulk": [50, 1000], "tb_points": 200_000,
        "live_rates": [100, 1000, 10_000], "live_s": 3.0, "visdom_live": [100, 3.0],
        "open_sizes": [200_000, 10_000_000], "open_reps": 5, "mem": [100, 100_000, 50_000],
        "conc": [16, 10_000, 60.0, 1], "conc_runs": 1, "profile_s": 10.0,
        "console": [200_000, 10_000, 5.0, 3.0], "tb_serve": True}
QUICK = {"runs": 1, "call_n": 2000, "sw_n": 1000, "tb_n": 2000, "visdom_n": 50, "sustained_n": 5000,
         "bulk_total": 100_000, "bulk_per_call": 10_000, "visdom_bulk": [5, 1000], "tb_points": 10_000,
         "live_rates": [100, 1000, 10_000], "live_s": 0.3, "visdom_live": [100, 0.5],
         "open_sizes": [20_000, 100_000], "open_reps": 2, "mem": [4, 10_000, 10_000],
         "conc": [2, 500, 1.0, 1], "conc_runs": 1, "profile_s": 3.0,
         "console": [10_000, 10_000, 0.3, 0.5], "tb_serve": False}
HAVE_VISDOM = has_module("visdom")
NO_VISDOM = {"na": "visdom is not installed"}


def section(run: dict[str, Any], name: str, fn: Callable[[], dict[str, Any]]) -> None:
    """One section of a run, with the machine's load average before and after it (other jobs share it)."""
    before = loadavg()
    t0 = time.perf_counter()
    print(f"  {name} ...", flush=True)
    run[name] = fn()
    run.setdefault("load", {})[name] = {"before": before, "after": loadavg(), "seconds": time.perf_counter() - t0}


def ingest_section(cfg: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """Measures 1, 2, 3 (SDK bulk) and 4 on one fresh dash-server and one fresh Visdom server."""
    port = free_port()
    proc = start_server(tmp / "ingest.db", port)
    try:
        out = {"call": ingest.call_cost(port, cfg["call_n"]),
               "sdk_writer": guarded(ours.sdk_writer_cost, port, cfg["sw_n"]),
               "sustained": ingest.sustained(port, cfg["sustained_n"]),
               "bulk": ingest.bulk(port, cfg["bulk_total"], cfg["bulk_per_call"]),
               "live": {str(r): ingest.live_latency(port, r, cfg["live_s"]) for r in cfg["live_rates"]}}
    finally:
        stop(proc)
    out["tb_writer"] = guarded(peers.torch_writer, tmp / "tb_calls", cfg["tb_n"])
    if not HAVE_VISDOM:
        return {**out, "visdom_calls": NO_VISDOM, "visdom_bulk": NO_VISDOM, "visdom_live": NO_VISDOM}
    vport = free_port()
    vproc = start_visdom(tmp / "visdom_env", vport)
    try:
        out["visdom_calls"] = guarded(peers.visdom_appends, vport, cfg["visdom_n"])
        out["visdom_bulk"] = guarded(peers.visdom_bulk, vport, *cfg["visdom_bulk"])
        out["visdom_live"] = guarded(peers.visdom_live, vport, *cfg["visdom_live"])
    finally:
        stop(vproc)
    return out


def import_section(cfg: dict[str, Any], tmp: Path, logdir: Path | None) -> dict[str, Any]:
    """Measure 3b: the same logdir through `dash-server import-tb` and through TensorBoard's EventAccumulator."""
    if logdir is None:
        na = {"na": "tensorboard is not installed (not in [dev]): no logdir to import"}
        return {"import_tb": na, "ea_reload": na}
    return {"import_tb": guarded(ours.import_tb, logdir, tmp / f"import-{time.time_ns()}.db", cfg["tb_points"]),
            "ea_reload": guarded(peers.ea_reload, logdir)}


def open_section(cfg: dict[str, Any], tmp: Path, logdir: Path | None) -> dict[str, Any]:
    """Measure 5: our series at a 2,000-point budget vs TensorBoard serving the run and Visdom's /win_data."""
    small = cfg["open_sizes"][0]
    out: dict[str, Any] = {"ours": ours.fill_and_open(tmp, cfg["open_sizes"], cfg["open_reps"],
                                                      cfg["bulk_per_call"])}
    for f in tmp.glob("open.db*"):
        f.unlink()  # 10M points take a few hundred MB of temp disk
    if logdir is None:
        out["tb_legacy"] = out["tb_fast"] = {"na": "tensorboard is not installed (not in [dev])"}
    elif not cfg["tb_serve"]:  # its server's start and first load take most of a smoke run on a busy machine
        out["tb_legacy"] = out["tb_fast"] = {"na": "not served in --quick (run without --quick to time it)"}
    else:
        out["tb_legacy"] = guarded(peers.tb_serve, logdir, free_port(), small - 1, False, cfg["open_reps"])
        out["tb_fast"] = (guarded(peers.tb_serve, logdir, free_port(), small - 1, True, cfg["open_reps"])
                          if data_server_binary() else {"na": "RustBoard's data server binary is not installed"})
    if HAVE_VISDOM:
        vport = free_port()
        vproc = start_visdom(tmp / "visdom_open", vport)
        try:
            out["visdom"] = guarded(peers.visdom_window, vport, small, cfg["open_reps"])
        finally:
            stop(vproc)
    else:
        out["visdom"] = NO_VISDOM
    return out


def conc_section(cfg: dict[str, Any], tmp: Path) -> dict[str, Any]:
    writers, rate, seconds, subs = cfg["conc"]
    port = free_port()
    proc = start_server(tmp / f"conc-{time.time_ns()}.db", port)
    try:
        return soak.run_soak(port, proc.pid, writers, rate, seconds, subs, env="bench_conc")
    finally:
        stop(proc)


def profile_misses(cfg: dict[str, Any], tmp: Path, misses: set[str]) -> dict[str, Any]:
    """Re-run each missed measure once under py-spy (not timed: sampling slows it) and keep the hot frames."""
    out: dict[str, Any] = {}
    me = os.getpid()
    if misses & {"call", "sustained", "bulk", "live"}:
        port = free_port()
        proc = start_server(tmp / "profile.db", port)
        try:
            if "call" in misses:
                out["call"] = spy.profiled({"bench process (SDK caller)": me},
                                           lambda: ingest.call_cost(port, cfg["call_n"]))
            if "sustained" in misses:
                out["sustained"] = spy.profiled({"dash-server": proc.pid, "bench process (SDK)": me},
                                                lambda: ingest.sustained(port, cfg["sustained_n"]))
            if "bulk" in misses:
                out["bulk"] = spy.profiled({"dash-server": proc.pid, "bench process (SDK)": me},
                                           lambda: ingest.bulk(port, cfg["bulk_total"], cfg["bulk_per_call"]))
            if "live" in misses:
                out["live"] = spy.profiled({"dash-server": proc.pid, "bench process (SDK + socket)": me},
                                           lambda: ingest.live_latency(port, 1000, cfg["profile_s"]))
        finally:
            stop(proc)
    if "open" in misses:
        big = cfg["open_sizes"][-1]
        port = free_port()
        proc = start_server(tmp / "profile-open.db", port)
        try:
            ingest.bulk(port, big, cfg["bulk_per_call"], env="bench_open", win="big")
            out["open"] = spy.profiled({"dash-server": proc.pid},
                                       lambda: ours.open_series(port, "bench_open", "big", 3 * cfg["open_reps"]))
        finally:
            stop(proc)
    if "conc" in misses:
        writers, rate, _, subs = cfg["conc"]
        port = free_port()
        proc = start_server(tmp / "profile-conc.db", port)
        try:
            out["conc"] = spy.profiled({"dash-server": proc.pid}, lambda: soak.run_soak(
                port, proc.pid, writers, rate, cfg["profile_s"], subs, env="bench_conc"))
        finally:
            stop(proc)
    return out


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version(), "platform": platform.platform(), "cpus": str(os.cpu_count())}
    for pkg in ("paneboard", "visdom", "jsonpatch", "tornado", "tensorboard", "tensorboard-data-server", "torch",
                "websockets", "py-spy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


KEPT = "\n## Sweeps (bench/sweep_ui.py"  # sections other benches own: carried over when the suite rewrites the file


def kept_sections(path: Path) -> str:
    """The sweep bench's section of an existing RESULTS.md (it is written from bench/sweep_ui.py's figures)."""
    text = path.read_text() if path.exists() else ""
    at = text.find(KEPT)
    return text[at:] if at >= 0 else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 run with small sizes (smoke test)")
    ap.add_argument("--runs", type=int, help="runs per figure (default 3; --quick: 1)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent, help="folder for RESULTS.md/results.json")
    ap.add_argument("--no-profile", action="store_true", help="skip the py-spy pass over missed goals")
    args = ap.parse_args()
    # A SIGTERM (a test's timeout, a CI runner) unwinds through the finally blocks that stop every server started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cfg = dict(QUICK if args.quick else FULL)
    if args.runs:
        cfg["runs"] = args.runs
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = temp_dir("all")
    started = time.time()
    results: dict[str, Any] = {"command": "python " + " ".join(shlex.quote(a) for a in [
        "bench/run_all.py", *sys.argv[1:]]), "config": cfg, "versions": versions(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(started)), "load_start": loadavg(),
        "tensorboard_cli": tensorboard_cmd(), "data_server": data_server_binary(),
        "runs": []}
    try:
        logdir = None
        if tensorboard_cmd():
            print(f"writing a {cfg['tb_points']:,}-scalar TensorBoard logdir ...", flush=True)
            logdir = peers.write_tb_logdir(tmp / "tb_logdir", cfg["tb_points"])
        for i in range(cfg["runs"]):
            print(f"run {i + 1}/{cfg['runs']}", flush=True)
            run: dict[str, Any] = {}
            section(run, "ingest", lambda: ingest_section(cfg, tmp))
            section(run, "import", lambda: import_section(cfg, tmp, logdir))
            section(run, "open", lambda: open_section(cfg, tmp, logdir))
            section(run, "memory", lambda: ours.memory(tmp, *cfg["mem"]))
            section(run, "console", lambda: guarded(console_bench.measure, *cfg["console"]))
            if i < cfg["conc_runs"]:  # 60 s of load plus the backlog's flush: once per suite, not per run
                section(run, "concurrency", lambda: conc_section(cfg, tmp))
            results["runs"].append(run)
            for f in tmp.glob("*.db*"):
                f.unlink()  # each run starts from empty databases; keeps temp disk bounded
        results["median"] = median_of(results["runs"])
        rows = report.build_rows(results)
        results["table"] = rows
        misses = {r["key"] for r in rows if r["pass"] == "miss" and r.get("key")}
        if misses and not args.no_profile:
            print(f"profiling missed goals: {', '.join(sorted(misses))}", flush=True)
            results["profiles"] = profile_misses(cfg, tmp, misses)
        results["load_end"] = loadavg()
        results["elapsed_s"] = time.time() - started
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    (args.out / "RESULTS.md").write_text(report_notes.markdown(results) + kept_sections(args.out / "RESULTS.md"))
    print(report.table_md(results["table"]))
    print(f"wrote {args.out / 'RESULTS.md'} and {args.out / 'results.json'} in {results['elapsed_s']:.0f} s")


if __name__ == "__main__":
    main()
