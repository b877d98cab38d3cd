"""`dash-server import PATH_OR_URI`: recognise what a source is (TensorBoard, Visdom, archive, W&B, MLflow,
Neptune export) and import it; safe to re-run (a second import adds nothing)."""

from __future__ import annotations

import argparse
import logging
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..counts import counted
from ..settings import default_db_path

if TYPE_CHECKING:
    from ..peers.sink import Progress, Sink

BAR = 30
REMOTE = ("wandb", "mlflow", "neptune", "tensorboard")  # the sources an import into a running server takes
MLFLOW_SCHEMES = ("sqlite:", "postgresql:", "mysql:", "mssql:", "http:", "https:", "file:")


def _progress(done: int, total: int, label: str) -> None:
    filled = BAR * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (BAR - filled)}] {done}/{total} {label[:50]:50s}")
    sys.stderr.flush()


def _has(path: Path, pattern: str) -> bool:
    return next(path.rglob(pattern), None) is not None


def detect(source: str) -> str:
    """tensorboard | visdom | archive | wandb | mlflow | neptune; ValueError naming what was looked for."""
    from ..peers import mlflow_import, neptune_import, wandb_import

    if source.split("//", 1)[0].lower() in MLFLOW_SCHEMES or source.startswith("sqlite:///"):
        return "mlflow"
    path = Path(source)
    if not path.exists():
        raise ValueError(f"{source}: no such file or directory (nor an MLflow URI: sqlite:///..., http(s)://...)")
    if wandb_import.is_wandb(path):
        return "wandb"
    if mlflow_import.is_mlflow(path):
        return "mlflow"
    if neptune_import.is_neptune(path):
        return "neptune"
    if path.is_file() and tarfile.is_tarfile(path):
        return "archive"
    if path.is_file() and path.suffix == ".json" or path.is_dir() and any(path.glob("*.json")):
        return "visdom"
    if path.is_dir() and _has(path, "*tfevents*"):
        return "tensorboard"
    raise ValueError(f"{source}: not a TensorBoard logdir, Visdom env files, a paneboard archive, a W&B run or "
                     "wandb/ folder, an MLflow store (mlruns/, mlflow.db) or a Neptune exporter Parquet folder")


def import_command(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="dash-server import", description=__doc__)
    p.add_argument("source", help="a folder, file or MLflow tracking URI")
    p.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
    p.add_argument("--server", default="", metavar="URL",
                   help="import into a running server over HTTP instead (TensorBoard, W&B, MLflow, Neptune)")
    p.add_argument("--token", default=None,
                   help="the server's token (default $PANEBOARD_TOKEN), as the SDK sends it")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.server and args.db:
        print("dash-server import: give --db PATH or --server URL, not both", file=sys.stderr)
        return 2
    logging.basicConfig(level="WARNING", format="%(levelname)s %(name)s: %(message)s")
    try:
        kind = detect(args.source)
    except ValueError as exc:
        print(f"dash-server import: {exc}", file=sys.stderr)
        return 2
    if args.server and kind not in REMOTE:
        print(f"dash-server import: --server takes TensorBoard, W&B, MLflow and Neptune sources; import this {kind} "
              "source with --db PATH (the server's database, while it is stopped)", file=sys.stderr)
        return 2
    db = ["--db", args.db] if args.db else []
    if kind == "tensorboard":
        from .import_commands import import_tb

        remote = ["--server", args.server, *(["--token", args.token] if args.token else [])] if args.server else []
        return import_tb([args.source, *db, *remote, *(["--quiet"] if args.quiet else [])])
    if kind == "visdom":
        from .import_commands import import_visdom

        return import_visdom([args.source, *db])
    if kind == "archive":
        from .sharing_commands import import_envs_command

        return import_envs_command([args.source, *db])
    progress = None if args.quiet else _progress
    if args.server:
        return _import_remote(kind, args.source, args.server, args.token, progress)
    return _import_peer(kind, args.source, args.db, progress)


def _import_remote(kind: str, source: str, server: str, token: str | None, progress: Progress | None) -> int:
    from ..peers.remote import HttpTarget
    from ..peers.sink import PeerImportError, Sink

    target = HttpTarget(server, token)
    try:
        target.check()
    except PeerImportError as exc:
        print(f"dash-server import: {exc}", file=sys.stderr)
        return 2
    return _run_import(kind, source, Sink(target=target), progress, lambda: None)


def _import_peer(kind: str, source: str, db: str, progress: Progress | None) -> int:
    from ..peers.sink import Sink
    from ..services import Services
    from ..settings import Settings

    services = Services.open(Settings(db=db, watch_runs=False))
    services.start()
    return _run_import(kind, source, Sink(services.writer, services.store, blobs=services.blobs), progress,
                       services.stop)


def _run_import(kind: str, source: str, sink: Sink, progress: Progress | None, close: Callable[[], None]) -> int:
    from ..peers import mlflow_import, neptune_import, wandb_import
    from ..peers.sink import PeerImportError

    t0 = time.perf_counter()
    try:
        if kind == "wandb":
            wandb_import.import_wandb(sink, Path(source), progress)
        elif kind == "mlflow":
            mlflow_import.import_mlflow(sink, source, progress)
        else:
            neptune_import.import_neptune(sink, Path(source), progress)
    except PeerImportError as exc:
        print(f"\ndash-server import: {exc}", file=sys.stderr)
        return 2
    finally:
        close()
        if progress:
            sys.stderr.write("\n")
    s = sink.stats
    for line in s.problems[:20]:
        print(f"  {line}", file=sys.stderr)
    print(f"imported {counted(s.points, 'point')} of {counted(s.runs, kind + ' run')} in "
          f"{time.perf_counter() - t0:.2f} s ({counted(s.records, 'step')} of media and histograms; "
          f"{counted(s.artifacts, 'artifact version')}; "
          f"{counted(s.skipped, 'point')} imported before, "
          f"{counted(len(s.problems), 'problem')})")
    return 0
