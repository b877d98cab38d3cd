"""OpenAPI 3 description of the public JSON API, served at /api/v1/openapi.json (and fuzzed by the tests).

Generated from the app itself: every `/api/...` rule of the Flask url_map becomes a path (its converters
become path parameters, its methods operations) and the event schema lists every producer op of the op table (dispatch/table.py). What a
rule cannot say (summaries, query parameters, bodies, other content types) comes from _DOCUMENTED; a route
without an entry there is still described, from its view's docstring, so a new route is never left out.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, Flask, Response, current_app

from .. import __version__
from ..dispatch.table import PRODUCER_OPS
from .common import json_response

bp = Blueprint("openapi", __name__)

_ERROR = {"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
_JSON = {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}
_POINTS = {"name": "points", "in": "query", "required": False,
           "description": "point budget per trace (min/max per x bucket, first and last point kept)",
           "schema": {"type": "integer", "minimum": 1, "maximum": 200000}}
_ENVS = {"name": "envs", "in": "query", "schema": {"type": "string"}, "description": "comma-separated env names"}
_WALLS = {"name": "walls", "in": "query", "required": False, "schema": {"type": "string", "enum": ["1"]}}


def _query(name: str, schema: dict[str, Any], description: str | None = None, required: bool = False) -> dict:
    param = {"name": name, "in": "query", "required": required, "schema": schema}
    if description:
        param["description"] = description
    return param


def _body(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "required": list(required), "properties": properties}


_LAYOUT = _body({k: {"type": "integer"} for k in ("x", "y", "w", "h")})

# (Flask rule, method) -> what the rule itself cannot tell: summary, query parameters, body, answers.
_DOCUMENTED: dict[tuple[str, str], dict[str, Any]] = {
    ("/api/v1/envs", "GET"): {"summary": "List envs with pane and point counts", "errors": ("400",)},
    ("/api/v1/envs/<path:env>", "GET"): {"summary": "One env and its pane summaries"},
    ("/api/v1/envs/<path:env>", "DELETE"): {"summary": "Delete an env and everything in it"},
    ("/api/v1/envs/<path:env>/panes", "GET"): {"summary": "Every pane of an env, rendered", "params": [_POINTS]},
    ("/api/v1/envs/<path:env>/panes/<path:win>", "GET"): {
        "summary": "One pane, at most about `points` points per trace in [x0, x1]", "params": [
            _POINTS, _query("x0", {"type": "number"}), _query("x1", {"type": "number"}),
            {**_WALLS, "description": "x/y panes: the wall time of every returned point"},
            _query("steps", {"type": "integer", "minimum": 1, "maximum": 2000},
                   "histogram panes: records with buckets (default 51)")]},
    ("/api/v1/envs/<path:env>/panes/<path:win>", "DELETE"): {"summary": "Close a pane"},
    ("/api/v1/envs/<path:env>/panes/<path:win>/export", "GET"): {
        "summary": "Every stored point of a pane",
        "params": [_query("format", {"type": "string", "enum": ["csv", "json"]})],
        "ok": {"description": "csv (trace,x,y,wall) or json", "content": {
            "text/csv": {"schema": {"type": "string"}}, "application/json": {"schema": {"type": "object"}}}}},
    ("/api/v1/envs/<path:env>/panes/<path:win>/steps", "GET"): {
        "summary": "Records of a stepped pane (histogram, media, pr_curve): indices [i0, i1) (100 at most) or ?step=",
        "params": [_query("i0", {"type": "integer"}), _query("i1", {"type": "integer"}),
                   _query("step", {"type": "number"})]},
    ("/api/v1/hparams", "GET"): {
        "summary": "HParams rows across envs (add_hparams sessions, else the run's config; every such env when envs "
                   "is absent), hparam columns with varying/log, metric names, default metric and axes",
        "params": [{**_ENVS, "required": False}, _query("metric", {"type": "string"}, "the metric (default: the first)")]},
    ("/api/v1/hparams/importance", "GET"): {
        "summary": "Correlation and random-forest importance of every varying hparam against a metric",
        "params": [{**_ENVS, "required": False}, _query("metric", {"type": "string"}, "default: the first metric")]},
    ("/api/v1/compare", "GET"): {
        "summary": "x/y panes of several envs grouped by title, traces labelled by env; the point budget is "
                   "shared by every trace (each at most ?points)",
        "params": [{**_ENVS, "required": True}, _POINTS, _query("budget", {"type": "integer"},
                   "points shared by every trace (default 24,000)"), _WALLS]},
    ("/api/v1/charts", "GET"): {
        "summary": "The line/scatter charts of the picked runs (every visible run when envs is absent), no data: "
                   "by title (Scalars) or by (win, title) (Compare)",
        "params": [{**_ENVS, "required": False}, _query("by", {"type": "string", "enum": ["title", "win"]})]},
    ("/api/v1/compare/images", "GET"): {
        "summary": "One image tag of up to 16 runs: the runs' image tags, and per run its distinct steps, the step it "
                   "shows (its last step at or before ?step, else its first) and the pictures with overlays there",
        "params": [{**_ENVS, "required": True}, _query("tag", {"type": "string"}, "default: the first image tag"),
                   _query("step", {"type": "number"}, "the slider's step (default: each run's newest)")]},
    ("/api/v1/envs/<path:env>/panes/<path:win>/points", "GET"): {
        "summary": "One record of a 3D point cloud pane with its points thinned to a budget, as base64 float32 rows",
        "params": [_query("i", {"type": "integer"}, "the record's index (default: the newest)"),
                   _query("budget", {"type": "integer"}, "points at most (default 50,000)")]},
    ("/api/v1/chart", "GET"): {
        "summary": "Every picked run's series of one chart, columnar, downsampled to the chart's width with a "
                   "point budget shared by all series (min/max per bucket kept)",
        "params": [{**_ENVS, "required": False}, _query("title", {"type": "string"}, required=True),
                   _query("win", {"type": "string"}), _query("width", {"type": "integer"}, "chart width in px"),
                   _query("budget", {"type": "integer"}, "points shared by every series"), _WALLS,
                   _query("x0", {"type": "number"}),
                   _query("after", {"type": "string"}, "per env (aligned with envs): only points with x past it")]},
    ("/api/v1/groups", "GET"): {
        "summary": "Run groups: runs grouped by the `by` config keys (or config minus `ignore`), mean or median ± band "
                   "per series on aligned steps, per-group final/best values with 95% CI and Welch's t-test between "
                   "groups; the config keys that vary, for a picker",
        "params": [{**_ENVS, "required": True}, _POINTS,
                   _query("ignore", {"type": "string"}, "config keys left out of the grouping (default seed)"),
                   _query("by", {"type": "string"}, "group by these config keys (comma-separated, dotted for nesting)"),
                   _query("center", {"type": "string", "enum": ["mean", "median"]}),
                   _query("series", {"type": "string", "enum": ["0", "1"]}, "0: the groups alone, no series read"),
                   _query("title", {"type": "string"}, "one chart's series (that title, or its title/trace series)"),
                   _query("band", {"type": "string", "enum": ["std", "minmax", "ci"]}),
                   _query("value", {"type": "string", "enum": ["final", "best"]})]},
    ("/api/v1/tokens", "POST"): {
        "summary": "Create a read-only share token (admin only) for every env (envs null) or the listed envs; "
                   "the answer holds the token and its /share/<token> link, shown once",
        "body": _body({"envs": {"type": "array", "items": {"type": "string"}, "nullable": True},
                       "name": {"type": "string"}}), "ok_codes": ("201",), "errors": ("400", "401", "403")},
    ("/api/v1/tokens", "GET"): {"summary": "Share tokens (ids, names, envs; never the tokens)",
                                "errors": ("401", "403")},
    ("/api/v1/tokens/<int:token_id>", "DELETE"): {
        "summary": "Revoke a share token", "path_schema": {"type": "integer"}, "errors": ("401", "403", "404")},
    ("/api/v1/envs/<path:env>/snapshot.html", "GET"): {
        "summary": "The env as one self-contained HTML file (Plotly and the data inline; opens offline)",
        "params": [_POINTS], "ok": {"description": "an HTML file (attachment)",
                                    "content": {"text/html": {"schema": {"type": "string"}}}}},
    ("/api/v1/compare/snapshot.html", "GET"): {
        "summary": "A compare view (panes with the same win and title overlaid, one colour per env) as one HTML file",
        "params": [{**_ENVS, "required": True}, _POINTS],
        "ok": {"description": "an HTML file (attachment)", "content": {"text/html": {"schema": {"type": "string"}}}}},
    ("/api/v1/archive", "GET"): {
        "summary": "A tar of the envs (meta, panes, every point exactly, step records, blobs) to import elsewhere",
        "params": [{**_ENVS, "required": True}],
        "ok": {"description": "a tar file (attachment)",
               "content": {"application/x-tar": {"schema": {"type": "string", "format": "binary"}}}}},
    ("/api/v1/archive", "POST"): {
        "summary": "Import an env archive (the tar as the body); 409 when an env exists, unless ?replace=1",
        "params": [_query("replace", {"type": "string", "enum": ["0", "1", "true"]})],
        "errors": ("400", "409", "413")},
    ("/api/v1/artifacts/<path:artifact>/compare", "GET"): {
        "summary": "Two versions of an artifact compared: files added, removed or changed (by sha256 and size) and "
                   "metadata keys",
        "params": [_query("a", {"type": "string"}, "vN or an alias", required=True),
                   _query("b", {"type": "string"}, "vN or an alias", required=True)],
        "errors": ("400", "404")},
    ("/api/v1/blobs/<sha256>", "GET"): {
        "summary": "Content-addressed bytes (images)", "path_schema": {"type": "string"},
        "ok": {"description": "the bytes", "content": {"image/png": {"schema": {"type": "string",
                                                                               "format": "binary"}}}}},
    ("/api/v1/events", "POST"): {
        "summary": "Apply producer events (docs/WIRE.md); answers after commit",
        "body": _body({"events": {"type": "array", "items": {"$ref": "#/components/schemas/Event"}}}, ("events",)),
        "errors": ("400", "413")},
    ("/api/v1/envs/<path:env>/fork", "POST"): {
        "summary": "Copy an env under a new name", "body": _body({"to": {"type": "string"}}, ("to",))},
    ("/api/v1/envs/<path:env>/rename", "POST"): {
        "summary": "Rename an env", "body": _body({"to": {"type": "string"}}, ("to",))},
    ("/api/v1/envs/<path:env>/panes/<path:win>/layout", "PUT"): {
        "summary": "Place a pane on the grid ({x, y, w, h}, or {\"layout\": {...}})", "body": _LAYOUT},
    ("/api/v1/envs/<path:env>/meta", "GET"): {"summary": "An env's stored configuration and views"},
    ("/api/v1/envs/<path:env>/meta", "PUT"): {
        "summary": "Replace an env's configuration", "body": _body({"config": {"type": "object"}}, ("config",))},
    ("/api/v1/envs/<path:env>/views", "POST"): {
        "summary": "Save the env's current layout as a named view; `scalars` adds a Scalars view's charts of "
                   "overlaid tags", "body": _body({"name": {"type": "string"}, "scalars": {"type": "object"}},
                                                  ("name",))},
    ("/api/v1/envs/<path:env>/views/<path:view>/load", "POST"): {"summary": "Restore a saved view's layout"},
    ("/api/v1/envs/<path:env>/panes/<path:win>/projection", "GET"): {
        "summary": "Projection of a projector pane; 202 {\"status\": \"computing\"} until it is ready",
        "ok_codes": ("202",), "params": [
            _query("method", {"type": "string", "enum": ["pca", "tsne", "umap"]}),
            _query("dims", {"type": "integer", "enum": [2, 3]}),
            _query("wait", {"type": "number", "minimum": 0}, "seconds to wait for the result"),
            _query("components", {"type": "string"}, "pca: comma-separated component indices"),
            _query("sphereize", {"type": "string", "enum": ["0", "1", "true"]}),
            _query("perplexity", {"type": "number"}), _query("iterations", {"type": "integer"}),
            _query("neighbors", {"type": "integer"}), _query("min_dist", {"type": "number"}),
            _query("epochs", {"type": "integer"})]},
    ("/api/v1/envs/<path:env>/panes/<path:win>/neighbors", "GET"): {
        "summary": "The k nearest points of point i in the original space", "params": [
            _query("i", {"type": "integer", "minimum": 0}, required=True),
            _query("k", {"type": "integer", "minimum": 1}),
            _query("metric", {"type": "string", "enum": ["cosine", "euclidean"]})]},
    ("/api/v1/envs/<path:env>/panes/<path:win>/metadata", "GET"): {
        "summary": "A projector pane's metadata: {header: [column names], rows: [[str, ...] per point]}"},
    ("/api/v1/openapi.json", "GET"): {"summary": "This description", "errors": ()},
    ("/api/v1/runs", "GET"): {
        "summary": "Every run (one per env) with status, tags, config, series summaries and provenance",
        "errors": ("400",), "params": [_query("q", {"type": "string"}, "a run query, e.g. "
                                             "`lr < 0.01 and tags:baseline`, `loss.min < 0.3`; 400 with the "
                                             "error's position when malformed"),
            _query("sort", {"type": "string"}, "a run field, config:<key> or series:<name>.<stat>"),
            _query("order", {"type": "string", "enum": ["asc", "desc"]}),
            _query("offset", {"type": "integer", "minimum": 0}),
            _query("limit", {"type": "integer", "minimum": 0}, "one window of the order; adds envs and columns")]},
    ("/api/v1/runs.parquet", "GET"): {
        "summary": "The runs matching q as one Parquet table (501 when the server lacks pyarrow)",
        "errors": ("400", "501"), "params": [_query("q", {"type": "string"}, "a run query")]},
    ("/api/v1/import/state", "POST"): {
        "summary": "For dash-server import --server: each importing client's stored count (its last sequence "
                   "number) and, per env, whether it exists and which peer run it was imported from",
        "errors": ("400",), "body": _body({"clients": {"type": "array", "items": {"type": "string"}},
                                           "envs": {"type": "array", "items": {"type": "string"}}})},
    ("/api/v1/import/frames", "POST"): {
        "summary": "For dash-server import --server: a binary frame (docs/WIRE.md) stored as one importing "
                   "client, exactly once; answers {ack, last_seq, rejected} once committed",
        "errors": ("400", "503"), "params": [_query("client", {"type": "string"}, "the importing client's id",
                                                     required=True)]},
    ("/api/v1/history", "GET"): {
        "summary": "Series of many runs streamed as NDJSON, one line per block: {env, key, n, step, value, "
                   "wall}, each column base64 of little-endian float64",
        "errors": ("400", "404"), "params": [
            _query("env", {"type": "string"}, "a run (repeatable); or q"),
            _query("q", {"type": "string"}, "a run query"),
            _query("key", {"type": "string"}, "a series name (repeatable; none: every series)"),
            _query("samples", {"type": "integer", "minimum": 4}, "downsample each series to about this many")]},
    ("/api/v1/runs/delete", "POST"): {
        "summary": "Delete the finished/crashed runs matching a query (their envs); dry_run only counts",
        "errors": ("400", "503"), "body": _body({"query": {"type": "string"}, "older_than_days": {"type": "number"},
                                                 "dry_run": {"type": "boolean"}}, ("query",))},
    ("/api/v1/envs/<path:env>/console/ranks", "GET"): {
        "summary": "Every rank of a run that printed: {ranks} (the console's X-Console-Ranks names the first 256)"},
    ("/api/v1/envs/<path:env>/console", "GET"): {
        "summary": "A run's console: JSON lines {n, t, stream, text, rank} of one rank, paged (X-Console-Next)",
        "params": [_query("rank", {"type": "integer", "minimum": 0}), _query("after", {"type": "integer", "minimum": 0},
                                                                               "lines numbered above this"),
                   _query("limit", {"type": "integer", "minimum": 1, "maximum": 10000}),
                   _query("tail", {"type": "integer", "minimum": 0, "maximum": 10000}, "the last N lines instead"),
                   _query("q", {"type": "string"}, "only lines holding this text (any case)"),
                   _query("format", {"type": "string", "enum": ["jsonl", "text"]})],
        "ok": {"description": "JSON lines, or text", "content": {"application/x-ndjson": {"schema": {"type": "string"}},
                                                                 "text/plain": {"schema": {"type": "string"}}}}},
    ("/api/v1/alert-rules", "POST"): {
        "summary": "Add a threshold rule (a run query) notifying the --notify receivers, per run once per cool-down",
        "errors": ("400", "409"), "ok_codes": ("201",),
        "body": _body({"query": {"type": "string"}, "scope": {"type": "string"}, "cooldown_s": {"type": "number"},
                       "name": {"type": "string"}}, ("query",))},
    ("/api/v1/alert-rules", "GET"): {"summary": "The alert rules and how many receivers they notify", "errors": ()},
    ("/api/v1/alert-rules/<int:rule_id>", "DELETE"): {"summary": "Delete an alert rule", "errors": ("404",)},
    ("/api/v1/envs/<path:env>/config", "PUT"): {
        "summary": "Merge into the run's config (replace: true sets it whole)",
        "body": _body({"config": {"type": "object"}, "replace": {"type": "boolean"}}, ("config",))},
    ("/api/v1/envs/<path:env>/tags", "PUT"): {
        "summary": "Set the run's tags, or add/remove some",
        "body": _body({"tags": {"type": "array", "items": {"type": "string"}},
                       "add": {"type": "array", "items": {"type": "string"}},
                       "remove": {"type": "array", "items": {"type": "string"}}})},
    ("/api/v1/envs/<path:env>/notes", "PUT"): {
        "summary": "Replace the run's Markdown notes (shown rendered and sanitized)",
        "body": _body({"notes": {"type": "string"}}, ("notes",))},
    ("/api/v1/envs/<path:env>/best", "PUT"): {
        "summary": "Which way is better for a series (null: inferred from its name)",
        "body": _body({"series": {"type": "string"}, "direction": {"type": "string", "enum": ["min", "max"],
                                                                  "nullable": True}}, ("series",))},
}

# Fields each op reads beyond op/env/win (server/panes and server/envops); described, not required, so the
# fuzzer also sends incomplete events (which must be refused with a 400, never a 500).
_OP_FIELDS: dict[str, str] = {
    "set": "kind, opts, traces/content/image ...", "update": "kind, mode, name, traces or records",
    "close": "win (none: every pane)", "delete_env": "-", "fork_env": "from (the source env)",
    "rename_env": "to", "layout": "win, layout {x, y, w, h}", "save_view": "name, scalars? {overlays: [{title, tags}], smoothing?}", "load_view": "name",
    "set_meta": "meta (object)", "custom_scalars": "layout (TensorBoard custom scalars)",
    "hparams": "session, hparams, metrics, domains",
    "run_start": "client, provenance", "run_end": "client, status, error", "run_config": "config, replace",
    "run_tags": "add, remove or set", "run_note": "note, append", "run_best": "series, direction",
    "console": "rank, lines [[n, t, stream, text, open?]] or columns n, time, stream, text, open",
    "run_import": "status, started, ended, provenance, tags, notes, error",
}


def _event_schema() -> dict[str, Any]:
    return {"type": "object", "required": ["op"],
            "description": "One producer event; fields by op: " + "; ".join(
                f"{op}: {_OP_FIELDS.get(op, 'see docs/WIRE.md')}" for op in PRODUCER_OPS),
            "properties": {
                "op": {"type": "string", "enum": list(PRODUCER_OPS)},
                "env": {"type": "string"}, "win": {"type": "string", "nullable": True},
                "kind": {"type": "string"}, "mode": {"type": "string"}, "name": {"type": "string", "nullable": True},
                "opts": {"type": "object"}, "s": {"type": "integer", "minimum": 0}, "t": {"type": "number"},
                "traces": {"type": "array", "items": {"type": "object"}}, "content": {"type": "string"},
                "image": {"type": "object"}, "records": {"type": "array", "items": {"type": "object"}},
                "from": {"type": "string"}, "to": {"type": "string"}, "layout": {"type": "object"},
                "meta": {"type": "object"}, "session": {"type": "string"}, "hparams": {"type": "object"},
                "metrics": {"type": "object"}, "domains": {"type": "object"}, "client": {"type": "string"},
                "provenance": {"type": "object"}, "config": {"type": "object"}, "replace": {"type": "boolean"},
                "add": {"type": "array", "items": {"type": "string"}},
                "remove": {"type": "array", "items": {"type": "string"}},
                "set": {"type": "array", "items": {"type": "string"}}, "note": {"type": "string"},
                "append": {"type": "boolean"}, "series": {"type": "string"},
                "direction": {"type": "string", "nullable": True}, "rank": {"type": "integer", "minimum": 0},
                "lines": {"type": "array", "items": {"type": "array"}}}}


_CONVERTER = re.compile(r"<(?:[a-z_]+(?:\([^)]*\))?:)?([a-zA-Z_][a-zA-Z0-9_]*)>")
_IGNORED_METHODS = {"HEAD", "OPTIONS"}


def openapi_path(rule: str) -> str:
    """Flask's /api/v1/envs/<path:env> as OpenAPI's /api/v1/envs/{env}."""
    return _CONVERTER.sub(r"{\1}", rule)


def _operation(app: Flask, rule: Any, method: str) -> dict[str, Any]:
    doc = _DOCUMENTED.get((rule.rule, method), {})
    view = app.view_functions[rule.endpoint]
    summary = doc.get("summary") or ((view.__doc__ or "").strip().splitlines() or [rule.endpoint])[0]
    path_schema = doc.get("path_schema", {"type": "string", "minLength": 1})
    params = [{"name": name, "in": "path", "required": True, "schema": path_schema}
              for name in _CONVERTER.findall(rule.rule)]
    errors = doc.get("errors", ("400", "404"))
    responses = {"200": doc.get("ok", _JSON), **{code: _JSON for code in doc.get("ok_codes", ())},
                 **{code: _ERROR for code in errors}}
    op: dict[str, Any] = {"operationId": rule.endpoint.replace(".", "_") + "_" + method.lower(),
                          "summary": summary, "parameters": params + doc.get("params", []),
                          "responses": responses}
    if doc.get("body") is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": doc["body"]}}}
    return op


def spec(app: Flask | None = None) -> dict[str, Any]:
    """The description of every /api route of `app` (default: the current app) and every event op."""
    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    paths: dict[str, dict[str, Any]] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if not rule.rule.startswith("/api/"):
            continue
        for method in sorted((rule.methods or set()) - _IGNORED_METHODS):
            paths.setdefault(openapi_path(rule.rule), {})[method.lower()] = _operation(app, rule, method)
    return {
        "openapi": "3.0.3",
        "info": {"title": "paneboard API", "version": __version__,
                 "description": "Envs, panes and their series; every read of a series takes a point budget."},
        "paths": paths,
        "components": {"schemas": {
            "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
            "Event": _event_schema()}},
    }


@bp.get("/api/v1/openapi.json")
def openapi_json() -> Response:
    return json_response(spec())
