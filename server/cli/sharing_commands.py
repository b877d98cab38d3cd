"""`dash-server token create|list|revoke` (share tokens) and `export-envs` / `import-envs` (env archives)."""

from __future__ import annotations

import argparse
import os
import sys

from ..artifacts.blobs import BlobStore
from ..artifacts.locate import ArtifactsUrlError, open_blob_store
from ..artifacts.s3_client import BlobStoreUnavailable
from ..commands.envelope import EventError
from ..counts import counted
from ..settings import Settings, default_db_path
from ..sharing import tokens
from ..store import Store, open_store
from ..store.schema import SchemaError, ensure_schema


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dash-server token", description="read-only share tokens (share links)")
    sub = p.add_subparsers(dest="action", required=True)
    create = sub.add_parser("create", help="create a token and print its share link (shown once)")
    create.add_argument("--read-only", action="store_true", required=True,
                        help="required: share tokens can only read (the admin token is --token)")
    create.add_argument("--envs", default=None, help="comma-separated envs it may read (default: every env)")
    create.add_argument("--name", default="", help="a note on who or what it is for")
    create.add_argument("--url", default="http://localhost:8097", help="the server's address, for the printed link")
    sub.add_parser("list", help="list tokens (ids, names, envs; never the tokens)")
    revoke = sub.add_parser("revoke", help="revoke a token by id")
    revoke.add_argument("id", type=int)
    for s in sub.choices.values():
        s.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
    return p


def _open_store(db: str, command: str) -> Store | None:
    """The store of --db at the newest schema, or None after saying why not (an old or foreign database)."""
    settings = Settings(db=db)
    try:
        ensure_schema(settings.db_url, settings.db_hint)
    except SchemaError as exc:
        print(f"dash-server {command}: {exc}", file=sys.stderr)
        return None
    return open_store(settings.db_url)


def _add_artifact_options(p: argparse.ArgumentParser) -> None:
    """Where the artifact bytes live, as the servers' own options say (a bucket, a folder)."""
    p.add_argument("--artifacts-dir", default=None,
                   help="the artifacts folder (default: 'artifacts' beside a SQLite database)")
    p.add_argument("--artifacts-url", default=os.environ.get("PANEBOARD_ARTIFACTS_URL"), metavar="URL",
                   help="the store the servers use, as their --artifacts-url (default $PANEBOARD_ARTIFACTS_URL)")


def _artifact_blobs(args: argparse.Namespace, create: bool) -> BlobStore | None:
    """The store the servers of --db keep artifact bytes in (None: none configured, or a folder not there and not
    `create`); a bucket that does not answer raises BlobStoreUnavailable before any work starts."""
    blobs = open_blob_store(Settings(db=args.db).db_url, args.artifacts_url, args.artifacts_dir, create=create)
    check = getattr(blobs, "check", None)
    if check is not None:
        check()
    return blobs


def _tell_servers_revoked(store: Store, token_id: int) -> None:
    """Running servers on a PostgreSQL database close the token's open websockets now (SQLite ones stop
    accepting it within 2 s; their open sockets end with the page)."""
    from ..live.peers import notify_revoked
    from ..store.dialect import supports_peers

    engine = getattr(store, "engine", None)
    if engine is not None and supports_peers(engine):
        try:
            notify_revoked(engine, token_id)
        except Exception as exc:  # the revoke itself is done
            print(f"dash-server token: could not tell running servers ({exc})", file=sys.stderr)


def token_command(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    store = _open_store(args.db, "token")
    if store is None:
        return 2
    try:
        if args.action == "create":
            envs = None if args.envs is None else [e.strip() for e in args.envs.split(",") if e.strip()]
            try:
                token, record = tokens.create(store, envs, args.name)
            except EventError as exc:
                print(f"dash-server token: {exc}", file=sys.stderr)
                return 2
            scope = "every env" if record.envs is None else ", ".join(record.envs)
            print(f"share token {record.id} (read-only: {scope}), shown once:\n  {token}\n"
                  f"  link: {args.url.rstrip('/')}/share/{token}")
        elif args.action == "list":
            for t in store.list_share_tokens():
                scope = "every env" if t.envs is None else ", ".join(t.envs)
                print(f"{t.id}\t{t.name or '-'}\t{scope}")
        else:
            if not store.delete_share_token(args.id):
                print(f"dash-server token: no share token {args.id}", file=sys.stderr)
                return 1
            _tell_servers_revoked(store, args.id)
            print(f"revoked share token {args.id} (servers stop accepting it within 2 s)")
        return 0
    finally:
        store.close()


def export_envs_command(argv: list[str]) -> int:
    """`dash-server export-envs ENV... -o FILE`: write an env archive (reads only: fine beside a running server)."""
    from ..sharing.archive import export_envs

    p = argparse.ArgumentParser(prog="dash-server export-envs", description="write envs to an archive (a tar)")
    p.add_argument("envs", nargs="+", help="env names")
    p.add_argument("-o", "--output", required=True, help="the archive file to write")
    p.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
    _add_artifact_options(p)
    args = p.parse_args(argv)
    store = _open_store(args.db, "export-envs")
    if store is None:
        return 2
    try:
        blobs = _artifact_blobs(args, create=False)
        with open(args.output, "wb") as out:
            counts = export_envs(store, args.envs, out, blobs)
    except (ArtifactsUrlError, BlobStoreUnavailable) as exc:
        print(f"dash-server export-envs: {exc}", file=sys.stderr)
        return 2
    except EventError as exc:
        print(f"dash-server export-envs: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    print(f"wrote {args.output}: " + ", ".join(f"{v:,} {k}" for k, v in counts.items()))
    return 0


def import_envs_command(argv: list[str]) -> int:
    """`dash-server import-envs FILE`: recreate an archive's envs through the writer (server stopped, as import-tb;
    a running server takes the same archive at POST /api/v1/archive)."""
    from ..services import Services
    from ..sharing.archive import read_archive
    from ..sharing.env_import import command

    p = argparse.ArgumentParser(prog="dash-server import-envs", description="import envs from an archive")
    p.add_argument("archive", help="a file written by export-envs (or GET /api/v1/archive)")
    p.add_argument("--replace", action="store_true", help="overwrite envs that exist (default: refuse)")
    p.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
    _add_artifact_options(p)
    args = p.parse_args(argv)
    try:
        blobs = _artifact_blobs(args, create=True)
        with open(args.archive, "rb") as f:
            envs = read_archive(f, artifact_blobs=blobs)
    except (OSError, EventError, ArtifactsUrlError) as exc:  # BlobStoreUnavailable is an OSError
        print(f"dash-server import-envs: {exc}", file=sys.stderr)
        return 2
    try:
        services = Services.open(Settings(db=args.db, watch_runs=False, artifacts_dir=args.artifacts_dir,
                                          artifacts_url=args.artifacts_url))
    except SchemaError as exc:
        print(f"dash-server import-envs: {exc}", file=sys.stderr)
        return 2
    services.start()
    try:
        existing = [e.name for e in envs if services.store.get_env(e.name) is not None]
        if existing and not args.replace:
            print(f"dash-server import-envs: envs already exist: {', '.join(existing)} (use --replace)", file=sys.stderr)
            return 1
        result = services.writer.submit_wait([command(e, args.replace) for e in envs], timeout=3600)
    finally:
        services.stop()
    if result.failed or result.errors:
        print(f"dash-server import-envs: {result.failed or result.errors[0]['error']}", file=sys.stderr)
        return 1
    print(f"imported {counted(len(envs), 'env')} ({counted(sum(e.points() for e in envs), 'point')}): " + ", ".join(e.name for e in envs))
    return 0
