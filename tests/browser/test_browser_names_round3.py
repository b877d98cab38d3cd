"""The env list's own links open every env whatever its name (Chromium, real server): absolute paths, "..",
doubled slashes, "%", "#", "?", unicode, backslashes."""

from __future__ import annotations

import json
import urllib.request

from helpers.browser import XY

NAMES = ["/abs/work_dirs/20260101_120000/vis_data", "runs/../other", "../runs/x", "runs//exp1", "runs/exp1/",
         "with space", "100% done", "a#b", "what?", "ünïcødé/日本", "C:\\runs\\exp1", "a/panes/b", "%252F", "/",
         "a,b", " edge space "]
COMPARED = ["/abs/work_dirs/20260101_120000/vis_data", "a,b", " edge space ", "100% done", "a#b", "ünïcødé/日本"]

# For every link of the env list: the page it opens boots with that env, and the env reads back through the
# API the page itself calls (its encodeURIComponent of the booted name), with its one pane.
FOLLOW_LINKS = """async () => {
  const out = {};
  for (const a of document.querySelectorAll("tr[data-env] .col-name a")) {
    const page = await (await fetch(a.href)).text();
    const boot = JSON.parse(new DOMParser().parseFromString(page, "text/html").getElementById("boot").textContent);
    const r = await fetch(`/api/v1/envs/${encodeURIComponent(boot.env)}/panes`);
    out[a.closest("tr").dataset.env] = [boot.env, r.status, r.ok ? (await r.json()).panes.length : 0];
  }
  return out;
}"""


def test_every_env_list_link_opens_its_env(server, open_tab) -> None:
    events = [{"op": "update", "env": n, "win": "loss", "kind": "line", "mode": "append", "name": "t",
               "opts": {"title": "loss"}, "traces": [{"name": "t", "x": [0.0, 1.0], "y": [1.0, 0.5]}]} for n in NAMES]
    req = urllib.request.Request(server.url + "/api/v1/events", data=json.dumps({"events": events}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        assert json.loads(r.read())["errors"] == []
    t = open_tab(server.url + "/envs")  # Visdom's env list (the home page is the runs table)
    t.wait("(n) => document.querySelectorAll('tr[data-env] .col-name a').length >= n", len(NAMES))
    assert t.js(FOLLOW_LINKS) == {n: [n, 200, 1] for n in NAMES}
    # Clicking through: the env page of the mmengine-style name draws its chart, no "does not exist".
    # Compare from the env list's ticks: the compare page's ?envs= keeps names with "," and edge spaces whole.
    t.js("""(names) => { for (const tr of document.querySelectorAll("tr[data-env]"))
              if (names.includes(tr.dataset.env)) tr.querySelector("input.pick").click(); }""", COMPARED)
    t.page.locator(".compare-btn").click()
    t.wait("(n) => document.querySelectorAll('.legend-env').length === n", len(COMPARED))
    assert sorted(t.js("() => [...document.querySelectorAll('.legend-env')].map((a) => a.dataset.env)")) == sorted(
        COMPARED)
    t.page.locator(".legend-env[data-env='/abs/work_dirs/20260101_120000/vis_data']").click()
    t.wait(f"() => !!({XY.format(win='loss')} || {{}})._fullLayout")
    assert "does not exist" not in t.page.content()
    assert t.errors == []
