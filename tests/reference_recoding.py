"""Slow, obviously correct references for the recoding and suppression methods (duckdb_sdc.methods.
suppression, recoding, generalisation, pram): pairwise counts, subsets enumerated, every suppression
pattern tried."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np


def is_null(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def compatible(a, b) -> bool:
    """Equal on every key where both are non-NULL."""
    return all(is_null(x) or is_null(y) or x == y for x, y in zip(a, b))


def wildcard_fk(rows) -> list[int]:
    """sdcMicro's fk with a NULL matching any value: for each record, the records compatible with it."""
    return [sum(compatible(r, s) for s in rows) for r in rows]


def suppressed(rows, mask):
    """The rows with the cells of `mask` (a set of (record, key)) set to None."""
    return [tuple(None if (i, c) in mask else v for c, v in enumerate(r)) for i, r in enumerate(rows)]


def protecting_sets(rows, i, k) -> list[tuple[int, ...]]:
    """The smallest key sets whose suppression in record i alone gives it >= k compatible records
    (sets containing a key already NULL in it excluded)."""
    p = len(rows[i])
    for size in range(1, p + 1):
        found = []
        for C in itertools.combinations(range(p), size):
            if any(is_null(rows[i][c]) for c in C):
                continue
            probe = tuple(None if c in C else v for c, v in enumerate(rows[i]))
            if sum(compatible(probe, s) for s in rows) >= k:
                found.append(C)
        if found:
            return found
    return []


def allowed_sets(rows, k, importance=None):
    """For each record, the suppressions the rule allows: [()] for a record with fk >= k; () (left as
    it is) or one of its protecting sets otherwise, restricted by importance (sdcMicro's vector) to the
    sets whose keys are least important, compared key by key from the most important."""
    fk = wildcard_fk(rows)
    out = []
    for i, r in enumerate(rows):
        if fk[i] >= k:
            out.append([()])
            continue
        sets = protecting_sets(rows, i, k)
        if importance is not None:
            rank = [tuple(sorted(importance[c] for c in C)) for C in sets]
            sets = [C for C, q in zip(sets, rank) if q == max(rank)]
        out.append([()] + sets)
    return out


def fewest_suppressions(rows, k, importance=None):
    """(the fewest suppressed cells over every suppression the rule allows that gives every record
    fk >= k, one such mask) by trying them all."""
    options = allowed_sets(rows, k, importance)
    best = None
    for pick in itertools.product(*options):
        cost = sum(len(C) for C in pick)
        if best is not None and cost >= best[0]:
            continue
        mask = {(i, c) for i, C in enumerate(pick) for c in C}
        if min(wildcard_fk(suppressed(rows, mask))) >= k:
            best = (cost, mask)
    return best


def follows_the_rule(rows, k, mask, importance=None) -> bool:
    """Whether every record's suppressed keys are an allowed set (see allowed_sets)."""
    options = allowed_sets(rows, k, importance)
    for i in range(len(rows)):
        C = tuple(sorted(c for (j, c) in mask if j == i))
        if C not in options[i]:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# recoding


def band_of(x, breaks, closed="left"):
    """The index of the band [b_j, b_j+1) (closed 'left'; the last band also holds b_n) or (b_j, b_j+1]
    (closed 'right'; the first band also holds b_0) holding x, by scanning; None outside."""
    n = len(breaks) - 1
    for j in range(n):
        lo, hi = breaks[j], breaks[j + 1]
        if closed == "left" and (lo <= x < hi or (j == n - 1 and x == hi)):
            return j
        if closed == "right" and (lo < x <= hi or (j == 0 and x == lo)):
            return j
    return None


def completed_years(birth, reference) -> int:
    """Whole years from birth to reference: the birthday counts once it is reached (29 February's on
    1 March in years without it)."""
    years = reference.year - birth.year
    if (reference.month, reference.day) < (birth.month, birth.day):
        years -= 1
    return years


# ---------------------------------------------------------------------------------------------
# PRAM


def invariant_matrix(p, diagonal, alpha):
    """sdcMicro's invariant PRAM matrix in exact rationals: P with the given diagonal and (1 - d_i) /
    (L - 1) elsewhere on row i, Q_kj = P_jk p_j / sum_l p_l P_lk, R = P Q, alpha R + (1 - alpha) I."""
    L = len(p)
    P = [[Fraction(diagonal[i]) if i == j else (1 - Fraction(diagonal[i])) / (L - 1) for j in range(L)]
         for i in range(L)]
    s = [sum(p[l] * P[l][k] for l in range(L)) for k in range(L)]
    Q = [[P[j][k] * p[j] / s[k] for j in range(L)] for k in range(L)]
    R = [[sum(P[i][k] * Q[k][j] for k in range(L)) for j in range(L)] for i in range(L)]
    a = Fraction(alpha)
    return [[a * R[i][j] + (1 - a) * (1 if i == j else 0) for j in range(L)] for i in range(L)]


# ---------------------------------------------------------------------------------------------
# generalisation


def classes_after(rows, levels, hierarchies):
    """The records' generalised combinations at the given levels (hierarchies[c][level][value])."""
    return [tuple(hierarchies[c][levels[c]][v] for c, v in enumerate(r)) for r in rows]


def brute_generalisation(rows, hierarchies, heights, k, max_suppressed, measure):
    """Every combination of levels: the records in classes smaller than k are suppressed; a
    combination is allowed when at most max_suppressed records are; the least `measure(classes,
    suppressed, levels)` wins (ties: the lowest levels, lexicographically). Returns (levels, value)."""
    best = None
    for levels in itertools.product(*(range(h + 1) for h in heights)):
        gen = classes_after(rows, levels, hierarchies)
        size = {}
        for g in gen:
            size[g] = size.get(g, 0) + 1
        small = [i for i, g in enumerate(gen) if size[g] < k]
        if len(small) > max_suppressed:
            continue
        value = measure(gen, small, levels)
        if best is None or (value, sum(levels), levels) < (best[1], sum(best[0]), best[0]):
            best = (levels, value)
    return best


def discernibility(gen, small, n):
    """ARX's discernibility: the sum of squared class sizes, a suppressed record counting n."""
    size = {}
    kept = [g for i, g in enumerate(gen) if i not in set(small)]
    for g in kept:
        size[g] = size.get(g, 0) + 1
    return sum(s * s for s in size.values()) + len(small) * n


__all__ = [name for name in dir() if not name.startswith("_") and name not in ("itertools", "math", "np",
                                                                              "Fraction", "annotations")]
