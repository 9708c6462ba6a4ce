"""Risk and utility of categorical key combinations, on numpy arrays (no DuckDB here).

The key variables (quasi-identifiers) of a record are the columns an intruder can know from other
sources: region, sex, age band, occupation. Every measure here is a function of the records'
combinations of key values, counted over the whole file or within each stratum.

**NULL semantics** (one rule for every measure, the steward's choice `nulls`):

* `nulls='any'` (the default): a NULL key value is a suppressed value that may stand for any value,
  so it matches every value of that key. Two records *match* when, for every key, both values are
  equal or at least one is NULL. The sample frequency f_k of a record is the number of records that
  match it (itself included); F_k is the sum of their sampling weights. This is how sdcMicro's
  `freqCalc` counts a missing key ("a missing value stands for any of the possible categories",
  its `alpha = 1`), and what makes local suppression lower the risk. Matching is not transitive
  (a = (1, NULL) matches b = (1, 2) and c = (1, 3), which do not match each other), so the records
  matching one another do not form classes, and f_k is not the size of a group. One difference from
  sdcMicro 5.8.1: with two or more keys, `freqCalc` does not add a record whose keys are *all*
  missing to the frequencies of the complete records (its `addAllNAtoKeys` switch is off), though it
  adds it to those of the records with some missing keys and gives the all-missing record itself
  f_k = n. Here the rule is symmetric: such a record matches every record, and every record counts
  it. sdcMicro's single-key case and its documented definition agree with this.
* `nulls='category'`: NULL is one more value of the key, equal only to NULL (a GROUP BY's groups).
  f_k is then the size of the record's group of equal combinations (sdcMicro's `freqCalc` on data
  whose missing values have been recoded to a category of their own).

Strata (`strata`, one column or several) are counted apart: records in different strata never
match; a NULL stratum value is a stratum of its own.

Keys are given as columns: a pandas DataFrame (its columns), a mapping of names to columns, a 2-D
array (n records x m keys) or a sequence of m columns of equal length. Values may be of any type
that pandas can factorise (integers, text, dates, booleans); None, NaN, NaT and pandas' NA are NULL.

Cost: O(n) hashing to find the distinct combinations, then O(C P) for C distinct combinations and P
distinct patterns of NULL keys (P = 1 without NULLs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numba as nb
import numpy as np
import pandas as pd

from .._numerics import exponent, from_unit
from .._validate import fail, reporting
from ..params import Number, choice

NULLS = choice("any", "category", doc="NULL key values: 'any' (a NULL matches every value of its key, as sdcMicro "
                                      "counts it) or 'category' (NULL is one more value, equal only to NULL)")

_SPAN = 1 << 62  # the largest mixed-radix code span before the codes are made dense again


# ---------------------------------------------------------------------------------------------
# inputs


def _show(values, limit: int = 5) -> str:
    """Up to `limit` offending values, as a message lists them."""
    shown = ", ".join("NULL" if v is None or (isinstance(v, float) and np.isnan(v)) else repr(v)
                      for v in list(values)[:limit])
    return shown + (", ..." if len(values) > limit else "")


def key_columns(func: str, param: str, keys) -> tuple[list[str], list]:
    """(names, columns) of the key columns `keys` (module docstring); refuses no columns, columns of
    different lengths and no records."""
    if keys is None:
        raise fail(func, f"{param} must not be None", param)
    if isinstance(keys, pd.DataFrame):
        names, cols = [str(c) for c in keys.columns], [keys[c] for c in keys.columns]
    elif isinstance(keys, Mapping):
        names, cols = [str(c) for c in keys], list(keys.values())
    elif isinstance(keys, np.ndarray) and keys.ndim == 2:
        names, cols = [f"key{j}" for j in range(keys.shape[1])], [keys[:, j] for j in range(keys.shape[1])]
    elif isinstance(keys, (np.ndarray, pd.Series)) and keys.ndim == 1:
        names, cols = ["key0"], [keys]
    elif isinstance(keys, Sequence) and not isinstance(keys, (str, bytes)):
        cols = list(keys)
        names = [getattr(c, "name", None) or f"key{j}" for j, c in enumerate(cols)]
        names = [str(n) for n in names]
    else:
        raise fail(func, f"{param} must be a DataFrame, a mapping of names to columns, a 2-D array or a sequence "
                         f"of columns, got {type(keys).__name__}", param)
    if not cols:
        raise fail(func, f"{param} must hold at least one key column", param)
    lengths = [len(c) for c in cols]
    if len(set(lengths)) > 1:
        raise fail(func, f"{param} has columns of different lengths {lengths[:5]}; give one value per record in "
                         "every column", param)
    if lengths[0] == 0:
        raise fail(func, f"{param} has no records; the measures need at least one record", param)
    return names, cols


def _codes(column) -> tuple[np.ndarray, int]:
    """(codes, cardinality): the values of one column as dense int64 codes 0..card-1, -1 for NULL."""
    codes, uniques = pd.factorize(pd.Series(column) if isinstance(column, list) else column, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), len(uniques)


def _dense(parts: list[tuple[np.ndarray, int]]) -> tuple[np.ndarray, int]:
    """Dense group ids 0..g-1 of the rows of the columns `parts` ((codes 0..card-1, card) each) and g:
    mixed-radix codes, made dense (hashing) whenever the span would pass 2^62."""
    n = parts[0][0].shape[0]
    g = np.zeros(n, np.int64)
    span = 1
    for codes, card in parts:
        card = max(card, 1)
        if span > _SPAN // card:
            g, span = _factorize(g)
        g = g * card + codes
        span *= card
    return _factorize(g)


def _factorize(g: np.ndarray) -> tuple[np.ndarray, int]:
    ids, uniques = pd.factorize(g)
    return np.asarray(ids, dtype=np.int64), len(uniques)


def _strata_codes(func: str, strata, n: int) -> tuple[np.ndarray, int]:
    """Dense stratum ids of the records (one stratum without strata); a NULL stratum value is a value."""
    if strata is None:
        return np.zeros(n, np.int64), 1
    _, cols = key_columns(func, "strata", strata)
    if len(cols[0]) != n:
        raise fail(func, f"strata has {len(cols[0])} values but there are {n} records", "strata")
    parts = []
    for c in cols:
        codes, card = _codes(c)
        parts.append((np.where(codes < 0, card, codes), card + 1))
    return _dense(parts)


def _weights(func: str, weights, n: int) -> np.ndarray | None:
    """The sampling weights as float64, finite and > 0, one per record (None: none given); the
    offending values (up to five) are named."""
    if weights is None:
        return None
    try:
        w = np.array([np.nan if v is None else v for v in weights], dtype=np.float64) \
            if not isinstance(weights, np.ndarray) else weights.astype(np.float64)
    except (TypeError, ValueError):
        raise fail(func, f"weights must be numbers, got {type(weights).__name__}", "weights") from None
    if w.ndim != 1 or w.shape[0] != n:
        raise fail(func, f"weights has {w.size} weights but there are {n} records; give one weight per record",
                   "weights")
    bad = ~(np.isfinite(w) & (w > 0))
    if bad.any():
        raise fail(func, f"weights must be finite numbers > 0 (NULL is refused: every record takes part); "
                         f"{int(bad.sum())} are not: {_show(w[bad].tolist())}", "weights")
    return w


class _Combos(NamedTuple):
    """The distinct combinations of (stratum, keys) of the records."""

    of: np.ndarray        # (n,) combination of every record
    codes: np.ndarray     # (C, m) key codes of every combination, -1 for NULL
    stratum: np.ndarray   # (C,) stratum id
    count: np.ndarray     # (C,) number of records, float64 (exact below 2^53)
    cards: list[int]      # cardinality of every key (without NULL)
    n_strata: int


def _combos(func: str, keys, strata, nulls: str) -> tuple[list[str], _Combos]:
    names, cols = key_columns(func, "keys", keys)
    n = len(cols[0])
    s, n_strata = _strata_codes(func, strata, n)
    codes, cards = [], []
    for c in cols:
        k, card = _codes(c)
        if nulls == "category":  # NULL is one more value
            k = np.where(k < 0, card, k)
            card += 1
        codes.append(k)
        cards.append(card)
    of, C = _dense([(s, n_strata)] + [(k + 1, card + 1) for k, card in zip(codes, cards)])
    first = np.full(C, -1, np.int64)
    first[of[::-1]] = np.arange(n - 1, -1, -1)  # the first record of every combination
    matrix = np.stack([k[first] for k in codes], axis=1)
    count = np.bincount(of, minlength=C).astype(np.float64)
    return names, _Combos(of, matrix, s[first], count, cards, n_strata)


# ---------------------------------------------------------------------------------------------
# frequencies


def _matching_sums(cb: _Combos, values: list[np.ndarray]) -> list[np.ndarray]:
    """For every combination a and every array v of per-combination values, the sum of v over the
    combinations that match a (same stratum; every key equal or NULL on either side), a included.

    For a combination a with NULL pattern P (the set of its NULL keys) and b with pattern Q, a and b
    match iff they are equal outside P | Q: b masked by P equals a masked by Q. So for each pattern P,
    the combinations b are grouped by (stratum, Q_b, b masked by P), and each a of pattern P looks up
    (stratum, Q, a masked by Q) for every pattern Q. Each b is found once, by its own Q."""
    null = cb.codes < 0
    if not null.any():
        return [v.copy() for v in values]
    C, m = cb.codes.shape
    pattern, n_pat = _dense([(null[:, j].astype(np.int64), 2) for j in range(m)])
    first = np.full(n_pat, -1, np.int64)
    first[pattern[::-1]] = np.arange(C - 1, -1, -1)
    masks = null[first]  # (n_pat, m)
    out = [np.zeros(C) for _ in values]
    for p in range(n_pat):
        mine = np.flatnonzero(pattern == p)
        # rows: every combination b masked by P, then every a of pattern P masked by each pattern Q
        b_codes = np.where(masks[p], -1, cb.codes)
        a_codes = np.concatenate([np.where(masks[q], -1, cb.codes[mine]) for q in range(n_pat)])
        keys = np.concatenate([b_codes, a_codes])
        stratum = np.concatenate([cb.stratum, np.tile(cb.stratum[mine], n_pat)])
        pat = np.concatenate([pattern, np.repeat(np.arange(n_pat), mine.shape[0])])
        parts = [(stratum, cb.n_strata), (pat, n_pat)] + [(keys[:, j] + 1, cb.cards[j] + 1) for j in range(m)]
        group, g = _dense(parts)
        for v, o in zip(values, out):
            sums = np.bincount(group[:C], weights=v, minlength=g)
            found = sums[group[C:]].reshape(n_pat, mine.shape[0])
            o[mine] = found.sum(axis=0)
    return out


class KeyFrequencies(NamedTuple):
    """f_k (int64) and F_k (float64) of every record; F_k = f_k without weights."""

    fk: np.ndarray
    Fk: np.ndarray


def key_frequencies(keys, weights=None, *, strata=None, nulls: str = "any") -> KeyFrequencies:
    """The sample frequency f_k of every record's key combination and its estimated population
    frequency F_k, the sum of the sampling weights of the records counted in f_k (sdcMicro's
    `freqCalc` fk and Fk). `nulls` and `strata` as the module docstring says; `weights` one finite
    weight > 0 per record (None: F_k = f_k). k-anonymity over the keys is `fk.min() >= k`.

    F_k is summed on the weights scaled by a power of two (exact), so weights at 1e-300 or 1e300
    give F_k exactly rescaled; an F_k beyond float64 is refused (`OutOfRange`)."""
    func = "key_frequencies"
    nulls = NULLS.check(nulls, func, "nulls")
    _, cb = _combos(func, keys, strata, nulls)
    n = cb.of.shape[0]
    w = _weights(func, weights, n)
    if w is None:
        (fk,) = _matching_sums(cb, [cb.count])
        fk = fk.astype(np.int64)[cb.of]
        return KeyFrequencies(fk, fk.astype(np.float64))
    e = exponent(w)
    wsum = np.bincount(cb.of, weights=np.ldexp(w, -e), minlength=cb.count.shape[0])
    fk, Fk = _matching_sums(cb, [cb.count, wsum])
    Fk = from_unit(func, "the estimated population frequency F_k", Fk, e)
    return KeyFrequencies(fk.astype(np.int64)[cb.of], Fk[cb.of])


# ---------------------------------------------------------------------------------------------
# individual and global risk


def benedetti_franconi(fk: np.ndarray, Fk: np.ndarray) -> np.ndarray:
    """The individual risk of records with sample frequencies fk and estimated population
    frequencies Fk >= fk: the approximation of Benedetti & Franconi (1998) that sdcMicro's
    `indivRisk(method = "approx")` computes. With p = fk / Fk:

    * fk = Fk (a population, or weights of 1): 1 / fk;
    * fk = 1: p / (1 - p) log(1 / p);
    * fk = 2: p / (1 - p) - (p / (1 - p))^2 log(1 / p);
    * fk > 2: p / (fk - (1 - p)).

    The same formulas, written so that Fk close to fk loses no digits: p / (1 - p) = fk / (Fk - fk),
    log(1 / p) = log1p((Fk - fk) / fk), and for fk = 2 with u = (Fk - 2) / 2 below 1e-4 the series
    (u - log1p(u)) / u^2 = 1/2 - u/3 + u^2/4 - u^3/5 (the direct form cancels there)."""
    fk = np.asarray(fk, dtype=np.float64)
    Fk = np.asarray(Fk, dtype=np.float64)
    out = np.empty(fk.shape[0])
    equal = Fk == fk
    out[equal] = 1.0 / fk[equal]
    with np.errstate(divide="ignore", invalid="ignore"):
        d = Fk - fk
        u = d / fk
        one = ~equal & (fk == 1)
        out[one] = np.log1p(u[one]) / u[one]
        two = ~equal & (fk == 2)
        uu = u[two]
        direct = (uu - np.log1p(uu)) / (uu * uu)
        series = 0.5 - uu / 3 + uu * uu / 4 - uu ** 3 / 5
        out[two] = np.where(uu < 1e-4, series, direct)
        more = ~equal & (fk > 2)
        p = fk[more] / Fk[more]
        out[more] = p / (fk[more] - (1.0 - p))
    return out


class IndividualRisk(NamedTuple):
    """f_k, F_k and the Benedetti-Franconi individual risk of every record."""

    fk: np.ndarray
    Fk: np.ndarray
    risk: np.ndarray


def _risk(func: str, freq: KeyFrequencies) -> np.ndarray:
    low = freq.Fk < freq.fk
    if low.any():
        bad = np.flatnonzero(low)
        raise fail(func, f"weights make the estimated population frequency F_k smaller than the sample frequency "
                         f"f_k for {bad.shape[0]} records (records {_show(bad.tolist())}: F_k "
                         f"{_show(freq.Fk[bad].tolist())}, f_k {_show(freq.fk[bad].tolist())}); the "
                         "Benedetti-Franconi model needs F_k >= f_k, sampling weights >= 1", "weights")
    return benedetti_franconi(freq.fk, freq.Fk)


def individual_risk(keys, weights=None, *, strata=None, nulls: str = "any") -> IndividualRisk:
    """Every record's re-identification risk by the Benedetti-Franconi estimate (`benedetti_franconi`),
    from f_k and F_k as `key_frequencies` counts them: sdcMicro's `indivRisk(freqCalc(...), method =
    "approx")`, and its `measure_risk` (whose `risk` column it is). Without weights the risk is 1 / f_k
    (sdcMicro's survey = FALSE). Weights that make F_k < f_k are refused (the model needs a population
    at least as large as the sample)."""
    func = "individual_risk"
    with reporting(func):
        freq = key_frequencies(keys, weights, strata=strata, nulls=nulls)
    return IndividualRisk(freq.fk, freq.Fk, _risk(func, freq))


def global_risk(keys, weights=None, *, strata=None, nulls: str = "any") -> dict:
    """The global risk of the file (sdcMicro's `measure_risk`): `expected_reidentifications`, the sum
    of the individual risks (global_risk_ER), and `global_risk`, that sum over the number of records;
    with `records` and `sample_uniques` (records with f_k = 1)."""
    func = "global_risk"
    with reporting(func):
        r = individual_risk(keys, weights, strata=strata, nulls=nulls)
    total = float(r.risk.sum())
    return {"records": int(r.fk.shape[0]), "sample_uniques": int((r.fk == 1).sum()),
            "expected_reidentifications": total, "global_risk": total / r.fk.shape[0]}


# ---------------------------------------------------------------------------------------------
# SUDA2: special uniques


@nb.njit(cache=True, nogil=True)
def _hash_row(codes, s, cols, nullmask):
    """A 64-bit hash of the codes of combination s at the positions `cols` (a NULL, -1, where the bit of
    `nullmask` is set)."""
    h = np.uint64(1469598103934665603)
    for t in range(cols.shape[0]):
        v = -1 if (nullmask >> t) & 1 else codes[s, cols[t]]
        h = (h ^ np.uint64(v + 2)) * np.uint64(1099511628211)
        h ^= h >> np.uint64(29)
    return h


@nb.njit(cache=True, nogil=True)
def _same(codes, a, amask, b, bmask, cols):
    for t in range(cols.shape[0]):
        va = -1 if (amask >> t) & 1 else codes[a, cols[t]]
        vb = -1 if (bmask >> t) & 1 else codes[b, cols[t]]
        if va != vb:
            return False
    return True


@nb.njit(cache=True, nogil=True)
def _matches_on(codes, cnt, cols, cand):
    """For every candidate combination (`cand`, complete on `cols`), the number of records matching it
    on the keys `cols` (equal or NULL on each): the records are hashed by their values on `cols` (NULL
    included), and each candidate looks up its values with every NULL pattern (restricted to `cols`)
    that occurs. Exact: a hash hit is checked value by value."""
    C = codes.shape[0]
    size = 1
    while size < 2 * C + 2:
        size *= 2
    mask = np.uint64(size - 1)
    rep = np.full(size, -1, np.int64)
    tot = np.zeros(size, np.int64)
    pats = np.empty(0, np.int64)
    n_pats = 0
    pat_buf = np.empty(16, np.int64)
    for s in range(C):
        m = 0
        for t in range(cols.shape[0]):
            if codes[s, cols[t]] < 0:
                m |= 1 << t
        seen = False
        for q in range(n_pats):
            if pat_buf[q] == m:
                seen = True
                break
        if not seen:
            if n_pats == pat_buf.shape[0]:
                bigger = np.empty(2 * n_pats, np.int64)
                bigger[:n_pats] = pat_buf
                pat_buf = bigger
            pat_buf[n_pats] = m
            n_pats += 1
        slot = _hash_row(codes, s, cols, 0) & mask
        while True:
            r = rep[slot]
            if r < 0:
                rep[slot] = s
                tot[slot] = cnt[s]
                break
            if _same(codes, r, 0, s, 0, cols):
                tot[slot] += cnt[s]
                break
            slot = (slot + np.uint64(1)) & mask
    pats = pat_buf[:n_pats]
    out = np.zeros(cand.shape[0], np.int64)
    for c in range(cand.shape[0]):
        a = cand[c]
        total = 0
        for q in range(n_pats):
            pm = pats[q]
            slot = _hash_row(codes, a, cols, pm) & mask
            while True:
                r = rep[slot]
                if r < 0:
                    break
                # the stored row's own NULLs are its values; compare with a's values masked by pm
                ok = True
                for t in range(cols.shape[0]):
                    va = -1 if (pm >> t) & 1 else codes[a, cols[t]]
                    if codes[r, cols[t]] != va:
                        ok = False
                        break
                if ok:
                    total += tot[slot]
                    break
                slot = (slot + np.uint64(1)) & mask
        out[c] = total
    return out


@nb.njit(cache=True, nogil=True)
def _matches_on_codes(parts, cols, cnt, cand):
    """`_matches_on` for combinations coded in mixed radix: parts[s, i] is the part of combination s's
    value of key i in one int64 code (0 for NULL), so the code on the subset `cols` is the sum of the
    parts there, and a candidate masked by a NULL pattern pm is that sum less the parts under pm.
    Exact: distinct value tuples have distinct codes."""
    C = parts.shape[0]
    w = cols.shape[0]
    size = 1
    while size < 2 * C + 2:
        size *= 2
    mask = size - 1
    keys = np.empty(size, np.int64)
    used = np.zeros(size, np.bool_)
    tot = np.zeros(size, np.int64)
    pat_buf = np.empty(16, np.int64)
    n_pats = 0
    for s in range(C):
        k = 0
        m = 0
        for t in range(w):
            v = parts[s, cols[t]]
            if v == 0:
                m |= 1 << t
            k += v
        seen = False
        for q in range(n_pats):
            if pat_buf[q] == m:
                seen = True
                break
        if not seen:
            if n_pats == pat_buf.shape[0]:
                bigger = np.empty(2 * n_pats, np.int64)
                bigger[:n_pats] = pat_buf
                pat_buf = bigger
            pat_buf[n_pats] = m
            n_pats += 1
        slot = (k * 0x9E3779B97F4A7C15) & mask
        while used[slot] and keys[slot] != k:
            slot = (slot + 1) & mask
        if not used[slot]:
            used[slot] = True
            keys[slot] = k
        tot[slot] += cnt[s]
    out = np.zeros(cand.shape[0], np.int64)
    for c in range(cand.shape[0]):
        a = cand[c]
        total = 0
        for q in range(n_pats):
            pm = pat_buf[q]
            k = 0
            for t in range(w):
                if not (pm >> t) & 1:
                    k += parts[a, cols[t]]
            slot = (k * 0x9E3779B97F4A7C15) & mask
            while used[slot]:
                if keys[slot] == k:
                    total += tot[slot]
                    break
                slot = (slot + 1) & mask
        out[c] = total
    return out


def _msus(codes: np.ndarray, cnt: np.ndarray, unique: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The minimal sample uniques of the combinations `unique` (those that are sample unique on all
    keys), as two arrays (combination, bitmask of keys): level-wise over the subsets S of the keys, a
    candidate is unique on S when no other record matches it on S; S is minimal when the candidate is
    unique on no S minus one key. Apriori pruning: T is visited only when every T minus one key leaves
    candidates not unique on it (a subset on which every candidate is unique has no minimal superset),
    and T's candidates are those not unique on any T minus one key (uniqueness only grows with S).
    Candidate sets are boolean masks over `unique`; matches are counted on one int64 code per
    combination and subset when the mixed radix fits 62 bits (else by hashing the value tuples)."""
    m = codes.shape[1]
    U = unique.shape[0]
    complete = codes >= 0
    shifted = codes + 1  # NULL -> 0
    spans = shifted.max(axis=0) + 1 if codes.shape[0] else np.ones(m, np.int64)
    coded = float(np.log2(spans.astype(np.float64)).sum()) < 62
    radix = np.cumprod(np.concatenate([[1], spans[:-1]])).astype(np.int64) if coded else None
    parts_all = np.ascontiguousarray(shifted * radix) if coded else None
    found_r: list[np.ndarray] = []
    found_t: list[int] = []

    def count(T: int, alive: np.ndarray) -> np.ndarray:
        cols = np.array([i for i in range(m) if (T >> i) & 1], np.int64)
        cand = unique[alive]
        if coded:
            return _matches_on_codes(parts_all, cols, cnt, cand)
        return _matches_on(codes, cnt, cols, cand)

    level: dict[int, np.ndarray] = {}
    for j in range(m):
        alive = complete[unique, j]
        if not alive.any():
            continue
        counts = count(1 << j, alive)
        idx = np.flatnonzero(alive)
        if (counts == 1).any():
            found_r.append(idx[counts == 1])
            found_t.append(1 << j)
        alive = alive.copy()
        alive[idx[counts == 1]] = False
        if alive.any():
            level[1 << j] = alive
    while level:
        nxt: dict[int, np.ndarray] = {}
        for S in sorted(level):
            for j in range(S.bit_length(), m):
                T = S | (1 << j)
                alive = None
                for i in range(m):
                    if (T >> i) & 1:
                        sub = level.get(T & ~(1 << i))
                        if sub is None:
                            alive = None
                            break
                        alive = sub.copy() if alive is None else np.logical_and(alive, sub, out=alive)
                if alive is None or not alive.any():
                    continue
                counts = count(T, alive)
                idx = np.flatnonzero(alive)
                if (counts == 1).any():
                    found_r.append(idx[counts == 1])
                    found_t.append(T)
                alive[idx[counts == 1]] = False
                if alive.any():
                    nxt[T] = alive
        level = nxt
    if not found_r:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rs = np.concatenate(found_r)
    ts = np.repeat(np.array(found_t, np.int64), [r.shape[0] for r in found_r])
    return unique[rs], ts


SUDA_SCORES = choice("elliot", "suda2", doc="the weight of an MSU of size k among m keys: 'elliot', (m - k)! (Elliot et "
                                            "al. 2002; sdcMicro's original_scores = TRUE), or 'suda2', (2^(m-k) - 1) "
                                            "k! (m - k)! / m! (original_scores = FALSE)")
DIS_FRACTION = Number(lower=0, upper=1, lower_open=True, upper_open=True, valid="0.01",
                      doc="the sampling fraction of the DIS-SUDA estimate, 0 < f < 1 (sdcMicro's DisFraction)")


class Suda2(NamedTuple):
    """The minimal sample uniques of every record (tuples of key names, smallest first), its SUDA score
    and its DIS-SUDA score."""

    msus: list
    suda_score: np.ndarray
    dis_suda_score: np.ndarray


def _msu_weights(m: int, scores: str) -> list[float]:
    if scores == "elliot":
        return [float(math.factorial(m - k)) for k in range(m + 1)]
    return [0.0] + [(2.0 ** (m - k) - 1) * math.factorial(k) * math.factorial(m - k) / math.factorial(m)
                    for k in range(1, m + 1)]


def suda2(keys, *, strata=None, nulls: str = "any", dis_fraction: float = 0.01, scores: str = "elliot") -> Suda2:
    """Special uniques (Elliot, Manning & Ford 2002; SUDA2: Manning, Haglin & Keane 2008), as sdcMicro's
    `suda2` computes them. A *minimal sample unique* (MSU) of a record is a set S of keys such that no
    other record matches the record on S (`nulls` as in `key_frequencies`: with 'any', a NULL of another
    record matches, and S never holds a key where the record is NULL) while on every S minus one key
    some other record does. A record shared on all keys (f_k > 1) has none. The SUDA score sums a weight
    per MSU (`scores`: 'elliot', (m - |S|)! for m keys, sdcMicro's default; or 'suda2'); the DIS-SUDA
    score is sdcMicro's estimate of the probability that a unique is a population unique:
    1 / (1 + P (1 - f) / f / (score^Q sum_r score_r^-Q)), P the records with f_k = 2, f the sampling
    fraction `dis_fraction`, Q = 1 + (8 - m) / 20, the sum over the records with a score > 0 (0 for a
    score of 0). Strata are counted apart (MSUs, P and the sum per stratum).

    The MSUs are found level by level over the subsets of the keys with apriori pruning (`_msus`),
    counting matches by hashing the distinct combinations (numba): exact, and fast when few records
    are unique on small subsets; the worst case visits every subset, 2^m of them."""
    func = "suda2"
    nulls = NULLS.check(nulls, func, "nulls")
    scores = SUDA_SCORES.check(scores, func, "scores")
    dis_fraction = DIS_FRACTION.check(dis_fraction, func, "dis_fraction")
    names, cb = _combos(func, keys, strata, nulls)
    masks, score, dis = suda2_combinations(cb, dis_fraction, scores)
    m = len(names)
    label = {T: tuple(names[i] for i in range(m) if (T >> i) & 1) for T in {T for mk in masks for T in mk}}
    per_combination = [[label[T] for T in mk] for mk in masks]
    msus = [per_combination[c][:] for c in cb.of.tolist()]
    return Suda2(msus, score[cb.of], dis[cb.of])


def suda2_combinations(cb: _Combos, dis_fraction: float, scores: str) -> tuple[list[list[int]], np.ndarray, np.ndarray]:
    """`suda2` on the distinct combinations `cb` (their codes, strata and numbers of records): per
    combination its MSUs (bitmasks of the keys, smallest first), SUDA and DIS-SUDA scores. The SQL
    form (duckdb_sdc.sql.keys) calls it on each stratum's combinations."""
    m = cb.codes.shape[1]
    weight = _msu_weights(m, scores)
    C = cb.count.shape[0]
    (fk,) = _matching_sums(cb, [cb.count])
    fk = fk.astype(np.int64)
    codes = cb.codes.astype(np.int64)
    cnt = cb.count.astype(np.int64)
    rs, ts = [], []
    for st in range(cb.n_strata):
        mine = np.flatnonzero(cb.stratum == st)
        if mine.shape[0] == 0:
            continue
        unique = np.flatnonzero(fk[mine] == 1).astype(np.int64)
        r, t = _msus(np.ascontiguousarray(codes[mine]), cnt[mine], unique)
        rs.append(mine[r])
        ts.append(t)
    r = np.concatenate(rs) if rs else np.zeros(0, np.int64)
    t = np.concatenate(ts) if ts else np.zeros(0, np.int64)
    distinct = sorted(set(t.tolist()), key=lambda T: (bin(T).count("1"), [i for i in range(m) if (T >> i) & 1]))
    rank = {T: i for i, T in enumerate(distinct)}
    order = np.lexsort((np.array([rank[T] for T in t.tolist()], np.int64), r)) if r.shape[0] else r
    r, t = r[order], t[order]
    sizes = np.array([bin(T).count("1") for T in distinct], np.int64)
    size = sizes[np.array([rank[T] for T in t.tolist()], np.int64)] if r.shape[0] else r
    score = np.bincount(r, weights=np.asarray(weight, np.float64)[size], minlength=C) if r.shape[0] else np.zeros(C)
    bounds = np.searchsorted(r, np.arange(C + 1))
    tl = t.tolist()
    masks = [tl[bounds[c]:bounds[c + 1]] for c in range(C)]
    q = 1.0 + (8.0 - m) / 20.0
    dis = np.zeros(C)
    for st in range(cb.n_strata):
        mine = np.flatnonzero(cb.stratum == st)
        scored = mine[score[mine] > 0]
        if scored.shape[0] == 0:
            continue
        pairs = float(cb.count[mine][fk[mine] == 2].sum())
        adj = float((cb.count[scored] * score[scored] ** -q).sum())
        dis[scored] = 1.0 / (1.0 + pairs * (1.0 - dis_fraction) / dis_fraction / (score[scored] ** q * adj))
    return masks, score, dis


def combinations_of(func: str, columns: list, counts, nulls: str) -> _Combos:
    """The `_Combos` of distinct combinations given as key columns (None for NULL) with their numbers
    of records `counts`, one stratum (the SQL forms group the records first)."""
    codes, cards = [], []
    for c in columns:
        k, card = _codes(c)
        if nulls == "category":
            k = np.where(k < 0, card, k)
            card += 1
        codes.append(k)
        cards.append(card)
    C = len(columns[0])
    return _Combos(np.arange(C), np.stack(codes, axis=1) if codes else np.zeros((C, 0), np.int64),
                   np.zeros(C, np.int64), np.asarray(counts, dtype=np.float64), cards, 1)

# ---------------------------------------------------------------------------------------------
# l-diversity and t-closeness


def _sensitive(func: str, names: list[str], sensitive, n: int) -> np.ndarray:
    """The sensitive column's codes (NULL a value of its own); refused when it is one of the keys (by
    its name: a pandas Series or a DataFrame column), or of another length."""
    name = getattr(sensitive, "name", None)
    if name is not None and str(name) in names:
        raise fail(func, f"sensitive column {name!r} is also a key; a key's value is known to the intruder, so it "
                         "cannot be the attribute to protect", "sensitive")
    if sensitive is None or len(sensitive) != n:
        raise fail(func, f"sensitive must hold one value per record ({n}), got "
                         f"{'None' if sensitive is None else len(sensitive)}", "sensitive")
    codes, card = _codes(sensitive)
    return np.where(codes < 0, card, codes)


def _class_counts(func: str, keys, sensitive, strata, nulls) -> tuple[np.ndarray, pd.DataFrame, np.ndarray]:
    """(combination of every record, the counts h(a, x): for every key combination a and sensitive value
    x, the number of records that match a (as `nulls` says) and hold x, as a frame (a, x, h), and the
    stratum of every combination)."""
    names, cb = _combos(func, keys, strata, nulls)
    x = _sensitive(func, names, sensitive, cb.of.shape[0])
    own = pd.DataFrame({"a": cb.of, "x": x}).groupby(["a", "x"], sort=False).size().rename("h").reset_index()
    null = cb.codes < 0
    if not null.any():
        return cb.of, own, cb.stratum
    C, m = cb.codes.shape
    pattern, n_pat = _dense([(null[:, j].astype(np.int64), 2) for j in range(m)])
    first = np.full(n_pat, -1, np.int64)
    first[pattern[::-1]] = np.arange(C - 1, -1, -1)
    masks = null[first]
    b = own["a"].to_numpy()
    parts = []
    for p in range(n_pat):
        mine = np.flatnonzero(pattern == p)
        b_codes = np.where(masks[p], -1, cb.codes[b])
        a_codes = np.concatenate([np.where(masks[q], -1, cb.codes[mine]) for q in range(n_pat)])
        rows = np.concatenate([b_codes, a_codes])
        stratum = np.concatenate([cb.stratum[b], np.tile(cb.stratum[mine], n_pat)])
        pat = np.concatenate([pattern[b], np.repeat(np.arange(n_pat), mine.shape[0])])
        group, _ = _dense([(stratum, cb.n_strata), (pat, n_pat)] + [(rows[:, j] + 1, cb.cards[j] + 1) for j in range(m)])
        left = pd.DataFrame({"g": group[:b.shape[0]], "x": own["x"].to_numpy(), "h": own["h"].to_numpy()})
        right = pd.DataFrame({"g": group[b.shape[0]:], "a": np.tile(mine, n_pat)})
        parts.append(right.merge(left, on="g")[["a", "x", "h"]])
    found = pd.concat(parts).groupby(["a", "x"], sort=False)["h"].sum().reset_index()
    return cb.of, found, cb.stratum


class LDiversity(NamedTuple):
    """Distinct and entropy l-diversity of every record's class."""

    distinct: np.ndarray
    entropy: np.ndarray


def l_diversity(keys, sensitive, *, strata=None, nulls: str = "any") -> LDiversity:
    """l-diversity (Machanavajjhala et al. 2007) of every record, over the records that match it on the
    keys (its equivalence class; with nulls='any' the records matching it, NULL matching any value),
    as sdcMicro's `ldiversity` gives it per record: `distinct`, the number of distinct values of the
    sensitive column among them (NULL a value of its own), and `entropy`, exp(-sum p log p) over their
    shares p (the largest l for which the class is entropy l-diverse: entropy >= log l). The sensitive
    column must not be a key."""
    func = "l_diversity"
    nulls = NULLS.check(nulls, func, "nulls")
    of, h, _ = _class_counts(func, keys, sensitive, strata, nulls)
    hv = h["h"].to_numpy(dtype=np.float64)
    total = h.groupby("a")["h"].transform("sum").to_numpy(dtype=np.float64)
    p = hv / total
    per = pd.DataFrame({"a": h["a"], "d": 1, "e": -p * np.log(p)}).groupby("a")[["d", "e"]].sum()
    distinct = per["d"].to_numpy()[np.searchsorted(per.index.to_numpy(), of)]
    entropy = np.exp(per["e"].to_numpy())[np.searchsorted(per.index.to_numpy(), of)]
    return LDiversity(distinct.astype(np.int64), entropy)


def t_closeness(keys, sensitive, *, strata=None, nulls: str = "any") -> np.ndarray:
    """t-closeness (Li, Li & Venkatasubramanian 2007) of every record for a categorical sensitive column:
    the Earth Mover's Distance between the distribution of the sensitive values among the records
    matching it on the keys (as `l_diversity` takes them) and their distribution in the whole file (in
    its stratum), with the equal ground distance (every two distinct categories 1 apart, as for an
    unordered category; ARX's EqualDistanceTCloseness). That EMD is the total variation distance
    1/2 sum_x |p(x) - q(x)|, between 0 and 1; the file is t-close when every record's value is <= t.
    NULL is a category of its own."""
    func = "t_closeness"
    nulls = NULLS.check(nulls, func, "nulls")
    of, h, stratum = _class_counts(func, keys, sensitive, strata, nulls)
    names, cb = _combos(func, keys, strata, nulls)
    x = _sensitive(func, names, sensitive, of.shape[0])
    overall = pd.DataFrame({"s": cb.stratum[of], "x": x}).groupby(["s", "x"]).size()
    share = overall / overall.groupby(level="s").transform("sum")
    hv = h["h"].to_numpy(dtype=np.float64)
    p = hv / h.groupby("a")["h"].transform("sum").to_numpy(dtype=np.float64)
    q = share.reindex(pd.MultiIndex.from_arrays([stratum[h["a"].to_numpy()], h["x"].to_numpy()])).to_numpy()
    per = pd.DataFrame({"a": h["a"], "d": np.abs(p - q) - q}).groupby("a")["d"].sum()
    tv = 0.5 * (1.0 + per.to_numpy())
    return np.clip(tv, 0.0, 1.0)[np.searchsorted(per.index.to_numpy(), of)]


# ---------------------------------------------------------------------------------------------
# utility of the released key columns


def _pair(func: str, original, released) -> tuple[list[str], list, list]:
    names, before = key_columns(func, "original", original)
    rnames, after = key_columns(func, "released", released)
    if rnames != names and not all(n.startswith("key") for n in names + rnames):
        raise fail(func, f"released has the columns {rnames[:5]} but original has {names[:5]}; give the same key "
                         "columns of the same records, in the same order", "released")
    if len(after) != len(before) or len(after[0]) != len(before[0]):
        raise fail(func, f"released has {len(after)} columns of {len(after[0])} records but original has "
                         f"{len(before)} of {len(before[0])}; give the same records in the same order", "released")
    return names, before, after


def _is_null(column) -> np.ndarray:
    return np.asarray(pd.isna(pd.Series(column, dtype=object) if isinstance(column, list) else pd.Series(column)))


class Suppression(NamedTuple):
    """Values suppressed by a release: per column (name -> (values, suppressed, share)) and per record
    (suppressed values and their share of the record's values; NaN for a record without values)."""

    per_column: dict
    per_record: np.ndarray
    record_share: np.ndarray


def suppression(original, released) -> Suppression:
    """The values a release suppressed: a value is suppressed where the original record has one (not
    NULL) and the released record has NULL in its place. Per key column: the values, the suppressed
    ones and their share (sdcMicro's print of localSuppression, per variable); per record: how many of
    its values were suppressed and their share. `original` and `released` hold the same key columns of
    the same records in the same order (the SQL form joins them on a record key)."""
    func = "suppression"
    names, before, after = _pair(func, original, released)
    per_column, total = {}, np.zeros(len(before[0]), np.int64)
    present_total = np.zeros(len(before[0]), np.int64)
    for name, b, a in zip(names, before, after):
        present = ~_is_null(b)
        gone = present & _is_null(a)
        per_column[name] = (int(present.sum()), int(gone.sum()), float(gone.sum() / present.sum()) if present.any()
                            else float("nan"))
        total += gone
        present_total += present
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(present_total > 0, total / np.maximum(present_total, 1), np.nan)
    return Suppression(per_column, total, share)


def class_loss(released, *, strata=None) -> dict:
    """ARX's loss measures of the released key columns, over its equivalence classes (records with the
    same released values, NULL a value: a suppressed value is generalised to '*' as ARX writes it),
    each stratum apart. A record whose keys are all NULL is suppressed (ARX's outliers):

    * `discernibility`: ARX's Discernibility (Bayardo & Agrawal 2005), sum over the classes of
      unsuppressed records of |E|^2, plus n for every suppressed record (n the records of its stratum);
    * `average_class_size`: ARX's Average equivalence class size (LeFevre et al. 2006's C_AVG times k),
      n / (the classes of unsuppressed records + 1 when some records are suppressed), summed over the
      strata as records / classes of the whole file;
    * `records`, `classes` (those of unsuppressed records) and `suppressed_records`."""
    func = "class_loss"
    _, cb = _combos(func, released, strata, "category")
    _, cols = key_columns(func, "released", released)
    null = np.stack([_is_null(c) for c in cols], axis=1)
    first = np.full(cb.count.shape[0], -1, np.int64)
    first[cb.of[::-1]] = np.arange(cb.of.shape[0] - 1, -1, -1)
    suppressed = null[first].all(axis=1)  # a combination of NULLs only
    n_stratum = np.bincount(cb.stratum, weights=cb.count, minlength=cb.n_strata)
    dm = float((cb.count[~suppressed] ** 2).sum() + (cb.count[suppressed] * n_stratum[cb.stratum[suppressed]]).sum())
    classes = int((~suppressed).sum())
    extra = len(set(cb.stratum[suppressed].tolist()))
    n = int(cb.count.sum())
    return {"records": n, "classes": classes, "suppressed_records": int(cb.count[suppressed].sum()),
            "discernibility": dm, "average_class_size": n / (classes + extra)}


def non_uniform_entropy(original, released, *, strata=None) -> dict:
    """The non-uniform entropy of the release of every key column (de Waal & Willenborg 1999; ARX's
    Non-uniform entropy), in bits: sum over the records of -log2 Pr(original value | released value),
    Pr estimated from the file, n(a, b) / n(b), n(a, b) the records with original a released as b and
    n(b) those released as b (NULL a value on both sides; each stratum apart). A value released as it
    was, alone in its released category, costs 0; a suppressed value costs -log2 of its share among the
    suppressed ones, ARX's term for suppressed records. Returns {column: bits} and 'total'."""
    func = "non_uniform_entropy"
    names, before, after = _pair(func, original, released)
    s, _ = _strata_codes(func, strata, len(before[0]))
    out = {}
    for name, b, a in zip(names, before, after):
        kb, cb_ = _codes(b)
        ka, ca = _codes(a)
        frame = pd.DataFrame({"s": s, "a": kb, "b": ka})
        joint = frame.groupby(["s", "a", "b"])["s"].transform("size").to_numpy(dtype=np.float64)
        rel = frame.groupby(["s", "b"])["s"].transform("size").to_numpy(dtype=np.float64)
        out[name] = float(-np.log2(joint / rel).sum()) + 0.0
    out["total"] = float(sum(out.values()))
    return out


__all__ = ["DIS_FRACTION", "NULLS", "SUDA_SCORES", "IndividualRisk", "KeyFrequencies", "Suda2", "benedetti_franconi",
           "LDiversity", "Suppression", "class_loss", "combinations_of", "global_risk", "individual_risk", "key_columns", "key_frequencies",
           "l_diversity", "non_uniform_entropy", "suda2", "suppression", "t_closeness",
           "suda2_combinations"]
