"""Slow, obviously correct references for the risk and utility of key combinations
(duckdb_sdc.measures.keys): every definition written out over pairs of records and, for SUDA2,
over every subset of the keys. Records are tuples of key values, None for NULL; sums are exact
(Fraction) where a float sum could decide a comparison."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations


def matches(a, b, nulls: str = "any") -> bool:
    """Whether records a and b match on every key: equal values, or (nulls='any') a NULL on either side."""
    if nulls == "category":
        return all(x == y for x, y in zip(a, b))
    return all(x is None or y is None or x == y for x, y in zip(a, b))


def matching(rows, i, nulls="any", strata=None, on=None):
    """Indices of the records matching record i (itself included), in its stratum, on the keys `on`
    (positions; all keys when None)."""
    on = range(len(rows[i])) if on is None else on
    mine = tuple(rows[i][j] for j in on)
    return [s for s in range(len(rows))
            if (strata is None or strata[s] == strata[i]) and matches(mine, tuple(rows[s][j] for j in on), nulls)]


def frequencies(rows, w=None, strata=None, nulls="any"):
    """(fk, Fk) of every record by pairwise matching; Fk exact, then rounded to float."""
    fk, Fk = [], []
    for i in range(len(rows)):
        m = matching(rows, i, nulls, strata)
        fk.append(len(m))
        Fk.append(float(sum(Fraction(1 if w is None else w[s]) for s in m)))
    return fk, Fk


def benedetti_franconi(fk: int, Fk: float) -> float:
    """sdcMicro's indivRisk(method = 'approx') for one record, as its R code writes it."""
    if fk == Fk:
        return 1.0 / fk
    pk = fk / Fk
    if fk > 2:
        return pk / (fk - (1 - pk))
    if fk == 2:
        return (pk / (1 - pk)) - ((pk / (1 - pk)) ** 2) * math.log(1 / pk)
    return (pk / (1 - pk)) * math.log(1 / pk)


def msus(rows, nulls="any", strata=None):
    """Every record's minimal sample uniques by brute force over all subsets of the keys: the non-empty
    sets S (tuples of key positions; with nulls='any' none where the record is NULL, a suppressed value
    identifying nothing) on which no other record matches it, while on every non-empty S minus one key
    some other record does."""
    m = len(rows[0])
    unique = {}
    for i in range(len(rows)):
        for size in range(m + 1):
            for S in combinations(range(m), size):
                unique[i, S] = len(matching(rows, i, nulls, strata, S)) == 1
    out = []
    for i in range(len(rows)):
        found = [S for size in range(1, m + 1) for S in combinations(range(m), size)
                 if unique[i, S] and not (nulls == "any" and any(rows[i][j] is None for j in S))
                 and not any(size > 1 and unique[i, tuple(x for x in S if x != j)] for j in S)]
        out.append(found)
    return out


def suda_score(found, m, scores="elliot"):
    if scores == "elliot":
        return float(sum(math.factorial(m - len(S)) for S in found))
    return sum((2 ** (m - len(S)) - 1) * math.factorial(len(S)) * math.factorial(m - len(S)) / math.factorial(m)
               for S in found)


def class_values(rows, sensitive, i, nulls="any", strata=None):
    """The sensitive values of the records matching record i (NULL a value)."""
    return [sensitive[s] for s in matching(rows, i, nulls, strata)]


def l_diversity(rows, sensitive, nulls="any", strata=None):
    distinct, entropy = [], []
    for i in range(len(rows)):
        vals = class_values(rows, sensitive, i, nulls, strata)
        counts = {v: vals.count(v) for v in set(vals)}
        distinct.append(len(counts))
        entropy.append(math.exp(-sum(c / len(vals) * math.log(c / len(vals)) for c in counts.values())))
    return distinct, entropy


def t_closeness(rows, sensitive, nulls="any", strata=None):
    """1/2 sum_x |p(x) - q(x)| with exact shares, q over the record's stratum."""
    out = []
    for i in range(len(rows)):
        vals = class_values(rows, sensitive, i, nulls, strata)
        pool = [sensitive[s] for s in range(len(rows)) if strata is None or strata[s] == strata[i]]
        cats = set(pool)
        out.append(float(sum(abs(Fraction(vals.count(v), len(vals)) - Fraction(pool.count(v), len(pool)))
                             for v in cats) / 2))
    return out


def class_loss(rows, strata=None):
    """ARX's discernibility and average class size over the classes of equal rows (None a value), a row
    of None only suppressed; each stratum apart."""
    strata = strata or [0] * len(rows)
    dm, classes, extra = 0, set(), set()
    for i, r in enumerate(rows):
        n_s = strata.count(strata[i])
        if all(v is None for v in r):
            dm += n_s
            extra.add(strata[i])
        else:
            dm += sum(1 for j, q in enumerate(rows) if q == r and strata[j] == strata[i])
            classes.add((strata[i], r))
    return dm, len(rows) / (len(classes) + len(extra))


def non_uniform_entropy(before, after, strata=None):
    """sum over records of -log2(n(a, b) / n(b)) per column (lists of values, None a value)."""
    strata = strata or [0] * len(before[0])
    out = []
    for b, a in zip(before, after):
        total = 0.0
        for i in range(len(b)):
            joint = sum(1 for j in range(len(b)) if b[j] == b[i] and a[j] == a[i] and strata[j] == strata[i])
            rel = sum(1 for j in range(len(b)) if a[j] == a[i] and strata[j] == strata[i])
            total -= math.log2(joint / rel)
        out.append(total)
    return out
