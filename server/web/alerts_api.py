"""Alert rules: threshold rules in the runs query language that notify the --notify receivers (notify/)."""

from __future__ import annotations

import math
import time
from typing import Any

from flask import Blueprint, Response, g

from ..runs.query import MAX_QUERY, QueryError, compile_query
from .common import ApiError, json_response, services
from .envs_api import _body

bp = Blueprint("alerts_api", __name__, url_prefix="/api/v1")
DEFAULT_COOLDOWN_S = 3600.0
MAX_RULES = 1000


@bp.before_request
def _admin_only() -> None:
    """Rules are the admin's: their queries name metrics and thresholds, their history the envs each fired for
    (any env, not only a share token's), so a share link reads none of it."""
    if g.get("share") is not None:
        raise ApiError(403, "read-only share link: alert rules need the admin token")


def _query(body: dict[str, Any], key: str, required: bool) -> str:
    value = body.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > MAX_QUERY:
        raise ApiError(400, f"{key} must be a {'non-empty ' if required else ''}run query of at most {MAX_QUERY} "
                            f'characters, e.g. "loss.last > 5" or "val/acc.max < 0.5 and status:running"')
    try:
        compile_query(value)
    except QueryError as exc:
        raise ApiError(400, f"{key}: {exc}", position=exc.position) from None
    return value.strip()


@bp.post("/alert-rules")
def add_rule() -> Response:
    """{"query", "scope" (a run query the rule is limited to), "cooldown_s" (default 3600), "name"} -> 201."""
    body = _body()
    unknown = set(body) - {"query", "scope", "cooldown_s", "name"}
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(sorted(unknown))}; expected query, scope, cooldown_s, name")
    query, scope = _query(body, "query", True), _query(body, "scope", False)
    cooldown = body.get("cooldown_s", DEFAULT_COOLDOWN_S)
    if isinstance(cooldown, bool) or not isinstance(cooldown, (int, float)) or not math.isfinite(cooldown) \
            or not 0 <= cooldown <= 365 * 86400:
        raise ApiError(400, "cooldown_s must be a number of seconds from 0 to one year")
    name = body.get("name", "")
    if not isinstance(name, str) or len(name) > 200:
        raise ApiError(400, "name must be a string of at most 200 characters")
    store = services().store
    if len(store.list_alert_rules()) >= MAX_RULES:
        raise ApiError(409, f"at most {MAX_RULES} alert rules")
    rule = store.add_alert_rule(name, query, scope, float(cooldown), time.time())
    receivers = len(services().settings.notify)
    return json_response({"rule": rule.to_json(), "receivers": receivers}, 201)


@bp.get("/alert-rules")
def list_rules() -> Response:
    return json_response({"rules": [r.to_json() for r in services().store.list_alert_rules()],
                          "receivers": len(services().settings.notify)})


@bp.delete("/alert-rules/<int:rule_id>")
def delete_rule(rule_id: int) -> Response:
    if not services().store.delete_alert_rule(rule_id):
        raise ApiError(404, f"alert rule {rule_id} not found")
    return json_response({"ok": True})
