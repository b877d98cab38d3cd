"""The run query language: `lr < 0.01 and tags:baseline and status:finished`, `loss.min < 0.3`,
`val/acc.max >= 0.9 or name ~ "^resnet"`, with parentheses and `not`.

    query      := or
    or         := and ("or" and)*
    and        := not ("and" not)*
    not        := "not" not | "(" or ")" | comparison
    comparison := field (":" | "=" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "~" | "!~") value
    value      := number | "string" | 'string' | true | false | null | word

A field is a run attribute (name/env, status, tags, host, user, commit, branch, dirty, started, ended, created,
updated), a config key (`lr`, or a path into nested config `optim.lr`; `config.` forces config), or a series
summary `<series>.<stat>` with stat in last, min, max, best, count, last_step, min_step, max_step (a bare series
name means its last value). `tags:x` is true when x is one of the run's tags; `~` is a regex search. A field a run
lacks makes the comparison false. Errors carry the 0-based character position where the query went wrong.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .regex import RegexError, compile_regex
from .series import STATS

MAX_QUERY = 4_000        # characters
MAX_DEPTH = 64           # nested parentheses / nots

Predicate = Callable[[dict[str, Any]], bool]


class QueryError(ValueError):
    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at position {position}")
        self.message, self.position = message, position


@dataclass(frozen=True)
class Token:
    kind: str   # word | number | string | op | lparen | rparen | end
    text: str
    value: Any
    pos: int


_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?![A-Za-z_/]))
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<op><=|>=|==|!=|!~|<|>|=|~|:)
  | (?P<lparen>\()
  | (?P<rparen>\))
  | (?P<word>[A-Za-z_@$][\w./@$\-\[\]]*)
""", re.X)
_KEYWORDS = {"and", "or", "not"}
RUN_FIELDS = {"name", "env", "status", "tags", "tag", "host", "user", "commit", "branch", "dirty", "started",
               "ended", "created", "updated"}
STATUSES = ("running", "stalled", "crashed", "finished", "active", "idle")


@dataclass(frozen=True)
class FieldRef:
    """A field a query compares, kept so the caller can check it against the runs it has (check_fields)."""

    field: str
    op: str
    literal: Any
    pos: int
    value_pos: int


def tokenize(text: str) -> list[Token]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise QueryError(f"unexpected character {text[pos]!r}", pos)
        kind = m.lastgroup or ""
        raw = m.group()
        if kind == "string":
            if raw[-1] != raw[0] or len(raw) < 2:
                raise QueryError("unterminated string", pos)
            out.append(Token("string", raw, re.sub(r"\\(.)", r"\1", raw[1:-1]), pos))
        elif kind == "number":
            out.append(Token("number", raw, float(raw), pos))
        elif kind != "space":
            out.append(Token(kind, raw, raw, pos))
        pos = m.end()
    out.append(Token("end", "", None, len(text)))
    return out


def compile_query(text: str, refs: list[FieldRef] | None = None) -> Predicate:
    """The predicate a run dict (the /api/v1/runs form) must satisfy; QueryError for a malformed query.
    `refs`, when given, receives every field the query compares (for check_fields)."""
    if len(text) > MAX_QUERY:
        raise QueryError(f"the query is longer than {MAX_QUERY} characters", MAX_QUERY)
    if not text.strip():
        return lambda run: True
    parser = _Parser(tokenize(text))
    pred = parser.parse_or(0)
    tok = parser.peek()
    if tok.kind != "end":
        raise QueryError(f"expected 'and', 'or' or the end, got {tok.text!r}", tok.pos)
    if refs is not None:
        refs.extend(parser.refs)
    return pred


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens, self.i = tokens, 0
        self.refs: list[FieldRef] = []

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def _keyword(self, word: str) -> bool:
        tok = self.peek()
        if tok.kind == "word" and tok.text.lower() == word:
            self.i += 1
            return True
        return False

    def parse_or(self, depth: int) -> Predicate:
        parts = [self.parse_and(depth)]
        while self._keyword("or"):
            parts.append(self.parse_and(depth))
        return parts[0] if len(parts) == 1 else (lambda run: any(p(run) for p in parts))

    def parse_and(self, depth: int) -> Predicate:
        parts = [self.parse_not(depth)]
        while self._keyword("and"):
            parts.append(self.parse_not(depth))
        return parts[0] if len(parts) == 1 else (lambda run: all(p(run) for p in parts))

    def parse_not(self, depth: int) -> Predicate:
        tok = self.peek()
        if depth > MAX_DEPTH:
            raise QueryError(f"nested deeper than {MAX_DEPTH}", tok.pos)
        if self._keyword("not"):
            inner = self.parse_not(depth + 1)
            return lambda run: not inner(run)
        if tok.kind == "lparen":
            self.take()
            inner = self.parse_or(depth + 1)
            close = self.take()
            if close.kind != "rparen":
                raise QueryError(f"expected ')', got {close.text or 'the end'!r}", close.pos)
            return inner
        return self.parse_comparison()

    def parse_comparison(self) -> Predicate:
        field = self.take()
        if field.kind == "end":
            raise QueryError("expected a field, got the end of the query", field.pos)
        if field.kind not in ("word", "string") or (field.kind == "word" and field.text.lower() in _KEYWORDS):
            raise QueryError(f"expected a field, got {field.text!r}", field.pos)
        op = self.take()
        if op.kind != "op":
            raise QueryError(f"expected an operator (: = != < <= > >= ~ !~) after {field.text!r}, got "
                             f"{op.text or 'the end'!r}", op.pos)
        value = self.take()
        if value.kind not in ("word", "number", "string") or (value.kind == "word" and value.text.lower() in _KEYWORDS):
            raise QueryError(f"expected a value after {op.text!r}, got {value.text or 'the end'!r}", value.pos)
        literal: Any = value.value
        if value.kind == "word":
            literal = {"true": True, "false": False, "null": None}.get(value.text.lower(), value.text)
        self.refs.append(FieldRef(str(field.value), op.text, literal, field.pos, value.pos))
        return _comparison(str(field.value), op.text, literal, value)


def _comparison(field: str, op: str, literal: Any, tok: Token) -> Predicate:
    getter = _getter(field)
    if op in ("~", "!~"):
        if not isinstance(literal, str):
            raise QueryError("~ needs a string (a regular expression)", tok.pos)
        try:
            rx = compile_regex(literal)
        except RegexError as exc:
            raise QueryError(f"bad regular expression: {exc}", tok.pos) from None
        want = op == "~"

        def match(run: dict[str, Any]) -> bool:
            v = getter(run)
            if isinstance(v, (list, tuple)):
                return any(isinstance(x, str) and rx.search(x) for x in v) == want
            return v is not None and (rx.search(v if isinstance(v, str) else _text(v)) is not None) == want
        return match
    if op in (":", "=", "=="):
        return lambda run: _equal(getter(run), literal)
    if op == "!=":
        return lambda run: (v := getter(run)) is not None and not _equal(v, literal)
    if literal is None or isinstance(literal, bool):
        raise QueryError(f"{op} needs a number or a string", tok.pos)
    order = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
             ">=": lambda a, b: a >= b}[op]

    def compare(run: dict[str, Any]) -> bool:
        v = getter(run)
        if isinstance(literal, float):
            return _is_number(v) and not math.isnan(v) and order(v, literal)
        return isinstance(v, str) and order(v, literal)
    return compare


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _text(v: Any) -> str:
    return "true" if v is True else "false" if v is False else str(v)


def _equal(v: Any, literal: Any) -> bool:
    if isinstance(v, (list, tuple)):  # tags:x -> x is one of them
        return any(_equal(x, literal) for x in v)
    if literal is None or isinstance(literal, bool):
        return v is literal or (isinstance(v, str) and _text(literal) == v.lower())
    if isinstance(literal, float):
        return _is_number(v) and v == literal or (isinstance(v, str) and _num_or_none(v) == literal)
    if _is_number(v) or isinstance(v, bool):
        return _text(v) == literal
    return isinstance(v, str) and v == literal


def _num_or_none(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _getter(field: str) -> Callable[[dict[str, Any]], Any]:
    low = field.lower()
    if low in RUN_FIELDS:
        return _run_field(low)
    if low.startswith("config."):
        path = field[len("config."):]
        return lambda run: config_value(run.get("config") or {}, path)
    series, _, stat = field.rpartition(".")

    def get(run: dict[str, Any]) -> Any:
        config = run.get("config") or {}
        if field in config:
            return config[field]
        summaries = run.get("summaries") or {}
        if stat in STATS and series in summaries:
            return summaries[series].get(stat)
        if field in summaries:
            return summaries[field].get("last")
        return config_value(config, field)
    return get


def config_value(config: dict[str, Any], path: str) -> Any:
    """The config value a dotted path names: a literal key first ("a.b"), else a path into nested dicts."""
    if path in config:
        return config[path]
    node: Any = config
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _run_field(name: str) -> Callable[[dict[str, Any]], Any]:
    if name in ("name", "env"):
        return lambda run: run.get("env")
    if name in ("tags", "tag"):
        return lambda run: run.get("tags") or []
    if name in ("host", "user"):
        return lambda run: (run.get("provenance") or {}).get(name)
    if name in ("commit", "branch", "dirty"):
        return lambda run: ((run.get("provenance") or {}).get("git") or {}).get(name)
    return lambda run: run.get(name)
