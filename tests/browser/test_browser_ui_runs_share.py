"""Issue 42 item 8 in Chromium against a real server with an admin token: an admin creates, lists and revokes
read-only links from the runs table, and a share reader who leaves the share gets a page saying so, not JSON."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from helpers.browser import TIMEOUT_MS, Tab

ADMIN = "admin-token-for-ui-runs"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("share") / "paneboard.db",
                                       options={"token": ADMIN}).start()
    try:
        yield srv
    finally:
        srv.stop()


def admin(srv, method, path, body=None):
    req = urllib.request.Request(srv.url + path, data=None if body is None else json.dumps(body).encode(),
                                 method=method, headers={"Authorization": f"Bearer {ADMIN}",
                                                         "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def line(env):
    return {"op": "set", "env": env, "win": "loss", "kind": "line", "opts": {"title": "loss"},
            "traces": [{"name": None, "x": [0.0, 1.0], "y": [2.0, 1.0]}]}


def test_admin_shares_ticked_runs_from_the_runs_table_and_a_reader_outside_gets_a_page(guarded, tab, chromium):
    admin(guarded, "POST", "/api/v1/events", {"events": [line("team/pub"), line("team/secret")]})
    tab.open(f"{guarded.url}/runs?token={ADMIN}")  # the admin's browser: the token becomes its cookie
    tab.wait("() => document.body.dataset.runsShown === '2'")
    tab.page.check("tr[data-env='team/pub'] td.col-pick input")
    tab.page.click(".runs-share summary")
    tab.wait("() => !!document.querySelector('.act-share')")
    assert tab.page.inner_text(".act-share") == "new read-only link to the 1 ticked run"
    tab.page.once("dialog", lambda d: d.accept("for alice"))
    tab.page.click(".act-share")
    tab.wait("() => !!document.querySelector('.share-url')")
    url = tab.page.input_value(".share-url")
    assert "/share/" in url
    rows = tab.js("() => [...document.querySelectorAll('.share-row')].map(r => r.textContent)")
    assert len(rows) == 1 and "for alice" in rows[0] and "1 run" in rows[0]
    assert [t["envs"] for t in admin(guarded, "GET", "/api/v1/tokens")["tokens"]] == [["team/pub"]]

    # The reader: a browser of its own (no admin cookie).
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        reader = Tab(page)
        reader.open(url)
        assert page.url.endswith("/env/team%2Fpub")
        # A link outside the share: a page that says so (the same for a missing run), not the API's JSON.
        for other in ("team%2Fsecret", "no-such-run"):
            resp = page.goto(f"{guarded.url}/env/{other}")
            assert resp.status == 404 and "text/html" in resp.headers["content-type"]
            assert page.inner_text("h1") == "Not shared with this link"
            assert page.get_attribute("a.share-leave", "href") == "/share/leave"
        resp = page.goto(f"{guarded.url}/scalars?envs=team%2Fsecret")
        assert resp.status == 404 and page.inner_text("h1") == "Not shared with this link"
        # The reader's runs table lists only the shared run and offers no share links.
        reader.open(f"{guarded.url}/")
        reader.wait("() => document.body.dataset.runsShown === '1'")
        assert page.locator(".runs-share").count() == 0

        # The admin revokes it from the list; the reader's next page says the link was revoked.
        tab.page.once("dialog", lambda d: d.accept())
        tab.page.click(".share-row .act-revoke")
        tab.wait("() => document.querySelectorAll('.share-row').length === 0")
        assert admin(guarded, "GET", "/api/v1/tokens")["tokens"] == []
        resp = page.goto(f"{guarded.url}/env/team%2Fpub")
        assert resp.status == 401 and page.inner_text("h1") == "This share link was revoked"
        resp = page.goto(url)
        assert page.inner_text("h1") == "This share link was revoked"
    finally:
        context.close()
    assert [e for e in tab.errors if "40" not in e] == []


def test_api_clients_of_a_share_keep_their_json_errors(guarded):
    admin(guarded, "POST", "/api/v1/events", {"events": [line("solo/a"), line("solo/b")]})
    share = admin(guarded, "POST", "/api/v1/tokens", {"envs": ["solo/a"], "name": "api"})["token"]
    req = urllib.request.Request(guarded.url + "/env/solo%2Fb", headers={"Authorization": f"Bearer {share}"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=30)
    assert err.value.code == 404 and json.loads(err.value.read()) == {"error": "env 'solo/b' not found"}
