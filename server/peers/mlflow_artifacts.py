"""An MLflow run's artifacts as paneboard artifact versions: one per top-level entry of the run's artifact tree
(a logged model folder, a file), its files content-addressed in the artifact store."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from .sink import PeerImportError, Sink, client_id

MAX_LISTED = 10_000  # files listed per entry (an artifact version holds at most this many)


def _listing(client: Any, run_id: str, path: str, out: list[tuple[str, int]]) -> None:
    """(path, size) of every file under `path` of the run's artifact tree, as mlflow lists them."""
    for info in client.list_artifacts(run_id, path):
        if len(out) > MAX_LISTED:
            return
        if info.is_dir:
            _listing(client, run_id, info.path, out)
        else:
            out.append((info.path, int(info.file_size or 0)))


def _version_uid(run_id: str, entry: str, listing: list[tuple[str, int]]) -> str:
    """Stable for an unchanged entry (a re-import finds it stored); new when files were added or resized."""
    text = "\x00".join([run_id, entry, *(f"{p}\x01{s}" for p, s in sorted(listing))])
    return "mlflow-" + hashlib.sha256(text.encode()).hexdigest()[:40]


def import_artifacts(sink: Sink, client: Any, env: str, run: Any) -> int:
    """Every top-level artifact entry of the run not imported before; returns how many versions were stored."""
    run_id = run.info.run_id
    source = f"mlflow:{run_id}"
    stored = 0
    try:
        entries = client.list_artifacts(run_id)
    except Exception as exc:  # the artifact repository's own errors (a missing folder, an unreachable store)
        sink.stats.problems.append(f"{env}: artifacts not listed: {exc}")
        return 0
    for entry in entries:
        listing: list[tuple[str, int]] = []
        if entry.is_dir:
            _listing(client, run_id, entry.path, listing)
        else:
            listing.append((entry.path, int(entry.file_size or 0)))
        if not listing:
            continue
        if len(listing) > MAX_LISTED:
            sink.stats.problems.append(f"{env}: artifact {entry.path}: more than {MAX_LISTED} files, not imported")
            continue
        uid = _version_uid(run_id, entry.path, listing)
        cid = client_id(source, "artifact", uid)
        if sink.imported(cid) >= 1:
            continue
        with tempfile.TemporaryDirectory(prefix="paneboard-mlflow-") as tmp:
            try:
                local = Path(client.download_artifacts(run_id, entry.path, dst_path=tmp))
            except Exception as exc:
                sink.stats.problems.append(f"{env}: artifact {entry.path} not downloaded: {exc}")
                continue
            try:
                files = _files(sink, local)
            except PeerImportError as exc:  # no artifact store on this database, say: the metrics still come
                sink.stats.problems.append(f"{env}: artifact {entry.path} not imported: {exc}")
                return stored
        if not files:
            continue
        is_model = entry.is_dir and any(f["path"] == "MLmodel" for f in files)  # an mlflow logged model
        name = entry.path.rsplit("/", 1)[-1]
        raw = {"op": "artifact", "env": env, "win": None, "name": f"{env}/{name}", "uid": uid,
               "type": "model" if is_model else "artifact", "files": files, "step": None, "aliases": [],
               "metadata": {"source": "mlflow", "run_id": run_id, "path": entry.path,
                            "artifact_uri": run.info.artifact_uri}}
        sink.events(cid, 1, [raw])
        stored += 1
        sink.stats.artifacts += 1
    return stored


def _files(sink: Sink, local: Path) -> list[dict[str, Any]]:
    found = [(local.name, local)] if local.is_file() else sorted(
        (p.relative_to(local).as_posix(), p) for p in local.rglob("*") if p.is_file())
    files = []
    for rel, path in found:
        sha, size = sink.target.put_blob(path)
        files.append({"path": rel, "sha256": sha, "size": size})
    return files
