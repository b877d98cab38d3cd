"""Client calls made inside a training loop never raise: bad input becomes a logged rejection (client.rejected)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

# The calls a training loop makes: plots, media, pane and run changes. The queries (win_exists, get_window_data
# ...) and lifecycle calls (flush, close_connection, end_run) keep raising: they answer the caller.
GUARDED = (
    "scatter", "text", "image", "images", "close", "delete_env",
    "heatmap", "bar", "histogram", "boxplot", "surf", "contour", "pie", "sunburst", "mesh", "stem", "quiver",
    "dual_axis_lines", "svg", "properties", "graph", "update_window_opts",
    "plotlyplot", "matplot", "audio", "video", "embeddings", "point_cloud",
    "rewind", "set_config", "add_tags", "remove_tags", "note", "set_best",
)
# Guarded in their own body with rejected_call(): a hot path, where a wrapper's extra call costs ~20%.
INLINE = ("line",)


def rejected_call(client: Any, name: str, exc: Exception, win: Any) -> Any:
    """A call whose input failed: raise it again on a strict client, else count and log it; answers `win`."""
    if client.strict:
        raise exc
    client.transport.reject(f"{name}(): {type(exc).__name__}: {exc}")
    return win


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    name = method.__name__
    signature = inspect.signature(method)

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kw: Any) -> Any:
        try:
            return method(self, *args, **kw)
        except Exception as exc:
            # Visdom's calls answer the window; a rejected one answers the window it was given (or None).
            try:
                win = signature.bind_partial(self, *args, **kw).arguments.get("win")
            except TypeError:
                win = None
            return rejected_call(self, name, exc, win)

    return call


def guard_methods(cls: type, names: tuple[str, ...] = GUARDED) -> None:
    """Replace each named method of `cls` (its own or inherited) by one that rejects instead of raising."""
    for name in names:
        setattr(cls, name, _guarded(getattr(cls, name)))
