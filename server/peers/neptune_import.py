"""Neptune exporter Parquet (neptune-ai/neptune-exporter) into envs."""

from __future__ import annotations

from pathlib import Path

from .sink import PeerImportError, Progress, Sink


def is_neptune(path: Path) -> bool:
    return False


def import_neptune(sink: Sink, path: Path, progress: Progress | None = None) -> None:
    raise PeerImportError(f"{path}: Neptune exports are not supported yet")
