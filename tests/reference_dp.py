"""Slow, obviously correct references for the DP/iDP mechanisms: sensitivities by brute force over
single-record changes, in exact rational arithmetic."""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def cbls_preprocessed_sum(values) -> Fraction:
    """Sum of the cluster after one smallest value is replaced by the second smallest and one
    largest by the second largest (as the paper states it, on the sorted values)."""
    s = sorted(Fraction(v) for v in values)
    s[0] = s[1]
    s[-1] = s[-2]
    return sum(s, Fraction(0))


def candidate_values(values, lb=None, ub=None, steps: int = 60) -> list[Fraction]:
    """Values a changed record may take: a fine grid over (and well beyond) the cluster's range,
    every value of the cluster and its immediate neighbours, far-out values; restricted to
    [lb, ub] when a domain is given (with both bounds included)."""
    vals = [Fraction(v) for v in values]
    lo, hi = min(vals), max(vals)
    span = max(hi - lo, Fraction(1))
    a, b = (lo - 2 * span, hi + 2 * span) if lb is None else (Fraction(lb), Fraction(ub))
    grid = [a + (b - a) * i / steps for i in range(steps + 1)]
    near = [v + d for v in vals for d in (Fraction(-1, 7), Fraction(0), Fraction(1, 7))]
    far = [Fraction(-10**12), Fraction(10**12)] if lb is None else []
    out = grid + near + far
    if lb is not None:
        out = [y for y in out if Fraction(lb) <= y <= Fraction(ub)]
    return out


def max_change(values, statistic, candidates) -> Fraction:
    """Largest |statistic(changed) - statistic(values)| over every single-record change of values
    to every candidate."""
    base = statistic(values)
    best = Fraction(0)
    for i in range(len(values)):
        for y in candidates:
            changed = list(values)
            changed[i] = y
            best = max(best, abs(statistic(changed) - base))
    return best


def mean(values) -> Fraction:
    return sum((Fraction(v) for v in values), Fraction(0)) / len(values)


def ranking_centroids(x, k) -> list[Fraction]:
    """Exact centroids of individual ranking microaggregation (clusters of k consecutive sorted
    values, the last one also takes the remainder)."""
    s = sorted(Fraction(v) for v in x)
    g = len(s) // k
    out = []
    for t in range(g):
        part = s[t * k:] if t == g - 1 else s[t * k:(t + 1) * k]
        out.append(sum(part, Fraction(0)) / len(part))
    return out


def ranking_sizes(n: int, k: int) -> list[int]:
    g = n // k
    return [k] * (g - 1) + [n - (g - 1) * k]


def kolmogorov_pvalue(sample, cdf) -> float:
    """Two-sided one-sample Kolmogorov-Smirnov test: p-value of the statistic D_n by the asymptotic
    Kolmogorov distribution with Stephens' small-sample correction."""
    x = np.sort(np.asarray(sample, dtype=np.float64))
    n = x.shape[0]
    f = cdf(x)
    d = max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))
    lam = (np.sqrt(n) + 0.12 + 0.11 / np.sqrt(n)) * d
    k = np.arange(1, 101)
    return float(np.clip(2 * np.sum((-1.0) ** (k - 1) * np.exp(-2 * k**2 * lam**2)), 0.0, 1.0))


def laplace_cdf(z, scale: float = 1.0):
    z = np.asarray(z, dtype=np.float64) / scale
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))
