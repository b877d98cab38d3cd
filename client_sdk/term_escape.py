"""Server data made safe to print on a terminal: C0/C1 control characters shown as escapes, never obeyed."""

from __future__ import annotations

import re

# Any job (or a share-token viewer's server) controls these strings: a raw ESC, BEL or 8-bit CSI in them could set
# the window title, clear the screen or write the clipboard (OSC 52) of whoever reads them. Tab is harmless.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
# Colours (SGR: ESC [ digits ; m) are all a console line may keep: they change how text looks, nothing else.
_SGR_OR_CONTROL = re.compile(r"\x1b\[[0-9;:]{0,64}m|[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _escape(m: re.Match[str]) -> str:
    return f"\\x{ord(m.group()):02x}"


def _escape_unless_sgr(m: re.Match[str]) -> str:
    text = m.group()
    return text if len(text) > 1 else _escape(m)


def safe(text: object, keep_sgr: bool = False) -> str:
    """`text` as one printable line: each control character (newlines included) becomes a visible `\\xNN`;
    with `keep_sgr`, colour sequences stay (console lines as the job printed them)."""
    s = text if isinstance(text, str) else str(text)
    if keep_sgr:
        return _SGR_OR_CONTROL.sub(_escape_unless_sgr, s)
    return _CONTROL.sub(_escape, s)
