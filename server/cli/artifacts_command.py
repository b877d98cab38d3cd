"""`dash-server artifacts delete NAME:vN`, `gc` and `migrate --to URL`: drop versions, then the bytes no one names;
move the bytes to another store."""

from __future__ import annotations

import argparse
import os
import sys

from ..artifacts.blobs import BlobStore
from ..artifacts.cleanup import DEFAULT_GRACE_S, collect
from ..artifacts.locate import ArtifactsUrlError, open_blob_store
from ..artifacts.migrate import migrate
from ..artifacts.s3_blobs import BlobStoreUnavailable
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
    move = sub.add_parser("migrate", help="copy every stored file into another store, e.g. a bucket (resumable: run "
                                          "it again after a break; each file's sha256 is checked there)")
    move.add_argument("--to", required=True, metavar="URL", help="the new store: s3://BUCKET[/PREFIX] or file://PATH")
    for s in sub.choices.values():
        s.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
        s.add_argument("--artifacts-dir", default=None,
                       help="the artifacts folder (default: 'artifacts' beside a SQLite database)")
        s.add_argument("--artifacts-url", default=os.environ.get("PANEBOARD_ARTIFACTS_URL"), metavar="URL",
                       help="the store the servers use, as their --artifacts-url (default $PANEBOARD_ARTIFACTS_URL)")
    return p


def artifacts_command(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    store = _open_store(args.db, "artifacts")
    if store is None:
        return 2
    try:
        if args.action == "delete":
            return _delete(store, args.refs)
        try:
            blobs = open_blob_store(Settings(db=args.db).db_url, args.artifacts_url, args.artifacts_dir, create=False)
            if blobs is None:
                print(f"dash-server artifacts {args.action}: no artifacts folder (give --artifacts-dir or "
                      "--artifacts-url)", file=sys.stderr)
                return 2
            if args.action == "migrate":
                return _migrate(blobs, args.to)
            if not 0 <= args.grace_hours < 1e6:
                print("dash-server artifacts gc: --grace-hours must be >= 0", file=sys.stderr)
                return 2
            report = collect(store, blobs, args.grace_hours * 3600, dry_run=args.dry_run)
        except (ArtifactsUrlError, BlobStoreUnavailable) as exc:
            print(f"dash-server artifacts {args.action}: {exc}", file=sys.stderr)
            return 2
        print(report.summary(args.dry_run))
        return 0
    finally:
        store.close()


def _migrate(source: BlobStore, to: str) -> int:
    target = open_blob_store("", to)
    assert target is not None  # a URL always names a store
    check = getattr(target, "check", None)
    if check is not None:
        check()
    report = migrate(source, target, say=lambda line: print(line, flush=True))
    print(report.summary())
    return 1 if report.failed else 0


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
