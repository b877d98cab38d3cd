"""A throwaway PostgreSQL cluster for tests: initdb + pg_ctl in a temp dir, socket-only, trust auth."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise RuntimeError("PostgreSQL server binaries not found: install Debian's `postgresql` (README test command)")


class TempPostgres:
    def __init__(self) -> None:
        self.bin = _pg_bin()
        # In the system's temp dir, not pytest's basetemp: the cluster's user could not enter root's 0700 one.
        self.root = Path(tempfile.mkdtemp(prefix="pb-pg-", dir=os.environ.get("TMPDIR") or "/tmp"))
        self.data = self.root / "data"
        self.port = 5432 + (os.getpid() % 1000) + 100
        # initdb refuses to run as root; the Debian package creates the `postgres` user for this.
        self.user = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
        if os.geteuid() == 0:
            shutil.chown(self.root, self.user)
        self._admin: Any = None  # a psycopg connection to the `postgres` database, for CREATE DATABASE
        self._admin_lock = threading.Lock()

    def _run(self, *args: str) -> None:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)

    def start(self) -> TempPostgres:
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", self.user, "--no-sync")
        opts = f"-k {self.root} -p {self.port} -c listen_addresses='' -c fsync=off -c max_connections=200"
        self._run("pg_ctl", "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"), "-w", "start")
        return self

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def new_database(self) -> str:
        """A fresh, empty database; returns its SQLAlchemy URL (psycopg 3)."""
        import psycopg

        name = "pb_" + uuid.uuid4().hex[:12]
        # Over one kept connection rather than `runuser createdb`, which forks the whole test worker.
        with self._admin_lock:
            if self._admin is None:
                self._admin = psycopg.connect(host=str(self.root), port=self.port, user=self.user, dbname="postgres",
                                              autocommit=True)
            self._admin.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://{self.user}@/{name}?host={self.root}&port={self.port}"
