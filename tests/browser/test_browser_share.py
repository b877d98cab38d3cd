"""A share link in real Chromium: /share/<token> opens its env read-only (badge, no write buttons), the env list
shows only the token's envs, live updates still arrive, and a write from the page is refused with 403."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from helpers.browser import Tab

ADMIN = "admin-token-for-browser"
SHOTS = os.environ.get("PANEBOARD_SHOTS")


@pytest.fixture(scope="module")
def guarded(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("share") / "paneboard.db",
                                       options={"token": ADMIN}).start()
    try:
        yield srv
    finally:
        srv.stop()


def admin(srv, method, path, body=None):
    import json
    import urllib.request

    req = urllib.request.Request(srv.url + path, data=None if body is None else json.dumps(body).encode(),
                                 method=method, headers={"Authorization": f"Bearer {ADMIN}",
                                                         "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def line(env, x, y, mode=None):
    ev = {"op": "update" if mode else "set", "env": env, "win": "loss", "kind": "line", "opts": {"title": "loss"},
          "traces": [{"name": None, "x": x, "y": y}]}
    if mode:
        ev["mode"] = mode
    return ev


def test_share_link_opens_a_read_only_view(guarded, tab: Tab) -> None:
    admin(guarded, "POST", "/api/v1/events", {"events": [line("pub", [0.0, 1.0, 2.0], [3.0, 2.0, 1.5]),
                                                         line("secret", [0.0, 1.0], [9.0, 8.0])]})
    share = admin(guarded, "POST", "/api/v1/tokens", {"envs": ["pub"], "name": "browser"})["token"]
    tab.open(f"{guarded.url}/share/{share}")
    assert tab.page.url.endswith("/env/pub")
    assert tab.js("() => document.getElementById('share-badge').textContent") == "read-only"
    assert tab.js("() => ['.act-fork', '.act-delete', '.act-save-view'].every((s) => document.querySelector(s)"
                  " && document.querySelector(s).offsetParent === null)")
    tab.wait("() => { const d = document.querySelector('[data-win=\"loss\"] .js-plotly-plot');"
             " return d && d.data && d.data[0].x.length === 3; }")
    # Live: a point the admin appends arrives on the shared page.
    admin(guarded, "POST", "/api/v1/events", {"events": [line("pub", [3.0], [1.2], mode="append")]})
    tab.wait("() => document.querySelector('[data-win=\"loss\"] .js-plotly-plot').data[0].x.length === 4")
    if SHOTS:
        tab.page.screenshot(path=os.path.join(SHOTS, "share_env.png"))
    # The run panel shows tags and notes but offers no way to edit them (the env's config editor neither).
    admin(guarded, "PUT", "/api/v1/envs/pub/tags", {"tags": ["baseline"]})
    tab.wait("() => !!document.querySelector('.run-tags .tag')")
    tab.page.locator(".act-run").click()
    assert tab.js("() => document.querySelector('.run-tags .tag').textContent.includes('baseline')")
    assert tab.js("() => ['.tag-x', '.tag-input', '.act-edit-notes', '.act-config'].every((s) =>"
                  " [...document.querySelectorAll(s)].every((el) => el.offsetParent === null))")
    # A write from the page is refused by the server, whatever the UI shows.
    status = tab.js("""async () => (await fetch('/api/v1/envs/pub', {method: 'DELETE'})).status""")
    assert status == 403
    tab.open(f"{guarded.url}/")
    tab.wait("() => document.querySelectorAll('[data-env]').length > 0 || document.body.textContent.includes('pub')")
    names = tab.js("() => [...document.querySelectorAll('tr[data-env]')].map((r) => r.dataset.env)")
    assert names == ["pub"]
    assert tab.js("() => [...document.querySelectorAll('.act-fork')].every((b) => b.offsetParent === null)")
    if SHOTS:
        tab.page.screenshot(path=os.path.join(SHOTS, "share_list.png"))
    assert admin(guarded, "GET", "/api/v1/envs/pub/panes/loss")["data"]["traces"][0]["x"] == [0.0, 1.0, 2.0, 3.0]
    errors = [e for e in tab.errors if "403" not in e]
    assert not errors, errors
