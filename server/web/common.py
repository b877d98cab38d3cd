"""Helpers shared by the blueprints: JSON responses, errors, access to the server's services."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, g

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
