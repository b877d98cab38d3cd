"""The SDK's `later` thread: handed-off calls run in order off the caller's thread, and flush/close run them first."""

from __future__ import annotations

import gc
import logging
import os
import threading
import time

import pytest

from paneboard.later import Later


def test_calls_run_in_order_on_the_background_thread_and_a_failing_one_is_logged_once(caplog):
    later = Later(tick=0.02)
    seen: list[tuple[int, str]] = []
    for i in range(50):
        later.submit(lambda i=i: seen.append((i, threading.current_thread().name)))
    deadline = time.monotonic() + 10
    while len(seen) < 50 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [i for i, _ in seen] == list(range(50))
    assert {name for _, name in seen} == {"paneboard-later"}

    def boom() -> None:
        raise ValueError("bad telemetry")

    with caplog.at_level(logging.WARNING, logger="paneboard"):
        later.submit(boom)
        later.submit(boom)
        later.submit(lambda: seen.append((50, threading.current_thread().name)))
        later.stop()  # runs what is pending, here
    assert seen[-1] == (50, threading.current_thread().name)
    assert [r.getMessage() for r in caplog.records].count(
        "paneboard: test_calls_run_in_order_on_the_background_thread_and_a_failing_one_is_logged_once.<locals>"
        ".boom failed and is skipped: ValueError: bad telemetry") == 1
    later.submit(lambda: seen.append((51, threading.current_thread().name)))  # after stop(): a thread again
    deadline = time.monotonic() + 10
    while len(seen) < 52 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen[-1] == (51, "paneboard-later")


@pytest.mark.e2e
def test_flush_and_close_deliver_what_was_handed_off_before_them(server):
    client = server.client("later")
    client.transport.later = Later(tick=3600)  # the thread would not look for an hour: only flush can run it
    client.transport.later.submit(client.text, "from the later thread", "note")
    assert client.flush(timeout=30)
    assert server.get_json("/api/v1/envs/later/panes/note")["data"]["html"] == "from the later thread"
    client.transport.later.submit(client.text, "at close", "note2")
    assert client.close_connection(timeout=30)
    assert server.get_json("/api/v1/envs/later/panes/note2")["data"]["html"] == "at close"


class _Sentinel:
    """Writes the pid of the process that frees it: a CUDA tensor freed in a forked DataLoader worker aborts it."""

    def __init__(self, path) -> None:
        self.path = path

    def __del__(self) -> None:
        with open(self.path, "a") as f:
            f.write(f"{os.getpid()}\n")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_never_frees_or_runs_the_parents_pending_calls(tmp_path):
    import paneboard

    client = paneboard.Client(server="http://127.0.0.1", port=9, env="fork", spool_dir=False, exit_timeout=0)
    client.transport.later = Later(tick=3600)
    marker = tmp_path / "freed"
    ran = tmp_path / "ran"
    client.transport.later.submit(lambda s: ran.write_text(str(os.getpid())), _Sentinel(marker))
    pid = os.fork()
    if pid == 0:  # the child, as a DataLoader worker: our fork handler has reset the transport
        try:
            client.transport.later.drain()
            gc.collect()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert not marker.exists() and not ran.exists()  # nothing freed, nothing run in the child
    client.transport.later.drain()
    gc.collect()
    assert ran.read_text() == str(os.getpid()) and marker.read_text() == f"{os.getpid()}\n"
    client.close_connection(timeout=0)
