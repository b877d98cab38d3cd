"""Server settings: what the CLI parses and create_app / create_asgi consume."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PORT = 8097


def default_db_path() -> Path:
    return Path(os.environ.get("PANEBOARD_HOME", Path.home() / ".paneboard")) / "paneboard.db"


@dataclass
class Settings:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    db: str = ""                  # a file path (SQLite) or a SQLAlchemy URL; empty -> default_db_path()
    base_url: str = "/"           # prefix when served behind a reverse proxy, e.g. "/pb"
    default_points: int = 2000    # point budget per trace when a read does not say
    demo: bool = False
    log_level: str = "info"
    token: str | None = None      # required from every client when set (always set off loopback)
    username: str | None = None   # Visdom-style login for the stock visdom client (POST / -> cookie)
    password: str | None = None
    max_request_bytes: int = 64 * 1024 * 1024  # HTTP bodies and websocket frames
    logdir: str | None = None     # a TensorBoard logdir imported and watched while the server runs (tensorboard/importer.py)
    stall_after_s: float = 60.0   # server-side stall alert: minimum silence of an open SDK connection (0: off)
    # A run whose job's connection dropped and stayed away this long is crashed; None: the database's (else 30 s).
    # Given, it becomes the grace of every server on the database (runs/watch.py).
    run_crash_grace_s: float | None = None
    body_deadline_s: float = 30.0  # a request body must arrive within this (slow clients get a 408)
    header_deadline_s: float = 10.0  # request headers must be complete within this (else 408 and closed)
    max_connections_per_address: int = 256  # open HTTP connections from one client address (more are closed)
    archive_member_bytes: int = 512 << 20  # env archive import: one member, all members, member count
    archive_total_bytes: int = 1 << 30
    archive_members: int = 100_000
    allowed_hosts: tuple[str, ...] = ()  # Host names answered besides loopback ones when there is no token
    artifacts_dir: str | None = None  # artifact bytes; default: an "artifacts" folder beside a SQLite database
    artifacts_url: str | None = None  # file://PATH or s3://BUCKET[/PREFIX]; wins over artifacts_dir when set
    watch_runs: bool = True       # False for the CLI imports: they judge no job's connection (runs/watch.py)
    notify: tuple[str, ...] = ()  # webhook URLs run events are POSTed to (notify/), `ntfy:URL` naming a format
    public_url: str | None = None  # how notifications link to runs (default: this server's own address)

    def own_url(self) -> str:
        """Where this server's pages are, for links that leave it (notifications)."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = self.host if self.host not in ("0.0.0.0", "::", "") else "localhost"
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}{self.base_url.rstrip('/')}"

    def __post_init__(self) -> None:
        base = "/" + self.base_url.strip("/")
        self.base_url = base if base == "/" else base + "/"

    @property
    def db_url(self) -> str:
        if "://" in self.db:
            return self.db
        path = Path(self.db).expanduser() if self.db else default_db_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{path.resolve()}"

    @property
    def db_hint(self) -> str:
        """How the user named the database, for messages."""
        return self.db or str(default_db_path())
