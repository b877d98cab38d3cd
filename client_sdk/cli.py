"""`paneboard sync SPOOL...`: upload spool files left by jobs that ended while the server was away; `paneboard runs`,
`tail` and `status`: a server's runs, a run's console and its state in a terminal (terminal.py); `sweep` and
`agent` (sweep_cli.py)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from . import terminal
from .client import ingest_url
from .transport import Transport
from .transport.spool import default_dir, read_header


def sync(paths: list[Path], server: str | None, timeout: float, token: str | None = None) -> int:
    failed = 0
    for path in paths:
        try:
            header = read_header(path)
        except (OSError, ValueError) as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            failed += 1
            continue
        url = ingest_url(server, None) if server else header["url"]
        transport = Transport(url, client_id=header["client"], spool_path=path, exit_timeout=1.0, token=token)
        ok = transport.drain_spool(timeout)
        transport.close(timeout=2.0)
        if ok:
            print(f"{path}: uploaded to {url}")
        else:
            print(f"{path}: not uploaded ({url} unreachable or too slow); kept", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="paneboard", description="paneboard SDK tools")
    sub = parser.add_subparsers(dest="command", required=True)
    p_sync = sub.add_parser("sync", help="upload spool files (events logged while the server was away)")
    p_sync.add_argument("paths", nargs="*", type=Path, help=f"spool files (default: every file in {default_dir()})")
    p_sync.add_argument("--server", help="server URL to send to instead of the one in each spool, e.g. "
                                         "http://localhost:8097")
    p_sync.add_argument("--timeout", type=float, default=600.0, help="seconds to wait per spool")
    p_sync.add_argument("--token", default=os.environ.get("PANEBOARD_TOKEN"),
                        help="the server's access token (default: $PANEBOARD_TOKEN)")
    _terminal_commands(sub)
    args = parser.parse_args(argv)
    if args.command in ("sweep", "agent"):
        from . import sweep_cli

        return sweep_cli.run(args, parser)
    if args.command != "sync":
        api = terminal.Api(args.server, args.token)
        out = sys.stdout
        if args.command == "runs":
            return terminal.run_command(lambda: terminal.runs(api, args.query, args.limit, out))
        if args.command == "tail":
            if args.n < 0:
                parser.error("-n must be >= 0")
            return terminal.run_command(lambda: terminal.tail(api, args.run, args.n, args.follow, args.rank, out))
        return terminal.run_command(lambda: terminal.status(api, args.run, out))
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    paths = args.paths or sorted(default_dir().glob("*.spool"))
    if not paths:
        print("nothing to sync")
        return 0
    return sync(paths, args.server, args.timeout, args.token)


def _terminal_commands(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--server", default=None, help=f"the dash-server (default: $PANEBOARD_URL, else {terminal.DEFAULT_URL})")
    common.add_argument("--token", default=None, help="its access token (default: $PANEBOARD_TOKEN)")
    p_runs = sub.add_parser("runs", parents=[common], help="the runs table: status, age, key config, latest values")
    p_runs.add_argument("query", nargs="?", default=None, help='a run query, e.g. "status:running" or "loss < 0.5"')
    p_runs.add_argument("--limit", type=int, default=50, help="at most this many runs (default 50)")
    p_tail = sub.add_parser("tail", parents=[common], help="a run's console, following it")
    p_tail.add_argument("run", help="the run (its env name)")
    p_tail.add_argument("-n", type=int, default=20, help="lines to show first (default 20)")
    p_tail.add_argument("--no-follow", dest="follow", action="store_false", help="print and exit")
    p_tail.add_argument("--rank", type=int, default=0, help="the rank whose console to show (default 0)")
    p_status = sub.add_parser("status", parents=[common], help="a run's status, provenance and latest values")
    p_status.add_argument("run", help="the run (its env name)")
    from . import sweep_cli

    sweep_cli.add_commands(sub, common)


if __name__ == "__main__":
    raise SystemExit(main())
