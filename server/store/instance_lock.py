"""One dash-server per SQLite file: its single writer thread is what keeps every acknowledged event stored.

Two servers on one file would each skip events by their own view of a client's last sequence number and
interleave appends to the same traces. An exclusive flock on `<db>.lock` is held for the process's life;
the kernel drops it when the process ends in any way (kill -9 included), so a stale file never blocks.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from sqlalchemy.engine import make_url

_held: list[int] = []  # open lock file descriptors: alive as long as the process


class AlreadyRunning(RuntimeError):
    pass


def sqlite_path(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def lock_database(url: str) -> Path | None:
    """Take the lock of the SQLite database `url` (None for other databases), or raise AlreadyRunning."""
    db = sqlite_path(url)
    if db is None:
        return None
    path = db.with_name(db.name + ".lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise AlreadyRunning(f"another dash-server (pid {holder}) is already serving {db} (it holds {path}); two "
                             "servers on one SQLite file would lose data. Stop it, or give this one another --db "
                             "(several servers can share a PostgreSQL database).") from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    _held.append(fd)
    return path
