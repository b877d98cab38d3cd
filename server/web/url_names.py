"""Names in URLs: an encoded "/" or "%" in a path segment stays part of the env or pane name it belongs to.

A WSGI server decodes the whole path before routing, so `/api/v1/envs/%2Fabs%2Frun` reaches Flask as
`/api/v1/envs//abs/run` (merged and redirected by werkzeug) and `a%2Fpanes%2Fb` as `a/panes/b` (another route).
Routing on the request's raw path with only "%2F" and "%25" left encoded makes every name that the UI encodes
with encodeURIComponent (and `quote(name, safe="")` in Python) reach its route whole; the URL converters decode
the two escapes. Unencoded slashes keep working as before, for links people type.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable
from typing import Any

from flask import Flask, Request
from werkzeug.routing import PathConverter, UnicodeConverter

_KEPT = re.compile(rb"(%2[fF]|%25)")
_KEPT_TEXT = re.compile(r"%2[fF]|%25")
_DECODED = {"%2f": "/", "%25": "%"}


def _raw_path(environ: dict[str, Any]) -> str | None:
    """The request path as the client sent it (still percent-encoded), where the server tells it."""
    scope = environ.get("asgi.scope")  # uvicorn through a2wsgi
    if isinstance(scope, dict) and isinstance(scope.get("raw_path"), bytes):
        return scope["raw_path"].decode("latin-1")
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")  # werkzeug's servers and test client
    return raw.split("?", 1)[0] if isinstance(raw, str) else None


def routing_path(raw: str) -> str:
    """`raw` decoded as a WSGI PATH_INFO (UTF-8 bytes as latin-1), except "%2F" and "%25", which stay encoded."""
    parts = _KEPT.split(raw.encode("latin-1"))
    out = b"".join(p.upper() if i % 2 else urllib.parse.unquote_to_bytes(p) for i, p in enumerate(parts))
    return out.decode("latin-1")


def decode_name(value: str) -> str:
    """A route argument with the two escapes routing kept, decoded ("%252F" is the text "%2F")."""
    return _KEPT_TEXT.sub(lambda m: _DECODED[m.group().lower()], value) if "%" in value else value


class NamePathConverter(PathConverter):
    """`<path:...>` whose value may hold an encoded "/" (a leading one included) or "%"."""

    regex = "[^/].*?"

    def to_python(self, value: str) -> str:
        return decode_name(value)

    def to_url(self, value: str) -> str:
        url = urllib.parse.quote(value, safe="/")
        return "%2F" + url[1:] if url.startswith("/") else url  # "//abs" would be merged: encode the first


class NameConverter(UnicodeConverter):
    """The default `<name>` converter, with the same two escapes decoded."""

    def to_python(self, value: str) -> str:
        return decode_name(value)

    def to_url(self, value: str) -> str:
        return urllib.parse.quote(value, safe="")


def install(app: Flask) -> None:
    """Route `app` on raw paths; call before any blueprint is registered (rules bind their converters then)."""
    app.url_map.converters.update(path=NamePathConverter, default=NameConverter, string=NameConverter)
    inner = app.wsgi_app

    def wsgi_app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        raw = _raw_path(environ)
        if raw is not None and _KEPT_TEXT.search(raw):
            path = routing_path(raw)
            script = environ.get("SCRIPT_NAME", "")
            if path.startswith(script):  # a mount prefix (root_path) is in the raw path, not in PATH_INFO
                environ["PATH_INFO"] = path[len(script):]
        return inner(environ, start_response)

    app.wsgi_app = wsgi_app  # type: ignore[method-assign]


def names_arg(req: Request, key: str) -> list[str] | None:
    """?key=a,b as names; None when the key is absent. A value with a literal "," is split there before decoding,
    so each name encoded on its own (the UI's way; a one-name list ends in ",") keeps an encoded "," (%2C) or edge
    space (%20); a value without one is decoded and then split, as urlencode writes a whole list. Spaces typed
    around the commas are dropped."""
    for part in req.query_string.decode("latin-1").split("&"):
        name, _, value = part.partition("=")
        if urllib.parse.unquote_plus(name) != key:
            continue
        if "," not in value:
            return [n.strip() for n in _decoded(value).split(",") if n.strip()]
        return [n for n in (_decoded(s.strip(" +")) for s in value.split(",")) if n]
    return None


def _decoded(value: str) -> str:
    return urllib.parse.unquote_plus(value.encode("latin-1").decode("utf-8", "replace"))
