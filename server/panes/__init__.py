"""Pane kinds: one module per kind, registered in PANE_KINDS (the one list the server consults).

What a kind module defines is the PaneKind protocol (contract.py): KINDS, UPDATE_MODES, READ_OPTIONS,
validate, apply, render, and the optional mergeable/merge (folding runs of small commands) and render_record
(stepped kinds), which are None where a kind has none.
"""

from __future__ import annotations

from typing import overload

from ..commands.envelope import KindName
from . import (
    embeddings,
    figure,
    histogram,
    image,
    media,
    model_graph,
    network,
    object3d,
    pr_curve,
    projector,
    properties,
    table,
    text,
    xy,
)
from .contract import Mergeable, PaneKind

# Typed as the protocol, so mypy checks every module listed here against PaneKind.
PANE_KINDS: list[PaneKind] = [xy, text, image, figure, properties, network, embeddings, model_graph, histogram, media,
                              pr_curve, projector, table, object3d]

_BY_KIND: dict[str, PaneKind] = {kind: module for module in PANE_KINDS for kind in module.KINDS}
# Looked up once per event by the writer's coalesce (a hot loop): only kinds that can fold runs of commands.
_MERGEABLE = {kind: module.mergeable for kind, module in _BY_KIND.items() if module.mergeable is not None}


@overload
def kind_module(kind: KindName) -> PaneKind: ...
@overload
def kind_module(kind: object) -> PaneKind | None: ...
def kind_module(kind: object) -> PaneKind | None:
    """The module of a kind name (None for a name no module owns, e.g. a stored pane of a removed kind)."""
    return _BY_KIND.get(kind) if isinstance(kind, str) else None


def mergeable_of(kind: str) -> Mergeable | None:
    """The kind's mergeable() (None where runs of its commands never fold)."""
    return _MERGEABLE.get(kind)


def known_kinds() -> list[str]:
    return sorted(_BY_KIND)
