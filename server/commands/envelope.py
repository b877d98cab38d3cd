"""The command envelope every producer's events become, its errors and name rules (parsing: dispatch.parse)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NewType, TypeVar, cast

from paneboard.protocol import MAX_NAME

from ..store.base import StoreError

F = TypeVar("F", bound=Callable[..., Any])

MAX_SEQ = 2**63 - 1  # the column that stores a client's last sequence number is a signed 64-bit integer


class EventError(ValueError):
    """An event that cannot be applied; the message is reported to its producer."""


# A kind name that the pane registry owns (panes.ops.parse_pane checked it): kind_module() of one is never None.
KindName = NewType("KindName", str)


# slots: no per-instance __dict__, half the objects the garbage collector tracks per event.
@dataclass(slots=True)
class PaneCommand:
    """set / update of one pane, ready for the writer thread; its kind's validate() prepared the payload."""

    op: str                          # "set" | "update"
    env: str
    win: str
    kind: KindName
    seq: int | None = None           # producer sequence number (idempotent replay)
    wall: float = 0.0                # producer wall time of the call
    mode: str | None = None          # update mode (append / replace / remove ...)
    name: str | None = None          # trace name for updates
    opts: dict = field(default_factory=dict)
    payload: Any = None              # kind-specific, prepared by the kind's validate()
    first_seq: int | None = None     # a coalesced append stands for the calls first_seq..seq, one point each


@dataclass(slots=True)
class EnvCommand:
    """close and the env, hparams, run and sharing ops: commands that no pane kind sees."""

    op: str
    env: str
    win: str | None = None           # the pane of a close (None: every pane of the env) or of a layout
    seq: int | None = None
    wall: float = 0.0
    payload: Any = None              # op-specific, prepared by its op's parse (dispatch.table)


# One validated change; isinstance() tells the pane paths (PaneCommand) from the env-wide ones.
Command = PaneCommand | EnvCommand


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone half of a UTF-16 pair (a JSON "\ud800" escape): not UTF-8
_IN_URLS = ("env", "win", "eid", "target", "to")  # names that become URL path segments (env and pane names)


def check_name(value: Any, what: str) -> str:
    """Env and window names: non-empty text without control characters (shown as text everywhere)."""
    if not isinstance(value, str):
        raise EventError(f"{what} must be a string, got {type(value).__name__}")
    return _checked_name(value, what)


@lru_cache(maxsize=8192)
def _checked_name(value: str, what: str) -> str:
    # Cached: a training run repeats the same few names in every event (failures are not cached).
    if not value or len(value) > MAX_NAME:
        raise EventError(f"{what} must be 1..{MAX_NAME} characters")
    if _CONTROL.search(value):
        raise EventError(f"{what} must not contain control characters")
    if _SURROGATE.search(value):
        raise EventError(f"{what} must not contain lone surrogates (\\ud800-\\udfff): no UTF-8 text holds them")
    if value in (".", "..") and what in _IN_URLS:  # a browser resolves these URL segments, encoded or not
        raise EventError(f"{what} must not be {value!r}: no URL can name it")
    return value


def refusing_store_errors(apply: F) -> F:
    """For an op whose checks all come before its writes: a store's refusal (a missing env, a name taken)
    is reported to the producer like any invalid event, and never leaves half a command behind."""
    @functools.wraps(apply)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return apply(*args, **kwargs)
        except StoreError as exc:
            raise EventError(str(exc)) from None
    return cast(F, checked)
