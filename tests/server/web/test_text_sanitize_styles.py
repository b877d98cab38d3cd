"""An SVG's own <style> survives sanitizing only as plain rules scoped to the pane: nothing that fetches, escapes
its <style> element or styles the page around it."""

from __future__ import annotations

import re

from paneboard.server.panes.media import _html
from paneboard.server.panes.text import sanitize

MPL = ('<svg xmlns="http://www.w3.org/2000/svg" width="460.8pt" height="345.6pt" viewBox="0 0 460.8 345.6">'
       '<defs><style type="text/css">*{stroke-linejoin: round; stroke-linecap: butt}</style></defs>'
       '<path d="M 0 0 L 10 10" style="fill: none; stroke: #1f77b4"/></svg>')


def rules(html: str) -> str:
    m = re.search(r"<style>(.*?)</style>", html, re.S)
    return m.group(1) if m else ""


def test_matplotlib_style_kept_and_scoped():
    out = sanitize(MPL)
    scope = re.search(r'class="svg-scope (svg-scope-[0-9a-f]{10})"', out).group(1)
    assert rules(out) == f".{scope} svg *{{stroke-linejoin: round; stroke-linecap: butt}}"
    assert out.count("<style") == 1 and '<path d="M 0 0 L 10 10"' in out


def test_hostile_rules_dropped():
    hostile = ('<svg><style>@import url(https://evil.example/x.css); *{fill: red}</style></svg>'
               '<svg><style>p{background: url(https://evil.example/p.png); color: red} '
               'a[href^="x"]{color: red} b{color: red}</style><b>x</b></svg>'
               '<svg><style>i{color: red} </style><script>alert(1)</script>{}</style></svg>'
               '<svg><style>q{width: expression(alert(1))} s{c\\6f lor: red}</style></svg>')
    css = rules(sanitize(hostile))
    assert "url" not in css and "@" not in css and "expression" not in css and "\\" not in css
    assert "<" not in css and "[" not in css and "script" not in css
    assert re.fullmatch(r"(\.svg-scope-[0-9a-f]{10} svg [a-z*]+\{[^{}]*\})*", css), css
    assert "color: red" in css  # the plain declarations of p, b and i are kept, each scoped


# CycleGAN's visualizer: a <style> before the label table it sends with vis.text().
CYCLEGAN = ("<style>\n table {border-collapse: separate; border-spacing: 4px; white-space: nowrap; text-align: center}"
            "\n table td {width: 256px; height: 256px; padding: 4px; outline: 4px solid black}\n</style>"
            "<table><tr><td>real_A</td><td>fake_B</td></tr></table>")


def test_the_contents_own_style_is_kept_scoped_to_the_pane():
    out = sanitize(CYCLEGAN)
    scope = re.search(r'class="svg-scope (svg-scope-[0-9a-f]{10})"', out).group(1)
    assert rules(out) == (f".{scope} table{{border-collapse: separate; border-spacing: 4px; white-space: nowrap; "
                          f"text-align: center}}.{scope} table td{{width: 256px; height: 256px; padding: 4px; "
                          f"outline: 4px solid black}}")
    assert out.count("<style") == 1 and "<td>real_A</td>" in out


def test_a_style_outside_svg_reaches_only_the_pane():
    css = rules(sanitize("<style>*{display: none} p{position: fixed; z-index: 9; inset: 0; color: red}</style>"
                         "<p>x</p>"))
    assert re.fullmatch(r"\.svg-scope-[0-9a-f]{10} \*\{display: none\}\.svg-scope-[0-9a-f]{10} p\{color: red\}", css)
    hostile = sanitize("<style>b{color: red}</style><script>alert(1)</script><style>i{background: url(x)}</style>"
                       "<img src=x onerror=alert(1)>")
    assert "script" not in hostile and "onerror" not in hostile and "url" not in rules(hostile)


def test_tensorboard_text_escapes_html_tensorboard_does_not_allow():
    out = _html({"text": "a <b>b</b> <strong>s</strong> <!-- c --> `<i>`", "format": "markdown"})
    assert out == "<p>a &lt;b&gt;b&lt;/b&gt; <strong>s</strong>  <code>&lt;i&gt;</code></p>"
