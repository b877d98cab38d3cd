"""What every integration shares: the writer it logs through, flat configs, and the missing-extra error."""

from __future__ import annotations

import argparse
import dataclasses
import math
import numbers
import time
from collections.abc import Mapping
from typing import Any, TypeVar

from ..client import Client
from ..tensorboard.summaries import hparam_value
from ..tensorboard.writer import SummaryWriter

W = TypeVar("W", bound=SummaryWriter)
MAX_CONFIG_KEYS = 500  # hparams per run: a model config can list thousands of entries nobody filters on


def missing_extra(extra: str, package: str, exc: ImportError) -> ImportError:
    return ImportError(f"paneboard.integrations.{extra} needs {package}: pip install \"paneboard[{extra}]\" ({exc})")


@dataclasses.dataclass(frozen=True)
class Connection:
    """Where an integration logs: an existing client, or a server found like paneboard.Client finds one
    (explicit server/port/base_url, else PANEBOARD_URL and PANEBOARD_TOKEN)."""

    client: Client | None = None
    server: str | None = None
    port: int | None = None
    base_url: str | None = None

    def writer(self, env: str) -> SummaryWriter:
        return self.writer_of(SummaryWriter, env)

    def writer_of(self, kind: type[W], env: str) -> W:
        return kind(env, client=self.client, server=self.server, port=self.port, base_url=self.base_url)


def log_hparams(writer: SummaryWriter, hparams: dict[str, Any], metrics: dict[str, float]) -> None:
    """The env's hparams session with these metrics. Unlike SummaryWriter.add_hparams, no metric becomes a
    point: the integrations log every metric as it happens, and a point at the session's step would add a
    stray trace to those panes."""
    writer.client.transport.put({"t": time.time(), "op": "hparams", "env": writer.env, "win": None, "session": ".",
                                 "hparams": {k: hparam_value(k, v) for k, v in hparams.items()},
                                 "metrics": dict(metrics), "domains": None})


def flat_config(obj: Any, prefix: str = "") -> dict[str, Any]:
    """A dict, Namespace or dataclass flattened to {"a/b": value} of numbers, strings and bools (others as str)."""
    if isinstance(obj, argparse.Namespace):
        obj = vars(obj)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        obj = dataclasses.asdict(obj)
    elif hasattr(obj, "to_dict") and callable(obj.to_dict):
        obj = obj.to_dict()
    out: dict[str, Any] = {}
    if not isinstance(obj, Mapping):
        return {prefix or "value": _scalar(obj)}
    for key, value in obj.items():
        name = f"{prefix}/{key}" if prefix else str(key)
        if isinstance(value, (Mapping, argparse.Namespace)):
            out.update(flat_config(value, name))
        elif value is not None:
            out[name] = _scalar(value)
        if len(out) >= MAX_CONFIG_KEYS:
            break
    return out


def _scalar(value: Any) -> Any:
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Real):
        v = float(value)
        return value if isinstance(value, int) else (v if math.isfinite(v) else str(v))
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:  # a torch or numpy scalar
        return _scalar(value.item())
    text = str(value)
    return text if len(text) <= 200 else text[:197] + "..."


def number(value: Any) -> float | None:
    """A loggable float from a Python, numpy or torch scalar; None for anything else."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if hasattr(value, "item") and getattr(value, "numel", lambda: 1)() == 1:
        try:
            return float(value.item())
        except (TypeError, ValueError):
            return None
    return None
