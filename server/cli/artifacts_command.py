"""`dash-server artifacts delete NAME:vN` and `dash-server artifacts gc`: drop versions, then the bytes no one names."""

from __future__ import annotations

import argparse
import sys

from ..artifacts.blobs import LocalBlobStore, blob_root
from ..artifacts.cleanup import DEFAULT_GRACE_S, collect
from ..settings import Settings, default_db_path
from .sharing_commands import _open_store


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dash-server artifacts", description="artifact versions and their stored files")
    sub = p.add_subparsers(dest="action", required=True)
    delete = sub.add_parser("delete", help="delete versions (their files stay until `gc` finds them unused)")
    delete.add_argument("refs", nargs="+", metavar="NAME:vN")
    gc = sub.add_parser("gc", help="remove stored files no version names, and uploads abandoned long ago (safe "
                                   "while the server runs: only what nobody wrote or touched for --grace-hours)")
    gc.add_argument("--grace-hours", type=float, default=DEFAULT_GRACE_S / 3600,
                    help=f"keep what was written or asked for within this many hours (default {DEFAULT_GRACE_S / 3600:g})")
    gc.add_argument("--dry-run", action="store_true", help="only say what would be removed")
    for s in sub.choices.values():
        s.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
        s.add_argument("--artifacts-dir", default=None,
                       help="the artifacts folder (default: 'artifacts' beside a SQLite database)")
    return p


def artifacts_command(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    store = _open_store(args.db, "artifacts")
    if store is None:
        return 2
    try:
        if args.action == "delete":
            return _delete(store, args.refs)
        root = blob_root(Settings(db=args.db).db_url, args.artifacts_dir)
        if root is None or not root.is_dir():
            print("dash-server artifacts gc: no artifacts folder (give --artifacts-dir)", file=sys.stderr)
            return 2
        if not 0 <= args.grace_hours < 1e6:
            print("dash-server artifacts gc: --grace-hours must be >= 0", file=sys.stderr)
            return 2
        report = collect(store, LocalBlobStore(root), args.grace_hours * 3600, dry_run=args.dry_run)
        print(report.summary(args.dry_run))
        return 0
    finally:
        store.close()


def _delete(store, refs: list[str]) -> int:
    failed = 0
    for ref in refs:
        name, _, which = ref.rpartition(":")
        if not name or which[:1] != "v" or not which[1:].isdigit():
            print(f"dash-server artifacts delete: {ref!r} is not NAME:vN", file=sys.stderr)
            failed += 1
            continue
        with store.transaction() as tx:
            found = tx.delete_artifact(name, int(which[1:]))
        print(f"deleted {ref}" if found else f"no artifact {ref}", file=sys.stdout if found else sys.stderr)
        failed += not found
    return 1 if failed else 0
