"""The risk/utility measures of a release in Spark SQL: what a policy gate needs, on Spark output.

* the per-column information-loss measures of `evaluate_masking` that are pure SQL (mae, mse, il1,
  il1s, il1s_sum, sse_sst): their macros in sql/10_measures.sql are parsed with sqlglot, the helper
  macros inlined, and the expression written as Spark SQL, so the definition is the one DuckDB runs;
* interval disclosure per column (`measures.risk.interval_disclosure`, Templ's dRisk with one column:
  the share of records whose original value lies within +-k sd of the masked one, sd the sample sd of
  the masked column, here Spark's stddev_samp, equal to the numpy layer's up to rounding);
* the k-anonymity section of the release report (`release.report.k_anonymity_section`): for each
  released quasi-identifier the smallest number of records sharing its value within a stratum, the
  number of such classes and the share of records alone in theirs, then all quasi-identifiers
  together.

Rows have the report's shape (section, measure, column, value, note), so the same policy can read
either. Record linkage is not computed here (it needs nearest neighbours across the whole release);
evaluate a sample with `duckdb-sdc evaluate` for it.
"""

from __future__ import annotations

import dataclasses
import functools
import re

import sqlglot
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from sqlglot import exp

from ..measures import catalog
from ..release.report import K_ANONYMITY, RISK, SCENARIO, Row, section_of
from ..release.plan import ROW_KEY
from ..release.spec import MANIFEST_TABLE as MANIFEST
from ..release.spec import Spec, SpecError, bound_columns
from ..sql import sql_files
from ..sql.registry import REGISTRY
from .ordering import qcol

MEASURES_FILE = "10_measures.sql"
# the measures declared for Spark (duckdb_sdc/measures/catalog.py) that evaluate computes per column
# and whose SQL function is a macro of the measures file: transpiled (interval disclosure, also
# declared for Spark, is computed below; record linkage by the policy gate, gate.py)
SQL_MEASURES = tuple(m.name for m in catalog.engine(catalog.SPARK) if m.computed_by == catalog.EVALUATE and m.per_column
                     and m.name in {f.name for f in REGISTRY if f.source == f"sql/{MEASURES_FILE}"})
ORIGINAL, MASKED = "__sdc_o", "__sdc_m"


@functools.cache
def _macros() -> dict[str, tuple[list[str], exp.Expression]]:
    """The measures of SQL_MEASURES and every internal `__sdc_` macro of the measures file (the helpers
    they call; the file's macros that build SQL text for DuckDB's table macros are never expanded)."""
    text = dict(sql_files())[MEASURES_FILE]
    out = {}
    wanted = re.compile(r"CREATE OR REPLACE MACRO (" + "|".join(SQL_MEASURES) + r"|__sdc_(?!\w*(?:_sql|_list|_columns)\()\w+)\(")
    for piece in re.split(r";\s*\n", text):
        body = "\n".join(line for line in piece.splitlines() if not line.lstrip().startswith("--"))
        if not wanted.search(body):
            continue
        try:
            stmt = sqlglot.parse_one(body, read="duckdb")
        except sqlglot.errors.ParseError:
            continue
        if isinstance(stmt, exp.Create) and str(stmt.args.get("kind", "")).upper() == "MACRO":
            fn = stmt.this
            out[fn.this.name] = ([p.name for p in fn.expressions], stmt.expression)
    return out


def _bind(expr: exp.Expression, bindings: dict[str, exp.Expression]) -> exp.Expression:
    """The expression with its parameters (bare column names) replaced by `bindings`."""
    def bind(node):
        if isinstance(node, exp.Column) and not node.table and node.name in bindings:
            return bindings[node.name].copy()
        return node

    return expr.transform(bind, copy=True)


def _expand_once(expr: exp.Expression) -> exp.Expression:
    macros = _macros()

    def expand(node):
        if not isinstance(node, exp.Anonymous):
            return node
        name = node.name.lower()
        if name == "__sdc_value":  # the type dispatch: Spark's column types were checked when released
            return exp.Cast(this=node.expressions[0].copy(), to=exp.DataType.build("DOUBLE"))
        if name in macros:
            params, body = macros[name]
            return _bind(body, dict(zip(params, node.expressions)))
        if name == "isfinite":  # Spark has no isfinite
            x = node.expressions[0]
            return exp.and_(exp.Not(this=exp.Anonymous(this="isnan", expressions=[x.copy()])),
                            exp.NEQ(this=exp.Abs(this=x.copy()),
                                    expression=exp.Cast(this=exp.Literal.string("Infinity"),
                                                        to=exp.DataType.build("DOUBLE"))))
        if name == "error":
            return exp.Anonymous(this="raise_error", expressions=[a.copy() for a in node.expressions])
        return node

    return expr.transform(expand, copy=True)


def _inline(expr: exp.Expression) -> exp.Expression:
    """Every macro of the measures file expanded, until none is left."""
    names = set(_macros()) | {"__sdc_value", "isfinite", "error"}
    for _ in range(20):
        if not any(isinstance(n, exp.Anonymous) and n.name.lower() in names for n in expr.walk()):
            return expr
        expr = _expand_once(expr)
    raise RuntimeError("duckdb_sdc.spark.report: the measure macros do not expand")


def measure_sql(name: str, x: str, xm: str) -> str:
    """A pure-SQL measure of sql/10_measures.sql as a Spark SQL aggregate over the columns x, xm."""
    params, body = _macros()[name]
    bound = {params[0]: sqlglot.parse_one(x, read="spark"), params[1]: sqlglot.parse_one(xm, read="spark")}
    return _inline(_bind(body, bound)).sql(dialect="spark")


def _ref(table: str, column: str) -> str:
    return f"{table}.`{column.replace('`', '``')}`"


def _classes(df: DataFrame, total: int | None, by: list[str], present: list[str], col: str | None) -> list[Row]:
    """report._classes on Spark: k-anonymity of the released records grouped by `by`; `total`: the
    number of records (needed only with `present`)."""
    rows = df
    for c in present:
        rows = rows.where(qcol(c).isNotNull())
    sizes = rows.groupBy(*(qcol(c) for c in by)).count()
    smallest, classes, alone, counted = sizes.agg(
        F.min("count"), F.count(F.lit(1)), F.sum(F.when(F.col("count") == 1, 1).otherwise(0)),
        F.sum("count")).first()
    counted = counted or 0
    note = ("NULL counts as a value (a record alone with a NULL is as identifiable as one alone with a value)"
            if not present and col is None else None)
    if present and counted < total:
        note = f"{total - counted} of {total} records with a NULL {col!r} left out"
    if counted == 0:
        return [Row(K_ANONYMITY, m, col, None, note or "no released record")
                for m in ("k_anonymity", "classes", "unique_share")]
    return [Row(K_ANONYMITY, "k_anonymity", col, float(smallest), note),
            Row(K_ANONYMITY, "classes", col, float(classes), note),
            Row(K_ANONYMITY, "unique_share", col, alone / counted, note)]


def _released(spec: Spec, name: str) -> list[str]:
    return list(bound_columns(name)) if spec.rules[name].boxed else [name]


def together(spec: Spec, columns) -> tuple[str, ...]:
    """`report._together`: the released columns of `columns` counted together, each one's value or
    bounds, and the box id of each box rule with a column among them."""
    out = [r for c in columns for r in _released(spec, c)]
    for rule in spec.masked():
        if rule.boxed and any(c in columns for c in rule.columns):
            out.append(rule.box_column)
    return tuple(dict.fromkeys(out))


def overall_classes(released: DataFrame, columns: list[str]) -> list[Row]:
    """The k-anonymity section's overall rows (column None) over `columns`, NULL counting as a value:
    what the policy's min_k and max_unique_share judge."""
    return _classes(released, None, columns, [], None)


def k_anonymity_rows(spec: Spec, released: DataFrame, types: dict[str, str] | None = None) -> list[Row]:
    """The report's k-anonymity section (`report.k_anonymity_section`) on a released DataFrame: the
    quasi-identifiers of `Spec.quasi_identifiers` (every released column unless exempted), each within
    its strata, all of them together, each box rule's ids, then the [evaluation] scenario."""
    q = spec.quasi_identifiers()
    if not q:
        return [Row(K_ANONYMITY, m, None, None, "no quasi-identifier is released")
                for m in ("k_anonymity", "classes", "unique_share")]
    strata = [c for c in q if c in set(spec.strata_columns())]
    total = released.count()
    rows = []
    for c in q:
        if c not in strata:
            rows += _classes(released, total, strata + _released(spec, c), _released(spec, c), c)
    rows += overall_classes(released, list(together(spec, q)))
    for rule in {id(r): r for r in spec.masked() if r.boxed}.values():
        rows += _classes(released, total, [rule.box_column], [rule.box_column], rule.box_column)
    if spec.declared_quasi_identifiers:
        rows += [dataclasses.replace(r, column=SCENARIO)
                 for r in overall_classes(released, list(together(spec, spec.declared_quasi_identifiers)))]
    return rows


def measure_rows(spec: Spec, released: DataFrame, original: DataFrame, k: float = 0.05) -> list[Row]:
    """Per masked column released as values: the SQL measures and interval disclosure, in one
    aggregate over the original and released records joined on the key."""
    key = spec.source.key or ROW_KEY  # (the surrogate: given to both sides through the linkage file)
    if key not in released.columns or key not in original.columns:
        raise SpecError(f"{spec.name}: the release table {spec.output.table!r} has no key column to link its "
                        "records to the source's (never by their position: the rows are in a secret random "
                        "order); keep the key, or write the private linkage file ([output] linkage) and release "
                        "again")
    columns = [c for r in spec.masked() if not r.boxed for c in r.columns]
    if not columns:
        return []
    o = original.select(*(qcol(c) for c in [key, *columns])).alias(ORIGINAL)
    m = released.select(*(qcol(c) for c in [key, *columns])).alias(MASKED)
    joined = o.join(m, F.col(_ref(ORIGINAL, key)) == F.col(_ref(MASKED, key)), "inner")
    aggs, names = [], []
    for c in columns:
        x, xm = _ref(ORIGINAL, c), _ref(MASKED, c)
        for name in SQL_MEASURES:
            aggs.append(F.expr(measure_sql(name, x, xm)).alias(f"{len(names)}"))
            names.append((name, c))
        aggs.append(F.stddev_samp(F.when(F.col(x).isNotNull(), F.col(xm))).alias(f"{len(names)}"))
        names.append(("__sd", c))
    first = joined.agg(*aggs).first()
    values = {names[i]: first[str(i)] for i in range(len(names))}
    inside = []
    for c in columns:
        x, xm = F.col(_ref(ORIGINAL, c)), F.col(_ref(MASKED, c))
        half = k * (values[("__sd", c)] or 0.0)
        inside.append(F.avg(F.when(x.isNotNull() & xm.isNotNull(),
                                   F.when((x >= xm - half) & (x <= xm + half), 1.0).otherwise(0.0))).alias(c))
    shares = joined.agg(*inside).first()
    rows = []
    for c in columns:
        for name in SQL_MEASURES:
            v = values[(name, c)]
            rows.append(Row(section_of(name), name, c, v, None if v is not None else "undefined for these data"))
        rows.append(Row(RISK, "interval_disclosure", c, shares[c]))
    return rows


def linked(spark, spec: Spec, where) -> DataFrame:
    """The release table read from its folder with the key of each row (column spec.source.key, or
    ROW_KEY, the surrogate, for a spec without one) from the private linkage folder: a row's position
    is its place when the table's files are read in the order of their names (`engine.write_linked`),
    from Spark's `_metadata` of each file (its name, the row's index in it). Refused when there is no
    linkage, or it belongs to another release: records are never matched by their position alone."""
    from ..release.plan import LINKAGE_TABLE
    from .files import FileSystem

    if where.linkage is None or not FileSystem(spark, where.linkage).exists(f"{where.linkage}/{LINKAGE_TABLE}"):
        why = "the spec writes none" if where.linkage is None else f"there is none at {where.linkage!r}"
        raise SpecError(f"{spec.name}: the release table {spec.output.table!r} has no key column and {why} of the "
                        "private linkage file, so its records cannot be matched with the source's (never by their "
                        "position: the rows are in a secret random order); write it ([output] linkage) and release "
                        "again")
    folder = f"{where.output}/{spec.output.table}"
    table = spark.read.parquet(folder).select("*", F.col("_metadata.file_name").alias(_FILE),
                                              F.col("_metadata.row_index").alias(_ROW))
    counts = sorted((r[0], r[1]) for r in table.groupBy(_FILE).count().collect())
    pairs, total = [], 0
    for name, n in counts:
        pairs += [F.lit(name), F.lit(total)]
        total += n
    base = F.create_map(*pairs)[F.col(_FILE)] if pairs else F.lit(0)
    table = table.withColumn(_AT, (base + F.col(_ROW) + F.lit(1)).cast("long")).drop(_FILE, _ROW)
    link = spark.read.parquet(f"{where.linkage}/{LINKAGE_TABLE}")
    ids = [r[0] for r in link.select("release_id").distinct().collect()]
    manifest = [r[0] for r in spark.read.parquet(f"{where.output}/{MANIFEST}").select("release_id").distinct().collect()]
    if ids != manifest or link.count() != total:
        raise SpecError(f"{spec.name}: output.linkage: {where.linkage!r} belongs to another release (release it again: "
                        "both are written together)")
    key = spec.source.key or ROW_KEY
    return (table.join(link.select(F.col("position").alias(_AT), F.col("key").alias(_KEY)), _AT, "inner")
            .drop(_AT).withColumnRenamed(_KEY, key))


_FILE, _ROW, _AT, _KEY = "__sdc_file", "__sdc_row", "__sdc_at", "__sdc_key"


__all__ = ["k_anonymity_rows", "linked", "measure_rows", "measure_sql"]
