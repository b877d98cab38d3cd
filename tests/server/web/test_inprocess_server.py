"""The in-process test server's own checks: stop() blames a server only for its own threads."""

from __future__ import annotations

import urllib.request
from concurrent.futures import ThreadPoolExecutor


def test_a_pool_thread_another_server_starts_later_is_not_this_servers_leak(make_server):
    first = make_server("first")
    second = make_server("second")
    before = len(first.app.wsgi.executor._threads)

    def get(_):
        with urllib.request.urlopen(f"{first.url}/api/v1/envs", timeout=30) as r:
            return r.status

    # Concurrent requests make the first server's a2wsgi pool start threads named like the second's ("WSGI_n").
    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(get, range(32))) == {200}
    assert len(first.app.wsgi.executor._threads) > before
    second.stop()  # raised "server threads outlived stop()" when it judged threads by name
    first.stop()
