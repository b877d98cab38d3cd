"""Shared fixtures: real servers (in-process by default, a dash-server subprocess where the process boundary
matters), the in-process Flask layer, databases, the session's Chromium and the browser suites' tabs, pages and
clients. Test modules never import conftest or each other; plain helpers live in tests/helpers/."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import io
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import types
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from helpers import browser as browser_helpers
from helpers import visdom_page
from paneboard.server.web.quiet_server import QuietServer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerHelpers:
    """Reads through the public HTTP API, shared by the in-process server and the subprocess one."""

    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get_json(self, path: str):
        with urllib.request.urlopen(self.url + path, timeout=30) as r:
            return json.loads(r.read())

    def get_text(self, path: str) -> str:
        with urllib.request.urlopen(self.url + path, timeout=60) as r:
            return r.read().decode()

    def http(self, method: str, path: str, body=None):
        """A JSON request (body sent as JSON when given); the decoded JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())

    def env_url(self, env: str) -> str:
        """The dashboard page of `env`."""
        return f"{self.url}/env/{urllib.parse.quote(env, safe='')}"

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


@dataclass
class ServerProcess(ServerHelpers):
    """A dash-server in a process of its own; restartable on the same port and database.

    Only for tests where the process boundary is the point: kill -9, SIGTERM, restarts on the same
    database, CLI flags, several servers on one PostgreSQL database. Everything else uses InProcessServer.
    The process is forked from the worker's zygote (tests/server_zygote.py), which imported the server once,
    and runs the CLI's main() as `dash-server ARGS` would.
    """

    db: Path                      # the SQLite file (its folder also holds the server log)
    port: int = field(default_factory=free_port)
    db_url: str | None = None     # a database URL to use instead of the SQLite file
    extra_args: list[str] = field(default_factory=list)
    proc: Any = None              # a helpers.zygote.ForkedServer while started
    log_path: Path | None = None

    def start(self, timeout: float = 30.0) -> ServerProcess:
        from helpers.zygote import Zygote

        self.log_path = self.db.with_suffix(".log")
        argv = ["--host", "127.0.0.1", "--port", str(self.port), "--db", self.db_url or str(self.db), *self.extra_args]
        _spawned_servers.append(" ".join(["dash-server", *argv])[:200])
        self.proc = Zygote.get().spawn(argv, self.log_path)
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


# Threads the server starts (writer, stall watch, TensorBoard watcher, our uvicorn thread) and its pools' threads
# (a2wsgi's, the loop's executor): none may outlive stop(), or tests would leak work and open databases into each
# other.
_SERVER_THREADS = {"paneboard-writer", "paneboard-stall-watch", "paneboard-run-watch", "paneboard-tb-watch",
                   "paneboard-share-sweep", "inproc-uvicorn"}


def _pool_threads(pool: concurrent.futures.ThreadPoolExecutor | None) -> list[threading.Thread]:
    """A pool's own threads, known by the pool rather than by name: pools start threads lazily, so another
    server's pool may start one with the same name after this server started (a2wsgi names every pool's "WSGI_n")."""
    return list(getattr(pool, "_threads", ()))


class _ThreadServer(QuietServer):
    """dash-server's uvicorn Server without signal handlers (those belong to the main thread, pytest's, never to
    ours), stopped by exit(), which wakes its tick at once: hundreds of servers stop per run."""

    @contextlib.contextmanager
    def capture_signals(self):  # uvicorn also skips them off the main thread; we do not rely on that
        yield

    async def serve(self, sockets: Any = None) -> None:
        # The loop's default executor gets a name of its own: other loops in the test process (Playwright's)
        # start "asyncio_" threads too, and those are not this server's to stop.
        self.loop_executor = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="inproc-loop")
        asyncio.get_running_loop().set_default_executor(self.loop_executor)
        await super().serve(sockets=sockets)

    async def shutdown(self, sockets: Any = None) -> None:
        """uvicorn's shutdown, except that it waits for open connections as long as they stay open rather
        than a fixed 0.1 s first, which most test servers, with none open, spent for nothing."""
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.timeout_graceful_shutdown
        state = self.server_state
        while (state.connections or state.tasks) and not self.force_exit and loop.time() < deadline:
            await asyncio.sleep(0.005)
        for task in state.tasks:
            task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        for server in self.servers:
            await server.wait_closed()
        if not self.force_exit:
            await self.lifespan.shutdown()

    def exit(self) -> None:
        """Ask the server to shut down now (from any thread)."""
        self.should_exit = True
        self.wake()


_MIGRATED: Path | None = None


def _copy_migrated_database(dest: Path) -> None:
    """A new SQLite file at the head schema, copied from one migrated once per worker: running every
    migration again for each of hundreds of test servers costs more than the tests themselves. The fresh
    database's own path (ensure_schema creating it) is covered by the store and dash-server tests."""
    global _MIGRATED
    from paneboard.server.store.schema import ensure_schema

    if _MIGRATED is None:
        template = Path(tempfile.mkdtemp(prefix="pb-migrated-")) / "head.db"
        ensure_schema(f"sqlite:///{template}", str(template))
        _MIGRATED = template
    shutil.copyfile(_MIGRATED, dest)


@dataclass
class InProcessServer(ServerHelpers):
    """The real ASGI app (create_asgi: Flask over a2wsgi plus our websockets) served by uvicorn in a
    background thread on an ephemeral port, with its own SQLite file.

    Real HTTP and real websockets, so the real SDK, the visdom client and Chromium talk to it as to
    dash-server, without the ~1.4 s of a subprocess start. `options` are Settings fields (token,
    base_url, stall_after_s, max_request_bytes ...).
    """

    db: Path
    options: dict[str, Any] = field(default_factory=dict)
    port: int = 0
    app: Any = None
    _server: Any = None
    _thread: threading.Thread | None = None
    _sock: socket.socket | None = None
    _log: io.StringIO = field(default_factory=io.StringIO)
    _log_handler: logging.Handler | None = None
    _threads_before: set[int] = field(default_factory=set)
    _log_level: int = logging.NOTSET

    def start(self, timeout: float = 30.0) -> InProcessServer:
        from paneboard.server.app import create_asgi
        from paneboard.server.settings import Settings
        from paneboard.server.web.guard import guarded_protocol

        # Bind first, then hand the socket to uvicorn: the port is ours from the start (no free_port race).
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", self.port))
        self.port = self._sock.getsockname()[1]
        self._threads_before = {t.ident for t in threading.enumerate()}  # another server's are not ours
        if isinstance(self.db, Path) and not self.db.exists():
            _copy_migrated_database(self.db)
        settings = Settings(host="127.0.0.1", port=self.port, db=str(self.db), **self.options)
        self._capture_logs()
        self.app = create_asgi(settings)
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="on", ws="auto",
                                ws_per_message_deflate=False, ws_max_size=settings.max_request_bytes,
                                timeout_graceful_shutdown=5,  # same options as dash-server (server/cli.py)
                                http=guarded_protocol(settings.header_deadline_s, settings.max_connections_per_address))
        self._server = _ThreadServer(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name="inproc-uvicorn", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:  # set once lifespan startup (services.start) is done and it listens
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"in-process server did not start in {timeout}s:\n{self.log()}")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 15.0) -> None:
        if self._thread is None:
            return
        self._server.exit()  # uvicorn's own shutdown: close sockets, lifespan (services.stop)
        self._thread.join(timeout)
        alive = self._thread.is_alive()
        pools = _pool_threads(self.app.wsgi.executor) + _pool_threads(getattr(self._server, "loop_executor", None))
        self.app.wsgi.executor.shutdown(wait=True)  # a2wsgi's pool is not part of the lifespan
        self._sock.close()
        self._thread = None
        logging.getLogger("paneboard").removeHandler(self._log_handler)
        logging.getLogger("paneboard").setLevel(self._log_level)
        assert not alive, f"in-process server still running {timeout}s after stop():\n{self.log()}"
        assert not self.app.services.started, "lifespan shutdown did not stop the services"
        leaked = [t.name for t in threading.enumerate()
                  if t.ident not in self._threads_before and t.name in _SERVER_THREADS]
        leaked += [t.name for t in pools if t.is_alive()]
        assert not leaked, f"server threads outlived stop(): {leaked}"
        with socket.socket() as s:  # the port is free again: nothing accepts there
            assert s.connect_ex(("127.0.0.1", self.port)) != 0, f"port {self.port} still accepts after stop()"

    def _capture_logs(self) -> None:
        # What dash-server would print (its log file for ServerProcess): tests read causes from it. The
        # server logs under paneboard.<part>; the SDK in this same process logs as plain "paneboard".
        self._log_handler = logging.StreamHandler(self._log)
        self._log_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        self._log_handler.addFilter(lambda record: record.name.startswith("paneboard."))
        logger = logging.getLogger("paneboard")
        logger.addHandler(self._log_handler)
        self._log_level = logger.level
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)  # dash-server's default --log-level; restored by stop()

    def log(self) -> str:
        return self._log.getvalue()


def _worker_port() -> int:
    """The port this worker's `server` fixture listens on, the same test after test: Chromium keeps compiled
    scripts per URL, port included, so pages of a port seen before skip compiling Plotly again."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw")
    return 29400 + (int(worker[2:]) + 1 if worker[2:].isdigit() else 0)


def _stop_clients_left_on(port: int) -> None:
    """Stop the SDK clients earlier tests left open on `port`: they reconnect to whatever listens there, and
    would deliver into the next test's server. What they still held goes to their (temp) spools."""
    from paneboard.transport.transport import live_transports

    for transport in live_transports():
        if urllib.parse.urlsplit(transport.url).port == port:
            transport.close(timeout=0, unreachable_grace=0)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[InProcessServer]:
    """A fresh in-process server (real HTTP and websockets) with its own temp SQLite file, on the worker's
    port (an ephemeral one where another run holds it)."""
    port = _worker_port()
    _stop_clients_left_on(port)
    try:
        srv = InProcessServer(db=tmp_path / "paneboard.db", port=port).start()
    except OSError:
        srv = InProcessServer(db=tmp_path / "paneboard.db").start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Any]:
    """Start in-process servers with Settings options (token=..., base_url=...); all stopped at the end."""
    made: list[InProcessServer] = []

    def make(name: str = "paneboard", **options: Any) -> InProcessServer:
        srv = InProcessServer(db=tmp_path / f"{name}.db", options=options)
        made.append(srv)
        return srv.start()

    yield make
    for srv in reversed(made):  # last started, first stopped: each stop() checks only its own threads
        srv.stop()


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[ServerProcess]:
    """A dash-server subprocess, for tests where the process boundary is the point (kill -9, SIGTERM,
    restart on the same database, CLI flags)."""
    srv = ServerProcess(db=tmp_path / "paneboard.db").start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def server_types() -> types.SimpleNamespace:
    """The server classes, for fixtures that manage their own (module-scoped, subclassed, not started yet):
    test modules never import conftest or each other."""
    return types.SimpleNamespace(InProcessServer=InProcessServer, ServerProcess=ServerProcess)


@pytest.fixture
def unused_port() -> int:
    """A port nobody listens on (connects are refused)."""
    return free_port()


@pytest.fixture
def make_server_process(tmp_path: Path) -> Iterator[Any]:
    """Make (not start) dash-server subprocesses; `ServerProcess(db=..., extra_args=[...])`'s arguments.
    All are stopped at the end."""
    made: list[ServerProcess] = []

    def make(name: str = "paneboard", **kw: Any) -> ServerProcess:
        srv = ServerProcess(db=kw.pop("db", tmp_path / f"{name}.db"), **kw)
        made.append(srv)
        return srv

    yield make
    for srv in made:
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


@pytest.fixture(scope="session", autouse=True)
def _tempfiles_under_basetemp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # What this process makes with tempfile goes under the run's basetemp, which pytest prunes, not into /tmp
    # for good: each worker's template database, and the .wav files visdom's audio() writes and never deletes.
    tempfile.tempdir = str(tmp_path_factory.mktemp("tempfile"))
    yield
    tempfile.tempdir = None


@pytest.fixture(autouse=True)
def _spool_in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # SDK clients in tests (and their subprocesses) spool under the test's temp dir, never in ~/.paneboard.
    monkeypatch.setenv("PANEBOARD_SPOOL_DIR", str(tmp_path / "default-spool"))


# ------------------------------------------------------------------------------------------------- markers
# Markers say what a test does, and are set from what it uses: `browser` from the Chromium fixture, `postgresql`
# from the cluster's, `e2e` from the server-process fixtures. A test that starts dash-server itself carries
# @pytest.mark.e2e; one that starts it without the marker fails (the recorder below sees every such start).
_SERVER_PROCESS_FIXTURES = {"server_process", "make_server_process"}
_spawned_servers: list[str] = []
_popen_init = subprocess.Popen.__init__


def _recording_popen_init(self: subprocess.Popen, args: Any, *rest: Any, **kwargs: Any) -> None:
    argv = [str(a) for a in args] if isinstance(args, (list, tuple)) else [str(args)]
    if any("dash-server" in a or "paneboard.server" in a for a in argv):
        _spawned_servers.append(" ".join(argv)[:200])
    _popen_init(self, args, *rest, **kwargs)


subprocess.Popen.__init__ = _recording_popen_init  # type: ignore[method-assign]


def _starts_a_server_process(fixturedefs: Any) -> bool:
    """A fixture of a module that starts a ServerProcess itself (a module-scoped server for its tests)."""
    return any(_source_starts_a_server_process(fixturedef.func) for fixturedef in fixturedefs or ())


@functools.cache
def _source_starts_a_server_process(func: Any) -> bool:
    # Each fixture is asked about once per test that uses it (thousands of times a collection): read it once.
    import inspect

    try:
        return "ServerProcess(" in inspect.getsource(func)
    except (OSError, TypeError):
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Long tests first: workers share out what is left, so none is left finishing a long one alone at the end.
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & {"chromium", "warm_chromium"}:
            item.add_marker(pytest.mark.browser)
        callspec = getattr(item, "callspec", None)
        if "postgres" in fixtures or (callspec is not None and "postgresql" in callspec.params.values()):
            item.add_marker(pytest.mark.postgresql)
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs if info is not None else {}
        if fixtures & _SERVER_PROCESS_FIXTURES or any(
                _starts_a_server_process(defs.get(name)) for name in fixtures - {"server_types"}):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(autouse=True)
def _e2e_marker_is_true(request: pytest.FixtureRequest) -> Iterator[None]:
    before = len(_spawned_servers)
    yield
    started = _spawned_servers[before:]
    if started and request.node.get_closest_marker("e2e") is None:
        pytest.fail(f"started dash-server as a subprocess without the e2e marker: {started[0]}")


@pytest.fixture(autouse=True)
def _console_given_back() -> Iterator[None]:
    # A Client a test leaves open keeps capturing the worker's stdout and stderr (the first Client of a process
    # owns the console), so the next test's clients would capture nothing: hand the streams back after each test.
    yield
    from paneboard import console

    console.stop(console.active())


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
def playwright() -> Iterator[Any]:
    """The worker's Playwright driver (one per process: its sync API runs an event loop of its own). It is a
    dev dependency: a missing browser stack fails the run, never skips it."""
    import playwright.sync_api as sync_api

    with sync_api.sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def chromium(playwright: Any) -> Iterator[Any]:
    """One headless Debian Chromium for the run, for tests that open contexts of their own."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="session")
def warm_chromium(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A second Chromium for the tabs and pages of most browser tests, with an on-disk profile. A fresh
    context has no code cache, so every page compiled Plotly's 4.8 MB again, most of a browser test's time;
    this profile's cache keeps it compiled for each port (see `_worker_port`). Tests share it one page at a
    time: `warm_page` clears the storage its page used, through the blank page the profile opens with, which
    stays open for that."""
    context = playwright.chromium.launch_persistent_context(
        str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM, headless=True,
        args=CHROMIUM_ARGS)
    try:
        yield context
    finally:
        context.close()


# Everything a site keeps except the HTTP cache, which holds the compiled scripts the warm profile is for, and
# cookies, which clear_cookies() clears for every site at once.
_CLEARED_STORAGE = ("file_systems,indexeddb,local_storage,shader_cache,websql,service_workers,"
                    "cache_storage,interest_groups,shared_storage,storage_buckets")


@contextlib.contextmanager
def warm_page(warm: Any, width: int, height: int, scheme: str = "light") -> Iterator[Any]:
    """A new page of the warm profile, as a fresh context would give it: the cookies and the storage of every
    origin it visited are cleared when it closes, and the windows it opened close with it (its sessionStorage
    goes with the page)."""
    page = warm.new_page()
    pages = [page]
    origins: set[str] = set()

    def visited(frame: Any) -> None:
        parts = urllib.parse.urlsplit(frame.url)
        if parts.scheme in ("http", "https"):
            origins.add(f"{parts.scheme}://{parts.netloc}")

    def opened(popup: Any) -> None:
        pages.append(popup)
        popup.on("framenavigated", visited)
        popup.on("popup", opened)

    page.on("framenavigated", visited)
    page.on("popup", opened)
    page.set_viewport_size({"width": width, "height": height})
    page.emulate_media(color_scheme=scheme)
    try:
        yield page
    finally:
        for each in pages:
            with contextlib.suppress(Exception):  # a page the test closed itself, or that crashed
                each.close()
        cdp = warm.new_cdp_session(warm.pages[0])  # the profile's own blank page: storage is browser-wide
        try:
            for origin in origins:
                cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": _CLEARED_STORAGE})
        finally:
            cdp.detach()
        warm.clear_cookies()


# ---------------------------------------------------------------------------------------------- browser suites


@pytest.fixture(scope="module")
def browser(chromium) -> Iterator[object]:
    """The session's Chromium under the browser suite's name (test_browser*.py)."""
    yield chromium


@pytest.fixture
def open_tab(warm_chromium) -> Iterator[Any]:
    """open_tab(url, width=1280, scheme="light") -> a ready Tab in a fresh page; all closed at the end."""
    with contextlib.ExitStack() as pages:

        def make(url: str, width: int = 1280, scheme: str = "light") -> browser_helpers.Tab:
            page = pages.enter_context(warm_page(warm_chromium, width, 800, scheme))
            page.set_default_timeout(browser_helpers.TIMEOUT_MS)
            t = browser_helpers.Tab(page)
            page.on("console", lambda m: t.errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: t.errors.append(str(e)))
            return t.open(url)

        yield make


@pytest.fixture
def tab(warm_chromium) -> Iterator[browser_helpers.Tab]:
    """A fresh page in Chromium, recording console errors and uncaught exceptions."""
    with warm_page(warm_chromium, 1280, 860) as page:
        page.set_default_timeout(browser_helpers.TIMEOUT_MS)
        t = browser_helpers.Tab(page)
        page.on("console", lambda m: t.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: t.errors.append(f"pageerror: {e}"))
        yield t


@pytest.fixture
def sdk(server):
    """Make SDK clients for envs of the test server; all closed (flushed) at the end."""
    import paneboard

    made = []

    def make(env: str):
        c = paneboard.Client(server="http://127.0.0.1", port=server.port, env=env)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close_connection(timeout=5)


@pytest.fixture
def page(server, warm_chromium) -> Iterator[tuple[object, list[str]]]:
    """A Chromium page for the visdom-client browser tests, with the console errors it produced."""
    errors: list[str] = []
    with warm_page(warm_chromium, 1400, 1000) as pg:
        pg.set_default_timeout(visdom_page.TIMEOUT_MS)
        pg.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
        yield pg, errors


@pytest.fixture
def viz(server):
    """The real visdom client on the test server, env "vb" (test modules with their own `viz` override it)."""
    import visdom  # required by the tests that use it: a missing client fails them

    v = visdom.Visdom(server="http://127.0.0.1", port=server.port, env="vb", raise_exceptions=True)
    yield v
    v.use_socket = False
