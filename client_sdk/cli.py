"""`paneboard sync SPOOL...`: upload spool files left by jobs that ended while the server was away."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

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
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    paths = args.paths or sorted(default_dir().glob("*.spool"))
    if not paths:
        print("nothing to sync")
        return 0
    return sync(paths, args.server, args.timeout, args.token)


if __name__ == "__main__":
    raise SystemExit(main())
