"""TensorBoard compatibility benchmarks: add_scalar cost of paneboard.SummaryWriter vs torch's, and importing a
200,000-scalar torch SummaryWriter run vs EventAccumulator.

    python bench/tensorboard_compat.py [--calls 50000] [--no-import]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

N_SCALARS = 200_000
CHUNK = 100  # calls timed together: perf_counter's own cost stays out of a few-µs call


def _per_call_us(log: Callable[[int], None], calls: int) -> list[float]:
    """µs per call of log(i) for i in 0..calls-1, one figure per CHUNK consecutive calls."""
    out = []
    for start in range(0, calls, CHUNK):
        t0 = time.perf_counter()
        for i in range(start, start + CHUNK):
            log(i)
        out.append((time.perf_counter() - t0) / CHUNK * 1e6)
    return out


def _summary(chunks: list[float]) -> dict:
    q = statistics.quantiles(chunks, n=10)
    return {"median_us": statistics.median(chunks), "p10_us": q[0], "p90_us": q[-1],
            "mean_us": statistics.fmean(chunks)}


def writer_cost(calls: int = 50_000) -> dict:
    """add_scalar("loss", v, i): torch's SummaryWriter (event file) vs paneboard.SummaryWriter (live dash-server)."""
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    import paneboard

    sys.path.insert(0, str(Path(__file__).parent))
    from common import free_port, start_server, stop

    tmp = Path(tempfile.mkdtemp(prefix="pb-tb-writer-"))
    try:
        tw = TorchWriter(log_dir=str(tmp / "torch"))
        theirs = _per_call_us(lambda i: tw.add_scalar("loss", 1.0 / (i + 1), i), calls)
        tw.close()
        port = free_port()
        proc = start_server(tmp / "bench.db", port)
        try:
            pw = paneboard.SummaryWriter("bench", server="http://127.0.0.1", port=port)
            pw.client.check_connection(10)
            ours = _per_call_us(lambda i: pw.add_scalar("loss", 1.0 / (i + 1), i), calls)
            t0 = time.perf_counter()
            delivered = pw.flush(120)
            drain_s = time.perf_counter() - t0
            pw.close()
        finally:
            stop(proc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = {"calls": calls, "torch": _summary(theirs), "paneboard": _summary(ours), "delivered": delivered,
           "drain_s": drain_s}
    out["ratio"] = out["torch"]["median_us"] / out["paneboard"]["median_us"]
    print(f"add_scalar, {calls:,} calls (median of {CHUNK}-call chunks, µs per call):")
    print(f"  {'writer':34s} {'median':>8s} {'p10':>8s} {'p90':>8s} {'mean':>8s}")
    for name, key in (("torch SummaryWriter (event file)", "torch"), ("paneboard.SummaryWriter (live)", "paneboard")):
        r = out[key]
        print(f"  {name:34s} {r['median_us']:8.2f} {r['p10_us']:8.2f} {r['p90_us']:8.2f} {r['mean_us']:8.2f}")
    print(f"  ratio torch / paneboard: {out['ratio']:.1f}x   (all stored by the server: {delivered}, "
          f"{drain_s:.2f} s after the loop)")
    return out


def _write_run(logdir: Path, n: int) -> Path:
    from torch.utils.tensorboard import SummaryWriter

    run = logdir / "big"
    w = SummaryWriter(log_dir=str(run))
    for i in range(n):
        w.add_scalar("loss", 1.0 / (i + 1), i)
    w.close()
    return run


def _import_once(logdir: Path, db: Path) -> float:
    """Seconds from the first byte read to the last row committed (one dash-server's import pass)."""
    from paneboard.server.services import Services
    from paneboard.server.settings import Settings
    from paneboard.server.tensorboard.importer import TbImporter

    services = Services.open(Settings(db=str(db)))
    services.start()
    try:
        importer = TbImporter(services.writer, services.store, logdir)
        t0 = time.perf_counter()
        stats = importer.import_pass()
        took = time.perf_counter() - t0
    finally:
        services.stop()
    assert stats.events == N_SCALARS + 1, stats  # + the file_version record
    return took


def _accumulate_once(run: Path) -> float:
    from tensorboard.backend.event_processing import event_accumulator as ea

    t0 = time.perf_counter()
    acc = ea.EventAccumulator(str(run), size_guidance={k: 0 for k in ea.DEFAULT_SIZE_GUIDANCE})
    acc.Reload()
    took = time.perf_counter() - t0
    assert len(acc.Scalars("loss")) == N_SCALARS
    return took


def import_cost(repeats: int = 3) -> dict:
    """dash-server's import of a 200k-scalar run (into committed SQLite rows) vs EventAccumulator keep-all."""
    with tempfile.TemporaryDirectory(prefix="pb-tb-bench-") as tmp:
        logdir = Path(tmp) / "runs"
        t0 = time.perf_counter()
        run = _write_run(logdir, N_SCALARS)
        write_s = time.perf_counter() - t0
        ours = [_import_once(logdir, Path(tmp) / f"import{k}.db") for k in range(repeats)]
        theirs = [_accumulate_once(run) for _ in range(repeats)]
        t0 = time.perf_counter()  # the whole command: interpreter, imports, schema, import, commit
        subprocess.run([sys.executable, "-m", "paneboard.server", "import-tb", str(logdir), "--db",
                        str(Path(tmp) / "cli.db"), "--quiet"], check=True, capture_output=True)
        cli_s = time.perf_counter() - t0
    out = {"write_s": write_s, "import_s": statistics.median(ours), "import_runs": ours,
           "accumulator_s": statistics.median(theirs), "accumulator_runs": theirs, "cli_s": cli_s}
    out["ratio"] = out["accumulator_s"] / out["import_s"]
    print(f"import of {N_SCALARS:,} scalars (torch SummaryWriter, written in {write_s:.1f} s):")
    print(f"  dash-server import pass, to committed SQLite rows: median {out['import_s']:.3f} s "
          f"({', '.join(f'{t:.3f}' for t in ours)})")
    print(f"  `dash-server import-tb` command, process start to exit: {cli_s:.2f} s")
    print(f"  EventAccumulator(size_guidance keep-all).Reload(): median {out['accumulator_s']:.3f} s "
          f"({', '.join(f'{t:.3f}' for t in theirs)})")
    print(f"  ratio EventAccumulator / import: {out['ratio']:.1f}x")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=50_000, help="add_scalar calls per writer")
    ap.add_argument("--no-import", action="store_true", help="skip the import-tb section")
    args = ap.parse_args()
    writer_cost(args.calls)
    if not args.no_import:
        print()
        import_cost()


if __name__ == "__main__":
    main()
