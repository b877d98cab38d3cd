"""The UI's scripts under a fingerprinted prefix: pages name it, and browsers keep its files until they change."""

from __future__ import annotations

import re
import shutil

from paneboard.server import STATIC_DIR
from paneboard.server.web import static_assets


def test_a_page_loads_its_modules_under_the_current_fingerprint_kept_for_a_year(api):
    page = api.get("/env/e").get_data(as_text=True)
    app_js = re.search(r'<script type="module" src="(/static/v/(\w{12})/js/app\.js)"', page)
    assert app_js and re.search(rf'href="/static/v/{app_js.group(2)}/css/app\.css"', page), page[:600]
    r = api.get(app_js.group(1))
    assert r.status_code == 200 and r.data == (STATIC_DIR / "js" / "app.js").read_bytes()
    assert (r.cache_control.max_age, r.cache_control.public, r.cache_control.immutable) == (365 * 86400, True, True)
    # A module app.js imports by a relative path resolves under the same prefix.
    imported = re.search(r'from "\./([\w/]+\.js)"', r.get_data(as_text=True))
    assert imported and api.get(app_js.group(1).replace("app.js", imported.group(1))).status_code == 200
    # A page loaded before the files changed still gets them, revalidated each time instead of kept.
    stale = api.get(app_js.group(1).replace(app_js.group(2), "0" * 12))
    assert stale.status_code == 200 and stale.cache_control.no_cache and not stale.cache_control.immutable
    assert api.get(app_js.group(1).replace("app.js", "../../../../server/app.py")).status_code == 404
    assert api.get("/nope", headers={"Accept": "text/html"}).get_data(as_text=True).count(
        f"/static/v/{app_js.group(2)}/") == 2  # the 404 page's stylesheet and script


def test_editing_a_static_file_changes_the_fingerprint(tmp_path, monkeypatch):
    shutil.copytree(STATIC_DIR / "css", tmp_path / "css")
    monkeypatch.setattr(static_assets, "STATIC_DIR", tmp_path)
    before = static_assets.fingerprint()
    assert static_assets.fingerprint() == before
    css = tmp_path / "css" / "app.css"
    css.write_text(css.read_text() + "\n/* edited */\n")
    assert static_assets.fingerprint() != before
