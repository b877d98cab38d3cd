"""The `hparams` op (TensorBoard's add_hparams): validation, and how a session merges into the env meta."""

from __future__ import annotations

import math
from typing import Any

from paneboard.protocol import MAX_NAME

from .. import jsonio
from ..live.deltas import Deltas
from ..store import StoreTx
from .envelope import EnvCommand, EventError, check_name, refusing_store_errors
from .envops import env_meta, set_meta

MAX_NAMES = 1_000          # hparams or metrics in one op

MAX_STRING = 1_000
MAX_DOMAIN = 1_000         # values in one discrete domain
MAX_SESSIONS = 1_000       # per env: sessions live in the env meta, which is read whole
MAX_OP_BYTES = 64 * 1024


def value_type(value: Any) -> str:
    """"bool" | "number" | "string" (bool first: in Python True is also an int)."""
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, (int, float)) else "string"


def _hparam_value(value: Any, where: str) -> bool | int | float | str:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise EventError(f"hparams: {where} must be a finite number")
        return value
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise EventError(f"hparams: {where} must be at most {MAX_STRING} characters")
        return value
    raise EventError(f"hparams: {where} must be a number, string or bool, got {type(value).__name__}")


def _names(raw: Any, what: str) -> dict:
    if not isinstance(raw, dict):
        raise EventError(f"hparams: {what} must be an object {{name: value}}")
    if len(raw) > MAX_NAMES:
        raise EventError(f"hparams: at most {MAX_NAMES} {what}")
    for name in raw:
        if not isinstance(name, str) or not name or len(name) > MAX_NAME:
            raise EventError(f"hparams: {what} names must be non-empty strings of at most {MAX_NAME} characters")
    return raw


def parse(raw: dict) -> dict:
    """{"session", "hparams", "metrics", "domains"} checked; metric values may be null (read from a line pane)."""
    session = check_name(raw.get("session", ".") or ".", "session")
    hparams = {k: _hparam_value(v, f"hparams[{k!r}]") for k, v in _names(raw.get("hparams", {}), "hparams").items()}
    metrics: dict[str, float | None] = {}
    for k, v in _names(raw.get("metrics") or {}, "metrics").items():
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise EventError(f"hparams: metrics[{k!r}] must be a number or null, got {type(v).__name__}")
        metrics[k] = None if v is None or not math.isfinite(v) else v  # a diverged run's NaN loss: no value
    domains = raw.get("domains")
    if domains is not None:
        domains = dict(_names(domains, "domains"))
        for k, values in domains.items():
            if k not in hparams:
                raise EventError(f"hparams: domains[{k!r}] names no hparam of this op")
            if not isinstance(values, list) or not 1 <= len(values) <= MAX_DOMAIN:
                raise EventError(f"hparams: domains[{k!r}] must be a list of 1..{MAX_DOMAIN} values")
            values = [_hparam_value(v, f"domains[{k!r}] values") for v in values]
            want = value_type(hparams[k])
            if any(value_type(v) != want for v in values):
                raise EventError(f"hparams: domains[{k!r}] values must all be of the hparam's type ({want})")
            domains[k] = list(dict.fromkeys(values))
    payload = {"session": session, "hparams": hparams, "metrics": metrics, "domains": domains}
    if len(jsonio.dumps(payload)) > MAX_OP_BYTES:
        raise EventError(f"hparams: the op must be at most {MAX_OP_BYTES} bytes of JSON")
    return payload


def merge(meta: dict, payload: dict, wall: float) -> dict:
    """The env meta with the session added or updated: later hparams/domains replace, metrics merge."""
    sessions = dict(meta.get("hparams") or {})
    name = payload["session"]
    old = sessions.get(name) or {}
    if name not in sessions and len(sessions) >= MAX_SESSIONS:
        raise EventError(f"hparams: at most {MAX_SESSIONS} sessions per env")
    metrics = dict(old.get("metrics") or {})
    for k, v in payload["metrics"].items():
        if v is not None or k not in metrics:  # a null never erases a value sent before
            metrics[k] = v
    sessions[name] = {
        "hparams": payload["hparams"] or old.get("hparams") or {},
        "metrics": metrics,
        "domains": payload["domains"] if payload["domains"] is not None else old.get("domains"),
        "wall": wall,
    }
    return {**meta, "hparams": sessions}


SESSION_KEYS = ("hparams", "metrics", "domains", "wall")


def check_sessions(sessions: Any) -> dict:
    """Stored sessions (the env meta's "hparams", as merge() leaves them), checked as the op checks what it
    merges: an archive's must pass before import. EventError naming the session and field."""
    if not isinstance(sessions, dict):
        raise EventError("hparams: the sessions must be an object {session: {hparams, metrics, domains, wall}}")
    if len(sessions) > MAX_SESSIONS:
        raise EventError(f"hparams: at most {MAX_SESSIONS} sessions per env")
    out = {}
    for name, s in sessions.items():
        try:
            if not isinstance(s, dict) or set(s) - set(SESSION_KEYS):
                raise EventError(f"hparams: a session must be an object with only {', '.join(SESSION_KEYS)}")
            wall = s.get("wall")
            if wall is not None and (isinstance(wall, bool) or not isinstance(wall, (int, float))
                                     or not math.isfinite(wall)):
                raise EventError("hparams: wall must be a finite number")
            payload = parse({"session": name, "hparams": s.get("hparams") or {}, "metrics": s.get("metrics") or {},
                             "domains": s.get("domains")})
        except EventError as exc:
            raise EventError(f"session {str(name)[:80]!r}: {exc}") from None
        out[payload["session"]] = {**{k: payload[k] for k in ("hparams", "metrics", "domains")}, "wall": wall}
    return out


def readable_sessions(sessions: Any) -> dict:
    """The sessions that pass check_sessions, for reads: a malformed stored one is left out, not a 500."""
    if not isinstance(sessions, dict):
        return {}
    out = {}
    for name, s in sessions.items():
        try:
            out.update(check_sessions({name: s}))
        except EventError:
            continue
    return out


def parse_op(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=parse(raw))


@refusing_store_errors
def apply_op(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    tx.ensure_env(cmd.env)  # add_hparams may come before (or without) any pane
    meta = merge(env_meta(tx, cmd.env), cmd.payload, cmd.wall)
    # add_hparams and the integrations feed the run's config too (the runs table and its queries read it).
    meta["config"] = {**(meta.get("config") or {}), **cmd.payload["hparams"]}
    set_meta(tx, cmd.env, meta, deltas)
