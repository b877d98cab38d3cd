"""The traceback of the exception that ends the program, so that its runs end `failed` rather than `finished`."""

from __future__ import annotations

import sys
import threading
import traceback
from types import TracebackType
from typing import Any

_lock = threading.Lock()
_installed = False
_uncaught: str | None = None


def install() -> None:
    """Chain a sys.excepthook (once per process) that keeps the traceback of an uncaught exception: Python calls
    it before the exit handlers, where each run sends its end."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        previous = sys.excepthook

        def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
            record(kind, value, tb)
            previous(kind, value, tb)

        sys.excepthook = hook


def record(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    global _uncaught
    try:
        _uncaught = "".join(traceback.format_exception(kind, value, tb))
    except Exception:  # a broken __str__ must not hide the failure itself
        _uncaught = f"{getattr(kind, '__name__', kind)} (its message could not be formatted)"


def uncaught() -> str | None:
    """The traceback of the exception that is ending the program, None while none is."""
    return _uncaught


def current(default: str) -> str:
    """The traceback of the exception being handled (inside an except block), else `default`."""
    info: Any = sys.exc_info()
    if info[0] is None:
        return default
    return "".join(traceback.format_exception(*info))
