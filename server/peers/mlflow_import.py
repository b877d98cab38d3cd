"""MLflow runs (an mlruns/ folder, sqlite:///..., a tracking server) into envs, read through mlflow's client."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from . import mlflow_artifacts
from .sink import PeerImportError, Progress, Sink, client_id, need, number_or_text, tag_text

STATUS = {"FINISHED": "finished", "FAILED": "failed", "KILLED": "failed", "RUNNING": "running",
          "SCHEDULED": "running"}
# mlflow's system tags that say where a run came from: they become provenance, not tags
PROVENANCE_TAGS = {"mlflow.user": "user", "mlflow.source.git.commit": "commit", "mlflow.source.name": "source",
                   "mlflow.source.type": "source_type", "mlflow.source.git.branch": "branch",
                   "mlflow.source.git.repoURL": "remote", "mlflow.parentRunId": "parent_run"}
PAGE = 1000


def store_folder(path: Path) -> Path | None:
    """The file store folder: mlruns/ itself, or a folder holding mlruns/."""
    if (path / "mlruns").is_dir():
        path = path / "mlruns"
    if not path.is_dir():
        return None
    if (path / "0" / "meta.yaml").is_file() or any(path.glob("*/meta.yaml")):
        return path
    return None


def is_mlflow(path: Path) -> bool:
    if path.is_file():
        return path.suffix == ".db" and path.read_bytes()[:16] == b"SQLite format 3\x00" and _has_mlflow_tables(path)
    return store_folder(path) is not None


def _has_mlflow_tables(path: Path) -> bool:
    import sqlite3

    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return {"experiments", "runs", "metrics"} <= names


def tracking_uri(source: str) -> str:
    path = Path(source)
    if path.exists():
        if path.is_file():
            return f"sqlite:///{path.resolve()}"
        folder = store_folder(path)
        if folder is None:
            raise PeerImportError(f"{source}: not an MLflow file store (no experiment meta.yaml)")
        return folder.resolve().as_uri()
    return source


def import_mlflow(sink: Sink, source: str, progress: Progress | None = None) -> None:
    tracking = need("mlflow.tracking", "mlflow")
    entities = need("mlflow.entities", "mlflow")
    uri = tracking_uri(source)
    if uri.startswith("file:"):
        # mlflow refuses to open a file store unless told it may (it wants users to migrate); reading one is
        # what this import is for.
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    try:
        client = tracking.MlflowClient(tracking_uri=uri)
        experiments = client.search_experiments(view_type=entities.ViewType.ALL)
        runs = [(exp, run) for exp in experiments for run in _runs(client, exp.experiment_id, entities)]
    except PeerImportError:
        raise
    except Exception as exc:  # mlflow raises its own and its stores' errors
        raise PeerImportError(f"{source}: mlflow could not read it: {exc}") from None
    for k, (exp, run) in enumerate(runs):
        if progress:
            progress(k, len(runs), run.info.run_name or run.info.run_id)
        import_run(sink, client, uri, exp, run)
    if progress:
        progress(len(runs), len(runs), "done")


def _runs(client: Any, experiment_id: str, entities: Any) -> list[Any]:
    out, token = [], None
    while True:
        page = client.search_runs([experiment_id], run_view_type=entities.ViewType.ALL, max_results=PAGE,
                                  page_token=token, order_by=["attributes.start_time ASC"])
        out += list(page)
        token = page.token
        if not token:
            return out


def import_run(sink: Sink, client: Any, uri: str, exp: Any, run: Any) -> str:
    info = run.info
    source = f"mlflow:{info.run_id}"
    env = sink.env_for(f"{exp.name}/{info.run_name or info.run_id}", source)
    _record(sink, env, source, exp, run)
    for key in sorted(run.data.metrics):
        history = client.get_metric_history(info.run_id, key)
        step = np.fromiter((m.step for m in history), np.float64, len(history))
        value = np.fromiter((m.value for m in history), np.float64, len(history))
        wall = np.fromiter((m.timestamp / 1000.0 for m in history), np.float64, len(history))
        sink.series(env, key, client_id(source, "metric", key), step, value, wall, "step")
    mlflow_artifacts.import_artifacts(sink, client, env, run)
    sink.stats.runs += 1
    return env


def _record(sink: Sink, env: str, source: str, exp: Any, run: Any) -> None:
    info = run.info
    tags = dict(run.data.tags)
    provenance: dict[str, Any] = {"source": "mlflow", "import": source,
                                  "mlflow": {"run_id": info.run_id, "experiment": exp.name}}
    for tag, field in PROVENANCE_TAGS.items():
        if tag in tags:
            provenance[field] = tags[tag]
    if "commit" in provenance:
        provenance["git"] = {"commit": provenance.pop("commit"), **({"branch": provenance.pop("branch")}
                                                                     if "branch" in provenance else {})}
    user_tags = [tag_text(k if v == "" else f"{k}={v}") for k, v in sorted(tags.items())
                 if not k.startswith("mlflow.")]
    status = STATUS.get(info.status, "crashed")
    record = {"op": "run_import", "env": env, "status": status,
              "started": info.start_time / 1000.0 if info.start_time else None,
              "ended": info.end_time / 1000.0 if info.end_time else None, "provenance": provenance,
              "tags": [t for t in user_tags if t], "notes": tags.get("mlflow.note.content", ""),
              "error": "killed" if info.status == "KILLED" else None}
    config = {k: number_or_text(v) for k, v in run.data.params.items()}
    events = [record, {"op": "run_config", "env": env, "config": config, "replace": True}]
    # The record changes when the run does (ends, gets tags or params): its end time and sizes make the seq.
    seq = 1 + (info.end_time or 0) + len(tags) + len(config) + len(run.data.metrics)
    sink.events(client_id(source, "record"), seq, events)
