"""Categorical keys as integer codes: the shared first step of local suppression, the generalisation
search and PRAM.

A key column is any sequence of values (numbers, text, dates, booleans); its missing values (None,
NaN in a float column, NaT, pandas' NA) are NULL. `encode` gives every column integer codes 0..c-1 in
ascending order of the values (for a column that cannot be ordered, in order of first appearance) and
-1 for NULL. Equal values get equal codes; nothing else about a value matters to these methods.

`combine` turns several code columns into one dense id per row (equal rows, equal ids), the group-by
of a key combination; `wildcard_counts` is sdcMicro's fk with a NULL matching any value (freqCalc with
alpha = 1): for every query row, the total weight of the data rows compatible with it, two rows being
compatible when they are equal on every key where both are non-NULL. No DuckDB here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

NULL = -1
_LIMIT = 1 << 62


def encode_column(values) -> tuple[np.ndarray, np.ndarray]:
    """(codes int64, categories): codes 0..c-1 in ascending order of the values (first appearance when
    they cannot be ordered), -1 for a missing value."""
    series = values if isinstance(values, pd.Series) else pd.Series(
        values, dtype=values.dtype if isinstance(values, np.ndarray) else None)
    codes, uniques = pd.factorize(series, sort=False, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64)
    index = pd.Index(uniques)
    numeric = isinstance(index.dtype, np.dtype) and index.dtype.kind in "iufbmM"
    uniques = index.to_numpy() if numeric else index.to_numpy(dtype=object)
    if uniques.shape[0] == 0:
        return codes, uniques
    try:
        order = np.argsort(uniques, kind="stable")
    except TypeError:  # values of mixed types: keep the order of first appearance
        return codes, uniques
    rank = np.empty(order.shape[0], np.int64)
    rank[order] = np.arange(order.shape[0])
    out = np.where(codes >= 0, rank[np.maximum(codes, 0)], NULL)
    return out, uniques[order]


def encode(columns: Sequence) -> tuple[np.ndarray, list[np.ndarray]]:
    """The (n, p) code matrix of p key columns of equal length, and each column's categories."""
    cols = [encode_column(c) for c in columns]
    n = {c[0].shape[0] for c in cols}
    if len(n) > 1:
        raise ValueError(f"key columns of different lengths: {sorted(n)}")
    if not cols:
        return np.zeros((0, 0), np.int64), []
    return np.column_stack([c[0] for c in cols]), [c[1] for c in cols]


def combine(codes: np.ndarray, columns=None) -> np.ndarray:
    """Dense ids 0..g-1 of the rows of `codes` restricted to `columns` (all by default), NULL (-1)
    counting as a value of its own; rows with equal codes get equal ids. Mixed-radix packing into one
    int64, re-densified (a hash factorisation) whenever the next column could overflow."""
    cols = range(codes.shape[1]) if columns is None else list(columns)
    n = codes.shape[0]
    ids = np.zeros(n, np.int64)
    bound = 1
    for c in cols:
        col = codes[:, c] + 1  # NULL -> 0
        radix = int(col.max()) + 1 if n else 1
        if bound * radix >= _LIMIT:
            ids = np.asarray(pd.factorize(ids)[0], dtype=np.int64)
            bound = int(ids.max()) + 1 if n else 1
        ids = ids * radix + col
        bound *= radix
    if n == 0:
        return ids
    return np.asarray(pd.factorize(ids)[0], dtype=np.int64)


def null_masks(codes: np.ndarray) -> np.ndarray:
    """Each row's set of NULL keys as a bit mask (bit c: key c is NULL)."""
    bits = (codes < 0).astype(np.int64) << np.arange(codes.shape[1], dtype=np.int64)
    return bits.sum(axis=1) if codes.shape[1] else np.zeros(codes.shape[0], np.int64)


def _keys_outside(mask: int, p: int) -> list[int]:
    return [c for c in range(p) if not (mask >> c) & 1]


def wildcard_counts(query: np.ndarray, data: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """For every row of `query` (m, p), the total weight (default 1 each) of the rows of `data` (d, p)
    compatible with it: equal on every key where both are non-NULL (-1 is NULL). Rows are grouped by
    their NULL masks; for each pair of a query mask a and a data mask b the rows are matched on the keys
    outside a | b. Cost O((m + d) p) per pair of masks present."""
    m, p = query.shape
    w = np.ones(data.shape[0], np.float64) if weights is None else np.asarray(weights, np.float64)
    out = np.zeros(m, np.float64)
    if m == 0 or data.shape[0] == 0:
        return out
    qmask, dmask = null_masks(query), null_masks(data)
    qclasses, dclasses = np.unique(qmask), np.unique(dmask)
    qrows = {int(a): np.flatnonzero(qmask == a) for a in qclasses}
    drows = {int(b): np.flatnonzero(dmask == b) for b in dclasses}
    for a, qi in qrows.items():
        for b, di in drows.items():
            keys = _keys_outside(a | b, p)
            if not keys:
                out[qi] += w[di].sum()
                continue
            both = np.concatenate([query[qi][:, keys], data[di][:, keys]])
            ids = combine(both)
            totals = np.bincount(ids[qi.shape[0]:], weights=w[di], minlength=int(ids.max()) + 1)
            out[qi] += totals[ids[:qi.shape[0]]]
    return out


def patterns(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids, rows, counts): each row's pattern id (0..P-1, in order of first appearance), the first row
    of each pattern and each pattern's number of rows."""
    ids = combine(codes)
    count = int(ids.max()) + 1 if ids.shape[0] else 0
    first = np.full(count, ids.shape[0], np.int64)
    np.minimum.at(first, ids, np.arange(ids.shape[0]))
    return ids, first, np.bincount(ids, minlength=count)


__all__ = ["NULL", "combine", "encode", "encode_column", "null_masks", "patterns", "wildcard_counts"]
