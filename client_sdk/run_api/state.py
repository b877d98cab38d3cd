"""A run's config and summary: W&B's dict-like objects over the Client's run config."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..run_lifecycle import _json_safe


def config_dict(config: Any) -> dict[str, Any]:
    """A config as W&B takes one: a dict, an argparse.Namespace or any object with a __dict__; None is {}."""
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return dict(config)
    if hasattr(config, "__dict__"):
        return {k: v for k, v in vars(config).items() if not k.startswith("_")}
    raise TypeError(f"config must be a dict or an argparse.Namespace, got {type(config).__name__}")


class Config:
    """wandb.config: attribute and item access; every change is sent to the run's config at once."""

    def __init__(self, send: Any = None) -> None:
        object.__setattr__(self, "_items", {})
        object.__setattr__(self, "_send", send)

    def _bind(self, send: Any) -> None:
        object.__setattr__(self, "_send", send)
        if self._items and send is not None:
            send(dict(self._items))

    def update(self, d: Any = None, allow_val_change: bool | None = None, **kw: Any) -> None:
        items = {**config_dict(d), **kw}
        self._items.update(items)
        if self._send is not None and items:
            self._send(items)

    def setdefaults(self, d: Mapping[str, Any]) -> None:
        self.update({k: v for k, v in d.items() if k not in self._items})

    def __setitem__(self, key: str, value: Any) -> None:
        self.update({key: value})

    def __setattr__(self, key: str, value: Any) -> None:
        self.update({key: value})

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __getattr__(self, key: str) -> Any:
        try:
            return self._items[key]
        except KeyError:
            raise AttributeError(f"config has no key {key!r}") from None

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str, default: Any = None) -> Any:
        return self._items.get(key, default)

    def keys(self) -> Any:
        return self._items.keys()

    def items(self) -> Any:
        return self._items.items()

    def as_dict(self) -> dict[str, Any]:
        return dict(self._items)

    def __repr__(self) -> str:
        return f"<paneboard config {self._items!r}>"


class Summary:
    """run.summary: the last logged value of each key, unless set here (set values are kept in the run's
    config as "summary", where imported W&B runs keep theirs)."""

    def __init__(self, last: dict[str, Any], send: Any = None, settle: Any = None) -> None:
        self._set: dict[str, Any] = {}
        self._last, self._send = last, send  # _last is the run's own dict, filled by log()
        # Brings _last up to the values of the step not yet sent (the run's accumulating row) before a read.
        self._settle = settle if settle is not None else (lambda: None)

    def _push(self) -> None:
        if self._send is not None:
            self._send({"summary": _json_safe(self._set)})

    def __setitem__(self, key: str, value: Any) -> None:
        self._set[str(key)] = value
        self._push()

    def update(self, d: Mapping[str, Any] | None = None, **kw: Any) -> None:
        self._set.update({str(k): v for k, v in {**dict(d or {}), **kw}.items()})
        self._push()

    def __getitem__(self, key: str) -> Any:
        self._settle()
        return self._set[key] if key in self._set else self._last[key]

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"summary has no key {key!r}") from None

    def __delitem__(self, key: str) -> None:
        self._set.pop(key, None)
        self._last.pop(key, None)
        self._push()

    def __contains__(self, key: object) -> bool:
        self._settle()
        return key in self._set or key in self._last

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def keys(self) -> Any:
        return self.as_dict().keys()

    def items(self) -> Any:
        return self.as_dict().items()

    def as_dict(self) -> dict[str, Any]:
        self._settle()
        return {**self._last, **self._set}

    def __repr__(self) -> str:
        return f"<paneboard summary {self.as_dict()!r}>"
