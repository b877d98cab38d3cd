"""Pane kinds: one module per kind, registered in PANE_MODULES (the one list the server consults).

Each module defines KINDS (kind names it owns), UPDATE_MODES, and
  validate(cmd, raw) -> payload            check an event's kind data before anything is written
  apply(tx, cmd, deltas) -> None           turn the command into store calls (checks come before writes)
  render(store, pane, budget, x0, x1)      the `data` of a pane for the read API, within a point budget
"""

from __future__ import annotations

from types import ModuleType

from . import image, text, xy

PANE_MODULES: list[ModuleType] = [xy, text, image]

_BY_KIND = {kind: module for module in PANE_MODULES for kind in module.KINDS}


def kind_module(kind: object) -> ModuleType | None:
    return _BY_KIND.get(kind) if isinstance(kind, str) else None


def known_kinds() -> list[str]:
    return sorted(_BY_KIND)
