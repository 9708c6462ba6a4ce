"""Slow, obviously correct references for box anonymisation (duckdb_sdc.methods.boxes)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.optimize import minimize


def statistic(X, kind, i, j=None) -> float:
    """The population statistic straight from its definition."""
    x = X[:, i]
    if kind == "mean":
        return float(x.mean())
    if kind == "var":
        return float(((x - x.mean()) ** 2).mean())
    if kind == "sd":
        return math.sqrt(((x - x.mean()) ** 2).mean())
    y = X[:, j]
    cov = float(((x - x.mean()) * (y - y.mean())).mean())
    if kind == "cov":
        return cov
    return cov / math.sqrt(((x - x.mean()) ** 2).mean() * ((y - y.mean()) ** 2).mean())


def numeric_gradient(X, kind, i, j=None, h=1e-6) -> np.ndarray:
    """dC/dx at every record and attribute by central differences."""
    g = np.zeros(X.shape)
    for p in range(X.shape[0]):
        for q in range(X.shape[1]):
            up, down = X.copy(), X.copy()
            up[p, q] += h
            down[p, q] -= h
            g[p, q] = (statistic(up, kind, i, j) - statistic(down, kind, i, j)) / (2 * h)
    return g


def brute_radius(X, m) -> np.ndarray:
    """Max-norm distance to the m-th nearest record counting the record itself, by all pairs."""
    d = np.abs(X[:, None, :] - X[None, :, :]).max(axis=2)
    return np.sort(d, axis=1)[:, m - 1]


def brute_box(a, s, L):
    """min sum a_i D_i s.t. prod D_i >= s^n, D_i >= L_i (a_i > 0, L_i > 0): over every subset S of
    attributes held at L_i, the rest at the Lagrange optimum of the product constraint; the feasible
    candidate of least cost. Returns (D, cost, held subset)."""
    n = len(a)
    best = (None, math.inf, None)
    for size in range(n + 1):
        for S in itertools.combinations(range(n), size):
            rest = [i for i in range(n) if i not in S]
            D = np.array(L, dtype=float)
            if rest:
                vol = s ** n / np.prod([L[i] for i in S]) if S else s ** n
                c = (vol * np.prod([a[i] for i in rest])) ** (1.0 / len(rest))
                for i in rest:
                    D[i] = c / a[i]
                if any(D[i] < L[i] * (1 - 1e-12) for i in rest):
                    continue
            elif np.prod(L) < s ** n * (1 - 1e-12):
                continue
            cost = float(np.dot(a, D))
            if cost < best[1]:
                best = (D, cost, set(S))
    return best


def brute_dismissal(c, n, A) -> np.ndarray:
    """Every threshold c0 in the values of c: keep c <= c0; least (n/#S) sum_S c + A/sqrt(#S), ties to
    the larger set."""
    best = None
    for c0 in sorted(set(c.tolist())):
        keep = c <= c0
        J = n * c[keep].mean() + A / math.sqrt(keep.sum())
        if best is None or J <= best[0] + 1e-15 * max(1.0, abs(J)):
            best = (J, keep)
    return best[1]


def scipy_weights(c, n, A) -> tuple[np.ndarray, float]:
    """min n w.c + A |w| over the simplex by SLSQP from equal weights (a generic convex solver)."""
    N = len(c)

    def f(w):
        return n * np.dot(w, c) + A * np.sqrt(np.dot(w, w))

    def grad(w):
        return n * c + A * w / np.sqrt(np.dot(w, w))

    res = minimize(f, np.full(N, 1.0 / N), jac=grad, method="SLSQP", bounds=[(0, 1)] * N,
                   constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1, "jac": lambda w: np.ones(N)}],
                   options={"ftol": 1e-15, "maxiter": 1000})
    return res.x, float(res.fun)


def eps_distinct(v, eps) -> int:
    """Largest number of values of v pairwise at least eps apart: the longest chain of sorted values
    with consecutive gaps >= eps, by dynamic programming over all pairs."""
    v = np.sort(np.asarray(v, dtype=float))
    best = np.ones(len(v), dtype=int)
    for t in range(len(v)):
        for u in range(t):
            if v[t] - v[u] >= eps:
                best[t] = max(best[t], best[u] + 1)
    return int(best.max()) if len(v) else 0


def slow_aware_mondrian(X, a, k, l=1, eps=None):
    """The characteristic-aware Mondrian written as a plain recursion: score = width * mean a; try
    attributes by decreasing score (ties to the first), skip a score <= 0; cut at the lower median;
    allowed when both sides have >= k records and (l > 1) >= l eps-distinct values per attribute."""
    N, n = X.shape
    labels = np.full(N, -1)
    counter = [0]

    def diverse(ids):
        return all(eps_distinct(X[ids, j], eps[j]) >= l for j in range(n))

    def visit(ids):
        m = len(ids)
        if m >= 2 * k:
            scores = [(X[ids, j].max() - X[ids, j].min()) * (sum(float(a[i, j]) for i in ids) / m)
                      for j in range(n)]
            for j in sorted(range(n), key=lambda j: (-scores[j], j)):
                if not scores[j] > 0:
                    break
                split = np.sort(X[ids, j])[(m - 1) // 2]
                left = [i for i in ids if X[i, j] <= split]
                right = [i for i in ids if X[i, j] > split]
                if len(left) < k or len(right) < k:
                    continue
                if l > 1 and not (diverse(left) and diverse(right)):
                    continue
                visit(left)
                visit(right)
                return
        labels[ids] = counter[0]
        counter[0] += 1

    visit(list(range(N)))
    return labels
