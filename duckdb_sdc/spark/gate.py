"""The release policy gate on Spark: the rows of the report's own sections (`release.report.
policy_measures` runs `_GATE_SECTIONS`), measured on the would-be Spark release and read by
`report.measured` as the DuckDB release's gate reads them, so that `policy.judge` decides both
releases alike (a breach raises `policy.PolicyBreach`, nothing is written, the CLI exits 3).

The columns are the spec's (`Spec.quasi_identifiers`, `Spec.risk_columns`): every released column of
any type (text, dates, categories, strata; masked or kept) unless the spec exempts it.

* k-anonymity: the section's overall rows over the quasi-identifiers counted together (each one's
  values or bounds, and the box id of each box rule among them: `spark.report.together`, as
  `report._together`), the classes grouped by Spark over the would-be release, NULL counting as a
  value (`spark.report.overall_classes`, as `report._classes`);
* disclosure risk (record_linkage, interval_disclosure): `measures.evaluate`, the function the
  report's measures section calls, on the original and released values of the risk columns joined on
  the row key, in the key's order, gathered on the driver as the DuckDB release gathers them in its
  process (16 bytes per record and column, both sides); dates and timestamps as seconds since 1970,
  as `report.create_views` gives them (DuckDB's epoch);
* sensitive_share: `policy.sensitive_counts` on each masked attribute's original values and cell ids
  (records of a stratum sharing the attribute rule's released values, or a box), gathered likewise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..measures.evaluate import evaluate as evaluate_measures
from ..release import policy as pol
from ..release.plan import ROW_KEY
from ..release.policy import K_ANONYMITY, RISK, SENSITIVE
from ..release.report import NO_RISK_COLUMN, Row, measured, rows_frame, section_of
from ..release.spec import Spec
from .ordering import qcol


def as_number(df: DataFrame, name: str) -> Column:
    """Column `name` of `df` as a DOUBLE, as the report's views give it to the measures: a date or a
    timestamp as its seconds since 1970 (DuckDB's epoch: a date at midnight UTC, a timestamp with
    its fraction of a second), anything else cast."""
    dtype = df.schema[name].dataType
    col = qcol(name)
    if isinstance(dtype, T.DateType):
        return F.unix_date(col).cast("double") * F.lit(86400.0)
    if isinstance(dtype, T.TimestampType):
        return F.unix_micros(col).cast("double") / F.lit(1e6)
    if isinstance(dtype, T.TimestampNTZType):  # a wall-clock time: its seconds as if in UTC, as DuckDB's
        micros = F.expr(f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', "
                        f"`{name.replace('`', '``')}`)")
        return micros.cast("double") / F.lit(1e6)
    return col.cast("double")


def _joined(released: DataFrame, original: DataFrame, columns_o: list[str], columns_m: list[str],
            numbers: bool = False) -> pd.DataFrame:
    """Original columns (as o0, o1, ...) and released columns (m0, m1, ...) of the records, matched on
    the row key, gathered on the driver; with `numbers`, every column as a DOUBLE (`as_number`), in the
    key's order (as `report.collect` gives them to the measures)."""
    pick = (lambda df, c: as_number(df, c)) if numbers else (lambda df, c: qcol(c))
    o = original.select(F.col(ROW_KEY).alias("__sdc_ko"), *(pick(original, c).alias(f"o{j}")
                                                            for j, c in enumerate(columns_o)))
    m = released.select(F.col(ROW_KEY).alias("__sdc_km"), *(pick(released, c).alias(f"m{j}")
                                                            for j, c in enumerate(columns_m)))
    joined = o.join(m, F.col("__sdc_ko") == F.col("__sdc_km"), "inner")
    if numbers:  # the measures' input in the order report.collect gives them
        joined = joined.orderBy("__sdc_ko")
    return joined.drop("__sdc_ko", "__sdc_km").toPandas()


def _doubles(frame: pd.DataFrame, prefix: str, p: int) -> np.ndarray:
    if p == 0 or frame.shape[0] == 0:
        return np.zeros((frame.shape[0], p))
    return np.column_stack([pd.to_numeric(frame[f"{prefix}{j}"], errors="coerce").to_numpy(np.float64, na_value=np.nan)
                            for j in range(p)])


def _k_anonymity(spark, spec: Spec, released: DataFrame, original: DataFrame, types, only) -> list[Row]:
    from .report import overall_classes, together

    q = spec.quasi_identifiers()
    if not q:
        return [Row(K_ANONYMITY, m, None, None, "no quasi-identifier is released")
                for m in ("k_anonymity", "classes", "unique_share")]
    return overall_classes(released, list(together(spec, q)))


def _risk(spark, spec: Spec, released: DataFrame, original: DataFrame, types, only) -> list[Row]:
    """`report.measures_section` restricted to the disclosure-risk measures `only`: measures.evaluate
    on the risk columns (no row when there is none: the gate then says why, as the DuckDB gate does)."""
    risk = list(spec.risk_columns(types))
    risky = {m for m in only if section_of(m) == RISK}
    if not risk or not risky:
        return []
    both = _joined(released, original, risk, risk, numbers=True)
    x, xm = _doubles(both, "o", len(risk)), _doubles(both, "m", len(risk))
    if x.shape[0] == 0:
        return []
    return [Row(RISK, r.measure, r.column, r.value, r.note)
            for r in evaluate_measures(x, xm, risk, measures=risky)]


def _sensitivity(spark, spec: Spec, released: DataFrame, original: DataFrame, types, only) -> list[Row]:
    value, note = _sensitive_share(spec, released, original)
    return [Row(SENSITIVE, "sensitive_share", None, value, note)]


_SECTIONS = {K_ANONYMITY: _k_anonymity, RISK: _risk, SENSITIVE: _sensitivity}


def policy_gate(spark, spec: Spec, released: DataFrame, original: DataFrame,
                source_columns: list[tuple[str, str]]) -> dict[str, tuple[float | None, str | None]]:
    """{measure: (value, note)} of the limits in spec.policy, on `released` (ROW_KEY and the released
    columns: `engine.released_with_key`) and `original` (the source with ROW_KEY): the overall rows of
    the sections the limits name, read as `report.policy_measures` reads the DuckDB release's."""
    types = dict(source_columns)
    limits = [limit for limit, _ in spec.policy.limits()]
    rows: list[Row] = []
    for section in dict.fromkeys(limit.section for limit in limits):
        only = frozenset(limit.measure for limit in limits if limit.section == section)
        rows += _SECTIONS[section](spark, spec, released, original, types, only)
    found = measured(rows_frame(rows)) if rows else {}
    return {limit.measure: found.get(limit.measure, (None, NO_RISK_COLUMN if limit.section == RISK else "not measured"))
            for limit in limits}
def _sensitive_share(spec: Spec, released: DataFrame, original: DataFrame) -> tuple[float | None, str | None]:
    """`report._sensitive_share`: max(dominance share, p% share) over the cells of every masked attribute
    (cells: the records of a stratum, by the original strata values, sharing the released values of the
    attribute's rule, or its box id)."""
    rules = spec.sensitivity
    totals = np.zeros(3, dtype=np.int64)
    for rule in spec.masked():
        if not rule.in_table:
            continue
        strata = list(spec.strata_of(rule))
        clusters = [rule.box_column] if rule.boxed else list(rule.columns)
        for attribute in rule.columns:
            both = _joined(released, original, [attribute, *strata], clusters)
            present = both[[f"m{j}" for j in range(len(clusters))]].notna().all(axis=1).to_numpy()
            both = both[present]
            if both.shape[0] == 0:
                continue
            by = [f"o{j}" for j in range(1, len(strata) + 1)] + [f"m{j}" for j in range(len(clusters))]
            labels = both.groupby(by, dropna=False, sort=False).ngroup().to_numpy(np.int64)
            v = pd.to_numeric(both["o0"], errors="coerce").to_numpy(np.float64, na_value=np.nan)
            cells = np.unique(labels).shape[0]
            keep = ~np.isnan(v)
            _, dominant, p_cells = pol.sensitive_counts(v[keep], labels[keep], rules.dominance_n,
                                                        rules.dominance_r, rules.p)
            totals += (cells, dominant, p_cells)
    if not totals[0]:
        return None, "no released cell"
    return max(totals[1], totals[2]) / totals[0], None


__all__ = ["policy_gate"]
