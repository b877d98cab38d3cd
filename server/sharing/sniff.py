"""Blob types from the bytes themselves: an allow-list of media a browser renders inert, never HTML or script."""

from __future__ import annotations

ATTACHMENT = "application/octet-stream"  # anything unrecognised: downloaded, never rendered from our origin


def _riff(data: bytes, form: bytes) -> bool:
    return data[:4] == b"RIFF" and data[8:12] == form


def _mp4(data: bytes) -> str | None:
    if data[4:8] != b"ftyp":
        return None
    brand = data[8:12]
    return "audio/mp4" if brand in (b"M4A ", b"M4B ") else "video/mp4"


# (test, type) in order; each test looks only at a fixed prefix of the bytes.
_RULES = (
    (lambda d: d.startswith(b"\x89PNG\r\n\x1a\n"), "image/png"),
    (lambda d: d.startswith(b"\xff\xd8\xff"), "image/jpeg"),
    (lambda d: d[:6] in (b"GIF87a", b"GIF89a"), "image/gif"),
    (lambda d: _riff(d, b"WEBP"), "image/webp"),
    (lambda d: d.startswith(b"BM") and len(d) > 14, "image/bmp"),
    (lambda d: _riff(d, b"WAVE"), "audio/wav"),
    (lambda d: d.startswith(b"OggS"), "audio/ogg"),
    (lambda d: d.startswith(b"fLaC"), "audio/flac"),
    (lambda d: d.startswith(b"ID3") or d[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"), "audio/mpeg"),
    (lambda d: d.startswith(b"\x1a\x45\xdf\xa3"), "video/webm"),
    (lambda d: d.startswith(b"%PDF-"), "application/pdf"),
)


def sniff(data: bytes) -> str | None:
    """The allow-listed type these bytes are, or None (not one we serve inline)."""
    mp4 = _mp4(data)
    if mp4 is not None:
        return mp4
    for test, mime in _RULES:
        if test(data):
            return mime
    return None


def served_type(data: bytes) -> tuple[str, bool]:
    """(Content-Type, as an attachment?) for serving these bytes from the dashboard's origin. Whatever type a
    client or an archive claimed is ignored: only the bytes decide."""
    mime = sniff(data)
    return (ATTACHMENT, True) if mime is None else (mime, False)
