"""Apps built in one process share their rules' url_for builders, and each still builds its own URLs."""

from __future__ import annotations

from flask import url_for

from paneboard.server.app import create_app
from paneboard.server.services import Services
from paneboard.server.settings import Settings


def test_two_apps_share_builders_and_build_the_same_urls(tmp_path):
    apps, urls = [], []
    for name in ("a", "b"):
        settings = Settings(db=str(tmp_path / f"{name}.db"), base_url="/board" if name == "b" else "")
        app = create_app(settings, Services.open(settings))
        apps.append(app)
        with app.test_request_context("/"):
            urls.append([url_for("static", filename="js/app.js"),
                         *(url_for(r.endpoint, **{arg: 7 if f"<int:{arg}>" in r.rule else "7" for arg in r.arguments}, q="1 2")
                           for r in sorted(app.url_map.iter_rules(), key=lambda r: r.rule) if "<int:" in r.rule)])
    assert urls[0] == urls[1] and urls[0][0] == "/static/js/app.js"
    assert "/api/v1/tokens/7?q=1+2" in urls[0]
    first, second = ({r.rule: r for r in app.url_map.iter_rules()} for app in apps)
    assert first.keys() == second.keys()
    for rule, r in first.items():
        assert r._build.__func__ is second[rule]._build.__func__, rule  # compiled once for both apps
        assert r._build.__self__ is r and second[rule]._build.__self__ is second[rule]
