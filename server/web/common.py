"""Helpers shared by the blueprints: JSON responses, errors, access to the server's services."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, g, request

from .. import jsonio
from ..services import Services


class ApiError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra  # more fields of the error body (a query error's position)


def services() -> Services:
    return current_app.extensions["paneboard"]


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(jsonio.dumps_answer(obj), status=status, mimetype="application/json")


def env_visible(name: str) -> bool:
    """False for an env outside a share token's list (auth.check_shared sets flask.g.share)."""
    grant = g.get("share")
    return grant is None or grant.sees(name)


def share_limit() -> frozenset[str] | None:
    """The envs a share token limits the caller to; None for the admin or a token that reads every env. What
    is not an env's (a blob, an artifact file) is readable only through one of these."""
    grant = g.get("share")
    return None if grant is None else grant.envs


def int_arg(name: str, default: int | None, low: int, high: int) -> int | None:
    """The query argument `name` as an integer in [low, high] (default when absent); a 400 naming it otherwise."""
    raw = request.args.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name} must be an integer") from None
    if not low <= value <= high:
        raise ApiError(400, f"{name} must be between {low} and {high}")
    return value


def header_arg(name: str) -> str | None:
    """A query argument that becomes part of a response header (a download's file name): a 400 for control
    characters (CR/LF would split the header; werkzeug refuses them with a 500)."""
    raw = request.args.get(name)
    if raw is not None and any(ord(c) < 32 or 127 <= ord(c) < 160 for c in raw):
        raise ApiError(400, f"{name} must not hold control characters (CR, LF, NUL ...)")
    return raw
