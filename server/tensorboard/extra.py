"""Whether the `tensorboard` extra (TensorBoard's protos) is installed, and the line that installs it."""

from __future__ import annotations

import importlib

INSTALL = 'pip install "paneboard[tensorboard]"'


def missing() -> str | None:
    """None when TensorBoard logs can be read here; else what to do, naming the missing module."""
    try:
        importlib.import_module("google.protobuf.message")
        importlib.import_module("tensorboard.compat.proto.event_pb2")
    except ImportError as exc:  # ModuleNotFoundError: No module named 'google' means nothing to a user
        return (f"reading TensorBoard logs needs the tensorboard extra (module {exc.name or exc}"
                f" is missing): {INSTALL}")
    return None
