"""W&B's sweep configuration (YAML or JSON): parsed and checked into the Spec the controller searches with."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

METHODS = ("grid", "random", "bayes")
GOALS = ("minimize", "maximize")
# W&B's distribution names this server samples; normal and its kin have no Optuna distribution, and a stand-in
# over a truncated range would not be what the file asked for, so they are refused by name.
DISTRIBUTIONS = ("constant", "categorical", "int_uniform", "uniform", "q_uniform", "log_uniform",
                 "log_uniform_values", "q_log_uniform", "q_log_uniform_values")
COMMAND_MACROS = ("${env}", "${interpreter}", "${program}", "${args}", "${args_no_hyphens}", "${args_json}",
                  "${args_json_file}", "${project}")
MAX_GRID = 100_000


class SweepConfigError(ValueError):
    """A sweep file that cannot be run; the message names the key at fault."""


@dataclass(frozen=True)
class Param:
    """One searched parameter: `kind` int | float | categorical | constant, in Optuna's terms."""

    name: str                      # dotted for nested parameters: "optimizer.lr"
    kind: str
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    q: float | None = None         # W&B's q_*: the sampled value rounded to a multiple of q
    values: tuple[Any, ...] = ()   # categorical choices (Optuna sees their index) or the constant


@dataclass(frozen=True)
class Spec:
    method: str
    params: tuple[Param, ...]
    metric: str | None = None
    goal: str = "minimize"
    program: str | None = None
    command: tuple[str, ...] = ()
    run_cap: int | None = None
    hyperband: dict[str, Any] | None = None   # min_iter, max_iter, eta
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def grid_size(self) -> int:
        return math.prod(len(p.values) if p.kind in ("categorical", "constant") else int(p.high - p.low) + 1
                         for p in self.params)


def load_text(text: str) -> dict[str, Any]:
    """A sweep file's text (YAML, of which JSON is a part) as a dict."""
    import yaml  # type: ignore[import-untyped]  # PyYAML ships no types (types-PyYAML is not in the lock)

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SweepConfigError(f"the sweep file is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise SweepConfigError("the sweep file must be a mapping (method:, parameters: ...)")
    return data


def parse(raw: Any) -> Spec:
    """Check a sweep configuration and return its Spec; SweepConfigError names what is wrong."""
    if not isinstance(raw, dict):
        raise SweepConfigError("the sweep configuration must be a mapping (method:, parameters: ...)")
    method = raw.get("method")
    if method not in METHODS:
        raise SweepConfigError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    metric, goal = _metric(raw.get("metric"))
    params = tuple(_params(raw.get("parameters"), ""))
    if not params:
        raise SweepConfigError("parameters: the sweep needs at least one parameter")
    if method == "bayes" and metric is None:
        raise SweepConfigError("metric: a bayes sweep needs metric.name (and goal) to search on")
    program = raw.get("program")
    if program is not None and not isinstance(program, str):
        raise SweepConfigError("program must be a path (a string)")
    command = raw.get("command")
    if command is not None and (not isinstance(command, list) or not all(isinstance(c, str) for c in command)):
        raise SweepConfigError("command must be a list of strings, e.g. [${env}, ${interpreter}, ${program}, ${args}]")
    if program is None and command and "${program}" in command:
        raise SweepConfigError("program: the command runs ${program}, but the sweep names no program")
    run_cap = raw.get("run_cap")
    if run_cap is not None and (type(run_cap) is not int or run_cap < 1):
        raise SweepConfigError(f"run_cap must be a positive integer; got {run_cap!r}")
    spec = Spec(method=method, params=params, metric=metric, goal=goal, program=program,
                command=tuple(command or ()), run_cap=run_cap, hyperband=_early_terminate(raw, metric), raw=raw)
    if method == "grid":
        for p in params:
            if p.kind == "float":
                raise SweepConfigError(f"parameters.{p.name}: a grid sweep needs values (or int_uniform), "
                                       "not a continuous range")
        if spec.grid_size > MAX_GRID:
            raise SweepConfigError(f"parameters: the grid has {spec.grid_size} points, more than {MAX_GRID}")
    return spec


def _metric(m: Any) -> tuple[str | None, str]:
    if m is None:
        return None, "minimize"
    if not isinstance(m, dict) or not isinstance(m.get("name"), str) or not m["name"]:
        raise SweepConfigError("metric must be a mapping with a name (and a goal: minimize or maximize)")
    goal = m.get("goal", "minimize")
    if goal not in GOALS:
        raise SweepConfigError(f"metric.goal must be minimize or maximize; got {goal!r}")
    return m["name"], goal


def _params(ps: Any, prefix: str) -> list[Param]:
    if not isinstance(ps, dict):
        raise SweepConfigError(f"parameters{'.' + prefix.rstrip('.') if prefix else ''} must be a mapping of "
                               "name: {values: [...]} | {value: x} | {min:, max:, distribution:}")
    out: list[Param] = []
    for name, spec in ps.items():
        full = f"{prefix}{name}"
        if not isinstance(spec, dict):
            raise SweepConfigError(f"parameters.{full} must be a mapping (values:, value:, min:/max: ...)")
        if "parameters" in spec:  # nested: the program gets {name: {...}}
            out += _params(spec["parameters"], full + ".")
            continue
        out.append(_param(full, spec))
    return out


def _param(name: str, spec: dict[str, Any]) -> Param:
    where = f"parameters.{name}"
    dist = spec.get("distribution") or ("categorical" if "values" in spec else "constant" if "value" in spec
                                        else _range_kind(spec, where))
    if dist not in DISTRIBUTIONS:
        raise SweepConfigError(f"{where}: distribution {dist!r} is not supported here; use one of "
                               + ", ".join(DISTRIBUTIONS))
    if dist == "constant":
        if "value" not in spec:
            raise SweepConfigError(f"{where}: a constant needs value:")
        return Param(name, "constant", values=(spec["value"],))
    if dist == "categorical":
        values = spec.get("values")
        if not isinstance(values, list) or not values:
            raise SweepConfigError(f"{where}: values must be a non-empty list")
        return Param(name, "categorical", values=tuple(values))
    low, high = _bounds(spec, where, integer=dist == "int_uniform")
    q = spec.get("q")
    if dist.startswith("q_"):
        q = 1.0 if q is None else q
        if not isinstance(q, (int, float)) or isinstance(q, bool) or q <= 0:
            raise SweepConfigError(f"{where}: q must be a positive number; got {q!r}")
    if dist == "int_uniform":
        return Param(name, "int", low, high)
    if dist in ("log_uniform", "q_log_uniform"):  # W&B: min and max are natural-log exponents
        return Param(name, "float", math.exp(low), math.exp(high), log=True, q=q)
    if dist in ("log_uniform_values", "q_log_uniform_values"):
        if low <= 0:
            raise SweepConfigError(f"{where}: {dist} needs min > 0; got {low!r}")
        return Param(name, "float", low, high, log=True, q=q)
    return Param(name, "float", low, high, q=q)


def _range_kind(spec: dict[str, Any], where: str) -> str:
    if "min" not in spec or "max" not in spec:
        raise SweepConfigError(f"{where}: give values:, value:, or min: and max:")
    ints = all(type(spec[k]) is int for k in ("min", "max"))
    return "int_uniform" if ints else "uniform"


def _bounds(spec: dict[str, Any], where: str, integer: bool) -> tuple[float, float]:
    low, high = spec.get("min"), spec.get("max")
    for key, v in (("min", low), ("max", high)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise SweepConfigError(f"{where}: {key} must be a number; got {v!r}")
        if integer and type(v) is not int:
            raise SweepConfigError(f"{where}: int_uniform needs integer min and max; got {key}={v!r}")
    assert isinstance(low, (int, float)) and isinstance(high, (int, float))
    if low >= high:
        raise SweepConfigError(f"{where}: min ({low}) must be less than max ({high})")
    return low, high


def _early_terminate(raw: dict[str, Any], metric: str | None) -> dict[str, Any] | None:
    et = raw.get("early_terminate")
    if et is None:
        return None
    if not isinstance(et, dict) or et.get("type") != "hyperband":
        raise SweepConfigError("early_terminate: only type: hyperband is supported")
    if metric is None:
        raise SweepConfigError("early_terminate needs metric.name: the values it compares trials on")
    out: dict[str, Any] = {"min_iter": et.get("min_iter", 1), "eta": et.get("eta", 3)}
    for key in ("min_iter", "eta"):
        if type(out[key]) is not int or out[key] < (2 if key == "eta" else 1):
            raise SweepConfigError(f"early_terminate.{key} must be an integer >= {2 if key == 'eta' else 1}")
    max_iter, s = et.get("max_iter"), et.get("s")
    if max_iter is None and s is not None:  # W&B's brackets: s halvings above min_iter
        if type(s) is not int or s < 1:
            raise SweepConfigError("early_terminate.s must be a positive integer")
        max_iter = out["min_iter"] * out["eta"] ** s
    if max_iter is not None and (type(max_iter) is not int or max_iter <= out["min_iter"]):
        raise SweepConfigError("early_terminate.max_iter must be an integer above min_iter")
    out["max_iter"] = max_iter
    return out


def program_config(spec: Spec, values: dict[str, Any]) -> dict[str, Any]:
    """The config a trial's program gets: nested parameters as nested dicts."""
    out: dict[str, Any] = {}
    for name, v in values.items():
        node = out
        *parents, leaf = name.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = v
    return out
