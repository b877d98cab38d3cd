"""Optuna drives the search: one in-memory study per sweep, rebuilt from the stored trials when out of date."""

from __future__ import annotations

import math
from typing import Any

from ..store.sweep_records import TrialRecord
from .config import Param, Spec, program_config

_STATE_OF = {"queued": "WAITING", "running": "RUNNING", "stopped": "PRUNED", "failed": "FAIL", "crashed": "FAIL"}


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:  # an optional extra: the server runs without it, sweeps say what is missing
        raise RuntimeError("sweeps need Optuna on the server: pip install 'paneboard[sweeps]'") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _grid_sampler() -> Any:
    base: Any = _optuna().samplers.GridSampler

    class ControllerGridSampler(base):
        """Optuna's grid, without its study.stop() at the last point: that is only allowed inside optimize(),
        and the controller ends a grid sweep itself once every point has a trial."""

        def after_trial(self, study: Any, trial: Any, state: Any, values: Any) -> None:
            return None

    return ControllerGridSampler


def distributions(spec: Spec) -> dict[str, Any]:
    """Optuna's distribution of each parameter; categorical choices are their indices (any JSON value may be
    a W&B choice, Optuna's must be plain scalars)."""
    d = _optuna().distributions
    out: dict[str, Any] = {}
    for p in spec.params:
        if p.kind in ("categorical", "constant"):
            out[p.name] = d.CategoricalDistribution(list(range(len(p.values))))
        elif p.kind == "int":
            out[p.name] = d.IntDistribution(int(p.low), int(p.high))
        else:
            out[p.name] = d.FloatDistribution(p.low, p.high, log=p.log)
    return out


def _value(p: Param, v: Any) -> Any:
    if p.kind in ("categorical", "constant"):
        return p.values[int(v)]
    if p.kind == "int":
        return int(v)
    if p.q is not None:
        v = round(v / p.q) * p.q
        return int(v) if float(p.q).is_integer() else v
    return float(v)


def program_values(spec: Spec, params: dict[str, Any]) -> dict[str, Any]:
    """The config a trial's program gets for Optuna's parameter values."""
    return program_config(spec, {p.name: _value(p, params[p.name]) for p in spec.params})


class SweepStudy:
    """An Optuna study in memory mirroring one sweep's stored trials; `version` is the sweep's at the last sync."""

    def __init__(self, sweep_id: str, spec: Spec, trials: list[TrialRecord], values: dict[int, list[float]],
                 version: int, seed: int | None = None) -> None:
        optuna = _optuna()
        self.spec = spec
        self.version = version
        self.dists = distributions(spec)
        direction = "maximize" if spec.goal == "maximize" else "minimize"
        self.study = optuna.create_study(study_name=sweep_id, direction=direction, sampler=self._sampler(seed),
                                         pruner=self._pruner())
        self.study.add_trials([self._frozen(t, values.get(t.number, [])) for t in trials])

    def _sampler(self, seed: int | None) -> Any:
        samplers = _optuna().samplers
        if self.spec.method == "grid":
            space = {p.name: list(range(len(p.values))) if p.kind in ("categorical", "constant")
                     else list(range(int(p.low), int(p.high) + 1)) for p in self.spec.params}
            return _grid_sampler()(space, seed=seed)
        if self.spec.method == "random":
            return samplers.RandomSampler(seed=seed)
        return samplers.TPESampler(seed=seed)

    def _pruner(self) -> Any:
        pruners = _optuna().pruners
        hb = self.spec.hyperband
        if hb is None:
            return pruners.NopPruner()
        return pruners.HyperbandPruner(min_resource=hb["min_iter"], max_resource=hb["max_iter"] or "auto",
                                       reduction_factor=hb["eta"])

    def _frozen(self, t: TrialRecord, intermediate: list[float]) -> Any:
        optuna = _optuna()
        states = optuna.trial.TrialState
        if t.state == "finished":
            state = states.COMPLETE if t.value is not None and math.isfinite(t.value) else states.FAIL
        else:
            state = getattr(states, _STATE_OF[t.state])
        value = t.value if state == states.COMPLETE else (t.last if state == states.PRUNED else None)
        if state == states.PRUNED and value is None:
            state = states.FAIL
        params = {} if state == states.WAITING else t.params
        return optuna.trial.create_trial(
            state=state, value=value, params=params, distributions={k: self.dists[k] for k in params},
            intermediate_values={i + 1: v for i, v in enumerate(intermediate)},
            system_attrs=t.system_attrs if state != states.WAITING else {**t.system_attrs, "fixed_params": t.params})

    # -- the controller's operations, each mirrored into the stored trials by the caller ------------------
    def enqueue(self, params: dict[str, Any]) -> int:
        """A waiting trial with these parameters (a crashed trial's second chance); its number."""
        self.study.enqueue_trial(params, skip_if_exists=False)
        return len(self.study.get_trials(deepcopy=False)) - 1

    def ask(self) -> tuple[int, dict[str, Any]]:
        """The next trial (a waiting one first): its number and Optuna's parameter values."""
        trial = self.study.ask(self.dists)
        return trial.number, dict(trial.params)

    @property
    def prunes(self) -> bool:
        """Whether the sweep has a pruner: without one a report neither asks it nor changes Optuna's attrs."""
        return self.spec.hyperband is not None

    def report(self, number: int, values: list[float], first: int) -> bool:
        """Report values[i] as step first + i + 1; True if the pruner says to stop the trial.

        Only the last finite value goes into the study: Hyperband's rungs and TPE's order of pruned trials read a
        trial's last step and its value alone, and Optuna's storage copies a trial's values at every step
        reported (a study rebuilt from the rows has them all, to the same effect)."""
        step = next((first + i + 1 for i in range(len(values) - 1, -1, -1) if math.isfinite(values[i])), None)
        if step is None:
            return False
        trial_id = self._trial_id(number)
        storage = self.study._storage
        storage.set_trial_intermediate_value(trial_id, step, values[step - first - 1])
        return self.prunes and bool(self.study.pruner.prune(self.study, storage.get_trial(trial_id)))

    def tell(self, number: int, state: str, value: float | None) -> None:
        states = _optuna().trial.TrialState
        frozen = self._frozen_of(number)
        if frozen.state.is_finished():
            return
        if state == "finished" and value is not None and math.isfinite(value):
            self.study.tell(number, value)
        elif state == "stopped" and frozen.intermediate_values:
            self.study.tell(number, state=states.PRUNED)
        else:
            self.study.tell(number, state=states.FAIL)

    def system_attrs(self, number: int) -> dict[str, Any]:
        return dict(self._frozen_of(number).system_attrs)

    def _trial_id(self, number: int) -> int:
        return self.study._storage.get_trial_id_from_study_id_trial_number(self.study._study_id, number)

    def _frozen_of(self, number: int) -> Any:
        # One trial from the storage: study.trials deep-copies every trial, tens of milliseconds at a thousand.
        return self.study._storage.get_trial(self._trial_id(number))

    def _trial(self, number: int) -> Any:
        return _optuna().trial.Trial(self.study, self._trial_id(number))
