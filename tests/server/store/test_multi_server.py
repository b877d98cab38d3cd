"""Several dash-server processes on one PostgreSQL database write into the same trace without losing a point."""

from __future__ import annotations

import threading
from typing import Any

import paneboard


def test_writers_alternating_between_two_servers_into_one_trace_lose_nothing(postgres: Any,
                                                                              make_server_process: Any):
    url = postgres.new_database()
    a = make_server_process("a", db_url=url).start()
    b = make_server_process("b", db_url=url).start()
    writers, n = 6, 1500
    failures: list[str] = []

    def write(k: int) -> None:
        clients = [paneboard.Client(server="http://127.0.0.1", port=srv.port, env="shared", spool_dir=False)
                   for srv in (a, b)]
        for i in range(n):
            # Runs of 50 points through one server, then the other: each server's cache of the trace's tail
            # goes stale while the other one appends.
            clients[(i // 50) % 2].line(X=[k * n + i], Y=[float(k)], win="w", update="append")
            if i % 50 == 49:
                clients[(i // 50) % 2].flush(timeout=30)
        for c in clients:
            if not c.flush(timeout=60):
                failures.append(f"writer {k}: not every point was acknowledged")
            c.close_connection(timeout=10)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    xs = sorted(int(float(row[1])) for row in a.export_rows("shared", "w"))
    assert xs == list(range(writers * n))
    assert "UniqueViolation" not in a.log() + b.log()
