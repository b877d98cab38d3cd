"""OpenAPI 3 description of the public JSON API, served at /api/v1/openapi.json (and fuzzed by the tests)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from .. import __version__
from .common import json_response

bp = Blueprint("openapi", __name__)

_ERROR = {"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
_JSON = {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}
_ENV = {"name": "env", "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
_WIN = {"name": "win", "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
_POINTS = {"name": "points", "in": "query", "required": False,
           "description": "point budget per trace (min/max per x bucket, first and last point kept)",
           "schema": {"type": "integer", "minimum": 1, "maximum": 200000}}


def _op(summary: str, params: list[dict] | None = None, ok: dict | None = None, body: dict | None = None,
        errors: tuple[str, ...] = ("400", "404")) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "parameters": params or [],
                          "responses": {"200": ok or _JSON, **{code: _ERROR for code in errors}}}
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    return op


def spec() -> dict[str, Any]:
    event = {"type": "object", "required": ["op"], "properties": {
        "op": {"type": "string", "enum": ["set", "update", "close", "delete_env"]},
        "env": {"type": "string"}, "win": {"type": ["string", "null"]},
        "kind": {"type": "string"}, "mode": {"type": "string"}, "name": {"type": ["string", "null"]},
        "opts": {"type": "object"}, "s": {"type": "integer", "minimum": 0}, "t": {"type": "number"},
        "traces": {"type": "array", "items": {"type": "object"}}, "content": {"type": "string"},
        "image": {"type": "object"}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "paneboard API", "version": __version__,
                 "description": "Envs, panes and their series; every read of a series takes a point budget."},
        "paths": {
            "/api/v1/envs": {"get": _op("List envs with pane and point counts", errors=("400",))},
            "/api/v1/envs/{env}": {
                "get": _op("One env and its pane summaries", [_ENV]),
                "delete": _op("Delete an env and everything in it", [_ENV]),
            },
            "/api/v1/envs/{env}/panes": {"get": _op("Every pane of an env, rendered", [_ENV, _POINTS])},
            "/api/v1/envs/{env}/panes/{win}": {
                "get": _op("One pane, at most about `points` points per trace in [x0, x1]", [
                    _ENV, _WIN, _POINTS,
                    {"name": "x0", "in": "query", "required": False, "schema": {"type": "number"}},
                    {"name": "x1", "in": "query", "required": False, "schema": {"type": "number"}},
                    {"name": "walls", "in": "query", "required": False, "schema": {"type": "string", "enum": ["1"]},
                     "description": "x/y panes: the wall time of every returned point"},
                    {"name": "steps", "in": "query", "required": False,
                     "schema": {"type": "integer", "minimum": 1, "maximum": 2000},
                     "description": "histogram panes: records with buckets (default 51)"}]),
                "delete": _op("Close a pane", [_ENV, _WIN]),
            },
            "/api/v1/envs/{env}/panes/{win}/export": {"get": _op("Every stored point of a pane", [
                _ENV, _WIN, {"name": "format", "in": "query", "required": False,
                             "schema": {"type": "string", "enum": ["csv", "json"]}}], ok={
                "description": "csv (trace,x,y,wall) or json", "content": {
                    "text/csv": {"schema": {"type": "string"}}, "application/json": {"schema": {"type": "object"}}}})},
            "/api/v1/envs/{env}/panes/{win}/steps": {"get": _op(
                "Records of a stepped pane (histogram, media, pr_curve): indices [i0, i1) (100 at most) or ?step=", [
                    _ENV, _WIN, {"name": "i0", "in": "query", "required": False, "schema": {"type": "integer"}},
                    {"name": "i1", "in": "query", "required": False, "schema": {"type": "integer"}},
                    {"name": "step", "in": "query", "required": False, "schema": {"type": "number"}}])},
            "/api/v1/hparams": {"get": _op("HParams sessions across envs (every env with hparams when envs is absent)", [
                {"name": "envs", "in": "query", "required": False, "schema": {"type": "string"},
                 "description": "comma-separated env names"}])},
            "/api/v1/compare": {"get": _op("x/y panes of several envs grouped by title, traces labelled by env", [
                {"name": "envs", "in": "query", "required": True, "schema": {"type": "string"},
                 "description": "comma-separated env names"}, _POINTS,
                {"name": "walls", "in": "query", "required": False, "schema": {"type": "string", "enum": ["1"]}}])},
            "/api/v1/blobs/{sha256}": {"get": _op("Content-addressed bytes (images)", [
                {"name": "sha256", "in": "path", "required": True, "schema": {"type": "string"}}], ok={
                "description": "the bytes", "content": {"image/png": {"schema": {"type": "string",
                                                                                   "format": "binary"}}}})},
            "/api/v1/events": {"post": _op("Apply producer events (docs/WIRE.md); answers after commit", body={
                "type": "object", "required": ["events"],
                "properties": {"events": {"type": "array", "items": event}}}, errors=("400", "413"))},
        },
        "components": {"schemas": {"Error": {"type": "object", "required": ["error"],
                                             "properties": {"error": {"type": "string"}}}}},
    }


@bp.get("/api/v1/openapi.json")
def openapi_json() -> Response:
    return json_response(spec())
