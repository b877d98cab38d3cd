"""Share links and their tokens: /share/<token> opens a read-only view; the admin creates and revokes tokens."""

from __future__ import annotations

from urllib.parse import quote

from flask import Blueprint, Response, redirect, request
from werkzeug.wrappers import Response as Redirect

from ..commands.envelope import EventError
from ..sharing import tokens
from .auth import COOKIE, set_login_cookie
from .common import ApiError, json_response, services
from .pages import not_shared_page

bp = Blueprint("share_api", __name__)

TOKEN_FIELDS = {"envs", "name"}


def _resolver() -> tokens.Resolver:
    shares = services().shares
    assert shares is not None  # Services.open always makes one
    return shares


@bp.get("/share/leave")
def leave_share() -> Redirect:
    """Forget this browser's share token (its cookie) and go to the env list."""
    resp = redirect(request.script_root + "/", code=303)
    resp.delete_cookie(COOKIE, path=request.script_root or "/")
    return resp


@bp.get("/share/<token>")
def open_share(token: str) -> Redirect | Response:
    """A share link: remember the token in a session cookie, then open its env (one) or the env list."""
    grant = _resolver().resolve(token)
    if grant is None:
        page = not_shared_page(revoked=True)  # a browser: a page saying so
        if page is not None:
            return page
        raise ApiError(404, "unknown or revoked share link")
    base = request.script_root + "/"
    target = base + "env/" + quote(next(iter(grant.envs)), safe="") if grant.envs and len(grant.envs) == 1 else base
    resp = redirect(target, code=303)
    set_login_cookie(resp, request, token, None)
    return resp


@bp.post("/api/v1/tokens")
def create_token() -> Response:
    """Create a read-only share token for every env (envs null or absent) or the listed ones; shown once."""
    from .envs_api import _body

    body = _body()
    unknown = set(body) - TOKEN_FIELDS
    if unknown:
        raise ApiError(400, f"unknown fields: {', '.join(sorted(unknown))} (known: envs, name)")
    envs = body.get("envs")
    if envs is not None and not isinstance(envs, list):
        raise ApiError(400, "envs must be a list of env names or null (every env)")
    try:
        token, record = tokens.create(services().store, envs, body.get("name", ""))
    except EventError as exc:
        raise ApiError(400, str(exc)) from None
    return json_response({**record.to_json(), "token": token,
                          "url": request.host_url.rstrip("/") + request.script_root + "/share/" + token}, 201)


@bp.get("/api/v1/tokens")
def list_tokens() -> Response:
    """Every share token (ids, names, envs; never the tokens themselves)."""
    return json_response({"tokens": [t.to_json() for t in services().store.list_share_tokens()]})


@bp.delete("/api/v1/tokens/<int:token_id>")
def revoke_token(token_id: int) -> Response:
    """Revoke a share token: its links and open websockets stop at once here and on the other servers of the database."""
    if not services().store.delete_share_token(token_id):
        raise ApiError(404, f"no share token {token_id}")
    _resolver().revoked(token_id)  # its open live sockets are closed too, not left streaming
    peers = services().peers
    if peers is not None:  # and those held by the other servers of this PostgreSQL database
        peers.revoked(token_id)
    return json_response({"ok": True})
