"""`dash-server runs delete --query Q [--dry-run] [--older-than DAYS]`: retention from the command line.

With --server it asks a running dash-server (POST /api/v1/runs/delete); otherwise it opens --db itself, which
a running server must not hold (for SQLite the instance lock says so; on PostgreSQL use --server).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import urllib.error
import urllib.request

from ..settings import Settings, default_db_path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dash-server runs", description="manage runs")
    sub = p.add_subparsers(dest="action", required=True)
    d = sub.add_parser("delete", help="delete the finished or crashed runs matching a query (with their data)")
    d.add_argument("--query", required=True, help='a run query, e.g. "status:crashed" or "loss.min > 1"')
    d.add_argument("--older-than", type=float, default=None, metavar="DAYS",
                   help="only runs not updated for this many days")
    d.add_argument("--dry-run", action="store_true", help="count and list, delete nothing")
    where = d.add_mutually_exclusive_group()
    where.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
    where.add_argument("--server", default=None, help="a running dash-server, e.g. http://localhost:8097 "
                                                      "(token from PANEBOARD_TOKEN)")
    return p


def runs_command(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.older_than is not None and args.older_than < 0:
        print("dash-server runs delete: --older-than must be >= 0", file=sys.stderr)
        return 2
    body = {"query": args.query, "older_than_days": args.older_than, "dry_run": args.dry_run}
    try:
        result = _via_server(args.server, body) if args.server else _via_db(args.db, body)
    except (ValueError, RuntimeError) as exc:
        print(f"dash-server runs delete: {exc}", file=sys.stderr)
        return 2
    verb = "would delete" if args.dry_run else "deleted"
    print(f"{verb} {result['count']} run(s)")
    for env in result["envs"]:
        print(f"  {env}")
    return 0


def _via_server(server: str, body: dict) -> dict:
    """A real delete is a dry run, then a delete of exactly what it listed (the server refuses if any changed)."""
    if body["dry_run"]:
        return _post(server, body)
    listed = _post(server, {**body, "dry_run": True})
    return _post(server, {"envs": listed["envs"], "confirm": listed["confirm"]})


def _post(server: str, body: dict) -> dict:
    req = urllib.request.Request(server.rstrip("/") + "/api/v1/runs/delete", data=json.dumps(body).encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    token = os.environ.get("PANEBOARD_TOKEN")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error")
        except ValueError:
            message = None
        raise ValueError(message or f"{server}: HTTP {exc.code}") from None
    except OSError as exc:
        raise RuntimeError(f"cannot reach {server}: {exc}") from None


def _via_db(db: str, body: dict) -> dict:
    from ..runs.listing import list_runs
    from ..runs.query import QueryError
    from ..runs.retention import delete_envs, select_runs
    from ..services import Services
    from ..store.instance_lock import AlreadyRunning, lock_database
    from ..store.schema import SchemaError

    logging.basicConfig(level="WARNING", format="%(levelname)s %(name)s: %(message)s")
    settings = Settings(db=db, watch_runs=False)
    try:
        lock_database(settings.db_url)  # a running server's writer must be the only one on its SQLite file
        services = Services.open(settings)
    except AlreadyRunning as exc:
        raise RuntimeError(f"{exc} Or ask it: --server http://localhost:8097") from None
    except SchemaError as exc:
        raise RuntimeError(str(exc)) from None
    services.writer.start()
    try:
        try:
            envs = select_runs(list_runs(services.store, body["query"]), body["older_than_days"], time.time())
        except QueryError as exc:
            raise ValueError(str(exc)) from None
        count = len(envs) if body["dry_run"] else delete_envs(services.writer, envs)
    finally:
        services.writer.stop()  # only the writer was started: no crash or stall watch in a one-off command
        services.stop()
    return {"count": count, "envs": envs}
