"""wandb.Artifact over paneboard's artifacts: files gathered here, uploaded by the Client's log_artifact."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any


class Artifact:
    """wandb.Artifact(name, type): add_file/add_dir, then run.log_artifact(artifact); download() of a used one."""

    def __init__(self, name: str, type: str = "model", description: str | None = None,  # noqa: A002
                 metadata: dict[str, Any] | None = None, **_: Any) -> None:
        self.name, self.type, self.description = name, type, description
        self.metadata = dict(metadata or {})
        self._files: list[tuple[str, str]] = []  # (source path, name in the artifact)
        self._path: str | None = None  # a used artifact's local copy

    def add_file(self, local_path: str, name: str | None = None, **_: Any) -> None:
        self._files.append((os.fspath(local_path), name or os.path.basename(local_path)))

    def add_dir(self, local_path: str, name: str | None = None, **_: Any) -> None:
        for root, _dirs, files in os.walk(local_path):
            for f in files:
                full = os.path.join(root, f)
                rel = os.path.relpath(full, local_path)
                self._files.append((full, os.path.join(name, rel) if name else rel))

    def download(self, root: str | None = None, **_: Any) -> str:
        """The folder holding the version's files (W&B's artifact directory)."""
        if self._path is None:
            raise ValueError("download() is for an artifact from use_artifact()")
        return self._path if os.path.isdir(self._path) else os.path.dirname(self._path)

    def file(self, root: str | None = None) -> str:
        """The path of a one-file artifact's file."""
        if self._path is None or os.path.isdir(self._path):
            raise ValueError("file() is for a one-file artifact from use_artifact()")
        return self._path

    def _source(self) -> str:
        """One path to upload: the file itself, or a folder the files are copied into."""
        if len(self._files) == 1 and self._files[0][1] == os.path.basename(self._files[0][0]):
            return self._files[0][0]
        folder = tempfile.mkdtemp(prefix="paneboard-artifact-")
        for src, rel in self._files:
            dest = os.path.join(folder, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(src, dest)
        return folder


def log_artifact(run: Any, artifact_or_path: Any, name: str | None, type: str | None,  # noqa: A002
                 aliases: Any) -> Any:
    if run.client is None:
        return None
    if isinstance(artifact_or_path, Artifact):
        a = artifact_or_path
        if not a._files:
            raise ValueError(f"artifact {a.name!r} has no files (add_file/add_dir first)")
        return run.client.log_artifact(a._source(), name=a.name, type=a.type, aliases=list(aliases or ()),
                                       step=run.step, metadata=a.metadata, snapshot=True)
    path = os.fspath(artifact_or_path)
    return run.client.log_artifact(path, name=name or os.path.basename(path.rstrip("/")), type=type or "unspecified",
                                   aliases=list(aliases or ()), step=run.step)


def use_artifact(run: Any, ref: Any) -> Artifact:
    """W&B's "name:alias", "project/name:alias" or "entity/project/name:alias" (no alias: latest); the name is
    looked up as given, then without its entity and project (paneboard's artifact names have neither)."""
    from ..artifacts import ArtifactError

    text = ref.name if isinstance(ref, Artifact) else str(ref)
    name, _, alias = text.partition(":")
    out = Artifact(name.rsplit("/", 1)[-1])
    if run.client is None:
        return out
    parts = name.split("/")
    candidates = ["/".join(parts[i:]) for i in range(min(len(parts), 3))]
    for i, candidate in enumerate(candidates):
        try:
            out._path = run.client.use_artifact(f"{candidate}:{alias or 'latest'}")
            out.name = candidate
            return out
        except ArtifactError:
            if i == len(candidates) - 1:
                raise
    return out
