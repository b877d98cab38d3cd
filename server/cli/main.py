"""`dash-server`: parse arguments and call into the app; `dash-server db upgrade|current|compact` manage the database."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import threading
from urllib.parse import urlsplit

from ..settings import DEFAULT_PORT, Settings, default_db_path
from ..web.auth import host_name as auth_host_name
from ..web.auth import is_loopback, new_token


def _server_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dash-server",
        description="paneboard dashboard server. database: dash-server db upgrade|current|compact [--db PATH]; "
                    "imports: dash-server import PATH_OR_URI (TensorBoard, Visdom, archive, W&B, MLflow, Neptune export; "
                    "also import-tb LOGDIR, import-visdom PATH); share tokens: "
                    "dash-server token create --read-only [--envs a,b] | list | revoke ID; archives: "
                    "dash-server export-envs ENV... -o FILE, dash-server import-envs FILE [--replace]; artifacts: "
                    "dash-server artifacts delete NAME:vN... | gc [--grace-hours H] [--dry-run]")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
    p.add_argument("--base-url", default="/", help="URL prefix when behind a reverse proxy, e.g. /pb")
    p.add_argument("--demo", action="store_true", help="stream a demo run into env 'demo'")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.add_argument("--token", default=os.environ.get("PANEBOARD_TOKEN"),
                   help="access token every client must present (default $PANEBOARD_TOKEN); generated when "
                        "binding a non-loopback address without one")
    p.add_argument("--username", default=os.environ.get("PANEBOARD_USERNAME"),
                   help="Visdom-style login for the visdom client (with --password; default $PANEBOARD_USERNAME)")
    p.add_argument("--password", default=os.environ.get("PANEBOARD_PASSWORD"),
                   help="password for --username (default $PANEBOARD_PASSWORD)")
    p.add_argument("--max-request-mb", type=float, default=64.0,
                   help="largest HTTP body or websocket message accepted, in MB (default 64)")
    p.add_argument("--logdir", default=None,
                   help="TensorBoard log directory to import and keep watching (runs become envs, new events "
                        "arrive live; see also: dash-server import-tb LOGDIR)")
    p.add_argument("--stall-after", type=float, default=60.0, metavar="SECONDS",
                   help="alert when a connected job sends nothing for this long and 10x its usual interval "
                        "(default 60; 0 turns the server-side stall alert off)")
    p.add_argument("--crash-grace", type=float, default=None, metavar="SECONDS",
                   help="a run whose job's connection dropped without a clean end and stayed away this long is "
                        "shown as crashed; every server on the database uses the last one given (default: the "
                        "database's, else 30)")
    p.add_argument("--header-deadline", type=float, default=10.0, metavar="SECONDS",
                   help="request headers must arrive within this, or the connection gets a 408 (default 10)")
    p.add_argument("--max-connections-per-address", type=int, default=256, metavar="N",
                   help="open HTTP connections and websockets one client address may hold (default 256)")
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="without a token the server only answers requests for localhost, 127.0.0.1 or [::1] "
                        "(DNS-rebinding guard); also answer this Host name, e.g. behind a reverse proxy "
                        "(repeatable)")
    p.add_argument("--notify", action="append", default=[], metavar="URL",
                   help="POST run events (crashed, failed, finished, stalled, a first NaN/inf, alerts, alert rules) "
                        "to this webhook as Slack-compatible JSON; Discord and ntfy URLs are recognised, or name "
                        "the format: ntfy:URL, discord:URL, slack:URL, json:URL (repeatable)")
    p.add_argument("--public-url", default=None, metavar="URL",
                   help="this server's address as the notifications' readers reach it, e.g. behind a tunnel "
                        "(default http://HOST:PORT)")
    p.add_argument("--artifacts-url", default=os.environ.get("PANEBOARD_ARTIFACTS_URL"), metavar="URL",
                   help="where artifact bytes live: file://PATH (default: 'artifacts' beside a SQLite database) or "
                        "s3://BUCKET[/PREFIX] on any S3-compatible store, whose endpoint, region and keys come from "
                        "the standard AWS settings (AWS_ENDPOINT_URL, AWS_PROFILE ...; default $PANEBOARD_ARTIFACTS_URL)")
    p.add_argument("--print-tunnel", metavar="USER@HOST",
                   help="print the ssh command that forwards this server to your machine, then exit")
    return p


def tunnel_command(target: str, port: int) -> str:
    return f"ssh -N -L {port}:localhost:{port} {target}"


def _db_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dash-server db", description="manage the database schema and its disk space")
    p.add_argument("action", choices=["upgrade", "current", "compact"],
                   help="compact: rewrite the database without free space (stop the server first)")
    p.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
    return p


def db_command(argv: list[str]) -> int:
    from ..store import schema

    args = _db_parser().parse_args(argv)
    settings = Settings(db=args.db)
    if args.action == "compact":
        return compact_command(settings)
    if args.action == "upgrade":
        schema.upgrade(settings.db_url)
    current, head = schema.current_revision(settings.db_url), schema.head_revision()
    state = "up to date" if current == head else f"behind head {head}: run dash-server db upgrade"
    print(f"{settings.db_hint}: schema revision {current or '(empty)'} ({state})")
    return 0


def compact_command(settings: Settings) -> int:
    """A full VACUUM: gives back every free page at once (a running server gives them back after deletes by itself,
    a step at a time) and switches a file made before incremental auto-vacuum to it."""
    from ..store import open_store
    from ..store.instance_lock import AlreadyRunning, lock_database
    from ..store.schema import SchemaError, ensure_schema

    try:
        lock_database(settings.db_url)  # VACUUM would stall a running server's writer for its whole length
        ensure_schema(settings.db_url, settings.db_hint)
    except (SchemaError, AlreadyRunning) as exc:
        print(f"dash-server: {exc}", file=sys.stderr)
        return 2
    store = open_store(settings.db_url)
    try:
        report = store.compact()
    finally:
        store.close()
    mib = 1 << 20
    print(f"{settings.db_hint}: {report.bytes_before / mib:.1f} MiB -> {report.bytes_after / mib:.1f} MiB "
          f"in {report.seconds:.2f} s")
    return 0


def serve(settings: Settings) -> int:
    import uvicorn

    from ..app import create_asgi
    from ..artifacts.locate import ArtifactsUrlError
    from ..artifacts.s3_blobs import BlobStoreUnavailable
    from ..store.instance_lock import AlreadyRunning, lock_database
    from ..store.schema import SchemaError
    from ..web.guard import guarded_protocol
    from ..web.quiet_server import QuietServer
    from ..web.sockets import frame_limit

    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        lock_database(settings.db_url)  # before the schema check: that may already write
        app = create_asgi(settings)
    except (SchemaError, AlreadyRunning, ArtifactsUrlError, BlobStoreUnavailable) as exc:
        print(f"dash-server: {exc}", file=sys.stderr)
        return 2
    url = f"http://{'localhost' if settings.host in ('127.0.0.1', 'localhost') else settings.host}:{settings.port}"
    url += settings.base_url
    print(f"paneboard {app.services.settings.db_hint} -> {url}", flush=True)
    print(f"remote? forward the port from your machine: {tunnel_command('user@this-host', settings.port)}",
          flush=True)
    if settings.demo:
        from .demo import start_demo_when_ready

        print(f"demo: streaming into {url}env/demo", flush=True)
        threading.Thread(target=start_demo_when_ready, args=(settings,), daemon=True, name="demo").start()
    # Ingest allocates many short-lived containers per event. Freezing the start-up heap (modules,
    # SQLAlchemy) keeps full collections from rescanning it. A first generation of 100k makes collections
    # rare, and one then finds little alive: commands waiting for the writer are freed by refcount, not GC
    # (20k: 3.2 µs of GC per ingested event; 100k with batches decoded under jsonio.gc_paused: 0.4 µs).
    gc.freeze()
    gc.set_threshold(100_000, 20, 20)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level=settings.log_level,
                            access_log=False, lifespan="on", ws="auto", ws_per_message_deflate=False,
                            ws_max_size=frame_limit(settings.max_request_bytes),
                            http=guarded_protocol(settings.header_deadline_s, settings.max_connections_per_address))
    QuietServer(config).run()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["db"]:
        return db_command(argv[1:])
    if argv[:1] == ["import"]:  # any source: TensorBoard, Visdom, archive, W&B, MLflow, Neptune export
        from .import_any import import_command

        return import_command(argv[1:])
    if argv[:1] == ["import-tb"]:  # needs the tensorboard package (extra: paneboard[tensorboard])
        from .import_commands import import_tb

        return import_tb(argv[1:])
    if argv[:1] == ["runs"]:
        from .runs_command import runs_command

        return runs_command(argv[1:])
    if argv[:1] == ["artifacts"]:
        from .artifacts_command import artifacts_command

        return artifacts_command(argv[1:])
    if argv[:1] == ["token"]:
        from .sharing_commands import token_command

        return token_command(argv[1:])
    if argv[:1] in (["export-envs"], ["import-envs"]):
        from .sharing_commands import export_envs_command, import_envs_command

        return (export_envs_command if argv[0] == "export-envs" else import_envs_command)(argv[1:])
    if argv[:1] == ["import-visdom"]:
        from .import_commands import import_visdom

        return import_visdom(argv[1:])
    args = _server_parser().parse_args(argv)
    if args.print_tunnel:
        print(tunnel_command(args.print_tunnel, args.port))
        return 0
    token = args.token or None
    if args.crash_grace is not None and not 0 < args.crash_grace < 1e9:
        print(f"dash-server: --crash-grace must be a positive number of seconds, got {args.crash_grace:g}",
              file=sys.stderr)
        return 2
    for target in args.notify:
        from ..notify.payload import split_target

        if urlsplit(split_target(target)[1]).scheme not in ("http", "https"):
            print(f"dash-server: --notify needs an http(s) URL, got {target!r}", file=sys.stderr)
            return 2
    if bool(args.username) != bool(args.password):
        print("dash-server: --username and --password go together", file=sys.stderr)
        return 2
    if token is None and (args.username or not is_loopback(args.host)):
        # Off loopback, anyone who can reach the port could read and write: never run open there.
        token = new_token()
        why = "a login is configured" if args.username else f"{args.host} is not a loopback address"
        print(f"dash-server: {why}, so access needs this token (shown once):\n"
              f"  {token}\n  browser: http://<this host>:{args.port}{args.base_url.rstrip('/')}/?token={token}\n"
              f"  scripts: PANEBOARD_TOKEN={token}", flush=True)
    if args.logdir:
        from ..tensorboard import extra

        if (missing := extra.missing()) is not None:
            print(f"dash-server --logdir: {missing}", file=sys.stderr)
            return 2
    return serve(Settings(host=args.host, port=args.port, db=args.db, base_url=args.base_url, demo=args.demo,
                          log_level=args.log_level, token=token, username=args.username, password=args.password,
                          max_request_bytes=int(args.max_request_mb * 1024 * 1024), logdir=args.logdir,
                          stall_after_s=args.stall_after, run_crash_grace_s=args.crash_grace,
                          header_deadline_s=args.header_deadline,
                          max_connections_per_address=args.max_connections_per_address,
                          allowed_hosts=tuple(auth_host_name(h) for h in args.allowed_host),
                          notify=tuple(args.notify), public_url=args.public_url, artifacts_url=args.artifacts_url))
