"""Run a release spec on Apache Spark: the same spec, the same masked values (compared by key) as the
DuckDB release, written as Parquet plus the manifest.

    from duckdb_sdc.release import load_spec
    from duckdb_sdc.spark import release, local_session
    result = release(load_spec("people.toml"), local_session("local[2]"))

What is written (`output.database` names the release folder; it is replaced atomically, see `files`):

    <folder>/<output.table>/part-*.parquet      the released table, in a secret random row order
    <folder>/release_manifest/part-*.parquet    the manifest: the DuckDB release's columns and words

How the masking runs (one Spark job writes the release; the planning passes before it read the
source only). The rules are grouped into stages (`plan_stages`), each one shuffle and one kernel:

* a stage's records are given a bucket, shuffled by bucket, grouped by bucket inside each partition
  (a sort on the bucket id alone) and masked by `kernel.StageKernel` in the executors' Python workers
  (a scalar iterator Arrow UDF: only the columns the masking reads go to Python, only the masked ones
  come back), which puts each bucket in its order;
* a stratum is one bucket, masked by the numpy layer on its values in key order
  (`stratum.mask_stratum`, the function the DuckDB release calls); the rules with the same strata
  share one stage. Methods that need a whole stratum (optimal, V-MDAV, k-means, re-sampling,
  multivariate MDAV, Mondrian, boxes, stochastic rounding) refuse a stratum of more than
  `Options.max_stratum_rows` records;
* a stratum of more than `Options.bucket_rows` values of a position-based method (individual
  ranking, univariate MDAV, iDP-CBLS, iDP-LS, DP-UM, plain Laplace noise) is split into buckets
  (`planner`), each masked from its offset (`positional`): one stage per such rule;
* equal-width and equal-frequency discretisation of a stratum above `Options.max_stratum_rows` run as
  Spark SQL from per-stratum statistics (`intervals`).

The release's rules are the DuckDB release's, through the functions it calls: seeds refused without
reproducible_noise (`run.refuse_unopted_seeds`), the surrogate key of a spec without source.key
(`with_surrogate_key`, `plan.keyed_step`'s definition), 'auto' resolved per stratum and the smallest
sets of attraction measured and refused below 2 (`safeguards.auto_step` / `smallest_set_step`'s
checks on Spark's aggregates), `decimals` as DuckDB's round, the policy gate on the would-be release
(`gate.policy_gate`, `policy.judge`, `PolicyBreach`), the manifest rows of `release.manifest.rows`.
The rows are put in the order of md5(secret salt || row key), a declared key is checked unique and
non-NULL on the way, and the Parquet files are written into the temporary folder. The masked records
are read once, by that writer: the kernels measure the sets of attraction while they mask
(`attraction`, carried to the driver by an accumulator), and the check runs after the write, before
the folder is put in place (a refusal deletes it). A release with a policy gate, or with an interval
plan (discretisation in Spark SQL, which no kernel sees), or with a rule whose noise is drawn afresh
(no seed), persists the masked records on disk instead, for the checks, the gate and the ledger, which
read them before the writer; otherwise the ledger's values of the release (`ledger.SparkLedger`) are
gathered by masking again, which gives the same values.
"""

from __future__ import annotations

import logging
import math
import os
import re
import secrets
import sys
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from .._version import __version__
from .._validate import SdcError, is_auto
from ..methods.freedman_diaconis import group_size_sorted, intervals_sorted
from ..release import safeguards
from ..release.manifest import MANIFEST_COLUMNS
from ..release.manifest import release_notes
from ..release.manifest import rows as manifest_rows
from ..release.methods import BOXES, COLUMN
from ..release.plan import ROW_KEY, VALUE, key_step, released_columns, resolve
from ..release.plan import LINKAGE_TABLE
from ..release.policy import PolicyBreach, judge
from ..release.source import Snapshot
from ..release.spec import MANIFEST_TABLE, Rule, Spec, SpecError, bound_columns
from ..kernels import summary
from . import intervals
from . import preflight
from .files import FileSystem, put_in_place, remove_residues, sibling
from .session import check_spark_version, jit_sized_codegen
from ..kernels.attraction import smallest_set
from ..kernels.cipher import round_keys
from .kernel import CONFLICT, WHOLE, BucketTask, Part, Reports, StageKernel
from .ledger import SparkLedger
from .ordering import B, HASH, S, V, qcol
from .planner import POSITIONAL, Options, check_finite, plan_rule
from .stratum import StratumCall

STRATA_PREFIX = "__sdc_s_"  # one stratum index column per distinct strata list: __sdc_s_0, __sdc_s_1, ...
SALT = "__sdc_salt"
LOG = logging.getLogger("duckdb_sdc.spark")
LABELLED_BUCKETS = 1024
KEY_CHECK = "__sdc_key_check"  # what the key check compares: the previous key of a hash, or a cipher text's count
RESULT = "__sdc_masked"  # a stage's masked columns, as the struct its kernel returns
KEY_FAILURE = "__sdc_key_not_unique"


@dataclass
class SparkReleaseResult:
    path: str  # the release folder
    table: str
    rows: int
    columns: int
    masked: list[str]
    seconds: float
    not_private: list[str]  # columns released with reproducible noise (the spec opted in)
    linkage: str | None = None  # the private linkage folder, when the spec asks for one
    notes: list[str] = field(default_factory=list)  # what the command line prints (the manifest's notes)
    warnings: list[str] = field(default_factory=list)  # what the spec opted into (the ledger records it)


# ---------------------------------------------------------------------------------------------
# the spec, the source


_SPARK_TO_DUCKDB = {
    T.ByteType: "TINYINT", T.ShortType: "SMALLINT", T.IntegerType: "INTEGER", T.LongType: "BIGINT",
    T.FloatType: "FLOAT", T.DoubleType: "DOUBLE", T.StringType: "VARCHAR", T.BooleanType: "BOOLEAN",
    T.DateType: "DATE", T.TimestampType: "TIMESTAMP WITH TIME ZONE", T.TimestampNTZType: "TIMESTAMP",
    T.BinaryType: "BLOB",
}


def duckdb_type(dtype: T.DataType) -> str:
    """The DuckDB type name of a Spark type (what DuckDB reports for the same Parquet column)."""
    if isinstance(dtype, T.DecimalType):
        return f"DECIMAL({dtype.precision},{dtype.scale})"
    for cls, name in _SPARK_TO_DUCKDB.items():
        if isinstance(dtype, cls):
            return name
    return dtype.simpleString().upper()


def needed_columns(spec: Spec, names: list[str]) -> list[str]:
    """The source columns a release reads, in the source's order: every column when the spec has no key
    (the surrogate key orders records by all of them), else the released ones, the key, the strata
    (kept or not) and the masked ones; a dropped column that nothing needs is never read."""
    if spec.source.key is None:
        return list(names)
    wanted = {c for c, r in spec.rules.items() if r.action != "drop"} | {spec.source.key}
    for rule in spec.masked():
        wanted |= set(rule.columns) | set(spec.strata_of(rule))
    return [n for n in names if n in wanted]


CHUNK_ROWS = 1_000_000  # records of a DuckDB source per Arrow batch sent to Spark
_ARROW_SAFE = {"UUID": "VARCHAR", "JSON": "VARCHAR"}  # types Spark reads only as text


def _duckdb_table(spark: SparkSession, spec: Spec) -> tuple[DataFrame, list[tuple[str, str]]]:
    """The spec's DuckDB table as a DataFrame that no file holds: the columns the release reads, sent
    from DuckDB to Spark in Arrow batches over PySpark's local socket (`_to_jvm_in_memory`) and kept
    by Spark (driver memory for its lineage: an executor lost later recomputes its part from there;
    the executors' block stores, encrypted with spark.io.encryption, for the passes). No copy of the
    source is written anywhere, so nothing of it is left behind when the release ends, however it
    ends, and executors on other machines read it without a shared disk. Costs the driver the memory
    of those columns in Arrow (8 bytes a number, the text's bytes)."""
    import duckdb
    import pyarrow as pa
    from pyspark.sql.pandas.types import from_arrow_schema

    con = duckdb.connect()
    try:
        con.execute("ATTACH ? AS src (READ_ONLY)", [str(spec.source.database)])
        q = '"' + spec.source.schema.replace('"', '""') + '"."' + spec.source.table.replace('"', '""') + '"'
        described = [(r[0], r[1]) for r in con.execute(f"DESCRIBE src.{q}").fetchall()]
        names = needed_columns(spec, [n for n, _ in described])
        types = dict(described)

        def select(n):
            quoted = '"' + n.replace('"', '""') + '"'
            kind = types[n].split("(")[0].upper()
            if kind in _ARROW_SAFE or kind.startswith("ENUM"):
                return f"CAST({quoted} AS VARCHAR) AS {quoted}"
            return quoted

        reader = con.sql(f"SELECT {', '.join(map(select, names))} FROM src.{q}").to_arrow_reader(CHUNK_ROWS)
        batches = list(reader)
        table = pa.Table.from_batches(batches, reader.schema)
        del batches
    except duckdb.Error as e:
        raise SpecError(f"{spec.name}: source: {e}") from None
    finally:
        con.close()
    schema = from_arrow_schema(table.schema, prefer_timestamp_ntz=True)  # TIMESTAMP stays without a zone
    with _to_jvm_in_memory(spark):
        df = spark.createDataFrame(table, schema)
    del table
    return df.persist(StorageLevel.DISK_ONLY), described


@contextmanager
def _to_jvm_in_memory(spark):
    """PySpark sends local data to the JVM through a temporary file in the driver's local folder unless
    spark.io.encryption.enabled is on, when it uses an authenticated local socket instead
    (`SparkContext._serialize_to_jvm`). A release never puts raw records in a file, so it takes the
    socket either way while the block runs."""
    sc = spark.sparkContext
    before = sc._encryption_enabled
    sc._encryption_enabled = True
    try:
        yield
    finally:
        sc._encryption_enabled = before


def read_source(spark: SparkSession, spec: Spec, source, files: tuple[str, ...] | None = None):
    """(DataFrame, [(column, DuckDB type)]) of the source: a DataFrame or a Spark table name given by
    the caller, or the spec's Parquet/CSV files (`files`: where Spark reads them, see
    `preflight.locations`), or its DuckDB table (`_duckdb_table`; a persisted DataFrame the caller
    unpersists)."""
    if isinstance(source, DataFrame):
        df = source
    elif isinstance(source, str):
        df = spark.table(source)
    elif spec.source.database is not None:
        return _duckdb_table(spark, spec)
    else:
        files = list(files if files is not None else preflight.locations(spec).files)
        df = (spark.read.parquet(*files) if spec.source.format == "parquet"
              else spark.read.csv(files, header=True, inferSchema=True))
        if spec.source.format == "parquet" and not any(preflight.is_uri(f) for f in files):
            return df, _describe_parquet(files, df)
    return df, [(f.name, duckdb_type(f.dataType)) for f in df.schema.fields]


def _describe_parquet(files, df) -> list[tuple[str, str]]:
    """The DuckDB types of local Parquet files (what the DuckDB release's manifest says)."""
    import duckdb

    con = duckdb.connect()
    try:
        rows = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [list(files)]).fetchall()
    finally:
        con.close()
    types = {r[0]: r[1] for r in rows}
    return [(f.name, types.get(f.name, duckdb_type(f.dataType))) for f in df.schema.fields]


# ---------------------------------------------------------------------------------------------
# strata


@dataclass
class Strata:
    """The strata of one list of strata columns: their values in ascending order (NULLS LAST), which
    numbers them 0, 1, ... (the stratum index of the seeds), and per rule the non-NULL records."""
    columns: tuple[str, ...]
    index_column: str
    labels: list[str]  # per stratum index, for messages: "region = 'north'"
    values: list[tuple]  # per stratum index, the strata columns' values
    counts: dict[str, list[int]]  # rule where -> per stratum index, its records to mask
    rows: int  # records of the source


def _nonnull(rule: Rule) -> "F.Column":
    cond = None
    for c in rule.columns:
        piece = qcol(c).isNotNull()
        cond = piece if cond is None else cond & piece
    return cond


def _nonfinite(rule: Rule):
    cond = None
    for c in rule.columns:
        x = qcol(c).cast("double")
        piece = F.isnan(x) | (F.abs(x) == F.lit(math.inf))
        cond = piece if cond is None else cond | piece
    return cond


def _label(columns, values) -> str:
    if not columns:
        return "(no strata)"
    return ", ".join(f"{c} = {'NULL' if v is None else repr(v)}" for c, v in zip(columns, values))


INLINE_STRATA = 64  # up to this many strata of one text, integer or boolean column: a CASE, else a join


def _inline_index(column, values: list) -> "F.Column":
    """The stratum index of a record as one flat CASE on its strata value (`values` in index order,
    NULL matched by IS NULL, as the join's null-safe equality matches it)."""
    out = None
    for i, v in enumerate(values):
        cond = column.isNull() if v is None else column == F.lit(v)
        out = F.when(cond, F.lit(i)) if out is None else out.when(cond, F.lit(i))
    return out.cast("long")


def compute_strata(spark, df, spec: Spec, rules: list[Rule]) -> tuple[DataFrame, dict[tuple, Strata]]:
    """One aggregate per distinct strata list: the strata in order, their sizes per rule, and a check
    for NaN and infinity (refused as the numpy layer refuses them). Returns the source with one stratum
    index column per strata list: a flat CASE on the value for up to INLINE_STRATA strata of one
    text, integer or boolean column (a join costs in every pass over the source: a grouped sum over
    10M rows with 4 strata on local[2] took 1.35-1.51 s with the join, 0.65-0.97 s with the CASE),
    else joined from a small broadcast table."""
    groups: dict[tuple, list[Rule]] = {}
    for rule in rules:
        groups.setdefault(tuple(spec.strata_of(rule)), []).append(rule)
    out = {}
    for t, (columns, members) in enumerate(groups.items()):
        aggs = [F.count(F.lit(1)).alias("__sdc_rows")]
        for i, rule in enumerate(members):
            aggs.append(F.count(F.when(_nonnull(rule), F.lit(1))).alias(f"n{i}"))
            aggs.append(F.first(F.when(_nonfinite(rule), F.lit(1)), ignorenulls=True).alias(f"bad{i}"))
        grouped = df.groupBy(*(qcol(c) for c in columns)).agg(*aggs) if columns else df.agg(*aggs)
        if columns:
            grouped = grouped.orderBy(*(qcol(c).asc_nulls_last() for c in columns))
        rows = grouped.collect()
        for i, rule in enumerate(members):
            if any(r[f"bad{i}"] is not None for r in rows):
                bad = df.where(_nonfinite(rule)).select(*(qcol(c).cast("double") for c in rule.columns)).first()
                value = next(v for v in bad if v is not None and not math.isfinite(v))
                try:
                    check_finite(rule.method.name, value)
                except SdcError as e:
                    raise SpecError(f"{spec.name}: {rule.where}: {e}") from None
        name = f"{STRATA_PREFIX}{t}"
        labels = [_label(columns, [r[c] for c in columns]) for r in rows]
        out[columns] = Strata(columns, name, labels, [tuple(r[c] for c in columns) for r in rows],
                              {rule.where: [int(r[f"n{i}"]) for r in rows] for i, rule in enumerate(members)},
                              sum(int(r["__sdc_rows"]) for r in rows))
        kind = df.schema[columns[0]].dataType if len(columns) == 1 else None
        inline = 0 < len(rows) <= INLINE_STRATA and (kind == T.StringType()  # binary collation: equality is the join's
                                                 or isinstance(kind, (T.IntegralType, T.BooleanType)))
        if inline:  # a flat CASE on the value: no join in each pass over the source
            df = df.withColumn(name, _inline_index(qcol(columns[0]), [r[columns[0]] for r in rows]))
        elif columns:
            schema = T.StructType([df.schema[c] for c in columns] + [T.StructField(name, T.LongType(), False)])
            table = spark.createDataFrame([(*[r[c] for c in columns], i) for i, r in enumerate(rows)], schema)
            cond = None
            for c in columns:
                piece = df[c].eqNullSafe(table[c])
                cond = piece if cond is None else cond & piece
            df = df.join(F.broadcast(table), cond, "left").drop(*(table[c] for c in columns))
        else:
            df = df.withColumn(name, F.lit(0).cast("long"))
    return df, out


# ---------------------------------------------------------------------------------------------
# one rule's values; discretisation of huge strata in Spark SQL


CLAMPED = ("idp_cbls", "idp_ls", "dp_um")  # sort the values clamped to the domain


def _value_expr(rule: Rule) -> "F.Column":
    """V: the rule's value as DOUBLE (clamped to the domain for the DP mechanisms, as they sort the
    clamped values), NULL where the record is not masked (a NULL value, or for a group a NULL in any
    of its columns)."""
    if rule.method.kind != COLUMN or rule.method.name == "dp_laplace":  # no value order: key order alone
        return F.when(_nonnull(rule), F.lit(0.0))
    x = qcol(rule.column).cast("double")
    if rule.method.name in CLAMPED:
        lb, ub = rule.params.get("lb"), rule.params.get("ub")
        if lb is not None:
            x = F.when(x.isNull(), x).otherwise(F.greatest(x, F.lit(float(lb))))
        if ub is not None:
            x = F.when(x.isNull(), x).otherwise(F.least(x, F.lit(float(ub))))
    return x


@dataclass
class IntervalPlan:
    """A discretisation rule on huge strata, in Spark SQL (`intervals`): the masked value is `expr`
    (over S and V), or looked up in `table` (stratum, bin, point) by the bin `expr`."""
    rule: Rule
    strata: Strata
    expr: "F.Column"
    table: list | None = None


def plan_intervals(spark, src, spec: Spec, rule: Rule, strata: Strata, options: Options) -> IntervalPlan | None:
    """The interval path for a discretisation rule with a stratum above max_stratum_rows, or None."""
    counts = strata.counts[rule.where]
    route = summary.route(rule.method.name, rule.params)
    key = spec.source.key or ROW_KEY
    if route is None or max(counts, default=0) <= options.max_stratum_rows:
        return None
    present = [s for s, n in enumerate(counts) if n > 0]
    rule_src = src.withColumn(S, F.col(strata.index_column)).withColumn(V, _value_expr(rule))
    func = rule.method.name
    try:
        if route == summary.WINDOW:
            expr, table = intervals.window_table(spark, rule_src, rule.params, key, present, func)
            return IntervalPlan(rule, strata, expr, table)
        expr = intervals.summary_expr(rule_src, func, rule.params, present, options.max_summary_rows, func)
    except SdcError as e:
        raise SpecError(f"{spec.name}: {rule.where}: {e}") from None
    if expr is None:
        raise SpecError(f"{spec.name}: {rule.where}: {func}: the strata's (distinct value, count) summary has more "
                        f"than max_summary_rows = {options.max_summary_rows} rows, which the driver would gather "
                        "for the interval bounds; raise the limit for a driver with more memory, or use finer "
                        "strata")
    return IntervalPlan(rule, strata, expr)


def apply_intervals(spark, df: DataFrame, plan: IntervalPlan) -> DataFrame:
    column = plan.rule.column
    df = df.withColumn(S, F.col(plan.strata.index_column)).withColumn(V, _value_expr(plan.rule))
    if plan.table is None:
        masked = F.when(F.col(V).isNull(), F.lit(None).cast("double")).otherwise(plan.expr)
        return df.withColumn(column, masked).drop(S, V)
    bin_col, point = "__sdc_bin", "__sdc_point"
    schema = T.StructType([T.StructField(S, T.LongType()), T.StructField(bin_col, T.LongType()),
                           T.StructField(point, T.DoubleType())])
    table = spark.createDataFrame([(int(s), int(b), float(p)) for s, b, p in plan.table], schema)
    df = df.withColumn(bin_col, plan.expr).join(F.broadcast(table), [S, bin_col], "left")
    return df.withColumn(column, F.col(point)).drop(S, V, bin_col, point)


# ---------------------------------------------------------------------------------------------
# stages: one shuffle and kernel each


@dataclass
class Stage:
    """One shuffle of the release's records and the kernel after it: the rules `rules` masked together.
    A whole-stratum stage sends every record of a stratum to the stratum's bucket (bucket id = stratum
    index); a split stage (one position-based rule with huge strata) gives a record with a value the
    bucket that `bucket(df, name, default)` adds as a column (`planner.plan_rule`) and a record without
    one a pass-through bucket."""
    strata: Strata
    rules: list[Rule]
    buckets: int  # bucket ids 0 .. buckets - 1
    tasks: dict  # bucket id -> BucketTask
    bucket: Callable | None = None  # split stages: bucket(df, name, default) adds a record's bucket (`plan_rule`)

    @property
    def split(self) -> bool:
        return self.bucket is not None


def _refuse_oversized(spec: Spec, rule: Rule, strata: Strata, options: Options) -> None:
    for s, n in enumerate(strata.counts[rule.where]):
        if n > options.max_stratum_rows:
            raise SpecError(f"{spec.name}: {rule.where}: {rule.method.name}: stratum {strata.labels[s]} has {n} "
                            f"records to mask, more than max_stratum_rows = {options.max_stratum_rows}: this method "
                            "needs a whole stratum in one task's memory (raise max_stratum_rows for executors "
                            "with more memory, or use finer strata)")


def whole_stage(strata: Strata, rules: list[Rule]) -> Stage:
    count = len(strata.labels)
    return Stage(strata, rules, count, {s: BucketTask(WHOLE, s) for s in range(count)})


def split_stage(src, spec: Spec, rule: Rule, strata: Strata, huge: dict[int, int], options: Options) -> Stage:
    """A position-based rule with huge strata: its small strata are whole buckets, the huge ones are
    split by the planner."""
    counts = strata.counts[rule.where]
    tasks = {s: BucketTask(WHOLE, s) for s, n in enumerate(counts) if n > 0 and s not in huge}
    rule_src = src.withColumn(S, F.col(strata.index_column)).withColumn(V, _value_expr(rule))
    try:
        _, split_tasks, bucket, base = plan_rule(rule_src, method=rule.method.name, params=rule.params,
                                                    key=spec.source.key or ROW_KEY, strata=huge, options=options,
                                                    func=rule.method.name, base=len(counts), column=rule.column)
    except SdcError as e:
        raise SpecError(f"{spec.name}: {rule.where}: {e}") from None
    tasks.update(split_tasks)
    return Stage(strata, [rule], base, tasks, bucket)


def plan_stages(spark, src, spec: Spec, rules: list[Rule], strata: dict[tuple, Strata], options: Options) -> list:
    """The release's masking as stages and interval plans, in the order of the rules: the rules that
    mask whole strata share one stage per strata list (one shuffle for all of them)."""
    out, shared = [], {}
    for rule in rules:
        st = strata[tuple(spec.strata_of(rule))]
        interval_plan = plan_intervals(spark, src, spec, rule, st, options)
        if interval_plan is not None:
            out.append(interval_plan)
            continue
        counts = st.counts[rule.where]
        huge = {s: n for s, n in enumerate(counts) if rule.method.name in POSITIONAL and n > options.bucket_rows}
        if huge:
            out.append(split_stage(src, spec, rule, st, huge, options))
            continue
        if rule.method.name not in POSITIONAL:
            _refuse_oversized(spec, rule, st, options)
        if rule.method.kind == BOXES:
            out.append(whole_stage(st, [rule]))
            continue
        if st.columns not in shared:
            shared[st.columns] = whole_stage(st, [])
            out.append(shared[st.columns])
        shared[st.columns].rules.append(rule)
    return out


def stage_labels(spark, stage: Stage) -> tuple[int, dict[int, int]]:
    """(partitions of the stage's shuffle, bucket id -> the label the records carry). Few buckets get
    labels that Spark's hash partitioning sends to partition b mod P, so that they spread evenly
    (hashing the numbers 0..b directly leaves about a third of the partitions empty)."""
    partitions = max(1, min(stage.buckets, spark.sparkContext.defaultParallelism * 4))
    if stage.buckets <= LABELLED_BUCKETS:
        return partitions, unique_labels(stage.buckets, partitions)
    return partitions, {b: b for b in range(stage.buckets)}


def apply_stage(spark, df: DataFrame, spec: Spec, stage: Stage, box_offsets: dict | None = None,
                count_boxes: bool = False, attraction=None, cipher: tuple | None = None) -> DataFrame:
    """The stage's records shuffled into buckets, grouped by bucket, and masked by the kernel. With
    `attraction` (an accumulator of `kernel.Reports`), the rules the release checks for their sets of
    attraction (`smallest_set_step`) report their buckets' facts to it (see `measured_sets`). With
    `cipher` (round keys, `cipher.round_keys`), the kernel also gives every record the cipher text of
    its key as column HASH (the secret order, see `shuffled`)."""
    partitions, label_of = stage_labels(spark, stage)
    tasks = {label_of[b]: t for b, t in stage.tasks.items()}
    key_name = spec.source.key or ROW_KEY
    key = qcol(key_name)
    if stage.split:
        rule = stage.rules[0]
        df = df.withColumn(S, F.col(stage.strata.index_column)).withColumn(V, _value_expr(rule))
        df = stage.bucket(df, B, F.col(S))
        bucket = F.col(B)
    else:
        bucket = F.col(stage.strata.index_column)
    if 0 < stage.buckets <= LABELLED_BUCKETS:  # (no buckets: an empty source, no record to label)
        mapping = F.create_map(*[x for b in range(stage.buckets) for x in (F.lit(b), F.lit(label_of[b]))])
        bucket = mapping[bucket]
    if stage.split:
        null_bucket = -1 - F.pmod(F.xxhash64(key), F.lit(partitions))
        df = df.withColumn(B, F.when(F.col(V).isNull(), null_bucket).otherwise(bucket))
        # S and V are not shuffled where the kernel has them already: the stratum is the bucket's
        # task's, and a DOUBLE column that is not clamped is its own sort value
        plain = (rule.method.kind == COLUMN and rule.method.name not in (*CLAMPED, "dp_laplace")
                 and isinstance(df.schema[rule.column].dataType, T.DoubleType))
        value = rule.column if plain else V
        df = df.drop(S, V) if plain else df.drop(S)
    else:
        df = df.withColumn(B, bucket)
        value = V
    # grouped by bucket only: the kernel puts each bucket in its order (a sort on the bucket id alone
    # is the cheap kind for Spark; see positional.bucket_order)
    df = df.repartition(partitions, B).sortWithinPartitions(B)
    kept = [f for f in df.schema.fields if f.name not in (B, V, S)]
    parts = tuple(Part(StratumCall(r.method, dict(r.params), tuple(r.columns)), tuple(r.columns), r.where,
                       measured=attraction is not None and checked(spec, r))
                  for r in stage.rules)
    masked = list(dict.fromkeys(c for r in stage.rules for c in r.columns))
    arguments = tuple(dict.fromkeys([B, key_name, *([value] if stage.split else []), *masked]))
    common = dict(parts=parts, key=key_name, tasks=tasks, stratum_labels=tuple(stage.strata.labels),
                  value=value, arguments=arguments)
    if count_boxes:
        schema = T.StructType([T.StructField("stratum", T.LongType()), T.StructField("boxes", T.LongType())])
        kernel = StageKernel(schema=to_arrow_schema(schema), count_boxes=True, **common)
        return df.select(*(qcol(a) for a in arguments)).mapInArrow(kernel, schema)
    rule = stage.rules[0]
    boxes = rule.method.kind == BOXES
    if boxes:
        names = tuple(bound_columns(c) for c in rule.columns)
        fields = [T.StructField(n, T.DoubleType()) for pair in names for n in pair]
        fields.append(T.StructField(rule.box_column, T.LongType()))
        extra = dict(box_names=names, box_column=rule.box_column, box_offsets=box_offsets or {})
    else:
        fields, extra = [T.StructField(c, T.DoubleType()) for c in masked], {}
    if cipher is not None:
        fields.append(T.StructField(HASH, T.LongType()))
        extra.update(cipher=cipher)
    struct = T.StructType(fields)
    kernel = StageKernel(schema=to_arrow_schema(struct), attraction=attraction, **extra, **common)
    # not deterministic for Spark's optimizer, and that is needed: a result depends on the other records
    # of its bucket, and the rule that drops a sort whose order a later sort overrides (EliminateSorts,
    # from shuffled()'s sort on the secret hash) walks down through projections of deterministic
    # expressions only; Python UDFs are extracted from their projection after it has run. Without the
    # mark it would drop the sort by bucket id (`kernel._buckets` refuses a bucket that comes in pieces)
    udf = F.arrow_udf(kernel.masked, struct).asNondeterministic()
    df = df.withColumn(RESULT, udf(*(qcol(a) for a in arguments)))
    result = F.col(RESULT)
    if boxes:
        columns = [qcol(f.name) for f in kept if f.name not in rule.columns]
        columns += [result.getField(f.name).alias(f.name) for f in fields]
    else:
        columns = [result.getField(f.name).alias(f.name) if f.name in masked else qcol(f.name) for f in kept]
        if cipher is not None:  # (a box rule takes every field of the struct, HASH too)
            columns.append(result.getField(HASH).alias(HASH))
    return df.select(*columns)


def masked_pipeline(spark, src: DataFrame, spec: Spec, rules: list[Rule], stages: list, reports=None,
                    cipher: tuple | None = None) -> DataFrame:
    """The source's released and masked columns (and the strata index columns) after every stage and
    interval plan; with `reports` (an accumulator of `kernel.Reports`) the kernels report the facts
    of the sets of attraction to it (`measured_sets`); with `cipher` the last stage's kernel adds
    HASH (`apply_stage`; the caller checks that there is a stage)."""
    keep = {c for c, r in spec.rules.items() if r.action != "drop"} | {spec.source.key or ROW_KEY}
    keep |= {c for r in rules for c in r.columns}
    pipeline = src.select(*(qcol(f.name) for f in src.schema.fields
                            if f.name in keep or f.name.startswith(STRATA_PREFIX)))
    last = max((i for i, stage in enumerate(stages) if isinstance(stage, Stage)), default=None)
    for i, stage in enumerate(stages):
        if isinstance(stage, IntervalPlan):
            pipeline = apply_intervals(spark, pipeline, stage)
        else:
            boxed = stage.rules[0].method.kind == BOXES
            offsets = box_offsets(spark, src, spec, stage) if boxed else None
            pipeline = apply_stage(spark, pipeline, spec, stage, box_offsets=offsets, attraction=reports,
                                   cipher=cipher if i == last else None)
    return pipeline


def box_offsets(spark, src, spec: Spec, stage: Stage) -> dict[int, int]:
    """Per stratum index, the number of boxes of the strata before it (a pass that runs the box method
    on the source and counts its boxes), so that box ids run 1..G over the release."""
    per = {}
    for r in apply_stage(spark, src, spec, stage, count_boxes=True).collect():
        if r["stratum"] >= 0:
            per[r["stratum"]] = per.get(r["stratum"], 0) + r["boxes"]
    offsets, total = {}, 0
    for s in range(len(stage.strata.labels)):
        offsets[s] = total
        total += per.get(s, 0)
    return offsets


# ---------------------------------------------------------------------------------------------
# partitions


def _mix_k1(k1: int) -> int:
    k1 = (k1 * 0xCC9E2D51) & 0xFFFFFFFF
    k1 = ((k1 << 15) | (k1 >> 17)) & 0xFFFFFFFF
    return (k1 * 0x1B873593) & 0xFFFFFFFF


def _mix_h1(h1: int, k1: int) -> int:
    h1 ^= k1
    h1 = ((h1 << 13) | (h1 >> 19)) & 0xFFFFFFFF
    return (h1 * 5 + 0xE6546B64) & 0xFFFFFFFF


def spark_hash_long(value: int, seed: int = 42) -> int:
    """Spark's hash() of a BIGINT (Murmur3_x86_32.hashLong with seed 42), which its hash partitioning
    takes modulo the number of partitions."""
    value &= 0xFFFFFFFFFFFFFFFF
    h1 = _mix_h1(seed, _mix_k1(value & 0xFFFFFFFF))
    h1 = _mix_h1(h1, _mix_k1(value >> 32))
    h1 ^= 8
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & 0xFFFFFFFF
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & 0xFFFFFFFF
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


def unique_labels(buckets: int, partitions: int) -> dict[int, int]:
    """Distinct BIGINT labels, bucket b's label sent to partition b mod partitions by Spark's hash
    partitioning (pmod(hash(label), partitions))."""
    need = {p: len(range(p, buckets, partitions)) for p in range(partitions)}
    found: dict[int, list[int]] = {p: [] for p in range(partitions)}
    label = 0
    missing = sum(need.values())
    while missing:
        p = spark_hash_long(label) % partitions
        if len(found[p]) < need[p]:
            found[p].append(label)
            missing -= 1
        label += 1
    return {b: found[b % partitions][b // partitions] for b in range(buckets)}


# ---------------------------------------------------------------------------------------------
# errors from the executors


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0][:500] if text else type(error).__name__


def executor_message(error: Exception) -> str | None:
    """The duckdb_sdc message of an error raised in a Python worker, if there is one."""
    text = str(error)
    found = re.search(r"SdcError: (.*?)(\n|$)", text)
    return found.group(1).strip() if found else None


# ---------------------------------------------------------------------------------------------
# the release


_MANIFEST_SPARK = {"VARCHAR": T.StringType(), "INTEGER": T.IntegerType(), "DOUBLE": T.DoubleType(),
                   "VARCHAR[]": T.ArrayType(T.StringType()), "TIMESTAMP": T.TimestampNTZType(),
                   "BIGINT": T.LongType(), "BOOLEAN": T.BooleanType()}


def manifest_frame(spark, rows: list[dict]) -> DataFrame:
    """The manifest rows as a DataFrame with the DuckDB release's column names and types."""
    schema = T.StructType([T.StructField(n, _MANIFEST_SPARK[t]) for n, t in MANIFEST_COLUMNS])
    data = []
    for row in rows:
        values = []
        for name, type_ in MANIFEST_COLUMNS:
            v = row[name]
            if type_ == "TIMESTAMP" and isinstance(v, str):
                v = datetime.fromisoformat(v)
            values.append(v)
        data.append(tuple(values))
    return spark.createDataFrame(data, schema)


def rounded(x, decimals: int):
    """DuckDB's round(x, decimals) of a DOUBLE, in Spark SQL: round(x * 10^d) / 10^d (half away from
    zero), and for d < 0 round(x / 10^-d) * 10^-d; x itself where the product overflows (0 for d < 0),
    as DuckDB does, so that both engines release the same rounded values."""
    m = F.lit(float(10 ** abs(decimals)))
    r = F.round(x * m, 0) / m if decimals >= 0 else F.round(x / m, 0) * m
    fallback = x if decimals >= 0 else F.lit(0.0)
    return F.when(F.isnan(r) | (F.abs(r) == F.lit(math.inf)), fallback).otherwise(r)


def released_with_key(df: DataFrame, spec: Spec, source_columns) -> DataFrame:
    """The would-be release (`plan.released_query`): ROW_KEY (the spec's key or the surrogate), then the
    released columns in order, masked values rounded to the rule's decimals where it has some; and
    HASH, the secret order's cipher text, where a kernel added it."""
    out = [qcol(spec.source.key or ROW_KEY).alias(ROW_KEY)]
    for col in released_columns(spec, source_columns):
        value = qcol(col.name)
        decimals = spec.decimals_of(col.rule)
        if col.rule.action == "mask" and col.role == VALUE and decimals is not None:
            value = rounded(value, decimals)
        out.append(value.alias(col.name))
    if HASH in df.columns:
        out.append(F.col(HASH))
    return df.select(*out)


def order_cipher(src: DataFrame, spec: Spec, stages: list) -> tuple | None:
    """Round keys of Speck64/128 under a fresh 128-bit secret (`cipher`), for a release whose row key
    is an integer and that has a masking kernel to compute the cipher texts; else None (`shuffled`
    then hashes the key with md5 in the JVM). Drawn per release, never written."""
    key_type = src.schema[spec.source.key or ROW_KEY].dataType
    if isinstance(key_type, T.IntegralType) and any(isinstance(stage, Stage) for stage in stages):
        return round_keys(secrets.token_bytes(16))
    return None


LINK_KEY = "__sdc_link_key"  # a record's key (the spec's or the surrogate) beside the released columns


def shuffled(df: DataFrame, spec: Spec, source_columns, rows: int, linked: bool = False) -> DataFrame:
    """The release's columns in order (ROW_KEY dropped), rows in a secret order unrelated to the
    source's and the key's (as `plan.released_step`), drawn per release from 128 random bits that are
    never written, and through a cryptographic function, not only a mixing one that a few known
    (record, position) pairs could undo:

    * where the masking kernel added HASH (`order_cipher`: an integer key), the order of the key's
      Speck64/128 cipher text under the secret. A permutation: records share a HASH exactly when they
      share a key, so Spark sorts on HASH alone (a radix sort) and the key check counts the records
      of each HASH;
    * else the order of xxhash64(md5(salt || key)), then the key (a hash two keys may share).

    A declared key is checked unique and non-NULL on the way (duplicates get the same HASH, so they
    meet in one partition, next to each other). A key the release carries is shuffled once: as its
    released column, not also as ROW_KEY; a dropped one goes along only on the md5 path, or when
    `linked` (the private linkage file needs every record's key): then it comes out as LINK_KEY."""
    spark = df.sparkSession
    # about 2M rows a file, in a multiple of the cores (5 partitions on 2 cores run in 3 waves)
    cores = max(1, spark.sparkContext.defaultParallelism)
    partitions = cores * max(1, math.ceil(rows / 2_000_000 / cores))
    if HASH in df.columns:  # the cipher's order
        key = F.col(ROW_KEY)
        if not linked:
            df = df.drop(ROW_KEY)  # HASH is NULL exactly where the key is: a dropped key need not go along
        order = [F.col(HASH)]
        # the records of one HASH are those of one key; a window without an order, which needs the
        # records sorted by HASH alone, as they are (an order on HASH too would make Spark sort on
        # (HASH, HASH), which is not a radix sort)
        check = F.count(F.lit(1)).over(Window.partitionBy(HASH))
        ok = F.col(HASH).isNotNull() & (F.col(KEY_CHECK) == 1)
    else:
        if spec.key_released():
            df = df.drop(ROW_KEY)
            key = qcol(spec.source.key)
        else:
            key = F.col(ROW_KEY)
        # the digest folded to a BIGINT by xxhash64 (a public function of a digest keyed by the secret
        # salt is as unpredictable): Spark shuffles 8 bytes a row instead of 16 and sorts on a long,
        # whose sort prefix is the whole value (50M rows: 1.5 GB shuffled, was 1.9 GB)
        # the salt reaches the executors as data (a one-row broadcast table), not as a literal of the
        # plan, whose text Spark shows in its UI and writes into event logs
        salt = secrets.token_hex(16)
        salted = spark.createDataFrame([(salt,)], T.StructType([T.StructField(SALT, T.StringType(), False)]))
        df = df.crossJoin(F.broadcast(salted))
        df = df.withColumn(HASH, F.xxhash64(F.md5(F.concat(F.col(SALT), key.cast("string"))))).drop(SALT)
        order = [F.col(HASH), key]
        check = F.lag(key).over(Window.partitionBy(HASH).orderBy(key))  # the previous key of the same hash
        ok = key.isNotNull() & (F.col(KEY_CHECK).isNull() | (F.col(KEY_CHECK) != key))
    df = df.repartition(partitions, HASH).sortWithinPartitions(*order)
    if spec.source.key is not None:
        df = df.withColumn(KEY_CHECK, check).where(F.assert_true(ok, F.lit(KEY_FAILURE)).isNull())
    return df.select(*(qcol(c.name) for c in released_columns(spec, source_columns)),
                     *([key.alias(LINK_KEY)] if linked else []))


POSITION = "__sdc_position"


def write_linked(ordered: DataFrame, spec: Spec, source_columns, table: str, linkage: str, release_id: str) -> None:
    """The release table and the private linkage file from one ordering of the records (`shuffled` with
    `linked`), persisted so that both see the same rows in the same partitions: the table's files are
    one per partition, in the partitions' order by their names (part-00000, part-00001, ...), so a
    row's position is the rows of the partitions before it plus its place in its own; the linkage
    file (`linkage`/release_linkage, Parquet: release_id, release_table, key_column, position, key,
    the DuckDB release's columns) maps every position, 1-based, to the record's key. Positions count
    the rows as DuckDB's read_parquet reads the folder (its files in name order, each in order)."""
    ordered = ordered.withColumn(POSITION, F.monotonically_increasing_id()).persist(StorageLevel.DISK_ONLY)
    try:
        ordered.select(*(qcol(c.name) for c in released_columns(spec, source_columns))).write.parquet(table)
        part = F.shiftright(F.col(POSITION), 33)
        counts = sorted((r[0], r[1]) for r in ordered.groupBy(part.alias("p")).count().collect())
        pairs, total = [], 0
        for p, n in counts:
            pairs += [F.lit(p), F.lit(total)]
            total += n
        base = F.create_map(*pairs)[part] if pairs else F.lit(0)
        local = F.col(POSITION).bitwiseAND(F.lit((1 << 33) - 1))
        (ordered.select(F.lit(release_id).alias("release_id"), F.lit(spec.output.table).alias("release_table"),
                        F.lit(spec.source.key).cast("string").alias("key_column"),
                        (base + local + F.lit(1)).cast("long").alias("position"), F.col(LINK_KEY).alias("key"))
         .write.parquet(f"{linkage}/{LINKAGE_TABLE}"))
    finally:
        try:
            ordered.unpersist()
        except Exception:  # noqa: BLE001 - after an interrupt the JVM may be gone
            pass


def with_surrogate_key(df: DataFrame, source_columns) -> DataFrame:
    """The source with ROW_KEY, the DuckDB release's surrogate key for a spec without source.key
    (`plan.keyed_step`): the record's rank, from 1, when the records are sorted by all their columns in
    the source's order, NULLs last. Spark's distributed sort, then each sorted partition's count and
    the offsets (monotonically_increasing_id holds the partition in its upper bits). Records that tie
    in every column are interchangeable, as in DuckDB."""
    mid = "__sdc_mid"
    ranked = df.orderBy(*(qcol(n).asc_nulls_last() for n, _ in source_columns))
    ranked = ranked.withColumn(mid, F.monotonically_increasing_id()).persist(StorageLevel.DISK_ONLY)
    counts = sorted((r["p"], r["count"]) for r in ranked.groupBy(F.shiftright(F.col(mid), 33).alias("p")).count().collect())
    offsets, total = [], 0
    for p, n in counts:
        offsets += [F.lit(p), F.lit(total)]
        total += n
    base = F.create_map(*offsets)[F.shiftright(F.col(mid), 33)] if offsets else F.lit(0)
    local = F.col(mid).bitwiseAND(F.lit((1 << 33) - 1))
    return ranked.withColumn(ROW_KEY, (base + local + F.lit(1)).cast("long")).drop(mid)


def duplicates(df: DataFrame, source_columns) -> int:
    """The records that repeat another record in every source column, NULLs equal (`plan.key_step`'s
    count for a spec without source.key, which the manifest's notes state)."""
    n = "__sdc_n"
    groups = df.groupBy(*(qcol(c) for c, _ in source_columns)).agg(F.count(F.lit(1)).alias(n))
    return int(groups.where(F.col(n) > 1).agg(F.coalesce(F.sum(n), F.lit(0))).collect()[0][0])


def resolve_auto(src: DataFrame, spec: Spec, rules: list[Rule], strata: dict, facts, options: Options) -> None:
    """What k or c = 'auto' resolves to per stratum, for the manifest (`safeguards.auto_step`'s facts):
    `freedman_diaconis.group_size_sorted` / `intervals_sorted`, the rule the list functions apply, on
    each stratum's (distinct value, count) summary read as the sorted column (gathered on the driver,
    at most Options.max_summary_rows rows)."""
    for rule in rules:
        step = safeguards.auto_step(spec, rule, facts)
        if step is None:
            continue
        param = "k" if is_auto(rule.params.get("k")) else "c"
        st = strata[tuple(spec.strata_of(rule))]
        x = qcol(rule.column).cast("double")
        limit = options.max_summary_rows
        got = (src.where(x.isNotNull()).groupBy(F.col(st.index_column).alias(S), x.alias(V)).count()
               .limit(limit + 1).toArrow())
        if got.num_rows > limit:
            raise SpecError(f"{spec.name}: {rule.where}: {param} = 'auto': the strata's (distinct value, count) "
                            f"summary has more than max_summary_rows = {limit} rows, which the driver would gather "
                            f"to resolve it; give {param} explicitly, or raise the limit")
        s_col = got.column(S).to_numpy(zero_copy_only=False)
        v_col = got.column(V).to_numpy(zero_copy_only=False)
        n_col = got.column("count").to_numpy(zero_copy_only=False)
        rule_fn = group_size_sorted if param == "k" else intervals_sorted
        rows = []
        for s in sorted(set(s_col.tolist())):
            idx = np.flatnonzero(s_col == s)
            order = np.argsort(v_col[idx], kind="stable")
            values = np.ascontiguousarray(v_col[idx][order], dtype=np.float64)
            counts = np.ascontiguousarray(n_col[idx][order], dtype=np.int64)
            rows.append((*st.values[s], int(rule_fn(summary.SortedSummary(values, counts)))))
        step.check(rows)


def check_smallest_sets(masked: DataFrame, spec: Spec, rules: list[Rule], strata: dict, facts) -> None:
    """`safeguards.smallest_set_step` on Spark: per deterministic rule, the smallest number of records of
    a stratum sharing a released value (before rounding; a box: its id), refused below 2 with the
    DuckDB release's message, else recorded as the manifest's measured k."""
    for i, rule in enumerate(rules, start=1):
        step = safeguards.smallest_set_step(spec, rule, i, facts)
        if step is None:
            continue
        st = strata[tuple(spec.strata_of(rule))]
        cols = [rule.box_column] if rule.boxed else list(rule.columns)
        sizes = (masked.where(qcol(cols[0]).isNotNull())
                 .groupBy(F.col(st.index_column), *(qcol(c) for c in cols)).count())
        first = sizes.orderBy(F.col("count"), F.col(st.index_column)).select(st.index_column, "count").first()
        step.check([] if first is None else [(*st.values[first[0]], int(first[1]))])


def checked(spec: Spec, rule: Rule) -> bool:
    """Whether the release measures the rule's sets of attraction (`safeguards.smallest_set_step`: a
    deterministic rule whose guarantee is not 'none')."""
    return safeguards.smallest_set_step(spec, rule, 1, safeguards.Facts()) is not None


def measured_sets(spark, reports: dict, spec: Spec, rules: list[Rule], strata: dict, stages: list, facts) -> None:
    """`safeguards.smallest_set_step`'s check from the masking kernel's reports (the accumulator's value,
    {(rule, bucket label): fact}, see `attraction`), as `check_smallest_sets` checks on the persisted
    table: the smallest set over the strata (the stratum of lowest index among equals), refused below 2
    with the DuckDB release's message, else recorded as the manifest's measured k. Every bucket of the
    rule's stage must have reported, and only one fact; else the release is refused (not measured).
    Where a split stratum's pieces are not ordered (`attraction.merge_pieces`) the figure is a lower
    bound: a warning says so, and the manifest states no more than the truth."""
    stage_of = {r.where: st for st in stages if isinstance(st, Stage) for r in st.rules}
    for i, rule in enumerate(rules, start=1):
        step = safeguards.smallest_set_step(spec, rule, i, facts)
        if step is None:
            continue
        stage = stage_of[rule.where]
        _, label_of = stage_labels(spark, stage)
        got = []
        for b, task in sorted(stage.tasks.items()):
            fact = reports.get((rule.where, label_of[b]))
            if fact is None or fact == CONFLICT:
                what = "gave two different reports" if fact == CONFLICT else "did not report"
                raise SpecError(f"{spec.name}: {rule.where}: the masking task of stratum "
                                f"{stage.strata.labels[task.stratum]} {what} its sets of attraction, so they "
                                "are not measured; the release is refused")
            got.append(fact)
        s, n, exact = smallest_set(got)
        if not exact:
            LOG.warning("%s: the pieces of a split stratum released values out of order; the smallest set of "
                        "attraction %s is a lower bound", rule.where, n)
        st = strata[tuple(spec.strata_of(rule))]
        step.check([] if n is None else [(*st.values[s], n)])


def _refuse_collations(spec: Spec, src: DataFrame) -> None:
    """Text compares byte by byte in a release, as in the DuckDB release. Records of equal value are
    ordered by key both in Spark's comparisons (the planner's boundaries) and by Arrow in the executors
    (`kernel.key_order`); strata and the policy gate's classes of quasi-identifiers are Spark's groups;
    a spec without a key orders all columns for its surrogate key. Under another collation (Spark 4's
    `COLLATE UTF8_LCASE`, say) buckets would not be cut where the plan says, and 'North' and 'north'
    would be one stratum or class in Spark and two in DuckDB. So a source text column with one is
    refused, named by the spec key that uses it (source.key, the strata) or else as a source column."""
    named = {} if spec.source.key is None else {spec.source.key: "source.key"}
    for rule in spec.masked():
        for c in spec.strata_of(rule):
            named.setdefault(c, "masking.strata" if rule.strata is None else f"{rule.where}.strata")
    for field in src.schema.fields:
        dtype = field.dataType
        if isinstance(dtype, T.StringType) and dtype.collation != "UTF8_BINARY":
            raise SpecError(f"{spec.name}: {named.get(field.name, 'source')}: column {field.name!r} has collation "
                            f"{dtype.collation}; a Spark release compares text byte by byte (UTF8_BINARY), as the "
                            "DuckDB release does (keys, strata, classes of quasi-identifiers): cast the column to "
                            "a plain STRING first")


def _key_error(spec: Spec, src: DataFrame) -> SpecError | None:
    """The DuckDB release's error for a key that is not unique and non-NULL, or None."""
    if spec.source.key is None:
        return None
    key = qcol(spec.source.key)
    n, non_null, distinct = src.agg(F.count(F.lit(1)), F.count(key), F.countDistinct(key)).first()
    try:
        key_step(spec).check([(n, non_null, distinct)])
    except SpecError as e:
        return e
    return None


def _job_error(spec: Spec, src: DataFrame, error: Exception) -> SpecError:
    """A failed Spark job as the DuckDB release's error: a bad key first (DuckDB checks it before
    masking), else the duckdb_sdc message raised in an executor, else the job's first line."""
    key_problem = _key_error(spec, src)
    if key_problem is not None:
        return key_problem
    message = executor_message(error)
    if message is not None:
        return SpecError(f"{spec.name}: {message}")
    return SpecError(f"{spec.name}: the Spark job failed: {_first_line(error)}")


IO_ENCRYPTION = "spark.io.encryption.enabled"


def io_encryption_warning(spark) -> str | None:
    """The warning for a session whose shuffle and spill files are not encrypted, or None."""
    if spark.sparkContext.getConf().get(IO_ENCRYPTION, "false").lower() == "true":
        return None
    return ("duckdb_sdc.spark: warning: this session runs without spark.io.encryption.enabled, so while the "
            "release runs the executors' shuffle, spill and cached blocks on their local disks hold raw source "
            "values in the clear (and keep them if an executor dies); start the session with "
            "spark.io.encryption.enabled=true (local_session does)")


def release(spec: Spec, spark: SparkSession, *, source=None, target=None, options: Options | None = None,
            check=None, ledger_path=None) -> SparkReleaseResult:
    """Write the release declared by `spec` with Spark; raise SpecError, PolicyBreach when the
    would-be release breaches the spec's [policy], or SparkUnavailable on a Spark older than 4.1, with
    nothing written on any failure.

    source: a DataFrame or a Spark table name to release instead of the spec's [source] (the spec's
    key and rules still apply). target: the release folder (default: output.database). check: an
    optional callable check(spark, released DataFrame, original DataFrame) run on the written table
    before it is put in place; it raises to refuse the release. ledger_path: the ledger (default: the
    spec's [ledger] path, else the default location), which the release is checked against and recorded
    in (`spark.ledger`; a LedgerRefusal is a PolicyBreach).

    Everything that needs no Spark is checked first, all at once (`preflight.check`); its notes (keys
    that mean nothing for Parquet) and a warning for a session without spark.io.encryption.enabled
    are printed to stderr. The release's jobs run in a job group of their own, cancelled on any
    failure or interrupt before the temporary folder is deleted."""
    pre = preflight.check(spec, spark.sparkContext.master, source_given=source is not None, target=target,
                          ledger_path=ledger_path)
    book = SparkLedger(spec, pre.locations, ledger_path, source_given=source is not None)
    check_spark_version(spark.version)
    for line in pre.notes:
        print(f"duckdb_sdc.spark: note: {line}", file=sys.stderr)
    warning = io_encryption_warning(spark)
    if warning is not None:
        print(warning, file=sys.stderr)
    sc = spark.sparkContext
    group = f"duckdb-sdc-{uuid.uuid4()}"
    before = {k: sc.getLocalProperty(k) for k in _GROUP_PROPERTIES}  # a job group of the caller's, if any
    sc.setJobGroup(group, f"duckdb-sdc release of {spec.name}", interruptOnCancel=True)
    try:
        with jit_sized_codegen(spark), book.held():
            return _release(spec, spark, source=source, where=pre.locations, options=options, check=check,
                            group=group, book=book)
    finally:
        try:
            for k, v in before.items():
                sc.setLocalProperty(k, v)
        except Exception:  # noqa: BLE001 - after an interrupt the JVM may be gone
            pass


_GROUP_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


def _elsewhere(work) -> None:
    """Run the cleanup of a failed or interrupted release in a thread of its own, best effort. An
    interrupt (SIGINT raised as KeyboardInterrupt) can arrive while this thread waits for the JVM's
    answer to a call; its connection to the JVM then still has that answer to come, so a call made
    on it would read the wrong one. A new thread gets a connection of its own (PySpark's pinned
    threads)."""
    import threading

    def run():
        try:
            work()
        except Exception:  # noqa: BLE001 - the JVM may be gone
            LOG.warning("cleaning up after a failed release did not finish", exc_info=True)

    thread = threading.Thread(target=run, name="duckdb-sdc-cleanup", daemon=True)
    thread.start()
    thread.join()


def linkage_problem(fs: FileSystem, path: str) -> str | None:
    """Why the folder at `path` is not a previous Spark linkage folder (None if it is one)."""
    if not fs.is_dir(path):
        return "it is a file, and a Spark release writes its linkage as a folder (and never replaces a file)"
    names = fs.names(path)
    if names != {LINKAGE_TABLE}:
        return f"it is not a Spark linkage folder (one folder {LINKAGE_TABLE}/ and nothing else)"
    return None


def _local_paths(folders) -> list[str]:
    """The operating system's paths of those (file system, folder) pairs on a local file system."""
    out = []
    for system, folder in folders:
        try:
            if folder is not None and system.local:
                out.append(system.local_path(folder))
        except Exception:  # noqa: BLE001 - the JVM may be gone
            pass
    return out


def _remove_local(paths: list[str], wait: float = 15.0) -> None:
    """Remove the local temporary folders of an interrupted release with the operating system's own
    calls, whatever the JVM's cleanup did (it may have failed, or a task still finishing may have
    written into a folder after it was deleted): until each is gone and stays gone for half a second,
    up to `wait` seconds."""
    import shutil

    deadline = time.monotonic() + wait
    quiet_since = None
    while time.monotonic() < deadline:
        present = [p for p in paths if os.path.lexists(p)]
        for p in present:
            shutil.rmtree(p, ignore_errors=True)
        if present:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= 0.5:
            return
        time.sleep(0.1)


def _stop_jobs(sc, group: str, wait: float = 30.0) -> None:
    """Cancel the release's jobs (an interrupt of the driver leaves them running otherwise) and wait,
    up to `wait` seconds, until none of them runs and the executors run no task, so that no task
    writes into the temporary folder after it is deleted. Best effort: the JVM may be gone."""
    try:
        sc.cancelJobGroup(group)
        tracker = sc.statusTracker()
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            running = [j for j in tracker.getJobIdsForGroup(group)
                       if (info := tracker.getJobInfo(j)) is not None and info.status == "RUNNING"]
            tasks = sum(e.numRunningTasks() for e in sc._jsc.sc().statusTracker().getExecutorInfos())
            if not running and not tasks:
                return
            time.sleep(0.2)
    except Exception:  # noqa: BLE001
        pass


def _release(spec: Spec, spark: SparkSession, *, source, where: preflight.Locations, options: Options | None,
             check, group: str, book: SparkLedger) -> SparkReleaseResult:
    from .gate import policy_gate

    start = time.perf_counter()
    options = options or Options()
    target = where.output
    fs = FileSystem(spark, target)
    if fs.exists(target):
        if not fs.is_dir(target):
            raise SpecError(f"{spec.name}: output.database: {target!r} is a file; a Spark release writes a folder "
                            "(and never replaces a file)")
        problem = preflight.previous_release_problem(fs.names(target), spec.output.table)
        if problem is not None:
            raise SpecError(f"{spec.name}: output.database: {target!r} cannot be replaced: {problem}")
    parent = target.rstrip("/").rpartition("/")[0]
    fs.mkdirs(parent or "/")
    for other in remove_residues(fs, target):
        LOG.warning("%s: %s may be left by a release on another host (not removed)", spec.name, other)
    tmp = sibling(target, "tmp")
    link_fs = link_tmp = None
    if where.linkage is not None:
        link_fs = FileSystem(spark, where.linkage)
        if link_fs.exists(where.linkage):
            problem = linkage_problem(link_fs, where.linkage)
            if problem is not None:
                raise SpecError(f"{spec.name}: output.linkage: {where.linkage!r} cannot be replaced: {problem}")
        link_fs.mkdirs(where.linkage.rstrip("/").rpartition("/")[0] or "/")
        remove_residues(link_fs, where.linkage)
        link_tmp = sibling(where.linkage, "tmp")
    release_id = str(uuid.uuid4())
    cached: list[DataFrame] = []
    # the source's local files as the release starts: checked unchanged before the rename (a Spark
    # read lists its files once, but re-reads them in every pass over the source)
    local = source is None and (spec.source.database is not None or not any(map(preflight.is_uri, where.files)))
    snapshot = Snapshot.take(spec) if local else None
    try:
        src, source_columns = read_source(spark, spec, source, where.files)
        if spec.source.database is not None and source is None:
            cached.append(src)
        resolve(spec, source_columns)
        book.source(src, source_columns)  # the fingerprint; the DP composition checked (spark/ledger.py)
        _refuse_collations(spec, src)
        if spec.source.key is None:
            src = with_surrogate_key(src, source_columns)
            cached.append(src)
        LOG.info("source read: %.1f s", time.perf_counter() - start)
        rules = spec.masked()
        src, strata = compute_strata(spark, src, spec, rules)
        rows = next(iter(strata.values())).rows if strata else src.count()
        facts = safeguards.Facts()
        if spec.source.key is None:
            facts.duplicates = duplicates(src, source_columns)
        resolve_auto(src, spec, rules, strata, facts, options)
        LOG.info("strata: %.1f s", time.perf_counter() - start)
        stages = plan_stages(spark, src, spec, rules, strata, options)
        gated = spec.policy is not None and bool(spec.policy.limits())
        # the masked table is read once, by the writer, unless the policy gate or an interval plan
        # (whose values no kernel sees) needs it read again: then it is persisted and checked
        persisted = gated or book.redraws() or any(isinstance(stage, IntervalPlan) for stage in stages)
        reports = None if persisted else spark.sparkContext.accumulator({}, Reports())
        cipher = order_cipher(src, spec, stages)
        pipeline = masked_pipeline(spark, src, spec, rules, stages, reports, cipher)
        LOG.info("planned: %.1f s", time.perf_counter() - start)
        try:
            if persisted:
                masked = pipeline.persist(StorageLevel.DISK_ONLY)  # read by the checks and the writer
                cached.append(masked)
                check_smallest_sets(masked, spec, rules, strata, facts)
                LOG.info("masked and checked: %.1f s", time.perf_counter() - start)
            else:
                masked = pipeline
            released = released_with_key(masked, spec, source_columns)
            if gated:
                original = src if spec.source.key is None else src.withColumn(ROW_KEY, qcol(spec.source.key))
                outcomes = judge(spec.policy, policy_gate(spark, spec, released.drop(HASH), original, source_columns))
                if not all(o.passed for o in outcomes):
                    raise PolicyBreach(spec.name, outcomes)
                LOG.info("policy gate: %.1f s", time.perf_counter() - start)
            book.check_linked(released)  # the linked earlier releases of the source (spark/ledger.py)
            if where.linkage is None:
                shuffled(released, spec, source_columns, rows).write.parquet(f"{tmp}/{spec.output.table}")
            else:
                write_linked(shuffled(released, spec, source_columns, rows, linked=True), spec, source_columns,
                             f"{tmp}/{spec.output.table}", link_tmp, release_id)
            if reports is not None:  # measured by the kernel while it masked; a refusal deletes tmp
                measured_sets(spark, reports.value, spec, rules, strata, stages, facts)
        except (SpecError, PolicyBreach):
            raise
        except Exception as e:  # noqa: BLE001 - Spark wraps worker errors in its own exceptions
            raise _job_error(spec, src, e) from (None if executor_message(e) else e)
        LOG.info("table written: %.1f s", time.perf_counter() - start)
        created = datetime.now(timezone.utc)
        manifest = manifest_rows(spec, source_columns, facts, release_id=release_id,
                                 package_version=__version__, duckdb_version=f"spark {spark.version}",
                                 created_at=created)
        manifest_frame(spark, manifest).coalesce(1).write.parquet(f"{tmp}/{MANIFEST_TABLE}")
        if check is not None:
            check(spark, spark.read.parquet(f"{tmp}/{spec.output.table}"), src)
        if snapshot is not None:
            snapshot.check(spec)
        try:  # recorded in the ledger, then put in place (the record removed if that fails)
            book.commit(lambda: put_in_place(fs, tmp, target), release_id, created, facts, rows)
        except OSError as e:
            raise SpecError(f"{spec.name}: output.database: {e}") from None
        if link_tmp is not None:  # after the release: a linkage never names a release that is not there
            try:
                put_in_place(link_fs, link_tmp, where.linkage)
            except OSError as e:
                raise SpecError(f"{spec.name}: output.linkage: {e} (the release is in place; release it again to "
                                "write its linkage)") from None
    except BaseException:
        # the local folders' own paths, known before anything else can fail (the JVM may be gone)
        local = _local_paths([(fs, tmp), (link_fs, link_tmp)])

        def clean():
            _stop_jobs(spark.sparkContext, group)
            for system, folder in ((fs, tmp), (link_fs, link_tmp)):
                if folder is None:
                    continue
                system.delete(folder)
                if system.exists(folder):  # a task that was still finishing wrote into it
                    time.sleep(1.0)
                    system.delete(folder)
            for frame in cached:
                frame.unpersist()

        _elsewhere(clean)
        _remove_local(local)
        raise
    for frame in cached:
        frame.unpersist()
    return SparkReleaseResult(path=target, table=spec.output.table, rows=rows, linkage=where.linkage,
                              columns=len(released_columns(spec, source_columns)),
                              masked=[c for r in spec.masked() for c in r.columns],
                              seconds=time.perf_counter() - start,
                              not_private=[c for r in spec.masked() if r.seeded for c in r.columns],
                              notes=release_notes(spec, facts) + book.notes, warnings=book.warnings)


__all__ = ["IO_ENCRYPTION", "Options", "SparkReleaseResult", "duckdb_type", "manifest_frame", "read_source", "release"]

