"""What a pane kind is: the PaneKind protocol that every module in panes.PANE_KINDS implements.

A module implements it with module-level names (TensorBoard-style plugins: everything about one kind in one
module), so mypy checks each module against this protocol where the registry lists it. The optional parts
are always defined, as None or empty, so callers test a value instead of calling hasattr()/getattr().
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..commands.envelope import PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, StepRow, Store, StoreTx

# Query arguments of the read API a kind asked for (READ_OPTIONS), e.g. a histogram's {"steps": "51"}.
ReadOptions = Mapping[str, str]
Mergeable = Callable[[PaneCommand, PaneCommand], bool]
Merge = Callable[[list[PaneCommand]], PaneCommand]
RenderRecord = Callable[[StepRow], dict]
# What render and render_record raise on a stored value of the wrong shape (readers turn it into that pane's error).
MALFORMED = (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError)
# A step record as an env archive holds it: step, wall, data, and the sha256 of its blob (None: no blob).
StoredStep = tuple[float, float, "dict | None", "str | None"]


class PaneKind(Protocol):
    # Read-only properties, not plain attributes: a module's `KINDS = ("text",)` or `mergeable = None`
    # then matches by its own narrower type (a settable protocol attribute would have to match exactly).
    @property
    def KINDS(self) -> tuple[str, ...]:
        """Kind names this module owns (the `kind` of events and panes)."""

    @property
    def UPDATE_MODES(self) -> tuple[str, ...]:
        """Modes an `update` event of these kinds may name."""

    @property
    def READ_OPTIONS(self) -> tuple[str, ...]:
        """Query arguments of the read API that render() receives in `options` (empty: none)."""

    @property
    def mergeable(self) -> Mergeable | None:
        """Whether two consecutive commands on one pane can become one (None: never); see merge."""

    @property
    def merge(self) -> Merge | None:
        """One command equal to applying a run of mergeable commands in order (set with mergeable)."""

    @property
    def render_record(self) -> RenderRecord | None:
        """One record of the /steps API, for stepped kinds (None: the kind has no step records)."""

    def validate(self, cmd: PaneCommand, raw: dict) -> Any:
        """Check an event's kind data before anything is written; returns the command's payload."""

    def apply(self, tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
        """Turn the command into store calls (all checks come before the first write)."""

    def check_stored(self, content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
        """Check stored content and step records (an archive's, before import) as validate checks an event,
        EventError naming the field; returns the content to store. `blobs`: sha256 -> bytes the import brings."""

    def render(self, store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
               options: ReadOptions) -> dict:
        """The `data` of a pane for the read API, within a point budget and the x range [x0, x1]."""
