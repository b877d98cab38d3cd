"""The plain records of rewinds and artifact versions that the store returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RewindRecord:
    """One rewind of a run: the points it hid (x beyond `step`), kept packed."""

    id: int
    env: str
    step: float
    wall: float
    points: int


@dataclass(frozen=True)
class ArtifactRecord:
    """One version of an artifact: files by content hash, who logged it, its aliases and the runs that used it."""

    name: str
    version: int
    uid: str
    type: str
    size: int
    step: float | None
    env: str | None                 # the run that logged it
    created: float
    files: tuple[dict, ...]         # {"path", "sha256", "size"}
    metadata: dict
    aliases: tuple[str, ...] = ()
    used_by: tuple[str, ...] = ()   # envs of the runs that used it

    @property
    def ref(self) -> str:
        return f"{self.name}:v{self.version}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "ref": self.ref, "uid": self.uid, "type": self.type,
                "size": self.size, "step": self.step, "env": self.env, "created": self.created,
                "files": list(self.files), "metadata": self.metadata, "aliases": list(self.aliases),
                "used_by": list(self.used_by)}
