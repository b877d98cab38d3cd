"""Access control: optional token (required off loopback), login cookie, Origin and CSRF checks for HTTP and websockets."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlencode, urlsplit

from flask import Blueprint, Request, Response, current_app, redirect, request

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


def check_http(req: Request, token: str | None) -> Response | None:
    """None to let the request through, else the response that refuses it."""
    from .common import json_response

    cookie_auth = False
    if token:
        if _token_ok(_bearer(req.headers.get("Authorization")), token):
            pass
        elif _token_ok(req.cookies.get(COOKIE), token) or _token_ok(req.cookies.get(VISDOM_COOKIE), token):
            cookie_auth = True
        elif req.method == "POST" and req.path == "/" and current_app.config.get("PANEBOARD_LOGIN"):
            return None  # the Visdom login itself (checked by visdom_login below)
        elif req.method == "GET" and _token_ok(req.args.get("token"), token):
            # One login through ?token=, then an HttpOnly cookie; the token leaves the address bar.
            rest = {k: v for k, v in req.args.items(multi=True) if k != "token"}
            target = req.script_root + req.path + (("?" + urlencode(rest)) if rest else "")
            resp = redirect(target or "/", code=303)
            resp.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path=req.script_root or "/",
                            secure=req.scheme == "https", max_age=30 * 86400)
            return resp
        else:
            return json_response({"error": "authentication required: open the URL printed by dash-server "
                                  "(?token=...), or send Authorization: Bearer <token>"}, 401)
    else:
        cookie_auth = True  # no token: a browser on this machine is the only caller; still guard CSRF
    if req.method in UNSAFE and cookie_auth and not _same_origin(req.headers.get("Origin"), req.host):
        return json_response({"error": "cross-site request refused (Origin does not match this server)"}, 403)
    return None


def check_websocket(scope: dict, token: str | None) -> bool:
    """Websockets: the Origin must be ours (browsers), and the token must come by header, cookie or query."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    if not _same_origin(headers.get("origin"), headers.get("host")):
        return False
    if not token:
        return True
    if _token_ok(_bearer(headers.get("authorization")), token):
        return True
    cookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except Exception:
        pass
    for name in (COOKIE, VISDOM_COOKIE):
        if name in cookie and _token_ok(cookie[name].value, token):
            return True
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return _token_ok((query.get("token") or [None])[0], token)


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
