"""Access control: optional token (required off loopback), login cookie, Origin and CSRF checks for HTTP and websockets."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlencode, urlsplit

from flask import Blueprint, Request, Response, current_app, g, redirect, request
from werkzeug.wrappers import Response as BaseResponse

from ..sharing.tokens import PREFIX as SHARE_PREFIX
from ..sharing.tokens import Grant, Resolver
from .url_names import names_arg

COOKIE = "paneboard_token"
VISDOM_COOKIE = "user_password"  # what the stock visdom client keeps after its login and sends on its socket
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(host_header: str) -> str:
    """The name part of a Host header ("[::1]:8097" -> "::1", "Example.org.:80" -> "example.org")."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def host_allowed(host_header: str | None, allowed: frozenset[str] = frozenset()) -> bool:
    """Without a token, only a loopback name or an --allowed-host may be asked for.

    DNS rebinding: a web page can point its own name at 127.0.0.1 and then talk to this server as a
    same-origin site (its Origin matches its Host). Browsers always send the name they resolved, so a
    request for any other name is refused. No Host at all cannot come from a browser.
    """
    if host_header is None:
        return True
    name = host_name(host_header)
    return is_loopback(name) or name.endswith(".localhost") or name in allowed


def host_refusal(host_header: str | None) -> str:
    return (f"Host {host_header!r} refused: this server has no token, so it only answers requests for localhost, "
            "127.0.0.1 or [::1] (a guard against DNS rebinding); start it with --allowed-host NAME to serve "
            "another name, or with --token")


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _token_ok(given: str | None, token: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), token.encode())


def _bearer(header: str | None) -> str | None:
    if header and header.lower().startswith("bearer "):
        return header[7:].strip()
    return None


def _same_origin(origin: str | None, host: str | None) -> bool:
    """A browser's Origin must name this server (the Host it asked for); non-browsers send no Origin."""
    if not origin:
        return True
    if origin == "null" or not host:
        return False
    return urlsplit(origin).netloc.lower() == host.lower()


def _from_embed(req: Request) -> bool:
    """A request the embed page made (framed by any origin, it must never write: no layout saves, no Visdom
    events). Browsers send a same-origin page's full URL as Referer under our Referrer-Policy: same-origin."""
    referer = req.headers.get("Referer")
    if not referer:
        return False
    parts = urlsplit(referer)
    return parts.netloc.lower() == req.host.lower() and parts.path.startswith(req.script_root + "/embed/")


def _login_redirect(req: Request, value: str, max_age: int | None) -> Response:
    """One login through ?token=, then an HttpOnly cookie; the token leaves the address bar."""
    rest = {k: v for k, v in req.args.items(multi=True) if k != "token"}
    target = req.script_root + req.path + (("?" + urlencode(rest)) if rest else "")
    resp = redirect(target or "/", code=303)
    set_login_cookie(resp, req, value, max_age)
    return resp


def set_login_cookie(resp: BaseResponse, req: Request, value: str, max_age: int | None) -> None:
    resp.set_cookie(COOKIE, value, httponly=True, samesite="Strict", path=req.script_root or "/",
                    secure=req.scheme == "https", max_age=max_age)


def check_http(req: Request, token: str | None, shares: Resolver | None = None) -> Response | None:
    """None to let the request through, else the response that refuses it.

    A share token (by ?token=, /share/<token>, cookie or bearer) makes the request read-only and limited to the
    token's envs (flask.g.share); it works with or without an admin token.
    """
    from .common import json_response

    if req.method in UNSAFE and _from_embed(req):
        return json_response({"error": "the embed page is read-only: writes are refused"}, 403)
    query = req.args.get("token") if req.method == "GET" else None
    if shares is not None and query and query.startswith(SHARE_PREFIX):
        if shares.resolve(query) is None:
            return json_response({"error": "unknown or revoked share token"}, 401)
        return _login_redirect(req, query, None)  # a session cookie: a shared browser forgets it when closed
    bearer, cookie = _bearer(req.headers.get("Authorization")), req.cookies.get(COOKIE)
    cookie_auth = False
    if token and _token_ok(bearer, token):
        pass
    elif token and (_token_ok(cookie, token) or _token_ok(req.cookies.get(VISDOM_COOKIE), token)):
        cookie_auth = True
    elif shares is not None and (share := bearer or cookie) and share.startswith(SHARE_PREFIX):
        grant = shares.resolve(share)
        if grant is None:
            if req.path.startswith("/share/"):
                return None  # /share/leave forgets a revoked token's cookie
            from .pages import not_shared_page

            return not_shared_page(revoked=True) or json_response({"error": "unknown or revoked share token"}, 401)
        return check_shared(req, grant)
    elif token:
        if req.method == "POST" and req.path == "/" and current_app.config.get("PANEBOARD_LOGIN"):
            return None  # the Visdom login itself (checked by visdom_login below)
        if req.method == "GET" and _token_ok(query, token):
            return _login_redirect(req, token, 30 * 86400)
        if req.method == "GET" and req.path.startswith("/share/"):
            return None  # the share link itself: checked by its view
        return json_response({"error": "authentication required: open the URL printed by dash-server "
                              "(?token=...), or send Authorization: Bearer <token>"}, 401)
    else:
        cookie_auth = True  # no token: a browser on this machine is the only caller; still guard CSRF
    if req.method in UNSAFE and cookie_auth and not _same_origin(req.headers.get("Origin"), req.host):
        return json_response({"error": "cross-site request refused (Origin does not match this server)"}, 403)
    return None


ENV_ARGS = ("env", "name")  # route arguments that name an env (/api/v1/envs/<env>/..., /env/<name>, /embed/<name>)


def check_shared(req: Request, grant: Grant) -> Response | None:
    """A read-only visitor: every write refused (403), every env outside the token's list not found (404)."""
    from .common import json_response

    g.share = grant
    if req.method in UNSAFE:
        return json_response({"error": "read-only share link: writes are refused"}, 403)
    if req.path.startswith("/api/v1/tokens"):
        return json_response({"error": "read-only share link: token management needs the admin token"}, 403)
    names = [str(v) for k, v in (req.view_args or {}).items() if k in ENV_ARGS]
    for key in ("envs", "env"):
        names += names_arg(req, key) or []
    for name in names:
        if grant.sees(name):
            continue
        # /embed/<env>/<win>: the env is a prefix of the name. Whether the whole name is another (hidden) env is
        # not asked: the answer would tell a hidden env from a missing one. embed_page resolves it as a visitor.
        env = name.rpartition("/")[0]
        if env and grant.sees(env) and req.path.startswith("/embed/"):
            continue
        from .pages import not_shared_page  # a reader's browser gets a page saying so, not the API's JSON

        return not_shared_page() or json_response({"error": f"env {name!r} not found"}, 404)
    return None


def check_websocket(scope: dict, token: str | None, shares: Resolver | None = None) -> tuple[bool, Grant | None]:
    """Websockets: the Origin must be ours (browsers), and a token must come by header, cookie or query.

    (allowed, share grant): a share token's socket may only read (/ws) the envs it lists.
    """
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    if not _same_origin(headers.get("origin"), headers.get("host")):
        return False, None
    cookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except Exception:
        pass
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    given = [_bearer(headers.get("authorization"))]
    given += [cookie[name].value for name in (COOKIE, VISDOM_COOKIE) if name in cookie]
    given.append((query.get("token") or [None])[0])
    if token and any(_token_ok(v, token) for v in given):
        return True, None
    for value in given:
        if shares is not None and value and value.startswith(SHARE_PREFIX):
            grant = shares.resolve(value)
            return grant is not None, grant
    return not token, None


LOGIN_BODY_LIMIT = 64 << 10  # the Visdom login form, the one body a caller without credentials may send


def body_refusal(scope: dict, token: str | None, login: bool) -> tuple[int, str] | None:
    """Checked on the event loop before any request body is read, so that an unauthenticated caller cannot make
    the server buffer bodies: (status, message) to refuse with, or None to read the body (check_http then
    decides as usual). A share token may never write, so its bodies are refused here too."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    cookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except Exception:
        pass
    given = [_bearer(headers.get("authorization"))] + [cookie[n].value for n in (COOKIE, VISDOM_COOKIE) if n in cookie]
    if token and any(_token_ok(v, token) for v in given):
        return None
    if any(v and v.startswith(SHARE_PREFIX) for v in given):
        return 403, "read-only share link: writes are refused"
    if not token or (login and scope.get("method") == "POST" and scope.get("path") == "/"):
        return None
    return 401, ("authentication required: open the URL printed by dash-server (?token=...), or send "
                 "Authorization: Bearer <token>")


bp = Blueprint("auth", __name__)


def password_digest(password: str) -> str:
    """What the visdom client sends for a password: sha256 hex of it."""
    return hashlib.sha256(password.encode()).hexdigest()


@bp.post("/")
def visdom_login() -> Response:
    """Visdom's login (`visdom.Visdom(username=..., password=...)`): POST / {username, password: sha256hex}."""
    from .common import json_response

    login = current_app.config.get("PANEBOARD_LOGIN")
    token = current_app.config.get("PANEBOARD_TOKEN")
    if not login or not token:
        return json_response({"error": "this server has no username/password login (see --username)"}, 404)
    body = request.get_json(force=True, silent=True)
    body = body if isinstance(body, dict) else {}
    user, digest = body.get("username"), body.get("password")
    expected_user, expected_digest = login
    # Compared as UTF-8 bytes: compare_digest refuses str with non-ASCII characters.
    if not (isinstance(user, str) and isinstance(digest, str)
            and hmac.compare_digest(user.encode("utf-8", "surrogatepass"), expected_user.encode())
            and hmac.compare_digest(digest.lower().encode("utf-8", "surrogatepass"), expected_digest.encode())):
        return json_response({"error": "wrong username or password"}, 401)
    resp = json_response({"ok": True})
    for name in (COOKIE, VISDOM_COOKIE):
        resp.set_cookie(name, token, httponly=True, samesite="Strict", path=request.script_root or "/",
                        secure=request.scheme == "https", max_age=30 * 86400)
    return resp
