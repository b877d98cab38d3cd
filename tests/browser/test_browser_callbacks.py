"""Keyboard and click events on panes reach handlers registered with paneboard's own SDK (Visdom callbacks)."""

from __future__ import annotations

import numpy as np

import paneboard
from helpers.visdom_page import open_env, wait


def test_key_and_click_events_reach_sdk_handlers(server, page):
    pg, errors = page
    client = paneboard.Client(server="http://127.0.0.1", port=server.port, env="cb")
    got: list[dict] = []
    client.text("press a key here", win="keys")
    client.image(np.zeros((3, 10, 20)), win="clickme")
    assert client.flush(timeout=15)
    client.register_event_handler(got.append, "keys")
    client.register_event_handler(got.append, "clickme")
    assert client._events.connected.wait(10), "the SDK's callback socket did not connect"
    open_env(pg, server, "cb")
    pg.locator('[data-win="keys"] .text-pane').focus()
    pg.keyboard.press("ArrowLeft")
    wait(pg, "() => { const i = document.querySelector('[data-win=\"clickme\"] img');"
             " return i && i.complete && i.naturalWidth === 20; }")
    img = pg.locator('[data-win="clickme"] img')
    box = img.bounding_box()
    # The picture fills its card with its aspect kept (object-fit: contain): aim at the middle of pixel (5, 7).
    s = min(box["width"] / 20, box["height"] / 10)
    left, top = (box["width"] - 20 * s) / 2, (box["height"] - 10 * s) / 2
    img.click(position={"x": left + 5.5 * s, "y": top + 7.5 * s})
    for _ in range(200):
        if len(got) >= 2:
            break
        pg.wait_for_timeout(50)
    kinds = sorted((e["event_type"], e["target"]) for e in got)
    assert kinds == [("Click", "clickme"), ("KeyPress", "keys")], kinds
    key = next(e for e in got if e["event_type"] == "KeyPress")
    assert key["key"] == "ArrowLeft" and key["eid"] == "cb"
    click = next(e for e in got if e["event_type"] == "Click")
    assert click["image_coord"] == {"x": 5, "y": 7}
    client.clear_event_handlers()
    assert errors == []
    client.close_connection(timeout=5)
