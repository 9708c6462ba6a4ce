"""The release policy gate on Spark: the measures `release.report.policy_measures` takes for the
DuckDB release's gate, measured on the would-be Spark release, so that `policy.judge` decides both
releases alike (a breach raises `policy.PolicyBreach`, nothing is written, the CLI exits 3).

* k_anonymity, unique_share: `policy.classes_query` (standard SQL that sqlglot builds) written as
  Spark SQL over the would-be release, NULL counting as a value;
* record_linkage, interval_disclosure: `policy.linkage_measures` (the numpy measures) on the original
  and released values of the risk columns, joined on the row key and gathered on the driver, as the
  DuckDB release gathers them in its process: the gate of a release with these limits needs the
  driver memory of those columns (16 bytes per record and column, both sides);
* sensitive_share: `policy.sensitive_counts` on each masked attribute's original values and cell ids
  (records of a stratum sharing the attribute rule's released values, or a box), gathered likewise.

The quasi-identifiers and risk columns are chosen by `report.evaluation`'s rules (the spec's
[evaluation] quasi_identifiers, else every released numeric, masked or strata column).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from sqlglot import exp

from ..release import policy as pol
from ..release.plan import ROW_KEY
from ..release.spec import Spec, bound_columns, is_numeric
from .ordering import qcol

_VIEWS = itertools.count()


def _released(spec: Spec, name: str) -> tuple[str, ...]:
    return bound_columns(name) if spec.rules[name].boxed else (name,)


def _joined(released: DataFrame, original: DataFrame, columns_o: list[str], columns_m: list[str]) -> pd.DataFrame:
    """Original columns (as o0, o1, ...) and released columns (m0, m1, ...) of the records, matched on
    the row key, gathered on the driver."""
    o = original.select(F.col(ROW_KEY).alias("__sdc_ko"),
                        *(qcol(c).alias(f"o{j}") for j, c in enumerate(columns_o)))
    m = released.select(F.col(ROW_KEY).alias("__sdc_km"),
                        *(qcol(c).alias(f"m{j}") for j, c in enumerate(columns_m)))
    joined = o.join(m, F.col("__sdc_ko") == F.col("__sdc_km"), "inner").drop("__sdc_ko", "__sdc_km")
    return joined.toPandas()


def _doubles(frame: pd.DataFrame, prefix: str, p: int) -> np.ndarray:
    if p == 0 or frame.shape[0] == 0:
        return np.zeros((frame.shape[0], p))
    return np.column_stack([pd.to_numeric(frame[f"{prefix}{j}"], errors="coerce").to_numpy(np.float64, na_value=np.nan)
                            for j in range(p)])


def policy_gate(spark, spec: Spec, released: DataFrame, original: DataFrame,
                source_columns: list[tuple[str, str]]) -> dict[str, tuple[float | None, str | None]]:
    """{measure: (value, reason)} of the limits in spec.policy, on `released` (ROW_KEY and the released
    columns: `engine.released_with_key`) and `original` (the source with ROW_KEY)."""
    types = dict(source_columns)
    needed = {limit.measure for limit, _ in spec.policy.limits()}
    masked = tuple(c for r in spec.masked() if not r.boxed and r.in_table for c in r.columns)
    qi = spec.quasi_identifiers(types)
    numeric_qi = tuple(c for c in qi if c not in masked and not spec.rules[c].boxed and is_numeric(types.get(c, "")))
    risk = masked + numeric_qi
    out: dict[str, tuple[float | None, str | None]] = {}
    if needed & {"k_anonymity", "unique_share"}:
        every = [r for c in qi for r in _released(spec, c)]
        if not every:
            out.update({m: (None, "no quasi-identifier is released") for m in ("k_anonymity", "unique_share")})
        else:
            view = f"__sdc_gate_{next(_VIEWS)}"
            released.createOrReplaceTempView(view)
            try:
                query = pol.classes_query(exp.Table(this=exp.to_identifier(view, quoted=True)), every)
                row = tuple(spark.sql(query.sql(dialect="spark")).first())
            finally:
                spark.catalog.dropTempView(view)
            out.update({m: (v, None if v is not None else "no released record") for m, v in pol.classes(row).items()})
    if needed & {"record_linkage", "interval_disclosure"}:
        if not risk:
            out.update({m: (None, "no quasi-identifier is released as values")
                        for m in ("record_linkage", "interval_disclosure")})
        else:
            both = _joined(released, original, list(risk), list(risk))
            x, xm = _doubles(both, "o", len(risk)), _doubles(both, "m", len(risk))
            for m, v in pol.linkage_measures(x, xm).items():
                out[m] = (v, None if v is not None else "fewer than 2 records complete in the evaluated columns")
    if "sensitive_share" in needed:
        out["sensitive_share"] = _sensitive_share(spec, released, original)
    return out


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
