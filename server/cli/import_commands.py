"""`dash-server import-tb LOGDIR` and `dash-server import-visdom PATH...`: parse, open the store, import, report."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..counts import counted
from ..services import Services
from ..settings import Settings, default_db_path
from ..visdom.importer import env_files, import_file

if TYPE_CHECKING:
    from ..tensorboard.importer import TbImporter

TB_BAR = VISDOM_BAR = 30
MAX_SKIPS_PRINTED = 50  # skipped records named after the import's summary line


def _tb_progress(done: int, total: int, label: str) -> None:
    filled = TB_BAR * min(done, total) // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (TB_BAR - filled)}] {done / 1e6:.1f}/{total / 1e6:.1f} MB {label[:50]:50s}")
    sys.stderr.flush()


def import_tb(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="dash-server import-tb",
                                description="import a TensorBoard logdir (every run → an env; safe to re-run: "
                                            "only what is new is imported)")
    p.add_argument("logdir", help="TensorBoard log directory (its runs become envs named as a live "
                                  "SummaryWriter names them)")
    p.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
    p.add_argument("--server", default="", metavar="URL", help="import into a running server over HTTP instead")
    p.add_argument("--token", default=None, help="the server's token (default $PANEBOARD_TOKEN)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    logging.basicConfig(level="WARNING", format="%(levelname)s %(name)s: %(message)s")
    if args.server and args.db:
        print("dash-server import-tb: give --db PATH or --server URL, not both", file=sys.stderr)
        return 2
    if not os.path.isdir(args.logdir):
        print(f"dash-server import-tb: {args.logdir}: not a directory", file=sys.stderr)
        return 2
    from ..tensorboard import extra

    if (missing := extra.missing()) is not None:
        print(f"dash-server import-tb: {missing}", file=sys.stderr)
        return 2
    from ..tensorboard.importer import TbImporter  # loads tensorboard: only this command needs it

    if args.server:
        from ..peers.remote import HttpTarget
        from ..peers.target import PeerImportError
        from ..tensorboard.remote import RemoteStore, RemoteWriter

        target = HttpTarget(args.server, args.token)
        try:
            target.check()
        except PeerImportError as exc:
            print(f"dash-server import-tb: {exc}", file=sys.stderr)
            return 2
        importer = TbImporter(RemoteWriter(target), RemoteStore(target), args.logdir)
        return _tb_pass(importer, args.quiet, lambda: None)
    services = Services.open(Settings(db=args.db, watch_runs=False))
    services.start()
    return _tb_pass(TbImporter(services.writer, services.store, args.logdir), args.quiet, services.stop)


def _tb_pass(importer: TbImporter, quiet: bool, close: Callable[[], None]) -> int:
    t0 = time.perf_counter()
    try:
        runs, total = importer.pending()
        done = [0]

        def progress(n: int) -> None:
            done[0] += n
            if not quiet:
                _tb_progress(done[0], total, "")

        stats = importer.import_pass(progress)
        if not quiet:
            _tb_progress(total, total, "done")
            sys.stderr.write("\n")
    finally:
        close()
    # TensorBoard's own units (events in its files, points and step records shown), never our write batches.
    print(f"imported {counted(stats.events, 'TensorBoard event')} ({counted(stats.points, 'scalar point')}, "
          f"{counted(stats.steps, 'step record')}, {stats.bytes / 1e6:.1f} MB) from {counted(len(runs), 'run')} in "
          f"{time.perf_counter() - t0:.2f} s ({counted(stats.problems, 'problem')})")
    for line in stats.skipped[:MAX_SKIPS_PRINTED]:
        print(f"  skipped {line}")
    if len(stats.skipped) > MAX_SKIPS_PRINTED:
        print(f"  ... and {len(stats.skipped) - MAX_SKIPS_PRINTED} more skipped records (the env's alerts pane counts them)")
    return 0


def _visdom_progress(done: int, total: int, label: str) -> None:
    filled = VISDOM_BAR * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (VISDOM_BAR - filled)}] {done}/{total} {label[:60]:60s}")
    sys.stderr.flush()


def import_visdom(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="dash-server import-visdom",
                                description="import Visdom env files (~/.visdom/*.json); safe to re-run")
    p.add_argument("paths", nargs="+", help="env .json files, or directories holding them (e.g. ~/.visdom)")
    p.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
    p.add_argument("--env-prefix", default="", help="prepended to every imported env name")
    args = p.parse_args(argv)
    try:
        files = env_files(args.paths)
    except FileNotFoundError as exc:
        print(f"dash-server import-visdom: {exc}", file=sys.stderr)
        return 2
    services = Services.open(Settings(db=args.db, watch_runs=False))
    services.start()
    problems: list[str] = []
    windows = 0
    try:
        for k, path in enumerate(files):
            env = (args.env_prefix + path.name[: -len(".json")] if path.name.endswith(".json") else path.name)
            env = env.replace("/", "_")
            _visdom_progress(k, len(files), env)
            try:
                n, errs = import_file(services.writer, path, env)
            except (OSError, ValueError) as exc:
                n, errs = 0, [f"{path}: {exc}"]
            windows += n
            problems += errs
        _visdom_progress(len(files), len(files), "done")
        sys.stderr.write("\n")
    finally:
        services.stop()
    for line in problems:
        print(f"  {line}", file=sys.stderr)
    print(f"imported {counted(windows, 'window')} from {counted(len(files), 'env file')} "
          f"({counted(len(problems), 'problem')})")
    return 1 if problems and not windows else 0
