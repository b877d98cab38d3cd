"""Shared fixtures: a real dash-server subprocess on a free port with a temp SQLite file."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class ServerProcess:
    """A dash-server started as a subprocess; restartable on the same port and database."""

    db: Path                      # the SQLite file (its folder also holds the server log)
    port: int = field(default_factory=free_port)
    db_url: str | None = None     # a database URL to use instead of the SQLite file
    extra_args: list[str] = field(default_factory=list)
    proc: subprocess.Popen | None = None
    log_path: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> ServerProcess:
        self.log_path = self.db.with_suffix(".log")
        log = open(self.log_path, "ab")
        cmd = [sys.executable, "-m", "paneboard.server", "--host", "127.0.0.1", "--port", str(self.port),
               "--db", self.db_url or str(self.db), *self.extra_args]
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dash-server exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.url + "/api/v1/envs", timeout=1) as r:
                    if r.status == 200:
                        return self
            except urllib.error.HTTPError:
                return self  # it answers (e.g. 401 when started with --token): it is up
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"dash-server did not start in {timeout}s:\n{self.log()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""

    def get_json(self, path: str):
        with urllib.request.urlopen(self.url + path, timeout=30) as r:
            return json.loads(r.read())

    def get_text(self, path: str) -> str:
        with urllib.request.urlopen(self.url + path, timeout=60) as r:
            return r.read().decode()

    def export_rows(self, env: str, win: str) -> list[list[str]]:
        """Every stored point of a pane as CSV rows (trace, x, y, wall), through the export API."""
        lines = self.get_text(f"/api/v1/envs/{env}/panes/{win}/export?format=csv").strip().splitlines()
        return [row.split(",") for row in lines[1:]]

    def series(self, env: str, win: str) -> dict[str, list[tuple[float, float]]]:
        """Every stored point of a line pane, per trace name, through the export API (JSON)."""
        data = self.get_json(f"/api/v1/envs/{env}/panes/{win}/export?format=json")
        return {t["name"]: list(zip(t["x"], t["y"], strict=True)) for t in data["traces"]}

    def client(self, env: str) -> Any:
        """The real SDK's client for `env` on this server (no spool: the tests own the server's lifetime)."""
        import paneboard  # here, not at the top: store/API-only test modules need no SDK import

        return paneboard.Client(server="http://127.0.0.1", port=self.port, env=env, spool_dir=False)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A fresh dash-server on a free port with its own temp SQLite file."""
    srv = ServerProcess(db=tmp_path / "paneboard.db").start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Any]:
    """The in-process layer: a Flask test client over real services on a temp SQLite file.

    test_api.py overrides it to run the same tests on SQLite and PostgreSQL.
    """
    from paneboard.server.app import create_app
    from paneboard.server.services import Services
    from paneboard.server.settings import Settings

    settings = Settings(db=str(tmp_path / "api.db"))
    svc = Services.open(settings)
    svc.start()
    yield create_app(settings, svc).test_client()
    svc.stop()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    # Loopback traffic must never go through a proxy configured in the environment.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    os.environ.pop("PANEBOARD_URL", None)


@pytest.fixture(autouse=True)
def _spool_in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # SDK clients in tests (and their subprocesses) spool under the test's temp dir, never in ~/.paneboard.
    monkeypatch.setenv("PANEBOARD_SPOOL_DIR", str(tmp_path / "default-spool"))


@pytest.fixture(scope="session")
def postgres():
    """One throwaway PostgreSQL cluster for the whole run (started on first use)."""
    from pgserver import TempPostgres

    pg = TempPostgres().start()
    try:
        yield pg
    finally:
        pg.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path: Path) -> str:
    """A fresh, empty database of each supported backend: store and API tests run on both."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'test.db'}"
    return request.getfixturevalue("postgres").new_database()


CHROMIUM = os.environ.get("PANEBOARD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def chromium():
    """One headless Debian Chromium for the run; each test opens its own context. Playwright is a dev
    dependency: a missing browser stack fails the run, never skips it."""
    import playwright.sync_api as sync_api

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
