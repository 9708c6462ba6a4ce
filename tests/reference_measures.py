"""Slow, obviously correct references for the measures: textbook formulas as explicit loops over
cells, records and pairs (O(n^2) and worse where the definition is)."""

from __future__ import annotations

import math
from itertools import permutations

import numpy as np

M64 = (1 << 64) - 1


def columns(a) -> list[list[float]]:
    a = np.asarray(a, dtype=np.float64)
    a = a.reshape(len(a), -1)
    return [[float(v) for v in a[:, j]] for j in range(a.shape[1])]


def sample_sd(col) -> float:
    m = sum(col) / len(col)
    return math.sqrt(sum((v - m) ** 2 for v in col) / (len(col) - 1))


def mae(x, xm):
    cells = [abs(a - b) for cx, cm in zip(columns(x), columns(xm)) for a, b in zip(cx, cm)]
    return sum(cells) / len(cells)


def mse(x, xm):
    cells = [(a - b) ** 2 for cx, cm in zip(columns(x), columns(xm)) for a, b in zip(cx, cm)]
    return sum(cells) / len(cells)


def il1(x, xm):
    cells = [abs(a - b) / abs(a) for cx, cm in zip(columns(x), columns(xm)) for a, b in zip(cx, cm) if a != 0]
    return sum(cells) / len(cells)


def il1s(x, xm):
    total, count = 0.0, 0
    for cx, cm in zip(columns(x), columns(xm)):
        s = sample_sd(cx)
        for a, b in zip(cx, cm):
            total += abs(a - b) / (math.sqrt(2) * s)
            count += 1
    return total / count


def sse_sst(x, xm):
    """100 SSE / SST over all cells of the z-scores (original mean and sample sd)."""
    sse = sst = 0.0
    for cx, cm in zip(columns(x), columns(xm)):
        m, s = sum(cx) / len(cx), sample_sd(cx)
        z = [(v - m) / s for v in cx]
        zm = [(v - m) / s for v in cm]
        zbar = sum(z) / len(z)
        sse += sum((a - b) ** 2 for a, b in zip(z, zm))
        sst += sum((a - zbar) ** 2 for a in z)
    return 100 * sse / sst


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _bits(v: float) -> int:
    return int(np.float64(v + 0.0).view(np.uint64))


def tie_key(seed: int, column: int, value: float, partner: float) -> int:
    """The documented tie key: SplitMix64 of (seed, column), the value and the partner value."""
    start = _mix(((seed & M64) * 0x9E3779B97F4A7C15 + column + 0x9E3779B97F4A7C15) & M64)
    h = _mix(_bits(value) ^ start)
    return _mix(((h + 0x9E3779B97F4A7C15) & M64) ^ _bits(partner))


def ranks(values, partner, ties, seed=0, column=0) -> list[int]:
    """Ranks 1..n; random ties by the key of the values and partners scaled by 2^-e, e the binary
    exponent of the largest magnitude of both (max |v| 2^-e in [1/2, 1))."""
    n = len(values)
    top = max(abs(float(v)) for v in list(values) + list(partner))
    e = math.frexp(top)[1] if top > 0 else 0
    if ties == "first":
        key = lambda i: (values[i], i)  # noqa: E731
    else:
        key = lambda i: (values[i], tie_key(seed, column, math.ldexp(values[i], -e), math.ldexp(partner[i], -e)),  # noqa: E731
                         i)
    order = sorted(range(n), key=key)
    r = [0] * n
    for rank, i in enumerate(order, start=1):
        r[i] = rank
    return r


def rank_bounded(x, xm, power, ties="random", seed=0):
    """sum |r - r'|^power divided by the same sum for reversed ranks (computed, not by formula)."""
    num = den = 0
    for j, (cx, cm) in enumerate(zip(columns(x), columns(xm))):
        r = ranks(cx, cm, ties, seed, j)
        rm = ranks(cm, cx, ties, seed, j)
        n = len(cx)
        num += sum(abs(a - b) ** power for a, b in zip(r, rm))
        den += sum(abs(i - (n + 1 - i)) ** power for i in range(1, n + 1))
    return num / den if den else 0.0


def interval_disclosure(x, xm, k=0.05, max_outside=0):
    cx, cm = columns(x), columns(xm)
    n = len(cx[0])
    sds = [sample_sd(c) if n > 1 else 0.0 for c in cm]
    at_risk = 0
    for i in range(n):
        outside = sum(not (cm[j][i] - k * sds[j] <= cx[j][i] <= cm[j][i] + k * sds[j]) for j in range(len(cx)))
        at_risk += outside <= max_outside
    return at_risk / n


def sd_interval_disclosure(x, xm):
    cx, cm = columns(x), columns(xm)
    n = len(cx[0])
    shares = []
    for q in range(1, 11):
        inside = 0
        for a_col, m_col in zip(cx, cm):
            s = sample_sd(a_col) if n > 1 else 0.0
            inside += sum(abs(a - b) <= q / 100 * s for a, b in zip(a_col, m_col))
        shares.append(inside / (n * len(cx)))
    return sum(shares) / len(shares)


def rank_interval_disclosure(x, xm):
    cx, cm = columns(x), columns(xm)
    n = len(cx[0])
    shares = []
    for q in range(1, 11):
        inside = 0
        for a_col, m_col in zip(cx, cm):
            srt = sorted(m_col)
            for a, b in zip(a_col, m_col):
                own = [r for r in range(n) if srt[r] == b]  # every rank the masked value holds
                near = [r for r in range(n) if any(abs(r - o) < q * n / 100 for o in own)]
                inside += srt[min(near)] <= a <= srt[max(near)]
        shares.append(inside / (n * len(cx)))
    return sum(shares) / len(shares)


def linkage_credit(Z, ZM, rank=1) -> float:
    """DDR by brute force on standardised data: all n x n squared distances."""
    n = Z.shape[0]
    d2 = ((ZM[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2)
    credit = 0.0
    for i in range(n):
        a = int((d2[i] < d2[i, i]).sum())
        t = int((d2[i] == d2[i, i]).sum())
        if a < rank <= a + t:
            credit += 1 / t
    return credit / n


def global_linkage_rates(Z, ZM) -> set[float]:
    """The linkage rates of every optimal one-to-one assignment, trying every permutation (n <= 7).
    Several assignments can be optimal (in one column, crossing and nested matches often cost the
    same), so the rate of any of them is right."""
    n = Z.shape[0]
    d = np.sqrt(((ZM[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2))
    costs = {perm: sum(d[i, perm[i]] for i in range(n)) for perm in permutations(range(n))}
    best = min(costs.values())
    return {sum(perm[i] == i for i in range(n)) / n for perm, c in costs.items() if c <= best * (1 + 1e-12)}


def il_metrics(x, xm):
    cx, cm = columns(x), columns(xm)
    n, p = len(cx[0]), len(cx)

    def cov(a, b):
        ma, mb = sum(a) / n, sum(b) / n
        return sum((u - ma) * (v - mb) for u, v in zip(a, b)) / (n - 1)

    def corr(cols, i, j):
        vi, vj = cov(cols[i], cols[i]), cov(cols[j], cols[j])
        return 0.0 if vi == 0 or vj == 0 else cov(cols[i], cols[j]) / math.sqrt(vi * vj)

    def variation(pairs):
        terms = [abs(a - b) / abs(a) for a, b in pairs if a != 0]
        return sum(terms) / len(terms) if terms else None

    out = {
        "il1": variation([(a, b) for c1, c2 in zip(cx, cm) for a, b in zip(c1, c2)]),
        "means": variation([(sum(c1) / n, sum(c2) / n) for c1, c2 in zip(cx, cm)]),
        "covariances": variation([(cov(cx[i], cx[j]), cov(cm[i], cm[j])) for i in range(p) for j in range(i, p)]),
        "variances": variation([(cov(cx[i], cx[i]), cov(cm[i], cm[i])) for i in range(p)]),
        "correlations": (sum(abs(corr(cx, i, j) - corr(cm, i, j)) for i in range(p) for j in range(i + 1, p))
                         / (p * (p - 1) / 2) if p > 1 else None),
    }
    present = [v for v in out.values() if v is not None]
    out["composite"] = 100 * sum(present) / len(present)
    return out


def entropy(xm) -> float:
    total = 0.0
    for col in columns(xm):
        n = len(col)
        for v in set(col):
            f = col.count(v) / n
            total -= f * math.log2(f)
    return total
