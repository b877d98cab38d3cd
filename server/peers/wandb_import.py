"""W&B runs (run-*.wandb, offline or synced) into envs: history, system metrics, config, tags, notes, status,
console."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from paneboard.run_api.metrics import MetricRules

from . import wandb_console, wandb_media, wandb_metrics
from .sink import PeerImportError, Progress, Sink, client_id, need, tag_text
from .wandb_log import WandbLogError, records


def run_files(path: Path) -> list[Path]:
    """The run-*.wandb files of a run folder, a wandb/ folder of them, or a folder holding wandb/."""
    if path.is_file():
        return [path] if path.suffix == ".wandb" else []
    if (path / "wandb").is_dir():
        path = path / "wandb"
    found = sorted(path.glob("run-*.wandb")) or sorted(path.glob("*run-*/run-*.wandb"))
    return [p for p in found if not p.parent.is_symlink()]  # latest-run links to a run listed already


def is_wandb(path: Path) -> bool:
    return bool(run_files(path))


@dataclass
class WandbRun:
    """What one run file says, as the paneboard run gets it."""

    run_id: str = ""
    project: str = ""
    name: str = ""
    entity: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    notes: str = ""
    host: str = ""
    started: float | None = None
    ended: float | None = None
    exit_code: int | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    # key -> (steps, values, walls) as lists while reading
    history: dict[str, tuple[list[float], list[float], list[float]]] = field(default_factory=dict)
    system: dict[str, tuple[list[float], list[float], list[float]]] = field(default_factory=dict)
    left_out: dict[tuple[str, str], int] = field(default_factory=dict)  # (W&B type, key) -> objects not imported
    records: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)  # (kind, key) -> steps
    output: dict[str, list[tuple[str, float, str]]] = field(default_factory=dict)  # output(_raw) -> console writes
    metrics: MetricRules = field(default_factory=MetricRules)  # define_metric's declarations


def _value(text: str) -> Any:
    try:
        return float(text)  # the usual case, and W&B's NaN / Infinity spellings
    except ValueError:
        return json.loads(text)


def _key(item: Any) -> str:
    return ".".join(item.nested_key) if item.nested_key else item.key


def read_run(path: Path) -> WandbRun:
    """Every record of the run file, through wandb's own protobuf Record."""
    pb = need("wandb.proto.wandb_internal_pb2", "wandb")
    run = WandbRun()
    record = pb.Record()
    last_wall = -math.inf
    step_auto = 0
    history = run.history
    files = path.parent / "files"
    try:
        for data in records(path):
            record.ParseFromString(data)
            kind = record.WhichOneof("record_type")
            if kind == "history":  # the hot loop: a million rows should import in seconds
                history_items = record.history.item
                step = wall = math.nan
                values = []
                groups: dict[str, list[tuple[Any, str]]] | None = None
                for item in history_items:
                    nested = item.nested_key
                    if len(nested) > 1:  # a logged dict, or a media object's fields: sorted out below
                        if groups is None:
                            groups = {}
                        groups.setdefault(nested[0], []).append((nested, item.value_json))
                        continue
                    key = nested[0] if nested else item.key
                    if key == "_step":
                        step = float(item.value_json)
                    elif key == "_timestamp":
                        wall = float(item.value_json)
                    elif key != "_runtime":
                        values.append((key, item.value_json))
                if step != step:
                    step = float(record.history.step.num or step_auto)
                step_auto = int(step) + 1
                if wall == wall and wall > last_wall:
                    last_wall = wall
                if groups:
                    values += _grouped(run, groups, files, step, wall)
                for key, text in values:
                    try:
                        value = float(text)
                    except ValueError:
                        value = json.loads(text)
                        if isinstance(value, dict) and "_type" in value:
                            _media(run, key, value, files, step, wall)
                            continue
                        if isinstance(value, bool) or not isinstance(value, (int, float)):
                            continue
                    cols = history.get(key)
                    if cols is None:
                        cols = history[key] = ([], [], [])
                    cols[0].append(step)
                    cols[1].append(value)
                    cols[2].append(wall)
            elif kind == "stats":
                wall = record.stats.timestamp.seconds + record.stats.timestamp.nanos / 1e9
                last_wall = max(last_wall, wall)
                for item in record.stats.item:
                    value = _value(item.value_json)
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        cols = run.system.setdefault(item.key, ([], [], []))
                        cols[0].append(wall - (run.started or wall))
                        cols[1].append(float(value))
                        cols[2].append(wall)
            elif kind == "run":
                _run_record(run, record.run)
            elif kind == "config":
                _config(run, record.config)
            elif kind == "summary":
                for item in record.summary.update:
                    run.summary[_key(item)] = json.loads(item.value_json)
                for item in record.summary.remove:
                    run.summary.pop(_key(item), None)
            elif kind == "environment":
                env = record.environment
                run.provenance.update({k: v for k, v in (("host", env.host), ("user", env.username),
                                                         ("python", env.python), ("program", env.program),
                                                         ("os", env.os)) if v})
                if env.args:
                    run.provenance["argv"] = list(env.args)
            elif kind == "metric":
                wandb_metrics.define(run.metrics, record.metric)
            elif kind == "exit":
                run.exit_code = record.exit.exit_code
            elif kind == "output_raw" or kind == "output":
                run.output.setdefault(kind, []).append(wandb_console.output_write(getattr(record, kind)))
    except WandbLogError as exc:
        raise PeerImportError(str(exc)) from None
    if run.exit_code is not None and last_wall > -math.inf:
        run.ended = max(last_wall, run.started or last_wall)
    return run


def _grouped(run: WandbRun, groups: dict[str, list[tuple[Any, str]]], files: Path, step: float,
             wall: float) -> list[tuple[str, str]]:
    """Media objects (their fields arrive as nested keys) become step records; other dicts, dotted series."""
    leaves: list[tuple[str, str]] = []
    for top, items in groups.items():
        if any(len(n) == 2 and n[1] == "_type" for n, _ in items):  # a list of images has its fields here too
            _media(run, top, _nested(items), files, step, wall)
        else:
            leaves += [(".".join(n), t) for n, t in items]
    return leaves


def _nested(items: list[tuple[Any, str]]) -> dict[str, Any]:
    """A media object from its nested keys: an image's boxes and masks arrive as (key, "boxes", layer, field)."""
    obj: dict[str, Any] = {}
    for names, text in items:
        node = obj
        for name in names[1:-1]:
            node = node.setdefault(name, {}) if isinstance(node.get(name, {}), dict) else {}
        node[names[-1]] = json.loads(text)
    return obj


def _media(run: WandbRun, key: str, obj: dict[str, Any], files: Path, step: float, wall: float) -> None:
    found, left = wandb_media.step_records(obj, files, step, wall)
    for kind, rec in found:
        run.records.setdefault((kind, key), []).append(rec)
    for wandb_type in left:  # mp4/webm video, 3D objects ...: paneboard has no pane for them yet
        run.left_out[(wandb_type, key)] = run.left_out.get((wandb_type, key), 0) + 1


def _run_record(run: WandbRun, r: Any) -> None:
    run.run_id, run.project, run.entity = r.run_id, r.project, r.entity
    run.name = r.display_name or r.run_id
    run.tags, run.notes, run.host = list(r.tags), r.notes, r.host
    if r.start_time.seconds:
        run.started = r.start_time.seconds + r.start_time.nanos / 1e9
    _config(run, r.config)
    if r.git.commit or r.git.remote_url:
        run.provenance["git"] = {k: v for k, v in (("commit", r.git.commit), ("remote", r.git.remote_url)) if v}
    if r.host:
        run.provenance.setdefault("host", r.host)


def _config(run: WandbRun, config: Any) -> None:
    for item in config.update:
        key = _key(item)
        if key != "_wandb":  # W&B's own bookkeeping
            run.config[key] = json.loads(item.value_json)
    for item in config.remove:
        run.config.pop(_key(item), None)


def env_of(run: WandbRun) -> str:
    return f"{run.project or 'wandb'}/{run.name or run.run_id}".replace("\x00", "")


def import_run(sink: Sink, path: Path) -> str:
    """Import one run file; returns its env."""
    run = read_run(path)
    source = f"wandb:{run.entity}/{run.project}/{run.run_id}"
    env = sink.env_for(env_of(run), source)
    _record(sink, env, source, run, path.stat().st_size)
    _history(sink, env, source, run)
    for key, (x, y, w) in run.system.items():
        sink.series(env, "sys_" + key, client_id(source, "system", key), np.array(x), np.array(y), np.array(w),
                    "seconds")
    for (kind, key), recs in run.records.items():
        sink.records(env, key, kind, client_id(source, kind, key), recs)
    if run.left_out:
        named = ", ".join(f"{n} {t} in {k!r}" for (t, k), n in sorted(run.left_out.items(), key=lambda i: i[0][1]))
        sink.stats.problems.append(f"{env}: W&B media paneboard has no pane for, not imported: {named}")
    writes = run.output.get("output_raw") or run.output.get("output") or []  # older runs: processed lines only
    wandb_console.import_console(sink, env, source, writes, path, run.started)
    sink.stats.runs += 1
    return env


def _history(sink: Sink, env: str, source: str, run: WandbRun) -> None:
    """Each history key against its declared step metric (define_metric), else W&B's _step."""
    dropped: dict[str, int] = {}
    for key, cols in run.history.items():
        xkey = run.metrics.x_of(key)
        if xkey is None or xkey not in run.history:
            x, y, w = (np.array(c) for c in cols)
            xkey = "_step"
        else:
            spec = run.metrics.spec(key)
            x, y, w, dropped[key] = wandb_metrics.on_axis(cols, run.history[xkey], bool(spec and spec.step_sync))
        sink.series(env, key, client_id(source, "history", key), x, y, w, xkey)
    if lost := {k: n for k, n in dropped.items() if n}:
        named = ", ".join(f"{n} of {k!r}" for k, n in lost.items())
        sink.stats.problems.append(f"{env}: points logged before their step metric had a value, not drawn (as in "
                                   f"W&B): {named}")
    if hidden := wandb_metrics.hidden(run.metrics, list(run.history)):
        sink.stats.problems.append(f"{env}: metrics hidden in W&B (define_metric hidden=True) are shown here: "
                                   + ", ".join(hidden))


def _record(sink: Sink, env: str, source: str, run: WandbRun, size: int) -> None:
    # The summary keys the user set: not W&B's own (_*) nor a history key's last value (a declared summary of
    # one, {"min": ...}, is kept: the store's own summary has no mean).
    # Nor a media object's fields (its type, files and captions arrive as "key.field" summary keys).
    media_keys = {key for _, key in run.records} | {key for _, key in run.left_out}
    user_summary = {k: v for k, v in run.summary.items() if not k.startswith("_")
                    and (k not in run.history or isinstance(v, dict))
                    and k.split(".", 1)[0] not in media_keys and k not in media_keys}
    config = dict(run.config)
    if user_summary:
        config["summary"] = user_summary
    status = "crashed" if run.exit_code is None else "finished" if run.exit_code == 0 else "failed"
    provenance = {**run.provenance, "source": "wandb", "import": source,
                  "wandb": {"run_id": run.run_id, "project": run.project, "entity": run.entity}}
    record: dict[str, Any] = {"op": "run_import", "env": env, "status": status, "started": run.started, "ended": run.ended,
              "provenance": provenance, "tags": [t for t in map(tag_text, run.tags) if t], "notes": run.notes,
              "error": None if status != "failed" else f"exit code {run.exit_code}"}
    events: list[dict[str, Any]] = [record, {"op": "run_config", "env": env, "config": config, "replace": True}]
    events += wandb_metrics.best_events(env, run.metrics, list(run.history))
    # A record that grew (more history, an exit) says more: its length is the record's sequence number.
    sink.events(client_id(source, "record"), size, events)


def import_wandb(sink: Sink, path: Path, progress: Progress | None = None) -> None:
    files = run_files(path)
    if not files:
        raise PeerImportError(f"{path}: no run-*.wandb files")
    for k, f in enumerate(files):
        if progress:
            progress(k, len(files), f.parent.name)
        import_run(sink, f)
    if progress:
        progress(len(files), len(files), "done")
