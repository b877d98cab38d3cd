"""URL rules whose url_for builders are compiled once per process rather than once per app."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from flask import Flask
from werkzeug.routing import Rule

Builder = Callable[..., tuple[str, str]]


class SharedBuilderRule(Rule):
    """A Rule that reuses the url_for builders of an equal rule made earlier in the process.

    Werkzeug generates and compile()s two builder functions per rule when an app registers it, most of the time
    it takes to build an app; a test process builds hundreds of apps from the same blueprints. A builder takes
    its rule as its first argument and depends only on the rule's parsed parts (without defaults folded in), so
    equal rules can share one.
    """

    _builders: ClassVar[dict[tuple[str, tuple[tuple[bool, str], ...], bool], Builder]] = {}

    def _compile_builder(self, append_unknown: bool = True) -> Builder:
        if self.defaults:  # default values are folded into the builder as constants: not shared
            return super()._compile_builder(append_unknown)
        key = (self.rule, tuple(self._trace), append_unknown)
        builder = self._builders.get(key)
        if builder is None:  # two threads may both compile it: either result is right
            builder = self._builders[key] = super()._compile_builder(append_unknown)
        return builder


class SharedRulesFlask(Flask):
    """Flask with SharedBuilderRule for every rule, its own static route included."""

    url_rule_class = SharedBuilderRule
