"""Scale-out, measured: committed points/s of one vs two dash-server processes on one PostgreSQL database, and the
ceiling of one on SQLite, under the same load (bench/soak.py's writers; writer k uses server k mod N).

PostgreSQL is the tests' throwaway cluster (tests/pgserver.py: local socket, fsync=off), so its figures are an
upper bound for a real server with durable commits; SQLite runs with the server's own synchronous=FULL.

    python bench/scale_out.py [--writers 16] [--rate 10000] [--seconds 10]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the tests' throwaway PostgreSQL
import soak  # noqa: E402
from common import free_port, stop, wait_up  # noqa: E402


def start(db: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--host", "127.0.0.1", "--port", str(port),
                             "--db", db, "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_up(proc, f"http://127.0.0.1:{port}/api/v1/envs", "dash-server")
    return proc, port


def measure(dbs: list[str], args: argparse.Namespace) -> dict[str, Any]:
    servers = [start(db) for db in dbs]
    try:
        return soak.run_soak([p for _, p in servers], [proc.pid for proc, _ in servers], args.writers, args.rate,
                             args.seconds, 1, env="scale")
    finally:
        for proc, _ in servers:
            stop(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--rate", type=float, default=10_000, help="appends/s per writer")
    ap.add_argument("--seconds", type=float, default=10)
    args = ap.parse_args()
    rows: list[tuple[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        rows.append(("SQLite, 1 process", measure([str(Path(tmp) / "scale.db")], args)))
    try:
        from pgserver import TempPostgres

        pg = TempPostgres().start()
    except Exception as exc:  # no PostgreSQL binaries: say so instead of failing the run
        print(f"PostgreSQL runs skipped: {exc}")
        pg = None
    if pg is not None:
        try:
            for n in (1, 2):
                db = pg.new_database()
                rows.append((f"PostgreSQL, {n} process{'es' if n > 1 else ''}", measure([db] * n, args)))
        finally:
            pg.stop()
    print(f"{args.writers} writers x {args.rate:,.0f} appends/s for {args.seconds:.0f} s (offered "
          f"{args.writers * args.rate:,.0f}/s), one /ws subscriber")
    for name, r in rows:
        print(f"{name:24s} committed {r['committed_per_s']:>9,.0f} points/s; server CPU {r['server_cpu_s']:.1f} s "
              f"({r['server_cpu_us_per_point']:.2f} us/point); ack p99 {r['ack_p99_ms']:,.0f} ms; lost {r['lost']}, "
              f"duplicated {r['duplicated']}, SDK drops {r['dropped']}")


if __name__ == "__main__":
    main()
