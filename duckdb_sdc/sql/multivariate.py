"""SQL rows for multivariate k-anonymity (MDAV, Mondrian) and attribute disclosure in its clusters
(dominance and p% rules, suppression, dynamic k).

The list functions take `rows DOUBLE[][]`, one vector per record (`list([a, b, c])`), so they check
their argument with `__sdc_numeric_rows` instead of the univariate `__sdc_numeric_list`
(`_rows.record_macro` writes that macro body). Plumbing: `sql/_rows.py`; internal macros:
`sql/25_multivariate.sql`; pure-SQL rules and report: `sql/30_sensitivity.sql`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import masking
from ..methods import multivariate as mv
from ..methods import dominance
from ..methods import sensitivity as sv
from ..methods.protection import COST, suppress
from ..params import (
    COLS_PARAM,
    COLUMN,
    COLUMN_VALUES,
    FLAG,
    FRACTION,
    INTEGER_1,
    LABELS,
    P_PERCENT,
    ROWS_PARAM,
    POOLING_ARGS,
    STRATA_PARAMS,
    TBL_PARAM,
    ColumnNames,
    Param,
)
from .function import Contract, SqlFunction, Udf
from ._rows import record_macro, records_list, rows_array, rows_udf


GROUP = "Multivariate k-anonymity and attribute disclosure"

_LABEL_COL = Param("label_col", COLUMN, "'cluster'", doc="name of the added cluster id column")
_CLUSTERS = Param("clusters", LABELS)
_N = Param("n", INTEGER_1, doc="the number of largest contributions, >= 1")
_R = Param("r", FRACTION, doc="the dominance threshold, 0 < r <= 1 (taken to 9 decimals)")
_P = Param("p", P_PERCENT)
_ABSOLUTE = Param("absolute", FLAG, "false", doc="apply the rule to absolute values instead of refusing negatives")
_SECONDARY = Param("secondary", FLAG, "true", doc="also suppress the further cells that protect the sensitive ones")
_VALUE = Param("value", COLUMN_VALUES, doc="the contribution of each record of the cell (an aggregate's argument)")

_NULLS = ("A record that is NULL or has a NULL attribute joins no cluster and comes back NULL; an empty list, or "
          "one without a complete record, comes back as it is.")


# ---------------------------------------------------------------------------------------------
# MDAV and Mondrian


def _masked(name: str):
    def compute(X, *params):
        return masking.mask(name, X, params)

    return compute


def _mdav_labels(X, k, remainder, standardise):
    return mv.mdav_multi_partition(X, k, remainder=remainder, standardise=standardise)


def _mondrian_labels(X, k, mode):
    return mv.mondrian_partition(X, k, mode)


def _method_rows(method: str, title: str, what: str, labels_fn, rule_args: str = "") -> list:
    round_name, labels_name = f"{method}_round", f"{method}_labels"
    tail = masking.METHODS[round_name].params  # k, options
    n_opts = len(tail)
    arg_list = ", ".join(f"{p.name}::VARCHAR" for p in tail)
    return [
        SqlFunction(
            name=round_name, kind="scalar", params=(ROWS_PARAM, *tail), returns="DOUBLE[][]", group=GROUP, scale=1,
            doc=(f"k-anonymous masking by {title}: {what}. Every record is replaced by its cluster's centroid "
                 f"(the mean of every attribute); the result is aligned with rows. {_NULLS} Use it with GROUP BY "
                 "to mask strata separately; a stratum with fewer than k complete records is an error."),
            example=(f"SELECT region, {round_name}(list([income, expenses, savings]), 5{rule_args}) FROM people "
                     "GROUP BY region"),
            udf=Udf(rows_udf(round_name, _masked(round_name), "rows", n_opts), ("DOUBLE[][]",) + ("VARCHAR",) * n_opts,
                    "DOUBLE[][]"),
            body=record_macro(round_name, (ROWS_PARAM, *tail)),
            contract=Contract({"rows": "original"}),
        ),
        SqlFunction(
            name=labels_name, kind="scalar", params=(ROWS_PARAM, *tail), returns="BIGINT[]", group=GROUP, scale=0,
            doc=(f"The clusters of {round_name}: cluster ids 0..g-1 aligned with rows ({'in order of formation' if method.startswith('mdav') else 'numbered left to right, the records at or below every cut first'}); NULL for a record with a NULL attribute."),
            example=f"SELECT {labels_name}([[1, 1], [9, 9], [1, 2], [8, 9]], 2{rule_args})",
            udf=Udf(rows_udf(labels_name, labels_fn, "labels", n_opts), ("DOUBLE[][]",) + ("VARCHAR",) * n_opts,
                    "BIGINT[]"),
            body=record_macro(labels_name, (ROWS_PARAM, *tail)),
            contract=Contract({"rows": "original"}),
        ),
        SqlFunction(
            name=f"{round_name}_table", kind="table", params=(TBL_PARAM, COLS_PARAM, *tail, *STRATA_PARAMS),
            returns="table", group=GROUP, scale=1,
            doc=(f"Table form of {round_name}: the rows of tbl with the columns cols replaced by their cluster "
                 "centroids (same column names and order; the masked columns become DOUBLE; a row with a NULL in any "
                 "of them gets NULL in all), optionally clustering each stratum separately. Each stratum's records "
                 "reach the method in the order of the rows' whole content, so ties are broken alike in every run. "
                 "Rows come back in no particular order."),
            example=(f"SELECT * FROM {round_name}_table('people', ['income', 'expenses', 'savings'], 5{rule_args}, "
                     "strata := 'region')"),
            body=f"FROM query(__sdc_mask_columns_sql('{round_name}', tbl, cols, [{arg_list}], strata, {POOLING_ARGS}))",
            contract=Contract({"cols": "original"}, result="rows"),
        ),
        SqlFunction(
            name=f"{labels_name}_table", kind="table",
            params=(TBL_PARAM, COLS_PARAM, *tail, *STRATA_PARAMS, _LABEL_COL), returns="table", group=GROUP, scale=1,
            doc=(f"The rows of tbl unchanged plus a column label_col with their {labels_name} cluster id (NULL for a "
                 "row with a NULL in cols; ids are numbered within each stratum, so (strata, cluster) identifies a "
                 "cluster). A column of that name is replaced. Input of sensitivity_report."),
            example=f"SELECT * FROM {labels_name}_table('people', ['income', 'savings'], 5{rule_args}, strata := 'region')",
            body=(f"FROM query(__sdc_label_columns_sql('{labels_name}', tbl, cols, [{arg_list}], strata, label_col, "
                  f"{POOLING_ARGS}))"),
            contract=Contract({"cols": "original", "label_col": "adds"}, result="rows"),
        ),
    ]


_MDAV_WHAT = ("multivariate MDAV (Domingo-Ferrer & Mateo-Sanz 2002) on the standardised attributes: groups of k "
              "around the record farthest from the centroid and the record farthest from it, in turn; ties go to "
              "the record that comes first")
_MONDRIAN_WHAT = ("Mondrian (LeFevre, DeWitt & Ramakrishnan 2006): recursive median cuts on the attribute with the "
                  "widest normalised range")

def _cells_labels(kind: str):
    def labels(X, k, *params):
        rule, (standardise,) = _rule(kind, list(params))
        return dominance.mdav_cells_partition(X, k, rule, standardise=standardise)

    return labels


_CELLS_WHAT = ("multivariate MDAV whose every group is formed so that none of its cells is sensitive under {rule}: "
               "a group starts as MDAV's (a record and its k - 1 nearest, on the standardised attributes) and takes the "
               "next nearest remaining record while one of its cells (the group's contributions to one attribute) is "
               "sensitive; a last group that is still sensitive is merged with its nearest group. Contributions are "
               "the original values; negative ones are an error unless absolute := true")

FUNCTIONS: list[SqlFunction] = [
    *_method_rows("mdav_multi", "MDAV", _MDAV_WHAT, _mdav_labels),
    *_method_rows("mondrian", "Mondrian", _MONDRIAN_WHAT, _mondrian_labels),
    *_method_rows("mdav_dominance", "MDAV under the (n, r) dominance rule",
                  _CELLS_WHAT.format(rule="the (n, r) dominance rule"), _cells_labels("dominance"),
                  ", 2, 0.9, absolute := true"),
    *_method_rows("mdav_p_percent", "MDAV under the p% rule", _CELLS_WHAT.format(rule="the p% rule"),
                  _cells_labels("p_percent"), ", 0.2, absolute := true"),
]


# ---------------------------------------------------------------------------------------------
# sensitivity rules, suppression, dynamic k


def _rule(kind: str, params: list):
    if kind == "dominance":
        n, r, absolute, *rest = params
        return sv.dominance_rule(n, r, absolute=absolute), rest
    if kind == "pq":
        p, q, absolute, *rest = params
        return sv.pq_rule(p, q, absolute=absolute), rest
    if kind == "threshold":
        n, safety, absolute, *rest = params
        return sv.threshold_rule(n, safety, absolute=absolute), rest
    p, absolute, *rest = params
    return sv.p_percent_rule(p, absolute=absolute), rest


def _suppress(kind: str):
    def compute(X, clusters, *params):
        rule, (secondary, cost) = _rule(kind, list(params))
        out = suppress(X, clusters, rule, secondary=secondary, cost=cost)
        return out.release, int(out.primary.sum()), int(out.secondary.sum()), int(out.unprotected.sum())

    return compute


def _remove(kind: str):
    def compute(X, clusters, *params):
        rule, (min_size, cost) = _rule(kind, list(params))
        out = dominance.remove_sensitive(X, clusters, rule, min_size=min_size, cost=cost)
        s = out.suppression
        counts = (int(out.removed.sum()), int(s.primary.sum()), int(s.secondary.sum()), int(s.unprotected.sum()))
        return out.release, out.labels, counts

    return compute


_REMOVAL_COUNTS = ("removed_records", "primary_cells", "secondary_cells", "unprotected_cells")
_REMOVAL = ("STRUCT(release DOUBLE[][], clusters BIGINT[], "
            + ", ".join(f"{c} BIGINT" for c in _REMOVAL_COUNTS) + ")")


def _removal_array(chunk, results) -> pa.Array:
    """STRUCT(release, clusters (NULL for a removed record), counts) per row of the chunk."""
    release = rows_array(chunk, [None if r is None else (r[0], r[1][0]) for r in results])
    n = chunk.n_records
    labels = np.zeros(n, np.int64)
    valid = np.zeros(n, bool)
    counts = np.zeros((chunk.n_rows, len(_REMOVAL_COUNTS)), np.int64)
    null = np.zeros(chunk.n_rows, bool)
    for r, res in enumerate(results):
        if res is None:
            null[r] = chunk.is_null(r)
            continue
        complete, (_, lab, c) = res
        idx = chunk.rec_off[r] + np.flatnonzero(complete)
        labels[idx] = lab
        valid[idx] = lab >= 0
        counts[r] = c
    clusters = records_list(chunk, pa.array(labels, pa.int64(), mask=~valid))
    return pa.StructArray.from_arrays([release, clusters, *(pa.array(counts[:, i], pa.int64())
                                                            for i in range(counts.shape[1]))],
                                      names=["release", "clusters", *_REMOVAL_COUNTS],
                                      mask=pa.array(null) if null.any() else None)


def _merge(kind: str):
    def compute(X, clusters, *params):
        rule, _ = _rule(kind, list(params))
        return sv.merge_sensitive(X, clusters, rule)

    return compute


_SUPPRESSION = "STRUCT(release DOUBLE[][], primary_cells BIGINT, secondary_cells BIGINT, unprotected_cells BIGINT)"
_PQ_P = Param("p", sv.PQ_P, example="0.1")
_Q = Param("q", sv.PQ_Q, example="0.5")
_MIN_COUNT = Param("n", INTEGER_1, doc="the least number of contributors a cell must have, >= 1")
_SAFETY = Param("safety", sv.SAFETY, doc=sv.SAFETY.doc)
_COST = Param("cost", COST, "'cells'", doc=COST.doc)
_MIN_SIZE = Param("min_size", dominance.MIN_SIZE, "NULL", doc=dominance.MIN_SIZE.doc)
_RULE_PARAMS = {"dominance": (_N, _R, _ABSOLUTE), "p_percent": (_P, _ABSOLUTE), "pq": (_PQ_P, _Q, _ABSOLUTE),
                "threshold": (_MIN_COUNT, _SAFETY, _ABSOLUTE)}
_RULE_TEXT = {"dominance": "the (n, r) dominance rule", "p_percent": "the p% rule", "pq": "the pq rule",
              "threshold": "the threshold (minimum frequency) rule"}
_RULE_EXAMPLE = {"dominance": "2, 0.7", "p_percent": "0.1", "pq": "0.1, 0.5", "threshold": "3, 0.2"}
_LEVELS = {"dominance": "(c(1) + ... + c(n)) / r - T", "p_percent": "p c(1) - (T - c(1) - c(2))",
           "pq": "(p / q) c(1) - (T - c(1) - c(2))", "threshold": "safety T"}


def _mitigation_rows(kind: str) -> list[SqlFunction]:
    rule_params = _RULE_PARAMS[kind]
    text = _RULE_TEXT[kind]
    suppress = (ROWS_PARAM, _CLUSTERS, *rule_params, _SECONDARY, _COST)
    merge = (ROWS_PARAM, _CLUSTERS, *rule_params)
    remove = (ROWS_PARAM, _CLUSTERS, *rule_params, _MIN_SIZE, _COST)
    return [
        SqlFunction(
            name=f"{kind}_suppress", kind="scalar", params=suppress, returns=_SUPPRESSION, group=GROUP,
            scale={"release": 1, "primary_cells": 0, "secondary_cells": 0, "unprotected_cells": 0},
            doc=(f"Cell suppression under {text} with protection levels, as tau-ARGUS: release is every record's "
                 "cluster centroid with the sensitive cells (cluster, attribute) NULL (primary suppression) and "
                 "further cells NULL (secondary suppression) so that no sensitive cell's total can be estimated from "
                 "the published cells and its attribute's total (over rows) more precisely than its protection level "
                 f"({_LEVELS[kind]}, of the contributions c(1) >= c(2) >= ... with total T, upwards and downwards), "
                 "knowing the sign of every contribution; cost 'cells' suppresses the fewest further cells, 'value' "
                 "the least total value. primary_cells, secondary_cells and unprotected_cells count the cells "
                 "suppressed by each step and the sensitive cells no pattern could protect (all cells of their "
                 "attribute are then NULL: do not publish it); secondary := false suppresses the sensitive cells "
                 f"only. Contributions are the original values in rows. {_NULLS}"),
            example=(f"SELECT {kind}_suppress(r, mdav_multi_labels(r, 5), {_RULE_EXAMPLE[kind]}) "
                     "FROM (SELECT list([income, expenses]) AS r FROM people)"),
            udf=Udf(rows_udf(f"{kind}_suppress", _suppress(kind), "suppression", len(suppress) - 2, with_clusters=True),
                    ("DOUBLE[][]", "BIGINT[]") + ("VARCHAR",) * (len(suppress) - 2), _SUPPRESSION),
            body=record_macro(f"{kind}_suppress", suppress),
            contract=Contract({"rows": "original", "clusters": "labels"}),
        ),
        SqlFunction(
            name=f"{kind}_merge", kind="scalar", params=merge, returns="BIGINT[]", group=GROUP, scale=0,
            doc=(f"Dynamic k under {text}: while a cluster has a sensitive cell, the first such cluster is merged "
                 "with its nearest cluster (centroids on the standardised attributes, ties to the cluster that comes "
                 "first). Returns the new cluster ids 0..g'-1 aligned with rows; clusters only grow, so a k-anonymous "
                 "partition stays k-anonymous. An error if even one cluster of all the records is sensitive."),
            example=(f"SELECT {kind}_merge(r, mdav_multi_labels(r, 5), {_RULE_EXAMPLE[kind]}) "
                     "FROM (SELECT list([income, expenses]) AS r FROM people)"),
            udf=Udf(rows_udf(f"{kind}_merge", _merge(kind), "labels", len(merge) - 2, with_clusters=True),
                    ("DOUBLE[][]", "BIGINT[]") + ("VARCHAR",) * (len(merge) - 2), "BIGINT[]"),
            body=record_macro(f"{kind}_merge", merge),
            contract=Contract({"rows": "original", "clusters": "labels"}),
        ),
        SqlFunction(
            name=f"{kind}_remove", kind="scalar", params=remove, returns=_REMOVAL, group=GROUP,
            scale={"release": 1, "clusters": 0, **{c: 0 for c in _REMOVAL_COUNTS}},
            doc=(f"Dynamic k by removing the records that make a cell sensitive, under {text}: while a cluster has "
                 "a sensitive cell, the record with the largest contribution to it is removed from its cluster "
                 "(released without its values), or, when the cell is sensitive for having few contributors, the "
                 "cluster is merged with its nearest one; a cluster left smaller than min_size (NULL: the smallest "
                 "cluster given) is merged with its nearest. The removed records are one more cell, whose total "
                 "follows from the published ones: when it is sensitive it is suppressed with further cells that "
                 "meet its protection levels, as in the _suppress function (cost). release is every kept record's "
                 "new cluster centroid (NULL for removed records and suppressed cells), clusters the new cluster "
                 "ids 0..g'-1 (NULL for a removed record); the counts say what each step did (unprotected_cells > "
                 f"0: the removed records cannot be protected, do not publish). {_NULLS}"),
            example=(f"SELECT {kind}_remove(r, mdav_multi_labels(r, 5), {_RULE_EXAMPLE[kind]}) "
                     "FROM (SELECT list([income, expenses]) AS r FROM people)"),
            udf=Udf(rows_udf(f"{kind}_remove", _remove(kind), _removal_array, len(remove) - 2, with_clusters=True),
                    ("DOUBLE[][]", "BIGINT[]") + ("VARCHAR",) * (len(remove) - 2), _REMOVAL),
            body=record_macro(f"{kind}_remove", remove),
            contract=Contract({"rows": "original", "clusters": "labels"}),
        ),
    ]


_SENSITIVITY_SQL = "sql/30_sensitivity.sql"

FUNCTIONS += [
    SqlFunction(
        name="dominance_sensitive", kind="aggregate", params=(_VALUE, _N, _R, _ABSOLUTE), returns="BOOLEAN",
        group=GROUP, source=_SENSITIVITY_SQL, scale=0,
        doc=("(n, r) dominance rule over one cell's contributions: true when the n largest exceed the fraction r of "
             "the cell total (strictly), or when the cell has n or fewer contributions; NULL without contributions; "
             "a zero total is not sensitive. Negative contributions are an error unless absolute := true. Exact: r "
             "is taken to 9 decimals, so a cell exactly at r is not sensitive. n must be a constant."),
        example=("SELECT cluster, dominance_sensitive(income, 2, 0.7) FROM clustered GROUP BY cluster"),
        contract=Contract({"value": "original"}),
    ),
    SqlFunction(
        name="p_percent_sensitive", kind="aggregate", params=(_VALUE, _P, _ABSOLUTE), returns="BOOLEAN",
        group=GROUP, source=_SENSITIVITY_SQL, scale=0,
        doc=("p% rule over one cell's contributions: true when T - c(1) - c(2) < p c(1) (c(1) >= c(2) the two "
             "largest, c(2) = 0 for a single contribution, T the total): the second largest contributor could "
             "estimate the largest to within p of its value. NULL without contributions; a zero total is not "
             "sensitive; negative contributions as for dominance_sensitive; p taken to 9 decimals."),
        example="SELECT cluster, p_percent_sensitive(income, 0.1) FROM clustered GROUP BY cluster",
        contract=Contract({"value": "original"}),
    ),
    SqlFunction(
        name="dominance_to_p_percent", kind="scalar", params=(_R,), returns="DOUBLE", group=GROUP, scale=0,
        source=_SENSITIVITY_SQL,
        doc=("p = (1 - r) / r: with it the p% rule flags a subset of the cells the (2, r) dominance rule flags, "
             "and the two agree on every cell whose largest contribution is at least r times the total."),
        example="SELECT dominance_to_p_percent(0.8)  -- 0.25",
        contract=Contract(),
    ),
    SqlFunction(
        name="sensitivity_report", kind="table",
        params=(TBL_PARAM, Param("cols", ColumnNames(), doc="the attributes (a name or a list of names)"),
                Param("clusters", ColumnNames(), doc="column(s) identifying the cluster"), _N, _R, _P, _ABSOLUTE),
        returns="table", group=GROUP, source=_SENSITIVITY_SQL, scale=0,
        doc=("Sensitive cells of a clustered table (e.g. from mdav_multi_labels_table): for each attribute in cols "
             "and overall ('(all)'), the number of cells (cluster, attribute), how many are sensitive under the "
             "(n, r) dominance rule and under the p% rule, and their shares. Records whose cluster is NULL take no "
             "part; NULL values are no contribution."),
        example=("SELECT * FROM sensitivity_report('clustered', ['income', 'expenses'], ['region', 'cluster'], "
                 "2, 0.7, 0.1)"),
        contract=Contract({"cols": "original", "clusters": "labels"}, result="report"),
    ),
    SqlFunction(
        name="pq_sensitive", kind="aggregate", params=(_VALUE, _PQ_P, _Q, _ABSOLUTE), returns="BOOLEAN",
        group=GROUP, source=_SENSITIVITY_SQL, scale=0,
        doc=("pq rule (prior-posterior rule) over one cell's contributions: every contribution is known beforehand "
             "to within q of its value; true when q (T - c(1) - c(2)) < p c(1), the second largest contributor "
             "could estimate the largest to within p. 0 < p < q <= 1 (q = 1: the p% rule), taken to 9 decimals. NULL "
             "without contributions; negative contributions as for dominance_sensitive."),
        example="SELECT cluster, pq_sensitive(income, 0.1, 0.5) FROM clustered GROUP BY cluster",
        contract=Contract({"value": "original"}),
    ),
    SqlFunction(
        name="threshold_sensitive", kind="aggregate", params=(_VALUE, _MIN_COUNT), returns="BOOLEAN",
        group=GROUP, source=_SENSITIVITY_SQL, scale=0,
        doc=("Threshold (minimum frequency) rule over one cell's contributions: true when the cell has fewer than n "
             "contributions (NULL values are none); NULL without contributions."),
        example="SELECT cluster, threshold_sensitive(income, 3) FROM clustered GROUP BY cluster",
        contract=Contract({"value": "original"}),
    ),
    *_mitigation_rows("dominance"),
    *_mitigation_rows("p_percent"),
    *_mitigation_rows("pq"),
    *_mitigation_rows("threshold"),
]
