"""Arrow plumbing for multivariate list functions: `rows DOUBLE[][]`, one vector per record.

DuckDB hands the UDF a chunk of rows; each row holds the records of one group (a whole table, or a
stratum under GROUP BY), as a list of equally long vectors (`list([a, b, c])`). The numpy function sees
the complete records of a row as an (m, p) matrix and its result is put back in place:

* a NULL list gives NULL; an empty list, or one without any complete record, comes back as it is
  (NULL records stay NULL);
* a record that is NULL, or has a NULL attribute, takes part in nothing (it joins no cluster, is no
  contribution) and comes back NULL;
* every non-NULL record must have the same number p >= 1 of attributes; NaN and infinity are refused.

Functions over a partition also take `clusters BIGINT[]`, aligned with the records; a record whose
cluster is NULL is treated like an incomplete record.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow as pa

from .._validate import fail, refuse_nonfinite
from ._arrow import data_param, float_values, reported, reporting_name, single_array
from .progress import group_done


@dataclass
class _Group:
    """One list row: its complete records as a matrix, and where they sit among the row's records."""

    X: np.ndarray  # (m, p)
    complete: np.ndarray  # (records,) bool


def _offsets(arr) -> np.ndarray:
    return np.asarray(arr.offsets, dtype=np.int64)


class RowsChunk:
    """Decode one Arrow chunk of `rows` lists into per-row record matrices."""

    def __init__(self, func: str, rows):
        self.func = func
        outer = single_array(rows)
        self.outer = outer
        self.n_rows = len(outer)
        off = _offsets(outer)
        self.rec_off = off - off[0]
        inner = outer.values.slice(off[0], off[-1] - off[0])
        self.n_records = len(inner)
        self.rec_valid = (inner.is_valid().to_numpy(zero_copy_only=False) if inner.null_count
                          else np.ones(self.n_records, bool))
        ioff = _offsets(inner)
        self.val_start = ioff[:-1] - ioff[0]
        self.rec_len = np.diff(ioff)
        values = inner.values.slice(ioff[0], ioff[-1] - ioff[0])
        self.values, valid = float_values(values)
        if valid is None:
            self.rec_null_attr = np.zeros(self.n_records, bool)
        else:
            bad = np.concatenate([[0], np.cumsum(~valid)])
            self.rec_null_attr = (bad[self.val_start + self.rec_len] - bad[self.val_start]) > 0
        self.row_null = outer.is_null().to_numpy(zero_copy_only=False) if outer.null_count else None

    def is_null(self, r: int) -> bool:
        return self.row_null is not None and bool(self.row_null[r])

    def group(self, r: int) -> _Group | None:
        """The complete records of row r, or None when there is nothing to compute."""
        a, b = self.rec_off[r], self.rec_off[r + 1]
        if self.is_null(r) or a == b:
            return None
        valid = self.rec_valid[a:b]
        lengths = self.rec_len[a:b][valid]
        if lengths.size == 0:
            return None
        p = int(lengths[0])
        if (lengths != p).any():
            i = int(np.flatnonzero(valid)[np.flatnonzero(lengths != p)[0]])
            raise fail(self.func, f"every record in rows must have the same number of attributes: record "
                                  f"{i + 1} has {int(self.rec_len[a + i])}, the first non-NULL one has {p}")
        if p == 0:
            raise fail(self.func, "the records in rows must have at least one attribute")
        complete = valid & ~self.rec_null_attr[a:b]
        if not complete.any():
            return None
        starts = self.val_start[a:b][complete]
        X = self.values[starts[:, None] + np.arange(p)]
        refuse_nonfinite(self.func, "rows", X)
        return _Group(np.ascontiguousarray(X), complete)


def _clusters(func: str, clusters, chunk: RowsChunk):
    """Per row, (cluster ids, which are non-NULL) aligned with the records, or None for a NULL list."""
    arr = single_array(clusters)
    off = _offsets(arr)
    vals = arr.values.slice(off[0], off[-1] - off[0])
    ids = vals.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    present = vals.is_valid().to_numpy(zero_copy_only=False) if vals.null_count else np.ones(len(vals), bool)
    rel = off - off[0]
    null = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else np.zeros(len(arr), bool)

    def row(r: int):
        if null[r]:
            return None
        a, b = rel[r], rel[r + 1]
        want = chunk.rec_off[r + 1] - chunk.rec_off[r]
        if b - a != want:
            raise fail(func, f"clusters has {b - a} entries but rows has {want} records")
        return ids[a:b], present[a:b]

    return row


def positional_signature(udf, n_args: int):
    udf.__signature__ = inspect.Signature(
        [inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(n_args)])


def rows_array(chunk: RowsChunk, results: list) -> pa.Array:
    """list<list<double>> aligned with the input: results[r] is None (row unchanged: NULL records) or
    (complete mask, (m, p) matrix with NaN for a NULL value)."""
    lengths = np.zeros(chunk.n_records, np.int64)
    valid = np.zeros(chunk.n_records, bool)
    parts = []
    for r, res in enumerate(results):
        if res is None:
            continue
        complete, M = res
        a = chunk.rec_off[r]
        idx = a + np.flatnonzero(complete)
        lengths[idx] = M.shape[1]
        valid[idx] = True
        parts.append(M.ravel())
    flat = np.concatenate(parts) if parts else np.empty(0)
    inner_off = np.concatenate([[0], np.cumsum(lengths)])
    values = pa.array(flat, type=pa.float64(), mask=np.isnan(flat) if np.isnan(flat).any() else None)
    inner = pa.ListArray.from_arrays(pa.array(inner_off, pa.int32()), values,
                                     mask=pa.array(~valid) if not valid.all() else None)
    return records_list(chunk, inner)


def records_list(chunk: RowsChunk, per_record: pa.Array) -> pa.Array:
    """One value per record of the chunk, back into the chunk's lists (NULL where a row is NULL)."""
    row_mask = pa.array(chunk.row_null) if chunk.row_null is not None else None
    return pa.ListArray.from_arrays(pa.array(chunk.rec_off, pa.int32()), per_record, mask=row_mask)


def _scalars_array(chunk: RowsChunk, results: list, dtype, pa_type) -> pa.Array:
    """list<pa_type> aligned with the records from one scalar per complete record, NULL where a record
    took no part."""
    out = np.zeros(chunk.n_records, dtype)
    valid = np.zeros(chunk.n_records, bool)
    for r, res in enumerate(results):
        if res is None:
            continue
        complete, v = res
        idx = chunk.rec_off[r] + np.flatnonzero(complete)
        out[idx] = v
        valid[idx] = True
    return records_list(chunk, pa.array(out, pa_type, mask=~valid))


def labels_array(chunk: RowsChunk, results: list) -> pa.Array:
    """list<int64>: one label per record."""
    return _scalars_array(chunk, results, np.int64, pa.int64())


def _values_array(chunk: RowsChunk, results: list) -> pa.Array:
    """list<double>: one value per record."""
    return _scalars_array(chunk, results, np.float64, pa.float64())


_BUILDERS = {"rows": rows_array, "labels": labels_array, "values": _values_array}


SUPPRESSION_COUNTS = ("primary_cells", "secondary_cells", "unprotected_cells")  # after release, in order


def record_macro(name: str, params) -> str:
    """Body of the public macro of a function over records: its name (to report errors under), then
    rows (and clusters) checked in SQL, names as JSON text (what the table forms pass too) and every
    other parameter as text."""
    args = [f"'{name}'"]
    for p in params:
        if p.name == "rows":
            args.append(f"__sdc_numeric_rows(rows, '{name}')")
        elif p.name == "clusters":
            args.append(f"__sdc_integer_list(clusters, '{name}', 'clusters')")
        elif p.name == "names":
            args.append("CASE WHEN typeof(names) = 'VARCHAR' THEN names::VARCHAR ELSE to_json(names)::VARCHAR END")
        else:
            args.append(f"{p.name}::VARCHAR")
    return f"__sdc_{name}({', '.join(args)})"


def rows_udf(func: str, compute: Callable, out: str | Callable, n_params: int, *,
             with_clusters: bool = False) -> Callable:
    """Wrap compute(X, [clusters,] *params) as an Arrow UDF over (reporting name, rows, [clusters,]
    params...). Errors name the reporting name; the numpy layer's X is the SQL rows.

    out 'rows': compute returns an (m, p) matrix (NaN = NULL value) -> DOUBLE[][];
    out 'labels': compute returns (m,) integers -> BIGINT[];
    out 'values': compute returns (m,) floats -> DOUBLE[];
    out 'suppression': compute returns (matrix, primary, secondary and unprotected counts) ->
    STRUCT(release DOUBLE[][], primary_cells BIGINT, secondary_cells BIGINT, unprotected_cells BIGINT);
    out a callable: build(chunk, results) makes the Arrow result from results[r] = None (no record
    of row r took part) or (complete mask, what compute returned).
    """

    def udf(name, rows, *args):
        fname = reporting_name(name) or func
        data = data_param(fname, "rows")
        with reported(fname, {"X": data, "rows": data}):
            return _rows_udf(fname, rows, args)

    def _rows_udf(func, rows, args):
        chunk = RowsChunk(func, rows)
        if with_clusters:
            cluster_row = _clusters(func, args[0], chunk)
            args = args[1:]
        params = [single_array(p).to_pylist() for p in args]
        results: list = [None] * chunk.n_rows
        counts = np.zeros((chunk.n_rows, len(SUPPRESSION_COUNTS)), np.int64)
        count_null = np.zeros(chunk.n_rows, bool)
        for r in range(chunk.n_rows):
            group = None if chunk.is_null(r) else chunk.group(r)
            row_params = [p[r] for p in params]
            if with_clusters and not chunk.is_null(r):
                got = cluster_row(r)
                if got is None:
                    raise fail(func, "clusters must not be NULL when rows is not")
                ids, present = got
                if group is not None:
                    group.X = group.X[present[group.complete]]
                    group.complete = group.complete & present
                    if group.X.shape[0] == 0:
                        group = None
                    else:
                        row_params = [ids[group.complete]] + row_params
            if group is None:
                count_null[r] = chunk.is_null(r)
                continue
            res = compute(group.X, *row_params)
            group_done()
            if out == "suppression":
                res, *counts[r] = res
            results[r] = (group.complete, res)
        if out != "suppression":
            return (out if callable(out) else _BUILDERS[out])(chunk, results)
        release = rows_array(chunk, results)
        mask = pa.array(count_null) if count_null.any() else None
        return pa.StructArray.from_arrays(
            [release, *(pa.array(counts[:, i], pa.int64()) for i in range(counts.shape[1]))],
            names=["release", *SUPPRESSION_COUNTS], mask=mask)

    udf.__name__ = f"sdc_{func}"
    positional_signature(udf, 2 + with_clusters + n_params)
    return udf
