"""Linear-time regular expressions for run queries (RE2): no pattern can backtrack, whatever it is matched on."""

from __future__ import annotations

import re
from typing import Protocol

import re2  # type: ignore[import-untyped, unused-ignore]

MAX_PATTERN = 1_000   # characters
MAX_REPEAT = 1_000    # RE2 refuses counts above this, but reads one past an int as literal text
MAX_PROGRAM = 8 << 20  # bytes of compiled program: a pattern that needs more is refused, not built

# RE2 reads a count too large for an int (a{4294967295}) as literal text: refuse it rather than match that.
_REPEAT = re.compile(r"(?<!\\)\{(\d+)(?:,(\d*))?\}")

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a user's bad pattern is a 400, not a line on the server's stderr
_OPTIONS.max_mem = MAX_PROGRAM


class Pattern(Protocol):
    def search(self, text: str) -> object | None: ...


class RegexError(ValueError):
    """The pattern is malformed, too large, or uses what RE2 cannot match in linear time (backreferences,
    lookaround)."""


def compile_regex(pattern: str) -> Pattern:
    """A compiled pattern with `.search(text)`, matched in time linear in the text."""
    if len(pattern) > MAX_PATTERN:
        raise RegexError(f"longer than {MAX_PATTERN} characters")
    for m in _REPEAT.finditer(pattern):
        if any(n and int(n) > MAX_REPEAT for n in m.groups()):
            raise RegexError(f"repetition {m.group()} is above {{{MAX_REPEAT}}}")
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        raise RegexError(_reason(exc)) from None
    except (OverflowError, ValueError, TypeError) as exc:  # never a 500, whatever the wrapper raises
        raise RegexError(str(exc)) from None


def _reason(exc: Exception) -> str:
    msg = exc.args[0] if exc.args else exc
    text = msg.decode(errors="replace") if isinstance(msg, bytes) else str(msg)
    if "invalid perl operator" in text or "invalid escape sequence: \\" in text and text[-1:].isdigit():
        text += " (lookaround and backreferences are not supported)"
    return text
