"""Many small groups at once for the Python-backed measure aggregates.

DuckDB hands a measure's UDF one Arrow chunk of up to 2048 groups (the lists of a GROUP BY). Decoding
each group and calling the measure once per group costs 0.2 to 0.9 ms of Python per group, which
made 50,000 groups of 4 records take 12 to 45 s. Here the whole chunk is decoded at once, the groups
with the same number of complete records (at most `STACK_MAX`) and the same parameters are stacked
into (groups, n, p) arrays, and the measure is computed for the whole stack by
`duckdb_sdc.measures.stacked`, which gives every group exactly what the one-group function gives it
(the tests compare them). Larger groups, and every group of a chunk whose records the chunk-wide
decoding refuses (it then reports nothing itself), take the one-group path unchanged. Parameters are
checked by the same kinds (`duckdb_sdc.params`) as in the one-group functions; the UDF reports every
error under the SQL function's name.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa

from .._validate import SdcError
from ..measures import stacked as st
from ..measures._input import UndefinedMeasure
from ..measures.ranks import tie_seed
from ..measures.risk import LINKAGE_RANK, PERCENTS
from ..params import IL1S_FORM, NONNEGATIVE, NONNEGATIVE_INTEGER, TIES


def _rank(name):
    def compute(X, XM, ties, seed):
        ties = TIES.check(ties, name, "ties")
        return st.rank_measures(X, XM, ties, tie_seed(name, seed))[name]

    return compute


def _il_metrics(X, XM):
    return st.il_metrics(X, XM) if X.shape[1] >= 2 else None  # n = 1: undefined, NULL


def _idr(X, XM, k, max_outside):
    return st.interval_disclosure(X, XM, NONNEGATIVE.check(k, "interval_disclosure", "k"),
                                  NONNEGATIVE_INTEGER.check(max_outside, "interval_disclosure", "max_outside"))


def _linkage(X, XM, rank):
    return st.record_linkage(X, XM, LINKAGE_RANK.check(rank, "record_linkage", "rank", n=X.shape[1]))


def _score(X, XM, k, max_outside, il1s_form):
    return st.il_dr_score(X, XM, NONNEGATIVE.check(k, "il_dr_score", "k"),
                          NONNEGATIVE_INTEGER.check(max_outside, "il_dr_score", "max_outside"),
                          IL1S_FORM.check(il1s_form, "il_dr_score", "il1s_form"))


# compute(X (G, n, p), XM, *params) -> (G,) values, or a dict of them for a struct, or None when the
# measure is undefined for every group; NaN is NULL (no measure returns NaN: an undefined one is NULL)
STACKED = {
    **{name: _rank(name) for name in ("rank_mae", "rank_mse", "rank_bounded_mae", "rank_bounded_mse")},
    "il_metrics": _il_metrics,
    "regression_utility": lambda X, XM: st.regression_utility(X, XM),
    "interval_disclosure": _idr,
    "sd_interval_disclosure": lambda X, XM: st.sd_interval_disclosure(X, XM, PERCENTS),
    "rank_interval_disclosure": lambda X, XM: st.rank_interval_disclosure(X, XM, PERCENTS),
    "record_linkage": _linkage,
    "il_dr_score": _score,
}


def _column(values: np.ndarray) -> pa.Array:
    return pa.array(values, type=pa.float64(), mask=np.isnan(values))


def grouped(func: str, lists: pa.Array, rows: list[list], sides, compute, stacked, out_type: pa.DataType):
    """The results of every group of the chunk `lists` (a list array), or None when the chunk-wide
    decoding refuses the chunk (the caller then takes the one-group path, which reports the error).

    sides(func, values) -> (X, XM) of all records of the chunk with NaN where missing; compute is the
    one-group function compute(X, XM, *params), stacked the function of `STACKED`; rows are the
    parameters, one list each. Errors are the caller's to report under the SQL function's name."""
    G = len(lists)
    offsets = np.asarray(lists.offsets, dtype=np.int64)
    try:
        X, XM = sides(func, lists.values.slice(offsets[0], offsets[-1] - offsets[0]))
    except SdcError:  # e.g. row vectors whose length differs between groups: decode group by group
        return None
    if X.shape[0] != offsets[-1] - offsets[0] or X.ndim != 2:
        return None
    valid = lists.is_valid().to_numpy(zero_copy_only=False)
    keep = ~(np.isnan(X).any(axis=1) | np.isnan(XM).any(axis=1))
    owner = np.repeat(np.arange(G), np.diff(offsets))
    counts = np.bincount(owner[keep], minlength=G)
    starts = np.concatenate(([0], np.cumsum(counts)))
    X, XM = X[keep], XM[keep]
    fields = [f.name for f in out_type] if pa.types.is_struct(out_type) else ["value"]
    cols = {name: np.full(G, np.nan) for name in fields}
    present = np.zeros(G, bool)  # a result (not NULL) for the group

    def put(at, value):
        if value is None:
            return
        present[at] = True
        for name in fields:
            got = value if name == "value" else value[name]
            cols[name][at] = np.nan if got is None else got

    live = valid & (counts > 0)
    buckets = defaultdict(list)
    if all(len(set(p)) <= 1 for p in rows):  # the usual case: constant parameters, bucket by size at once
        params = tuple(p[0] for p in rows) if G else ()
        for n in np.unique(counts[live & (counts <= st.STACK_MAX)]):
            buckets[(int(n), params)] = np.flatnonzero(live & (counts == n))
        large = np.flatnonzero(live & (counts > st.STACK_MAX))
    else:
        large = []
        for r in np.flatnonzero(live):
            params = tuple(p[r] for p in rows)
            if counts[r] <= st.STACK_MAX:
                buckets[(int(counts[r]), params)].append(r)
            else:
                large.append(r)
    for r in large:
        try:
            put(r, compute(X[starts[r]:starts[r + 1]], XM[starts[r]:starts[r + 1]], *(p[r] for p in rows)))
        except UndefinedMeasure:
            pass
    for (n, params), members in buckets.items():
        members = np.asarray(members, dtype=np.int64)
        idx = starts[members][:, None] + np.arange(n)
        put(members, stacked(X[idx], XM[idx], *params))
    if not pa.types.is_struct(out_type):
        return _column(cols["value"])
    return pa.StructArray.from_arrays([_column(cols[name]) for name in fields], fields=list(out_type),
                                      mask=pa.array(~present))
