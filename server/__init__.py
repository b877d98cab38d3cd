"""paneboard.server: the dash-server (HTTP pages and API, websockets, durable store)."""

from pathlib import Path

__version__ = "0.1.0"

# static/, templates/ and migrations/ sit beside server/ both in a checkout (repo root) and in the
# wheel (site-packages/paneboard/), so one rule finds them in both layouts.
RESOURCE_ROOT = Path(__file__).resolve().parent.parent
STATIC_DIR = RESOURCE_ROOT / "static"
TEMPLATES_DIR = RESOURCE_ROOT / "templates"
MIGRATIONS_DIR = RESOURCE_ROOT / "migrations"
