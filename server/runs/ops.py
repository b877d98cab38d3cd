"""Run ops: a job's start (or resumption) and end, config, tags, notes, best directions, rewinds and forks;
the server's status changes."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from paneboard.protocol import (
    MAX_DIFF_BYTES,
    MAX_ERROR_BYTES,
    MAX_NAME,
    MAX_NOTE_BYTES,
    MAX_PACKAGES,
    MAX_PROVENANCE_BYTES,
    MAX_TAG,
    MAX_TAGS,
)

from .. import jsonio
from ..commands.envelope import Command, EnvCommand, EventError, check_name, refusing_store_errors
from ..live.deltas import Deltas
from ..store import CONSOLE_BASE, RunRecord, StoreTx
from .record import ACTIVE, run_json

MAX_CONFIG_BYTES = 256 * 1024   # the env meta's size limit (envops.MAX_META_BYTES)
MAX_CONFIG_KEYS = 5_000
_TAG = re.compile(r"^[^\s,\x00-\x1f\x7f\"']+$")
_CLIENT = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


def _client(raw: dict) -> str | None:
    cid = raw.get("client")
    if cid is None:
        return None
    if not isinstance(cid, str) or not _CLIENT.match(cid):
        raise EventError("client must be 1..64 of [A-Za-z0-9_.:-]")
    return cid


def check_tags(value: Any, what: str = "tags") -> list[str]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise EventError(f"{what} must be a list of strings")
    out: list[str] = []
    for tag in value:
        if not 1 <= len(tag) <= MAX_TAG or not _TAG.match(tag):
            raise EventError(f"{what}: a tag is 1..{MAX_TAG} characters without spaces, commas or quotes; "
                             f"got {tag[:80]!r}")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise EventError(f"{what}: at most {MAX_TAGS} tags per run")
    return out


def check_config(value: Any) -> dict:
    if not isinstance(value, dict):
        raise EventError("config must be an object {key: value}")
    if len(value) > MAX_CONFIG_KEYS:
        raise EventError(f"config: at most {MAX_CONFIG_KEYS} keys")
    for key in value:
        if not isinstance(key, str) or not key or len(key) > MAX_NAME:
            raise EventError(f"config keys must be non-empty strings of at most {MAX_NAME} characters")
    if len(jsonio.dumps(value)) > MAX_CONFIG_BYTES:
        raise EventError(f"config must be at most {MAX_CONFIG_BYTES} bytes of JSON")
    return value


def check_note(value: Any) -> str:
    if not isinstance(value, str):
        raise EventError("note must be a string (Markdown)")
    if len(value.encode("utf-8", "surrogatepass")) > MAX_NOTE_BYTES:
        raise EventError(f"note must be at most {MAX_NOTE_BYTES} bytes")
    return value


def check_provenance(value: Any) -> dict:
    if not isinstance(value, dict):
        raise EventError("run_start: provenance must be an object")
    git = value.get("git")
    if git is not None:
        if not isinstance(git, dict):
            raise EventError("run_start: provenance.git must be an object")
        diff = git.get("diff")
        if diff is not None and (not isinstance(diff, str) or len(diff.encode("utf-8", "surrogatepass")) > MAX_DIFF_BYTES):
            raise EventError(f"run_start: provenance.git.diff must be a string of at most {MAX_DIFF_BYTES} bytes")
    packages = value.get("packages")
    if packages is not None and (not isinstance(packages, list) or len(packages) > MAX_PACKAGES):
        raise EventError(f"run_start: provenance.packages must be a list of at most {MAX_PACKAGES} entries")
    if len(jsonio.dumps(value)) > MAX_PROVENANCE_BYTES:
        raise EventError(f"run_start: provenance must be at most {MAX_PROVENANCE_BYTES} bytes of JSON")
    return value


def _checked_fields(raw: dict, op: str, allowed: set[str]) -> None:
    """Unknown fields are refused, so a typo is not lost."""
    unknown = set(raw) - allowed - {"op", "env", "win", "s", "t"}
    if unknown:
        raise EventError(f"{op}: unknown field(s) {', '.join(sorted(map(str, unknown)))}")


def parse_start(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    _checked_fields(raw, op, {"client", "provenance", "resume"})
    payload = {"client": _client(raw), "provenance": check_provenance(raw.get("provenance") or {}),
               "resume": bool(raw.get("resume"))}
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=payload)


def parse_end(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    _checked_fields(raw, op, {"client", "status", "error"})
    status = raw.get("status") or "finished"
    if status not in ("finished", "failed"):
        raise EventError(f'run_end: status must be "finished" or "failed", got {str(status)[:40]!r}')
    error = raw.get("error")
    if error is not None and (not isinstance(error, str)
                              or len(error.encode("utf-8", "surrogatepass")) > MAX_ERROR_BYTES):
        raise EventError(f"run_end: error must be a string of at most {MAX_ERROR_BYTES} bytes (a traceback)")
    if error is not None and status != "failed":
        raise EventError('run_end: error goes with status "failed"')
    return EnvCommand(op=op, env=env, seq=seq, wall=wall,
                      payload={"client": _client(raw), "status": status, "error": error})


def parse_config(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    _checked_fields(raw, op, {"config", "replace"})
    payload = {"config": check_config(raw.get("config")), "replace": bool(raw.get("replace"))}
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=payload)


def parse_tags(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    _checked_fields(raw, op, {"add", "remove", "set"})
    payload = {k: check_tags(raw[k], k) for k in ("add", "remove", "set") if raw.get(k) is not None}
    if not payload:
        raise EventError("run_tags: give add, remove or set (lists of tags)")
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=payload)


def parse_note(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    _checked_fields(raw, op, {"note", "append"})
    payload = {"note": check_note(raw.get("note")), "append": bool(raw.get("append"))}
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=payload)


def _best_one(series: Any, direction: Any) -> None:
    if not isinstance(series, str) or not series or len(series) > 2 * MAX_NAME + 1:
        raise EventError("run_best: series must be a series name")
    if direction not in ("min", "max", None):
        raise EventError('run_best: direction must be "min", "max" or null (inferred from the name)')


def parse_best(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    _checked_fields(raw, op, {"series", "direction"})
    series, direction = raw.get("series"), raw.get("direction")
    _best_one(series, direction)
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload={"series": series, "direction": direction})


def _step(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) == float("inf"):
        raise EventError(f"{what} must be a finite number (a step)")
    return float(value)


def parse_rewind(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    _checked_fields(raw, op, {"step"})
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload={"step": _step(raw.get("step"), "run_rewind: step")})


def parse_fork(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    _checked_fields(raw, op, {"from", "step"})
    source = check_name(raw.get("from"), "from")
    if source == env:
        raise EventError("run_fork: env and from must differ")
    step = raw.get("step")
    return EnvCommand(op=op, env=env, seq=seq, wall=wall,
                      payload={"from": source, "step": None if step is None else _step(step, "run_fork: step")})


def fork_envs(cmd: Command) -> set[str]:
    """A fork reads every pane of its source and writes every pane of its target."""
    return {cmd.env, cmd.payload["from"]} if isinstance(cmd, EnvCommand) else {cmd.env}


@refusing_store_errors
def apply_rewind(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    """Points after the step are hidden, kept in a rewind record: the restarted job's points replace them."""
    for pane in tx.rewind_env(cmd.env, cmd.payload["step"]):
        changed = tx.get_pane(cmd.env, pane.win)
        deltas.pane(cmd.env, pane.win, changed.version if changed else pane.version + 1)


@refusing_store_errors
def apply_fork(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    source, step = cmd.payload["from"], cmd.payload["step"]
    run = tx.get_run(cmd.env)
    if run is not None and run.fork_from == source and run.fork_step == step:
        return  # the forked job restarted: its run goes on
    tx.fork_env(source, cmd.env)  # copy-on-write of every pane; StoreError if the target exists
    if step is not None:
        tx.rewind_env(cmd.env, step, keep=False)  # the source keeps that history: nothing to keep here
    run = tx.get_run(cmd.env) or RunRecord(env=cmd.env)
    new = dataclasses.replace(run, fork_from=source, fork_step=step)
    tx.put_run(new)
    deltas.messages.append({"type": "run", "env": cmd.env, "run": run_json(new)})


IMPORT_STATUSES = ("running", "finished", "failed", "crashed")


def _time(raw: dict, key: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e11:
        raise EventError(f"run_import: {key} must be a Unix time in seconds or null")
    return float(value)


def parse_import(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    """A whole run record from another tracker (dash-server import): it replaces the env's record."""
    _checked_fields(raw, op, {"status", "started", "ended", "provenance", "tags", "notes", "error"})
    status = raw.get("status")
    if status not in IMPORT_STATUSES:
        raise EventError(f"run_import: status must be one of {', '.join(IMPORT_STATUSES)}")
    error = raw.get("error")
    if error is not None and (not isinstance(error, str)
                              or len(error.encode("utf-8", "surrogatepass")) > MAX_ERROR_BYTES):
        raise EventError(f"run_import: error must be a string of at most {MAX_ERROR_BYTES} bytes")
    payload = {"status": status, "started": _time(raw, "started"), "ended": _time(raw, "ended"),
               "provenance": check_provenance(raw.get("provenance") or {}), "tags": check_tags(raw.get("tags") or []),
               "notes": check_note(raw.get("notes") or ""), "error": error}
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=payload)


def check_best(value: Any) -> dict:
    """The env meta's "best" as apply_best leaves it ({series: "min" | "max"}), checked before an import."""
    if not isinstance(value, dict) or len(value) > MAX_CONFIG_KEYS:
        raise EventError(f"best must be an object {{series: \"min\" | \"max\"}} of at most {MAX_CONFIG_KEYS} series")
    for series, direction in value.items():
        if direction is None:
            raise EventError(f"best[{str(series)[:80]!r}] must be \"min\" or \"max\"")
        _best_one(series, direction)
    return value


def status_command(env: str, status: str, client: str | None, wall: float, reason: str | None = None) -> EnvCommand:
    """The server's own status change of a run: "crashed" (client gone), "stalled", "running" again (no
    longer stalled; or crashed, and `client` reconnected), or "stopped" (a sweep's pruner ended it: `reason`)."""
    return EnvCommand(op="run_status", env=env, wall=wall, payload={"status": status, "client": client,
                                                                    "reason": reason})


@refusing_store_errors
def apply_config(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    p = cmd.payload
    tx.ensure_env(cmd.env)
    meta = tx.env_meta(cmd.env) or {}
    meta["config"] = dict(p["config"]) if p["replace"] else {**(meta.get("config") or {}), **p["config"]}
    if len(jsonio.dumps(meta["config"])) > MAX_CONFIG_BYTES:
        raise EventError(f"config must be at most {MAX_CONFIG_BYTES} bytes of JSON")
    _set_meta(tx, cmd.env, meta, deltas)


@refusing_store_errors
def apply_best(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    p = cmd.payload
    tx.ensure_env(cmd.env)
    meta = tx.env_meta(cmd.env) or {}
    best = dict(meta.get("best") or {})
    if p["direction"] is None:
        best.pop(p["series"], None)
    else:
        best[p["series"]] = p["direction"]
    meta["best"] = best
    _set_meta(tx, cmd.env, meta, deltas)


def _set_meta(tx: StoreTx, env: str, meta: dict, deltas: Deltas) -> None:
    tx.set_env_meta(env, meta)
    deltas.messages.append({"type": "meta", "env": env, "meta": meta})


@refusing_store_errors
def apply_status(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    if tx.get_run(cmd.env) is None:
        return  # the env (or its run) went meanwhile
    apply_record(tx, cmd, deltas)


@refusing_store_errors
def apply_start(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    """run_start. A resumed job numbers its console lines from 1 again: once its earlier life is over, they go
    after that life's lines (the meta's CONSOLE_BASE, as for a fork) rather than over them. Ranks of a job that
    is running already (DDP ranks joining) keep the base the first one set."""
    old = tx.get_run(cmd.env)
    if cmd.payload.get("resume") and old is not None and old.status is not None and old.status not in ACTIVE:
        last = tx.console_last_lines(cmd.env)
        if last:
            meta = tx.env_meta(cmd.env) or {}
            tx.set_env_meta(cmd.env, {**meta, CONSOLE_BASE: {str(rank): n for rank, n in last.items()}})
    apply_record(tx, cmd, deltas)


@refusing_store_errors
def apply_record(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    """The ops that change the run record itself: start, end, status, tags, note."""
    tx.ensure_env(cmd.env)
    old = tx.get_run(cmd.env) or RunRecord(env=cmd.env)
    new = _CHANGES[cmd.op](old, cmd)
    if new != old:
        tx.put_run(new)
        deltas.messages.append({"type": "run", "env": cmd.env, "run": run_json(new)})


def _started(run: RunRecord, cmd: EnvCommand) -> RunRecord:
    client = cmd.payload["client"]
    if cmd.payload.get("resume") and run.status is not None:
        # A job resumed (from its checkpoint): the same run goes on, with its first start and provenance. Its
        # previous life is over, killed perhaps before the crash watch noticed: its clients are not waited for.
        return dataclasses.replace(run, status="running", ended=None, error=None,
                                   clients=() if client is None else (client,))
    if run.status == "stopped" and run.started is None:  # the sweep stopped it first: keep that, record the rest
        return dataclasses.replace(run, started=cmd.wall, provenance=cmd.payload["provenance"])
    if run.status in ACTIVE:  # another client of the same job (a second Client, a DDP rank) joins it
        clients = run.clients if client is None or client in run.clients else run.clients + (client,)
        return dataclasses.replace(run, status="running", clients=clients)
    return dataclasses.replace(run, status="running", started=cmd.wall, ended=None,
                               provenance=cmd.payload["provenance"], clients=() if client is None else (client,))


def _ended(run: RunRecord, cmd: EnvCommand) -> RunRecord:
    client, p = cmd.payload["client"], cmd.payload
    clients = tuple(c for c in run.clients if c != client)
    # A crashed run's client that sends its end was only away: its job came back and ends now.
    back = run.status == "crashed" and client is not None and client in run.clients
    if run.status not in ACTIVE and not back:
        return dataclasses.replace(run, clients=clients)  # it ended already
    if p.get("status") == "failed":  # one failing client fails the job, whoever else still runs it
        return dataclasses.replace(run, status="failed", ended=cmd.wall, clients=clients, error=p.get("error"))
    if clients:  # other clients still run it (or, if it crashed, may come back)
        return dataclasses.replace(run, clients=clients)
    return dataclasses.replace(run, status="finished", ended=cmd.wall, clients=())


def _status_set(run: RunRecord, cmd: EnvCommand) -> RunRecord:
    status, client = cmd.payload["status"], cmd.payload["client"]
    if status == "stopped":  # the reason is kept where a failed run keeps its traceback
        # A run the pruner stops before its job's start arrived (a paced sender, then the job killed) is stopped
        # too: the sweep's word is final, and a start that arrives later does not revive it (_started).
        return dataclasses.replace(run, status="stopped", ended=cmd.wall, error=cmd.payload.get("reason")) \
            if run.status in ACTIVE or run.status is None else run
    if status == "crashed":
        if run.status not in ACTIVE or client not in run.clients:
            return run
        # The clients stay listed: one that reconnects brings the run back (the watch's "running").
        return dataclasses.replace(run, status="crashed", ended=cmd.wall)
    if status == "stalled":
        return dataclasses.replace(run, status="stalled") if run.status == "running" else run
    if run.status == "crashed":  # its job reconnected after the grace: running again
        return dataclasses.replace(run, status="running", ended=None) if client in run.clients else run
    return dataclasses.replace(run, status="running") if run.status == "stalled" else run


def _tagged(run: RunRecord, cmd: EnvCommand) -> RunRecord:
    p = cmd.payload
    tags = list(p["set"]) if "set" in p else list(run.tags)
    tags += [t for t in p.get("add", []) if t not in tags]
    tags = [t for t in tags if t not in p.get("remove", [])]
    check_tags(tags)
    return dataclasses.replace(run, tags=tuple(tags))


def _imported(run: RunRecord, cmd: EnvCommand) -> RunRecord:
    p = cmd.payload  # no clients: nothing live runs an imported run, so no watch marks it crashed or stalled
    return RunRecord(env=run.env, status=p["status"], started=p["started"], ended=p["ended"], tags=tuple(p["tags"]),
                     notes=p["notes"], provenance=p["provenance"] or None, error=p["error"])


def _noted(run: RunRecord, cmd: EnvCommand) -> RunRecord:
    p = cmd.payload
    note = (run.notes + "\n\n" + p["note"] if run.notes else p["note"]) if p["append"] else p["note"]
    return dataclasses.replace(run, notes=check_note(note))


_CHANGES = {"run_start": _started, "run_end": _ended, "run_status": _status_set, "run_tags": _tagged,
            "run_note": _noted, "run_import": _imported}
