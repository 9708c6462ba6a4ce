"""Masking one column of a table larger than memory on one machine: DuckDB sorts it out of core, the
sorted records stream through Python in chunks, and the masked values go back into a new table.

    import duckdb, duckdb_sdc.outofcore as ooc
    con = duckdb.connect("big.duckdb")
    ooc.mask_column(con, "people", key="id", column="income", method="mdav_round", params={"k": 5},
                    strata=["region"], target="income_masked")     # table (id, income): the masked values

Why not the list functions: `mdav_round(list(x))` holds the whole column in memory several times
over (100M values took 13.9 GB). Here memory is bounded by the chunk (`CHUNK_ROWS` records), a
stratum that fits in one chunk, or a run of equal values MDAV must keep together (see below); the
sort is DuckDB's own, which spills to its temporary directory.

Why not SQL window functions: measured on this machine at 20M rows of a file-backed table, ORDER BY
of the column took 11 s; `row_number() OVER (ORDER BY x, id)` alone 24 s and individual ranking with
a windowed mean 28 s, and SQL sums are not ordered, so the means would differ from the numpy method's
in the last bits. Streaming the sorted rows through the position-based kernels of
`duckdb_sdc.kernels.positional` (the ones the Spark engine runs) took 16 s with a trivial kernel and
gives the numpy method's values exactly: the same groups, and each group's mean summed in the same
order by the same code.

Methods (`METHODS`):

* individual ranking and univariate MDAV (`ranking_round`, `mdav_round`, k an integer or 'auto'):
  records sorted by (strata, value, key); each stratum of more than `chunk_rows` values gets its
  constants first (count; median value and, for k = 'auto', the Freedman-Diaconis quantiles, exact
  order statistics found by `OrderStatistics` from approx_quantile brackets); the stream is cut
  where the plan allows (`StratumPlan.cut_allowed`: group boundaries, never inside MDAV's middle, the
  run of the median value, or a run above it), so a chunk holds whole groups;
* equal frequency, and equal width with c = 'auto' or medians (`efd_round`, `ewd_round`): the
  stratum's (distinct value, count) summary from a GROUP BY, the intervals and points computed from it
  exactly as the numpy method (`kernels.summary.summary_points`), and each record's point found by an
  ASOF join on its value;
* equal width with a given c and means or midpoints: each bin's sum of (x - min) added in key order
  (the numpy method's order), streamed in (strata, bin, key) order.

`mask_column` writes (key, masked value) rows of the non-NULL values; NULLs have no row (a LEFT JOIN
gives NULL in place). How the release planner would use it: for a masking rule of one of these
methods, `mask_rule(con, spec, rule, i)` creates the temporary table `__sdc_mask_<i>(__sdc_key,
__sdc_value)` that `release.plan.mask_step` creates, from the relation `__sdc_source`; the release
table step then joins it as usual (docs/scale.md).
"""

from __future__ import annotations

import math
import os
import tempfile

import duckdb
import numba as nb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import masking
from ._numerics import exponent
from ._validate import SdcError, fail
from .params import AUTO, GROUP_SIZE_AUTO, INTERVALS, POINT, REPRESENTATIVE
from .methods import discretisation as disc
from .methods.freedman_diaconis import group_size_sorted
from .kernels import summary as iv
from .kernels.positional import Bucket, MdavPlan, RankingPlan

METHODS = masking.capable(masking.OUT_OF_CORE)  # the methods whose records declare out-of-core masking
CHUNK_ROWS = 1 << 20  # records a chunk holds (and the largest stratum masked whole in memory)
BRACKET = 0.01  # half-width, as a fraction of the stratum, of the first bracket around a quantile
CASE_INTERVALS = 4096  # up to this many intervals a CASE tree finds a record's point, above an ASOF join
SAMPLE = 100_000  # reservoir sample that places the bracket (its rank error is about 0.0016 n at the median)


def _qi(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _ql(value) -> str:
    return "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"


# ---------------------------------------------------------------------------------------------
# exact order statistics without sorting


class OrderStatistics:
    """The sorted non-NULL values of `column` in the rows `where` of `relation` (n of them), as an
    array-like (shape, integer indexing), for numpy code written for a sorted array. Value i is found
    exactly: a reservoir sample gives a bracket of values around it (six standard deviations of the
    sample's rank error wide), one query counts the values below the bracket and sorts the few inside
    it; a bracket that misses position i is widened and tried again. Each lookup costs two scans of
    the column."""

    def __init__(self, con, relation: str, column: str, where: str, n: int):
        self.con, self.relation, self.column, self.where = con, relation, column, where
        self.shape = (n,)
        self._known: dict[int, float] = {}

    def __getitem__(self, i):
        i = int(i)
        n = self.shape[0]
        if i < 0:
            i += n
        if i not in self._known:
            self._fetch(i)
        return self._known[i]

    def _fetch(self, i: int) -> None:
        n = self.shape[0]
        x = f"{_qi(self.column)}::DOUBLE"
        base = f"FROM {self.relation} WHERE {self.where} AND {_qi(self.column)} IS NOT NULL"
        q = i / max(n - 1, 1)
        half = BRACKET
        while True:
            lo_q, hi_q = max(0.0, q - half), min(1.0, q + half)
            lo, hi = self.con.execute(f"SELECT reservoir_quantile({x}, [{lo_q!r}, {hi_q!r}], {SAMPLE}) {base}"
                                      ).fetchall()[0][0]
            lo = -math.inf if lo_q == 0.0 else lo
            hi = math.inf if hi_q == 1.0 else hi
            below, inside = self.con.execute(
                f"SELECT count(*) FILTER (WHERE {x} < $1), list({x} ORDER BY {x}) FILTER (WHERE {x} >= $1 AND {x} <= $2) "
                f"{base}", [lo, hi]).fetchall()[0]
            inside = inside or []
            if below <= i < below + len(inside):
                for j, value in enumerate(inside):
                    self._known[below + j] = float(value)
                return
            if lo_q == 0.0 and hi_q == 1.0:
                raise RuntimeError(f"outofcore: position {i} of {n} values not found")
            half *= 4


# ---------------------------------------------------------------------------------------------
# individual ranking and MDAV: the sorted stream


def _plan(method: str, params: dict, n: int, values) -> RankingPlan | MdavPlan:
    """The stratum's plan with the numpy function's validation and messages. values: the sorted values
    (an array, or OrderStatistics)."""
    k = params.get("k")
    k = GROUP_SIZE_AUTO.check(k, method, "k", n=n)
    if k == AUTO:  # Freedman-Diaconis, at least the minimum group size (as `methods.microaggregate`)
        k = GROUP_SIZE_AUTO.check(max(group_size_sorted(values), GROUP_SIZE_AUTO.minimum), method, "k", n=n)
    rep = REPRESENTATIVE.check(params.get("representative", "mean"), method, "representative")
    centre = float(values[(n - 1) // 2])
    if method == "ranking_round":
        return RankingPlan(n, k, centre, median=rep == "median")
    return MdavPlan(n, k, centre, tie_split=math.inf, median=rep == "median")


def _candidates(plan, first: int, last: int):
    """Group boundaries p with first < p <= last, largest first (a plan's cuts fall only on them)."""
    k = plan.k
    if isinstance(plan, RankingPlan):
        top = min(last, (plan.groups - 1) * k)
        yield from range(top - top % k, first, -k)
        return
    lo, hi = plan.middle
    n = plan.n
    if last >= hi:  # top side: n - multiples of k
        p = n - ((n - last + k - 1) // k) * k
        while p > first and p >= hi:
            yield p
            p -= k
    top = min(last, lo)
    yield from range(top - top % k, first, -k)


def _last_cut(plan, offset: int, v: np.ndarray) -> int:
    """The largest allowed cut inside the buffer (a local index 0 < j < len(v)), or 0."""
    for p in _candidates(plan, offset, offset + v.shape[0] - 1):
        j = p - offset
        if plan.cut_allowed(p, float(v[j - 1]), float(v[j])):
            return j
    return 0


class _Stratum:
    """The records of the current stratum not yet masked: values and keys from position `offset` on."""

    def __init__(self, plan):
        self.plan = plan  # None: a stratum small enough to be masked whole, with its own constants
        self.values: list[np.ndarray] = []
        self.keys: list[pa.Array] = []
        self.offset = 0
        self.before = None  # the value of the record just before the buffer

    def size(self) -> int:
        return sum(a.shape[0] for a in self.values)

    def add(self, values: np.ndarray, keys: pa.Array) -> None:
        self.values.append(values)
        self.keys.append(keys)

    def take(self, method: str, params: dict, upto: int | None, schema: pa.Schema) -> pa.RecordBatch:
        """Mask the buffer's first `upto` records (all: None) as one bucket and drop them."""
        v = np.concatenate(self.values)
        keys = pa.concat_arrays(self.keys)
        j = v.shape[0] if upto is None else upto
        plan = self.plan if self.plan is not None else _plan(method, params, v.shape[0], v)
        bucket = Bucket(self.offset, first_continues=self.before is not None and bool(self.before == v[0]),
                        last_continues=j < v.shape[0] and bool(v[j - 1] == v[j]))
        masked = plan.mask(bucket, v[:j], keys.slice(0, j).to_numpy(zero_copy_only=False))
        self.before = v[j - 1]
        self.offset += j
        self.values, self.keys = ([v[j:]], [keys.slice(j)]) if j < v.shape[0] else ([], [])
        return pa.record_batch([keys.slice(0, j), pa.array(masked, pa.float64())], schema=schema)


def _masked_stream(reader, strata_sizes: list[int], plans: dict, method: str, params: dict,
                   chunk_rows: int, schema: pa.Schema):
    """Yield (key, masked) batches for the stream of (key, x) sorted by (strata, x, key); stratum s has
    strata_sizes[s] values; plans: the constants of the strata larger than one chunk."""
    s = -1
    left = 0
    current = None
    for batch in reader:
        keys_all = batch.column(0)
        x_all = batch.column(1).to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
        i = 0
        while i < batch.num_rows:
            while left == 0:  # the next stratum with values
                s += 1
                left = strata_sizes[s]
                current = _Stratum(plans.get(s))
            take = min(left, batch.num_rows - i, chunk_rows)
            current.add(x_all[i:i + take], keys_all.slice(i, take))
            left -= take
            i += take
            if left == 0:
                yield current.take(method, params, None, schema)
            elif current.plan is not None and current.size() >= chunk_rows:
                v = np.concatenate(current.values)
                current.values, current.keys = [v], [pa.concat_arrays(current.keys)]
                j = _last_cut(current.plan, current.offset, v)
                if j > 0:
                    yield current.take(method, params, j, schema)


def _validate_finite(con, relation: str, column: str, method: str) -> None:
    x = _qi(column)
    bad = con.execute(f"SELECT {x}::DOUBLE FROM {relation} WHERE NOT isfinite({x}::DOUBLE) LIMIT 1").fetchall()
    if bad:
        bad = bad[0]
        from ._validate import refuse_nonfinite

        refuse_nonfinite(method, "xs", np.array([bad[0]]))


def _strata_sizes(con, relation: str, column: str, strata: list[str]) -> tuple[list[tuple], list[int]]:
    x = _qi(column)
    if not strata:
        return [()], [con.execute(f"SELECT count({x}) FROM {relation}").fetchall()[0][0]]
    cols = ", ".join(_qi(c) for c in strata)
    rows = con.execute(f"SELECT {cols}, count({x}) FROM {relation} GROUP BY ALL "
                       f"ORDER BY {', '.join(_qi(c) + ' ASC NULLS LAST' for c in strata)}").fetchall()
    return [tuple(r[:-1]) for r in rows], [r[-1] for r in rows]


def _where(strata: list[str], values: tuple) -> str:
    if not strata:
        return "true"
    return " AND ".join(f"{_qi(c)} IS NULL" if v is None else f"{_qi(c)} = {_ql(v)}"
                        for c, v in zip(strata, values))


def mask_positional(con, relation: str, *, key: str, column: str, method: str, params: dict,
                    strata: list[str], target: str, chunk_rows: int = CHUNK_ROWS) -> None:
    """Individual ranking or univariate MDAV of `column` per stratum into table `target`(key, value)."""
    labels, sizes = _strata_sizes(con, relation, column, strata)
    plans = {}
    for s, (values, n) in enumerate(zip(labels, sizes)):
        if n > chunk_rows:
            where = _where(strata, values)
            plans[s] = _plan(method, params, n, OrderStatistics(con, relation, column, where, n))
    order = ", ".join([*(_qi(c) + " ASC NULLS LAST" for c in strata), _qi(column), _qi(key)])
    query = (f"SELECT {_qi(key)}, {_qi(column)}::DOUBLE FROM {relation} "
             f"WHERE {_qi(column)} IS NOT NULL ORDER BY {order}")
    reader_con = con.cursor()
    try:
        reader = reader_con.sql(query).to_arrow_reader(CHUNK_ROWS)
    except duckdb.CatalogException:  # a TEMP relation of `con` (the planner's source): read it there
        reader_con.close()
        return _through_parquet(con, query, sizes, plans, method, params, chunk_rows, key, column, target)
    schema = pa.schema([("key", reader.schema.field(0).type), ("value", pa.float64())])
    stream = pa.RecordBatchReader.from_batches(schema, _masked_stream(reader, sizes, plans, method, params,
                                                                      chunk_rows, schema))
    try:
        con.register("__sdc_masked_stream", stream)
        con.execute(f"CREATE OR REPLACE TABLE {_qi(target)} AS SELECT key AS {_qi(key)}, value AS {_qi(column)} "
                    "FROM __sdc_masked_stream")
    finally:
        con.unregister("__sdc_masked_stream")
        reader_con.close()


def _through_parquet(con, query, sizes, plans, method, params, chunk_rows, key, column, target) -> None:
    """The stream read on `con` itself, the masked rows spilled to a temporary Parquet file (memory stays
    bounded), then loaded: for a relation only `con` can see."""
    spill = _spill_dir(con)
    reader = con.sql(query).to_arrow_reader(CHUNK_ROWS)
    schema = pa.schema([("key", reader.schema.field(0).type), ("value", pa.float64())])
    with tempfile.TemporaryDirectory(prefix="duckdb_sdc_ooc_", dir=spill) as folder:
        path = f"{folder}/masked.parquet"
        with pq.ParquetWriter(path, schema, compression="lz4") as writer:
            for batch in _masked_stream(reader, sizes, plans, method, params, chunk_rows, schema):
                writer.write_batch(batch)
        con.execute(f"CREATE OR REPLACE TABLE {_qi(target)} AS SELECT key AS {_qi(key)}, value AS {_qi(column)} "
                    f"FROM read_parquet({_ql(path)})")


def _spill_dir(con) -> str | None:
    """DuckDB's temporary directory (where its sort spills), if it has one on disk."""
    folder = con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0]
    if folder:
        os.makedirs(folder, exist_ok=True)
        return folder
    return None


# ---------------------------------------------------------------------------------------------
# equal frequency and equal width


@nb.njit(cache=True, nogil=True)
def _bin_sums(bins, v, lo, out_sum, out_count, out_min):
    """Per bin, in the order of the stream: the sum of (v - lo) added one by one (the numpy method's
    bincount loop), the count and the smallest value."""
    for i in range(bins.shape[0]):
        b = bins[i]
        out_sum[b] += v[i] - lo
        out_count[b] += 1
        if v[i] < out_min[b]:
            out_min[b] = v[i]


def mask_intervals(con, relation: str, *, key: str, column: str, method: str, params: dict,
                   strata: list[str], target: str) -> None:
    """Equal-width or equal-frequency discretisation of `column` per stratum into `target`(key, value)."""
    labels, sizes = _strata_sizes(con, relation, column, strata)
    route = iv.route(method, params)
    if route is None:
        raise fail(method, "stochastic rounding is not available out of core (it draws one uniform per value "
                           "in key order); use the list function")
    x = _qi(column)
    rows = []  # (stratum index, low bound, point) of every interval
    for s, (values, n) in enumerate(zip(labels, sizes)):
        if n == 0:
            continue
        where = _where(strata, values)
        if route == iv.SUMMARY:
            summary = con.execute(f"SELECT {x}::DOUBLE AS v, count(*) AS c FROM {relation} WHERE {where} AND {x} "
                                  "IS NOT NULL GROUP BY 1 ORDER BY 1").fetchnumpy()
            lows, points = iv.summary_points(method, params, np.ascontiguousarray(summary["v"]),
                                             np.ascontiguousarray(summary["c"], dtype=np.int64), method)
            rows += [(s, -math.inf if t == 0 else float(lows[t - 1]), float(points[t])) for t in range(len(points))]
        else:
            rows += _ewd_rows(con, relation, key, column, where, params, s, method)
    if len(rows) <= CASE_INTERVALS:
        # few intervals: each record's point is a CASE tree on its value (no join, no sort)
        con.execute(f"CREATE OR REPLACE TABLE {_qi(target)} AS SELECT {_qi(key)}, "
                    f"{_points_sql(rows, strata, labels, x)} AS {x} FROM {relation} WHERE {x} IS NOT NULL")
        return
    table = pa.table({"s": pa.array([r[0] for r in rows], pa.int64()), "low": [r[1] for r in rows],
                      "point": [r[2] for r in rows]})
    con.register("__sdc_intervals", table)
    strata_index = _strata_index_sql(strata, labels)
    try:
        con.execute(f"CREATE OR REPLACE TABLE {_qi(target)} AS "
                    f"SELECT r.{_qi(key)}, i.point AS {x} FROM (SELECT {_qi(key)}, {x}::DOUBLE AS v, "
                    f"{strata_index} AS s FROM {relation} WHERE {x} IS NOT NULL) r "
                    "ASOF JOIN __sdc_intervals i ON r.s = i.s AND r.v >= i.low")
    finally:
        con.unregister("__sdc_intervals")


def _points_sql(rows, strata, labels, x: str) -> str:
    """SQL of a record's point: per stratum a binary CASE tree over its intervals' lower bounds."""

    def tree(items):
        if len(items) == 1:
            return repr(float(items[0][2])) + "::DOUBLE"
        mid = len(items) // 2
        return f"CASE WHEN {x}::DOUBLE < {float(items[mid][1])!r} THEN {tree(items[:mid])} ELSE {tree(items[mid:])} END"

    by_stratum = {}
    for r in rows:
        by_stratum.setdefault(r[0], []).append(r)
    if not strata:
        return tree(by_stratum[0])
    cases = " ".join(f"WHEN {_where(strata, labels[s])} THEN {tree(items)}" for s, items in by_stratum.items())
    return f"CASE {cases} END"


def _strata_index_sql(strata: list[str], labels: list[tuple]) -> str:
    """The stratum index of a row (its position in the sorted strata list) as SQL."""
    if not strata:
        return "0"
    cases = " ".join(f"WHEN {_where(strata, values)} THEN {s}" for s, values in enumerate(labels))
    return f"CASE {cases} END"


def _ewd_rows(con, relation, key, column, where, params, s, method):
    """Equal width with a given c (`discretisation._run_ewd`): each occupied bin's smallest value and
    point, its sum of (x - min) added in key order, the order in which the numpy method adds."""
    c = INTERVALS.check(params.get("c"), method, "c")  # a given c (the caller routes 'auto' elsewhere)
    rep = POINT.check(params.get("representative", "mean"), method, "representative")
    x = _qi(column)
    lo, hi = con.execute(f"SELECT min({x}::DOUBLE), max({x}::DOUBLE) FROM {relation} WHERE {where}").fetchall()[0]
    # on the values scaled by 2^-e, as the numpy method computes (`_numerics.to_unit`)
    e = exponent(np.array([lo, hi]))
    lo, hi = float(np.ldexp(lo, -e)), float(np.ldexp(hi, -e))
    width, top = disc.ewd_width(method, lo, hi, c)
    sums = np.zeros(c, np.float64)
    counts = np.zeros(c, np.int64)
    smallest = np.full(c, np.inf)
    reader = con.sql(f"SELECT {x}::DOUBLE FROM {relation} WHERE {where} AND {x} IS NOT NULL "
                     f"ORDER BY {_qi(key)}").to_arrow_reader(CHUNK_ROWS)
    for batch in reader:
        v = np.ldexp(batch.column(0).to_numpy(zero_copy_only=False), -e)
        bins = disc.ewd_bins(v, lo, width, top) if width > 0 else np.zeros(v.shape[0])
        _bin_sums(bins.astype(np.int64), v, lo, sums, counts, smallest)
    out = []
    for t, b in enumerate(np.flatnonzero(counts)):
        point = lo + (b + 0.5) * width if rep == "midpoint" and width > 0 else lo + sums[b] / counts[b]
        out.append((s, -math.inf if t == 0 else float(np.ldexp(smallest[b], e)), float(np.ldexp(point, e))))
    return out


def mask_column(con, relation: str, *, key: str, column: str, method: str, params: dict,
                strata: list[str] | tuple = (), target: str, chunk_rows: int = CHUNK_ROWS) -> None:
    """Mask `column` of `relation` (a table or view name, or a parenthesised query) with `method` and
    its parameters, per stratum, into a new table `target`(key, column) of the non-NULL values.
    Records of equal value are taken in key order (the key must be unique). Raises SdcError with the
    numpy function's message for a bad parameter or a NaN or infinite value."""
    if method not in METHODS:
        raise fail(method, f"is not available out of core; methods: {', '.join(METHODS)}")
    strata = list(strata)
    _validate_finite(con, relation, column, method)
    if method in ("ranking_round", "mdav_round"):
        mask_positional(con, relation, key=key, column=column, method=method, params=params, strata=strata,
                        target=target, chunk_rows=chunk_rows)
    else:
        mask_intervals(con, relation, key=key, column=column, method=method, params=params, strata=strata,
                       target=target)


def mask_rule(con, spec, rule, i: int, chunk_rows: int = CHUNK_ROWS) -> None:
    """What `release.plan.mask_step(spec, rule, i)` does, out of core: the temporary table
    `__sdc_mask_<i>(__sdc_key, __sdc_value)` of a one-column rule of METHODS, from `__sdc_source` keyed
    by its row key `__sdc_rid` (the spec's key or the surrogate)."""
    from .release.plan import ROW_KEY, SOURCE, mask_table

    name = f"__sdc_ooc_{i}"
    try:
        mask_column(con, _qi(SOURCE), key=ROW_KEY, column=rule.column, method=rule.method.name,
                    params=rule.params, strata=list(spec.strata_of(rule)), target=name, chunk_rows=chunk_rows)
    except SdcError as e:
        from .release.spec import SpecError

        raise SpecError(f"{spec.name}: {rule.where}: {e}") from None
    con.execute(f"CREATE OR REPLACE TEMP TABLE {_qi(mask_table(i))} AS SELECT {_qi(ROW_KEY)} AS __sdc_key, "
                f"{_qi(rule.column)} AS __sdc_value FROM {_qi(name)}")
    con.execute(f"DROP TABLE {_qi(name)}")


__all__ = ["CHUNK_ROWS", "METHODS", "OrderStatistics", "mask_column", "mask_rule"]
