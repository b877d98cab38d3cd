"""Assembly: create_app (Flask pages + API) and create_asgi (one port: websockets + Flask via a2wsgi)."""

from __future__ import annotations

import asyncio
import logging

from a2wsgi import WSGIMiddleware
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from . import STATIC_DIR, TEMPLATES_DIR, jsonio
from .services import Services
from .settings import Settings
from .visdom.http import bp as visdom_bp
from .visdom.socket import bp as visdom_socket_bp
from .visdom.socket import vis_socket
from .web import (
    alerts_api,
    api,
    archive_api,
    artifacts_api,
    auth,
    blob_stream,
    body,
    charts_api,
    console_api,
    data_api,
    envs_api,
    groups_api,
    hparams_api,
    import_api,
    media_compare_api,
    object3d_api,
    openapi,
    pages,
    projector_api,
    runs_api,
    scope_api,
    share_api,
    snapshot_api,
    sockets,
    static_assets,
    sweeps_api,
    url_names,
)
from .web.common import ApiError, json_response
from .web.routing import SharedRulesFlask

log = logging.getLogger("paneboard.server")

CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
       "media-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'self'")


def create_app(settings: Settings, services: Services | None = None) -> Flask:
    """The Flask app. Without `services` it opens its own (the caller starts and stops them)."""
    app = SharedRulesFlask("paneboard.server", static_folder=str(STATIC_DIR), static_url_path="/static",
                           template_folder=str(TEMPLATES_DIR))
    url_names.install(app)  # before the blueprints: their rules bind the name converters
    app.extensions["paneboard"] = svc = services or Services.open(settings)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_request_bytes  # bigger bodies get a 413 JSON error
    app.config["PANEBOARD_TOKEN"] = settings.token
    if settings.username and settings.password:
        app.config["PANEBOARD_LOGIN"] = (settings.username, auth.password_digest(settings.password))
    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(visdom_bp)  # Visdom wire protocol: /events, /update, /win_data ...
    app.register_blueprint(visdom_socket_bp)
    app.register_blueprint(envs_api.bp)
    app.register_blueprint(runs_api.bp)
    app.register_blueprint(console_api.bp)  # a run's console lines
    app.register_blueprint(alerts_api.bp)  # alert rules for the --notify receivers
    app.register_blueprint(hparams_api.bp)
    app.register_blueprint(scope_api.bp)  # the runs a page names (?q=, ?sel=, ?envs=) and saved selections
    app.register_blueprint(projector_api.bp)  # projector panes: projections, neighbours, metadata
    app.register_blueprint(charts_api.bp)  # one budgeted, columnar read per chart of many runs
    app.register_blueprint(media_compare_api.bp)  # one image tag of up to 16 runs at one step
    app.register_blueprint(object3d_api.bp)  # a point cloud's points, thinned to a budget
    app.register_blueprint(groups_api.bp)  # seed groups: mean ± band per config, A-vs-B tests
    app.register_blueprint(share_api.bp)  # share links and read-only tokens
    app.register_blueprint(snapshot_api.bp)  # one-file HTML snapshots of an env or a compare view
    app.register_blueprint(archive_api.bp)  # env archives: move runs between servers
    app.register_blueprint(artifacts_api.bp)  # artifact versions, lineage, blob uploads; rewinds
    app.register_blueprint(data_api.bp)  # runs.parquet and the bulk history stream (paneboard.Api)
    app.register_blueprint(import_api.bp)  # dash-server import --server: stored counts, binary frames
    app.register_blueprint(sweeps_api.bp)  # sweeps: W&B sweep files, Optuna's suggestions, the agents' calls
    app.register_blueprint(openapi.bp)
    app.register_blueprint(static_assets.bp)  # the UI's scripts under a fingerprint, cached until they change
    app.register_blueprint(auth.bp)

    @app.before_request
    def _access() -> Response | None:
        return auth.check_http(request, settings.token, svc.shares)

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> Response:
        log.warning("%s %s -> %d: %s", request.method, request.path, exc.status, exc.message)
        return json_response({"error": exc.message, **exc.extra}, exc.status)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Response:
        page = pages.not_found_page() if exc.code == 404 else None
        if page is not None:
            return page
        return json_response({"error": exc.description or exc.name}, exc.code or 500)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return json_response({"error": f"internal error: {type(exc).__name__}"}, 500)

    @app.after_request
    def _headers(resp: Response) -> Response:
        resp.headers.setdefault("Content-Security-Policy", CSP)
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "same-origin")
        return resp

    return app


def create_asgi(settings: Settings) -> AsgiApp:
    services = Services.open(settings)
    return AsgiApp(settings, services, create_app(settings, services))


def _header(scope: dict, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


class AsgiApp:
    """Routes websocket scopes to our endpoints and every HTTP request to Flask (a2wsgi thread pool)."""

    def __init__(self, settings: Settings, services: Services, flask_app: Flask) -> None:
        self.settings = settings
        self.services = services
        self.flask_app = flask_app
        self.wsgi = WSGIMiddleware(flask_app, workers=16)
        self.prefix = settings.base_url.rstrip("/")
        self.ws_routes = {"/ingest": sockets.ingest, "/ws": sockets.live, "/vis_socket": vis_socket}
        self.allowed_hosts = frozenset(settings.allowed_hosts)

    async def __call__(self, scope, receive, send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if not self.settings.token and kind in ("http", "websocket"):
            host = _header(scope, b"host")
            if not auth.host_allowed(host, self.allowed_hosts):
                log.warning("refused %s for Host %r (no token: loopback names and --allowed-host only)", kind, host)
                await self._refuse_host(kind, host, send)
                return
        path = scope.get("path", "")
        if self.prefix:
            if path != self.prefix and not path.startswith(self.prefix + "/"):
                await self._not_found(kind, send)
                return
            path = path[len(self.prefix):] or "/"
            scope = {**scope, "path": path, "root_path": scope.get("root_path", "") + self.prefix}
        if kind == "websocket":
            handler = self.ws_routes.get(path)
            if handler is None:
                await send({"type": "websocket.close", "code": 4404})
                return
            allowed, share = auth.check_websocket(scope, self.settings.token, self.services.shares)
            if not allowed or (share is not None and path != "/ws"):  # a share token may only read (/ws)
                await send({"type": "websocket.close", "code": 4403})  # refused before the handshake: 403
                return
            if share is not None:
                scope = {**scope, "paneboard.share": share}
            await handler(sockets.WebSocket(scope, receive, send), self.services)
            return
        if (sha := blob_stream.is_upload(scope, path)) is not None:
            await self._upload(scope, receive, send, sha)
            return
        if scope.get("method") in ("POST", "PUT", "PATCH", "DELETE"):
            login = bool(self.settings.username and self.settings.password)
            refusal = auth.body_refusal(scope, self.settings.token, login)
            try:
                if refusal is not None:  # before any byte of the body is read (or buffered)
                    raise body.BodyError(*refusal)
                limit = self.settings.max_request_bytes
                if self.settings.token and login and path == "/" and \
                        auth.body_refusal(scope, self.settings.token, False) is not None:
                    limit = auth.LOGIN_BODY_LIMIT  # no credentials yet: only the login form
                data = await body.read_body(receive, limit, self.settings.body_deadline_s)
            except body.BodyError as exc:
                log.warning("%s %s -> %d: %s", scope.get("method"), path, exc.status, exc.message)
                await body.refuse(send, exc)
                return
            scope, receive = body.with_length(scope, len(data)), body.replay(data, receive)
            del data  # replay() holds the body until the WSGI side has taken it, and no longer
        await self.wsgi(scope, receive, send)

    async def _upload(self, scope, receive, send, sha: str) -> None:
        """An artifact blob streamed in (web/blob_stream.py), after the checks any write gets."""
        refusal = auth.body_refusal(scope, self.settings.token, False)
        if refusal is not None:
            await body.refuse(send, body.BodyError(*refusal))
            return
        denied = blob_stream.access_refusal(self.flask_app, scope, self.settings.token, self.services.shares)
        if denied is not None:
            await blob_stream.send_flask(send, denied)
            return
        await blob_stream.handle(scope, receive, send, sha, self.services.blobs, self.settings.body_deadline_s)

    async def _refuse_host(self, kind: str, host: str | None, send) -> None:
        if kind == "websocket":
            await send({"type": "websocket.close", "code": 4400})  # before the handshake: HTTP 403
            return
        body = jsonio.dumps({"error": auth.host_refusal(host)})
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})

    async def _not_found(self, kind: str, send) -> None:
        if kind == "websocket":
            await send({"type": "websocket.close", "code": 4404})
            return
        body = b'{"error": "not found (this server lives under its --base-url)"}'
        await send({"type": "http.response.start", "status": 404,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    async def _lifespan(self, receive, send) -> None:
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                self.services.hub.attach(asyncio.get_running_loop())
                self.services.start()
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await asyncio.get_running_loop().run_in_executor(None, self.services.stop)
                await send({"type": "lifespan.shutdown.complete"})
                return

