"""What synchronous=FULL costs: appends/s through the real writer on a temp SQLite file, FULL vs NORMAL.

FULL (the default) syncs the WAL at every commit, so an acknowledged event survives a power cut; NORMAL
syncs only at checkpoints. The cost is per commit, so it is measured with 1 event per commit (a slow
trickle: every event its own transaction) and with 100 (a training loop's batches).
    python bench/durability.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from sqlalchemy import event

from paneboard.server.dispatch.parse import parse_event
from paneboard.server.ingest.writer import Writer
from paneboard.server.store.schema import ensure_schema
from paneboard.server.store.sqla_store import SqlStore


def run_arm(db: Path, synchronous: str, per_commit: int, seconds: float) -> dict:
    url = f"sqlite:///{db}"
    ensure_schema(url, str(db))
    store = SqlStore(url)

    @event.listens_for(store.engine, "connect")
    def _sync(dbapi_conn, _record) -> None:  # runs after the server's own pragmas
        dbapi_conn.execute(f"PRAGMA synchronous={synchronous}")

    writer = Writer(store, publish=lambda msgs: None)
    writer.start()
    n = commits = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        cmds = [parse_event({"op": "update", "env": "bench", "win": "w", "kind": "line", "mode": "append",
                             "traces": [{"name": "a", "x": [float(n + i)], "y": [0.5]}]}) for i in range(per_commit)]
        result = writer.submit_wait(cmds)
        assert not result.failed and not result.errors, result
        n += per_commit
        commits += 1
    elapsed = time.perf_counter() - t0
    writer.stop()
    with store.engine.connect() as conn:
        actual = conn.exec_driver_sql("PRAGMA synchronous").scalar()
    store.close()
    return {"synchronous": synchronous, "actual": actual, "per_commit": per_commit,
            "appends_per_s": n / elapsed, "commits_per_s": commits / elapsed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="per arm (4 arms)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pb-durability-") as tmp:
        print(f"temp files under {tmp}")
        print(f"{'synchronous':>11} {'events/commit':>13} {'appends/s':>10} {'commits/s':>10}")
        for per_commit in (1, 100):
            for sync in ("FULL", "NORMAL"):
                r = run_arm(Path(tmp) / f"{sync}-{per_commit}.db", sync, per_commit, args.seconds)
                assert r["actual"] == {"FULL": 2, "NORMAL": 1}[sync], r
                print(f"{sync:>11} {per_commit:>13} {r['appends_per_s']:>10.0f} {r['commits_per_s']:>10.0f}")


if __name__ == "__main__":
    main()
