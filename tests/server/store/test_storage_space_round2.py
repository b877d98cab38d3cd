"""Deleting runs gives the disk back while the server runs (incremental auto-vacuum); `dash-server db compact`."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import numpy as np

from helpers.waiting import wait_for
from paneboard.server.cli.main import main as dash_server
from paneboard.server.commands.envelope import EnvCommand
from paneboard.server.ingest.space_reclaim import SpaceReclaimer
from paneboard.server.store import open_store
from paneboard.server.store.schema import ensure_schema

RUNS = 8
POINTS = 40_000  # random y: ~0.4 MB a run once stored, so the file is a few MB


def _pages(db: Path) -> tuple[int, int]:
    """(pages in use, free pages) of the database, read as any other SQLite reader would."""
    with sqlite3.connect(db) as conn:
        return conn.execute("PRAGMA page_count").fetchone()[0], conn.execute("PRAGMA freelist_count").fetchone()[0]


def _fill(server, envs: list[str]) -> None:
    rng = np.random.default_rng(7)
    for env in envs:
        c = server.client(env)
        c.line(Y=rng.normal(size=POINTS), X=np.arange(POINTS), win="loss")
        assert c.flush(timeout=60)
        c.close_connection()


def test_deleting_half_the_runs_shrinks_the_file_while_ingest_goes_on(server) -> None:
    envs = [f"run{i}" for i in range(RUNS)]
    _fill(server, envs)
    full, _ = _pages(server.db)
    live = server.client("live")
    stop = threading.Event()
    sent: list[int] = []

    def ingest() -> None:  # a training run that keeps logging through the deletes and the vacuum steps
        step = 0
        while not stop.is_set():
            live.line(Y=[float(step)], X=[step], win="loss", update="append" if step else None)
            step += 1
            if step % 50 == 0:
                live.flush(timeout=30)
        sent.append(step)

    thread = threading.Thread(target=ingest)
    thread.start()
    try:
        for env in envs[: RUNS // 2]:
            server.http("DELETE", f"/api/v1/envs/{env}")
        # The file itself gets shorter (not just pages marked free for reuse): >= 40% of it comes back.
        shrunk = wait_for(lambda: _pages(server.db)[0] <= 0.6 * full, timeout=60)
        assert shrunk, f"{_pages(server.db)} pages (in use, free), {full} before the deletes"
        assert wait_for(lambda: server.db.stat().st_size <= 0.6 * full * 4096, timeout=60)
    finally:
        stop.set()
        thread.join(60)
    assert live.flush(timeout=60)
    live.close_connection()
    # Nothing the live run sent was lost, and the runs that were kept read back whole.
    assert sum(len(points) for points in server.series("live", "loss").values()) == sent[0]
    kept = server.series(envs[-1], "loss")
    assert sum(len(points) for points in kept.values()) == POINTS
    assert server.app.services.writer.space.pages_given_back > 0


def _store_with_deleted_run(tmp_path: Path, points: int = 200_000):
    url = f"sqlite:///{tmp_path / 'steps.db'}"
    ensure_schema(url, "steps.db")
    store = open_store(url)
    with store.transaction() as tx:
        trace = tx.add_trace(tx.put_pane("gone", "loss", "line", "", {}, None), "1", {})
        tx.append_points(trace, np.arange(points, dtype=float), np.random.default_rng(2).normal(size=points),
                         np.full(points, 1.0))
    with store.transaction() as tx:
        tx.delete_env("gone")
    return store


def test_a_busy_writer_takes_bounded_steps_spaced_by_their_cost(tmp_path: Path) -> None:
    store = _store_with_deleted_run(tmp_path)
    try:
        reclaim = SpaceReclaimer(store, step_pages=64, max_share=0.001)  # next step due 999x its cost later
        reclaim.maybe_step()
        assert reclaim.pages_given_back == 0  # nothing deleted through the writer yet: no step
        reclaim.note([EnvCommand(op="delete_env", env="gone")])
        free = store.space_state().free_pages
        assert free > 3 * 64
        reclaim.maybe_step()  # one step of at most 64 pages
        assert store.space_state().free_pages == free - 64
        reclaim.maybe_step()  # busy (not idle): the next step waits until its share of time is repaid
        assert store.space_state().free_pages == free - 64 and reclaim.next_due > 0
        while reclaim.due_in() is not None:  # idle: step after step until nothing is left to give back
            reclaim.maybe_step(idle=True)
        assert store.space_state().free_pages == 0 and reclaim.pages_given_back == free
    finally:
        store.close()


def _old_file(tmp_path: Path) -> Path:
    """A database at the head schema made before incremental auto-vacuum: its mode is set for good."""
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA auto_vacuum=NONE")
        conn.execute("CREATE TABLE made_before (x)")
        conn.execute("DROP TABLE made_before")
    ensure_schema(f"sqlite:///{db}", str(db))
    return db


def test_a_server_on_an_old_file_says_how_to_switch_it(tmp_path: Path, make_server) -> None:
    _old_file(tmp_path)
    srv = make_server("old")
    assert "dash-server db compact --db" in srv.log()
    assert "db compact" not in make_server("new").log()


def test_compact_switches_an_old_file_to_giving_space_back(tmp_path: Path) -> None:
    db = _old_file(tmp_path)
    url = f"sqlite:///{db}"
    store = open_store(url)
    try:
        assert not store.space_state().incremental
        with store.transaction() as tx:
            tx.ensure_env("gone")
            pane = tx.put_pane("gone", "loss", "line", "", {}, None)
            trace = tx.add_trace(pane, "1", {})
            n = 200_000
            tx.append_points(trace, np.arange(n, dtype=float), np.random.default_rng(1).normal(size=n),
                             np.full(n, 1.0))
        with store.transaction() as tx:
            assert tx.delete_env("gone")
        # The running server cannot shrink such a file: a step gives nothing back (and is not retried forever).
        assert store.reclaim_space(1000) == 0
        pages, free = _pages(db)
        assert free > 0.5 * pages
    finally:
        store.close()

    assert dash_server(["db", "compact", "--db", str(db)]) == 0

    pages_after, free_after = _pages(db)
    assert free_after == 0 and pages_after < pages - free + 10
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # INCREMENTAL from now on


def test_on_postgresql_autovacuum_reuses_space_and_compact_runs_vacuum_full(postgres) -> None:
    url = postgres.new_database()
    ensure_schema(url, url)
    store = open_store(url)
    try:
        with store.transaction() as tx:
            trace = tx.add_trace(tx.put_pane("gone", "loss", "line", "", {}, None), "1", {})
            tx.append_points(trace, np.arange(100_000.0), np.random.default_rng(3).normal(size=100_000),
                             np.full(100_000, 1.0))
        with store.transaction() as tx:
            tx.delete_env("gone")
        assert store.reclaim_space(1000) == 0  # nothing for the writer to do: autovacuum's job
        report = store.compact()
        assert 0 < report.bytes_after < report.bytes_before
    finally:
        store.close()
