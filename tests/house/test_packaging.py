"""The wheel ships every package: each folder of client_sdk/ and server/ with an __init__.py is listed in
pyproject's [tool.setuptools] packages (a missing one installs fine in editable mode and breaks only the wheel)."""

from __future__ import annotations

import tomllib

from helpers.paths import ROOT


def test_every_python_package_is_in_the_wheel() -> None:
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setup["packages"])
    for name in ("paneboard", "paneboard.server"):  # the code; static/, templates/, migrations/ ship as data
        base = ROOT / setup["package-dir"][name]
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            package = ".".join((name, *rel))
            assert package in listed, f"{package} ({init.parent.relative_to(ROOT)}) is missing from pyproject's packages"
