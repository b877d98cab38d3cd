"""An archive's envs checked as the live ops check what they store: each meta key by its op's check, each pane's
content and step records by its kind's check_stored; errors name the env, the pane and the field."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..commands.envelope import EventError
from ..commands.envops import check_custom_scalars, check_views
from ..commands.hparams import check_sessions
from ..panes import kind_module, xy
from ..runs.color import check_color
from ..runs.console import check_console_base
from ..runs.ops import check_best, check_config
from ..store import CONSOLE_BASE, RUN_COLOR

# The env meta's keys and the op check that guards each (set_meta/run_config, hparams, save_view, custom_scalars,
# run_best, a fork's console base, run_color): no live op writes any other key.
META_CHECKS: dict[str, Callable[[Any], Any]] = {"config": check_config, "hparams": check_sessions,
                                                "views": check_views, "custom_scalars": check_custom_scalars,
                                                "best": check_best, CONSOLE_BASE: check_console_base,
                                                RUN_COLOR: check_color}


def check_meta(env: str, meta: dict) -> dict:
    """The env meta to store, every key checked; EventError naming the env and the key."""
    extra = sorted(map(str, set(meta) - set(META_CHECKS)))
    if extra:
        raise EventError(f"archive env {env!r}: meta has unknown key(s) {', '.join(extra)[:200]}")
    out = {}
    for key, value in meta.items():
        try:
            out[key] = META_CHECKS[key](value)
        except EventError as exc:
            raise EventError(f"archive env {env!r}: meta {key}: {exc}") from None
    return out


def check_pane(env: str, win: str, kind: str, content: dict | None, traces: int,
               steps: list[tuple[float, float, dict | None, str | None]], blobs: Mapping[str, bytes]) -> dict | None:
    """The pane's content to store, checked by its kind; EventError naming env, pane and field."""
    try:
        if traces and kind not in xy.KINDS:
            raise EventError(f"{kind}: a {kind} pane has no traces")
        module = kind_module(kind)
        if module is None:  # the archive reader refuses unknown kinds before this
            raise EventError(f"unknown pane kind {kind!r}")
        return module.check_stored(content, steps, blobs)
    except EventError as exc:
        raise EventError(f"archive env {env!r}, pane {win!r}: {exc}") from None
