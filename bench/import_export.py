"""Data in and out (issue 31): W&B import speed, Api.history of a 1M-point series, a 1,000-run Parquet export.

    python bench/import_export.py [--rows 1000000] [--runs 1000] [--steps 2000]

1. A W&B run file of --rows history rows (one float key each; wandb's own Record protobufs in its log framing)
   is imported with `dash-server import` (a subprocess): seconds and rows/s (goal: 1M rows in < 10 s).
   The same file is then imported into a running dash-server with `import --server URL` (seconds, its RSS).
2. A dash-server serves that database; Api.history reads the 1M-point series exactly (goal: < 1 s), after one
   small read (pandas imported, the server warm).
3. --runs runs × 3 series × --steps steps are written through the writer (Submit), then Api.export writes them
   to Parquet in a subprocess: seconds, its peak RSS and the server's (goal: < 10 s, < 300 MB).
"""

from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

BLOCK = 32768


def write_wandb_run(path: Path, rows: int) -> None:
    """A run-*.wandb file as wandb-core writes it: a :W&B header, then CRC-framed Record protobufs in 32 KiB
    blocks (a record that does not fit is split FIRST/MIDDLE/LAST)."""
    from wandb.proto import wandb_internal_pb2 as pb

    out = bytearray(struct.pack("<4sHB", b":W&B", 0xBEE1, 0))

    def put(data: bytes) -> None:
        first = True
        while True:
            left = BLOCK - len(out) % BLOCK
            if left < 7:
                out.extend(b"\0" * left)
                continue
            piece, data = data[:left - 7], data[left - 7:]
            kind = (1 if first else 4) if not data else (2 if first else 3)
            out.extend(struct.pack("<IHB", zlib.crc32(piece, zlib.crc32(bytes([kind]))), len(piece), kind))
            out.extend(piece)
            first = False
            if not data:
                return

    run = pb.Record()
    run.run.run_id, run.run.project, run.run.display_name = "bench0001", "bench", "import"
    run.run.start_time.seconds = 1_700_000_000
    put(run.SerializeToString())
    values = np.random.default_rng(0).standard_normal(rows)
    rec = pb.Record()
    items = [rec.history.item.add() for _ in range(3)]
    for item, key in zip(items, ("_step", "_timestamp", "loss"), strict=True):
        item.nested_key.append(key)
    for i in range(rows):
        items[0].value_json = str(i)
        items[1].value_json = repr(1_700_000_000 + i * 0.01)
        items[2].value_json = repr(float(values[i]))
        put(rec.SerializeToString())
    done = pb.Record()
    done.exit.exit_code = 0
    put(done.SerializeToString())
    path.write_bytes(bytes(out))


def build_runs(db: Path, runs: int, steps: int) -> None:
    from paneboard.server.peers.sink import Sink, client_id
    from paneboard.server.services import Services
    from paneboard.server.settings import Settings

    services = Services.open(Settings(db=str(db), watch_runs=False))
    services.start()
    try:
        sink = Sink(services.writer, services.store)
        x = np.arange(steps, dtype=np.float64)
        wall = 1_700_000_000 + x
        for r in range(runs):
            for key in ("loss", "acc", "lr"):
                sink.series(f"sweep/run{r:04d}", key, client_id("bench", str(r), key), x, np.sin(x + r), wall, "step")
    finally:
        services.stop()


# Peak RSS from VmHWM, which exec resets: ru_maxrss would carry over this bench's own (forked) peak.
EXPORT = """
import json, sys, time
import paneboard
t0 = time.perf_counter()
counts = paneboard.Api(server=sys.argv[1]).export(sys.argv[2])
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
print(json.dumps({**counts, "seconds": time.perf_counter() - t0, "peak_rss_mb": int(hwm.split()[1]) / 1024}))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--steps", type=int, default=2000)
    args = p.parse_args()
    work = common.temp_dir("pb-import-export-")
    out: dict[str, float] = {}

    run_file = work / "wandb" / "run-bench0001.wandb"
    run_file.parent.mkdir(parents=True)
    write_wandb_run(run_file, args.rows)
    db = work / "imported.db"
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "paneboard.server", "import", str(work / "wandb"), "--db", str(db),
                    "--quiet"], check=True, stdout=subprocess.DEVNULL)
    out["wandb_import_s"] = time.perf_counter() - t0
    out["wandb_rows_per_s"] = args.rows / out["wandb_import_s"]

    import paneboard

    port = common.free_port()
    server = common.start_server(db, port)
    try:
        api = paneboard.Api(server=f"http://127.0.0.1:{port}")
        api.history("bench/import", keys=["loss"], samples=100)  # warm: pandas imported, server connected
        t0 = time.perf_counter()
        frame = api.history("bench/import", keys=["loss"])
        out["history_1m_s"] = time.perf_counter() - t0
        assert len(frame) == args.rows, len(frame)
    finally:
        common.stop(server)

    # The same run into a running server (dash-server import --server): binary frames over HTTP
    port = common.free_port()
    server = common.start_server(work / "served.db", port)
    try:
        url = f"http://127.0.0.1:{port}"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "paneboard.server", "import", str(work / "wandb"), "--server", url,
                        "--quiet"], check=True, stdout=subprocess.DEVNULL)
        out["wandb_import_server_s"] = time.perf_counter() - t0
        out["wandb_import_server_rss_mb"] = common.rss_mb(server.pid)
        assert len(paneboard.Api(server=url).history("bench/import", keys=["loss"])) == args.rows
    finally:
        common.stop(server)

    db2 = work / "sweep.db"
    build_runs(db2, args.runs, args.steps)
    port = common.free_port()
    server = common.start_server(db2, port)
    try:
        res = subprocess.run([sys.executable, "-c", EXPORT, f"http://127.0.0.1:{port}", str(work / "export")],
                             check=True, capture_output=True, text=True)
        export = json.loads(res.stdout)
        out["export_s"] = export["seconds"]
        out["export_client_peak_rss_mb"] = export["peak_rss_mb"]
        out["export_server_rss_mb"] = common.rss_mb(server.pid)
        assert export["points"] == args.runs * 3 * args.steps, export
    finally:
        common.stop(server)

    print(f"W&B import: {args.rows:,} history rows in {out['wandb_import_s']:.2f} s "
          f"({out['wandb_rows_per_s']:,.0f} rows/s; goal 1M in < 10 s)")
    print(f"W&B import into a running server (--server): {args.rows:,} rows in {out['wandb_import_server_s']:.2f} s, "
          f"server RSS after {out['wandb_import_server_rss_mb']:.0f} MB")
    print(f"Api.history: {args.rows:,}-point series in {out['history_1m_s']:.3f} s (goal < 1 s)")
    print(f"Api.export: {args.runs:,} runs x 3 series x {args.steps:,} steps to Parquet in {out['export_s']:.2f} s, "
          f"client peak RSS {out['export_client_peak_rss_mb']:.0f} MB, server RSS after "
          f"{out['export_server_rss_mb']:.0f} MB (goal < 10 s, < 300 MB)")
    print(json.dumps({k: round(v, 3) for k, v in out.items()}))


if __name__ == "__main__":
    main()
