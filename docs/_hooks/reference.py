"""MkDocs hook: fills the CLI and HTTP reference pages from the parsers and the OpenAPI description themselves."""

from __future__ import annotations

import contextlib
import io
import tempfile
from typing import Any

# Each marker is replaced by text generated from the code at build time, so the reference cannot drift from it.
CLI_MARKER = "<!-- reference:cli -->"
HTTP_MARKER = "<!-- reference:http -->"

DASH_SERVER_COMMANDS = ("", "db", "import", "import-tb", "import-visdom", "runs", "artifacts", "token",
                        "export-envs", "import-envs")
PANEBOARD_COMMANDS = ("", "sync", "runs", "tail", "status")


def _help(main: Any, argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            main([*argv, "--help"])
        except SystemExit:
            pass
    return out.getvalue().rstrip()


def cli_reference() -> str:
    from paneboard.cli import main as paneboard_main
    from paneboard.server.cli.main import main as dash_main

    parts = []
    for prog, main, commands in (("dash-server", dash_main, DASH_SERVER_COMMANDS),
                                 ("paneboard", paneboard_main, PANEBOARD_COMMANDS)):
        for command in commands:
            text = _help(main, [command] if command else [])
            if not text:
                raise RuntimeError(f"{prog} {command} --help printed nothing")
            parts.append(f"### `{prog}{' ' + command if command else ''}`\n\n```text\n{text}\n```\n")
    return "\n".join(parts)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def http_reference() -> str:
    from paneboard.server.app import create_app
    from paneboard.server.services import Services
    from paneboard.server.settings import Settings
    from paneboard.server.web.openapi import spec

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(db=f"{tmp}/docs.db")
        services = Services.open(settings)
        try:
            app = create_app(settings, services)
            with app.app_context():
                described = spec(app)
        finally:
            services.stop()
    lines = []
    for path, ops in described["paths"].items():
        lines.append(f"### `{path}`\n")
        lines.append("| method | what | parameters |")
        lines.append("|---|---|---|")
        for method, op in ops.items():
            params = ", ".join(f"`{p['name']}` ({p['in']})" for p in op.get("parameters", [])) or "—"
            lines.append(f"| {method.upper()} | {_cell(op.get('summary', ''))} | {_cell(params)} |")
        lines.append("")
    return "\n".join(lines)


def on_page_markdown(markdown: str, **_: Any) -> str:
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    if HTTP_MARKER in markdown:
        markdown = markdown.replace(HTTP_MARKER, http_reference())
    return markdown
