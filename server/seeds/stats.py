"""Small-sample statistics without scipy: Student's t distribution, confidence intervals, Welch's t-test."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

_EPS = 1e-15
_TINY = 1e-300


def _beta_cf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz; converges for x < (a+1)/(a+b+2))."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if not (a > 0 and b > 0) or not 0.0 <= x <= 1.0:
        raise ValueError("betainc needs a, b > 0 and 0 <= x <= 1")
    if x == 0.0 or x == 1.0:
        return x
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    # The fraction converges fast on one side of the mean; the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) covers the other.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` (> 0, may be fractional) degrees of freedom."""
    if df <= 0 or math.isnan(t) or math.isnan(df):
        raise ValueError("t_cdf needs df > 0 and a number t")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))  # P(T > |t|)
    return 1.0 - tail if t > 0 else tail


@functools.lru_cache(maxsize=1024)
def t_ppf(q: float, df: float) -> float:
    """The q-quantile of Student's t (bisection on t_cdf: monotone, and 200 halvings reach float precision)."""
    if not 0.0 < q < 1.0:
        raise ValueError("t_ppf needs 0 < q < 1")
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -t_ppf(1.0 - q, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < q:
        hi *= 2.0
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class Sample:
    """Summary of one group's values: n, mean, sample std and a 95% confidence interval of the mean."""

    n: int
    mean: float | None
    std: float | None
    ci: tuple[float, float] | None  # None when n < 2: one value says nothing about its spread

    def to_json(self) -> dict:
        return {"n": self.n, "mean": self.mean, "std": self.std, "ci": list(self.ci) if self.ci else None}


def describe(values: Sequence[float], level: float = 0.95) -> Sample:
    vals = [float(v) for v in values if math.isfinite(v)]
    n = len(vals)
    if n == 0:
        return Sample(0, None, None, None)
    mean = math.fsum(vals) / n
    if n < 2:
        return Sample(1, mean, None, None)
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in vals) / (n - 1))
    half = t_ppf(0.5 + level / 2.0, n - 1) * std / math.sqrt(n)
    return Sample(n, mean, std, (mean - half, mean + half))


@dataclass(frozen=True)
class Welch:
    """Welch's unequal-variance t-test of mean(a) - mean(b); p is two-sided, None with a reason when undefined."""

    diff: float | None
    t: float | None
    df: float | None
    p: float | None
    note: str | None = None

    def to_json(self) -> dict:
        return {"diff": self.diff, "t": self.t, "df": self.df, "p": self.p, "note": self.note}


def welch(a: Sample, b: Sample) -> Welch:
    if a.n < 2 or b.n < 2 or a.std is None or b.std is None or a.mean is None or b.mean is None:
        diff = None if a.mean is None or b.mean is None else a.mean - b.mean
        return Welch(diff, None, None, None, f"n too small for a test (n = {a.n} vs {b.n}; needs 2 or more per side)")
    va, vb = a.std ** 2 / a.n, b.std ** 2 / b.n
    diff = a.mean - b.mean
    if va + vb == 0.0:
        return Welch(diff, None, None, None, "no spread within either group: a t-test is undefined")
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (a.n - 1) + vb ** 2 / (b.n - 1))
    p = 2.0 * t_cdf(-abs(t), df)
    return Welch(diff, t, df, min(1.0, p))
