"""Helpers for the browser suite (test_browser*.py): the Tab wrapper, JS snippets, env URLs and HTTP calls."""

from __future__ import annotations

from dataclasses import dataclass, field

# Waits poll every 50 ms: Playwright's default polls on every animation frame, which keeps Chromium
# compositing 60 frames a second for as long as a test waits, CPU the other worker needs.
POLL_MS = 50
TIMEOUT_MS = 60_000  # bounds each wait for a condition: a busy 2-core machine can take many seconds to draw
# Playwright evaluates plain expressions with eval(), which the page's CSP forbids: always pass functions.
READY = "() => document.body.dataset.ready === '1' && document.body.dataset.live === '1'"
XY = "document.querySelector('[data-win=\"{win}\"] .js-plotly-plot')"
# A run chart's smoothed lines as drawn, [run, colour, dash, name] each, for a Plotly div `d`: a sweep's lines are
# painted on a canvas, named by its invisible bounds trace (meta.paths); fewer runs are Plotly traces of their own.
SMOOTHED_LINES = ("(d => d && d.data ? d.data.flatMap(s => s.meta.role === 'lines' ? s.meta.paths.flatMap(p => "
                  "p.envs.map(e => [e, p.color, p.dash || 'solid', e])) : s.meta.role === 'smoothed' ? "
                  "[[s.meta.env, s.line.color, s.line.dash || 'solid', s.name]] : []) : null)")


@dataclass
class Tab:
    """A page plus every console error and uncaught exception it produced."""

    page: object
    errors: list[str] = field(default_factory=list)
    response: object = None

    def open(self, url: str) -> Tab:
        self.response = self.page.goto(url)
        self.page.wait_for_function(READY, timeout=TIMEOUT_MS, polling=POLL_MS)
        return self

    def js(self, expr: str, arg=None):
        return self.page.evaluate(expr, arg)

    def wait(self, expr: str, arg=None) -> None:
        self.page.wait_for_function(expr, arg=arg, timeout=TIMEOUT_MS, polling=POLL_MS)

    def points(self, win: str, trace: int = 0) -> int:
        return self.js(f"() => {{ const d = {XY.format(win=win)}; return d && d.data ? d.data[{trace}].x.length : -1; }}")


def flushed(c) -> None:
    assert c.flush(timeout=10), "SDK did not get its events acknowledged"


def http(server, method: str, path: str, body=None):
    return server.http(method, path, body)


def env_url(server, env: str) -> str:
    return server.env_url(env)
