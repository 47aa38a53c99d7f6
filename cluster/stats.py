"""The statistics of studies and sweeps, in one place, on SciPy.

Intervals are 95% (``Z95``), tests two-sided. What SciPy has is taken from it
(Wilson intervals, normal and t distributions, the paired t-test); Holm's
step-down correction is four lines SciPy does not ship, nor is Newcombe's
interval of a difference of two proportions (built on SciPy's Wilson intervals).

    >>> wilson_interval(45, 100)                       # doctest: +ELLIPSIS
    (0.3561..., 0.5475...)
    >>> [round(x, 4) for x in difference_interval(56, 70, 48, 80)]   # Newcombe (1998), Table II
    [0.0524, 0.3339]
    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import stats as _scipy

__all__ = ["Z95", "wilson_interval", "difference_interval", "mean_half_width", "sample_variance", "two_sided_p",
           "two_proportion_z_test", "welch_z_test", "fisher_exact", "holm", "paired_t_test"]

#: Two-sided 95% normal quantile.
Z95 = float(_scipy.norm.ppf(0.975))


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``successes / n`` (nan, nan if n = 0)."""
    if n <= 0:
        return math.nan, math.nan
    confidence = 1.0 - 2.0 * float(_scipy.norm.sf(z))
    ci = _scipy.binomtest(int(successes), int(n)).proportion_ci(confidence, method="wilson")
    lo = 0.0 if successes <= 0 else max(0.0, float(ci.low))
    hi = 1.0 if successes >= n else min(1.0, float(ci.high))
    return lo, hi


def difference_interval(k1: int, n1: int, k2: int, n2: int, z: float = Z95) -> tuple[float, float]:
    """The 95% interval of the difference of two independent proportions ``k1/n1 - k2/n2``:
    Newcombe's hybrid score interval (Newcombe 1998, "Interval estimation for the
    difference between independent proportions", method 10), from the two Wilson
    intervals; it stays within [-1, 1] and behaves at 0 and n successes, unlike the
    Wald interval. (nan, nan) if either n is 0."""
    if n1 <= 0 or n2 <= 0:
        return math.nan, math.nan
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, z)
    l2, u2 = wilson_interval(k2, n2, z)
    d = p1 - p2
    return (d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def sample_variance(total: float, total_sq: float, n: int) -> float:
    """The sample variance (ddof 1) from a sum and a sum of squares (0 when n < 2)."""
    if n < 2:
        return 0.0
    mean = total / n
    return max(0.0, total_sq / n - mean * mean) * n / (n - 1)


def mean_half_width(values) -> tuple[float, float]:
    """Mean of ``values`` and the half width of its 95% normal interval (nan if undefined)."""
    x = np.asarray(values, dtype=float)
    k = len(x)
    mean = float(x.mean()) if k else math.nan
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(k) if k > 1 else math.nan
    return mean, half


def t_half_width(values, confidence: float = 0.95) -> float:
    """Half width of the Student t interval of the mean of ``values`` (nan under two
    values): for few units, e.g. boards whose seat-swapped games were averaged."""
    x = np.asarray(values, dtype=float)
    k = len(x)
    if k < 2:
        return math.nan
    return float(_scipy.t.ppf(0.5 + confidence / 2, k - 1)) * float(x.std(ddof=1)) / math.sqrt(k)


def two_sided_p(z: float) -> float:
    """P(|Z| >= |z|) for a standard normal Z."""
    return float(2.0 * _scipy.norm.sf(abs(z)))


def _z_and_p(diff: float, se: float) -> tuple[float, float]:
    if se == 0:
        return (0.0, 1.0) if diff == 0 else (math.copysign(math.inf, diff), 0.0)
    z = diff / se
    return z, two_sided_p(z)


def two_proportion_z_test(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float]:
    """(z, two-sided p) of the pooled two-proportion z-test of ``k1/n1`` against ``k2/n2``
    (nan, nan when a sample is empty)."""
    if n1 == 0 or n2 == 0:
        return math.nan, math.nan
    pooled = (k1 + k2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return _z_and_p(k1 / n1 - k2 / n2, se)


def welch_z_test(mean1: float, var1: float, n1: int, mean2: float, var2: float,
                 n2: int) -> tuple[float, float]:
    """(z, two-sided p) of Welch's difference of means on the normal scale
    (nan, nan when a sample is empty)."""
    if n1 == 0 or n2 == 0:
        return math.nan, math.nan
    return _z_and_p(mean1 - mean2, math.sqrt(var1 / n1 + var2 / n2))


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test on the table [[a, b], [c, d]]."""
    return float(_scipy.fisher_exact([[a, b], [c, d]]).pvalue)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (nan stays nan)."""
    idx = [i for i, p in enumerate(pvalues) if not math.isnan(p)]
    order = sorted(idx, key=lambda i: pvalues[i])
    m = len(order)
    adjusted = [math.nan] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def paired_t_test(x, y) -> tuple[float, float, int]:
    """(t, two-tailed p, df) of a paired t-test of ``x`` against ``y`` (equal lengths;
    ``scipy.stats.ttest_rel``). Identical pairs give (0, 1); constant non-zero
    differences give (+-inf, 0); fewer than two pairs give (nan, nan, df)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    d = x - y
    n = len(d)
    if n < 2:
        return math.nan, math.nan, max(n - 1, 0)
    if float(d.std(ddof=1)) == 0.0:
        mean = float(d.mean())
        return (0.0, 1.0, n - 1) if mean == 0.0 else (math.copysign(math.inf, mean), 0.0, n - 1)
    result = _scipy.ttest_rel(x, y)
    return float(result.statistic), float(result.pvalue), n - 1
