"""SQL rows for multivariate k-anonymity (MDAV, Mondrian) and attribute disclosure in its clusters
(dominance and p% rules, suppression, dynamic k).

The list functions take `rows DOUBLE[][]`, one vector per record (`list([a, b, c])`), so they check
their argument with `__sdc_numeric_rows` instead of the univariate `__sdc_numeric_list`
(`rows.record_macro` writes that macro body). Plumbing: `sql/rows.py`; internal macros:
`sql/25_multivariate.sql`; pure-SQL rules and report: `sql/30_sensitivity.sql`.
"""

from __future__ import annotations

from .. import masking
from ..methods import multivariate as mv
from ..methods import sensitivity as sv
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
from .registry import Contract, SqlFunction, Udf
from .rows import record_macro, rows_udf


GROUP = "Multivariate k-anonymity and attribute disclosure"

_LABEL_COL = Param("label_col", COLUMN, "'cluster'", doc="name of the added cluster id column")
_CLUSTERS = Param("clusters", LABELS)
_N = Param("n", INTEGER_1, doc="the number of largest contributions, >= 1")
_R = Param("r", FRACTION, doc="the dominance threshold, 0 < r <= 1 (taken to 9 decimals)")
_P = Param("p", P_PERCENT)
_ABSOLUTE = Param("absolute", FLAG, "false", doc="apply the rule to absolute values instead of refusing negatives")
_SECONDARY = Param("secondary", FLAG, "true", doc="also suppress the same attribute in the nearest cluster")
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


def _method_rows(method: str, title: str, what: str, labels_fn) -> list:
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
            example=(f"SELECT region, {round_name}(list([income, expenses, savings]), 5) FROM people GROUP BY region"),
            udf=Udf(rows_udf(round_name, _masked(round_name), "rows", n_opts), ("DOUBLE[][]",) + ("VARCHAR",) * n_opts,
                    "DOUBLE[][]"),
            body=record_macro(round_name, (ROWS_PARAM, *tail)),
            contract=Contract({"rows": "original"}),
        ),
        SqlFunction(
            name=labels_name, kind="scalar", params=(ROWS_PARAM, *tail), returns="BIGINT[]", group=GROUP, scale=0,
            doc=(f"The clusters of {round_name}: cluster ids 0..g-1 aligned with rows ({'in order of formation' if method.startswith('mdav') else 'numbered left to right, the records at or below every cut first'}); NULL for a record with a NULL attribute."),
            example=f"SELECT {labels_name}([[1, 1], [9, 9], [1, 2], [8, 9]], 2)",
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
            example=f"SELECT * FROM {round_name}_table('people', ['income', 'expenses', 'savings'], 5, strata := 'region')",
            body=f"FROM query(__sdc_mask_columns_sql('{round_name}', tbl, cols, [{arg_list}], strata, {POOLING_ARGS}))",
            contract=Contract({"cols": "original"}, result="rows"),
        ),
        SqlFunction(
            name=f"{labels_name}_table", kind="table",
            params=(TBL_PARAM, COLS_PARAM, *tail, *STRATA_PARAMS, _LABEL_COL), returns="table", group=GROUP, scale=1,
            doc=(f"The rows of tbl unchanged plus a column label_col with their {labels_name} cluster id (NULL for a "
                 "row with a NULL in cols; ids are numbered within each stratum, so (strata, cluster) identifies a "
                 "cluster). A column of that name is replaced. Input of sensitivity_report."),
            example=f"SELECT * FROM {labels_name}_table('people', ['income', 'savings'], 5, strata := 'region')",
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

FUNCTIONS: list[SqlFunction] = [
    *_method_rows("mdav_multi", "MDAV", _MDAV_WHAT, _mdav_labels),
    *_method_rows("mondrian", "Mondrian", _MONDRIAN_WHAT, _mondrian_labels),
]


# ---------------------------------------------------------------------------------------------
# sensitivity rules, suppression, dynamic k


def _rule(kind: str, params: list):
    if kind == "dominance":
        n, r, absolute, *rest = params
        return sv.dominance_rule(n, r, absolute=absolute), rest
    p, absolute, *rest = params
    return sv.p_percent_rule(p, absolute=absolute), rest


def _suppress(kind: str):
    def compute(X, clusters, *params):
        rule, (secondary,) = _rule(kind, list(params))
        out = sv.suppress(X, clusters, rule, secondary=secondary)
        return out.release, int(out.primary.sum()), int(out.secondary.sum())

    return compute


def _merge(kind: str):
    def compute(X, clusters, *params):
        rule, _ = _rule(kind, list(params))
        return sv.merge_sensitive(X, clusters, rule)

    return compute


_SUPPRESSION = "STRUCT(release DOUBLE[][], primary_cells BIGINT, secondary_cells BIGINT)"
_RULE_PARAMS = {"dominance": (_N, _R, _ABSOLUTE), "p_percent": (_P, _ABSOLUTE)}
_RULE_TEXT = {"dominance": "the (n, r) dominance rule", "p_percent": "the p% rule"}
_RULE_EXAMPLE = {"dominance": "2, 0.7", "p_percent": "0.1"}


def _mitigation_rows(kind: str) -> list[SqlFunction]:
    rule_params = _RULE_PARAMS[kind]
    text = _RULE_TEXT[kind]
    suppress = (ROWS_PARAM, _CLUSTERS, *rule_params, _SECONDARY)
    merge = (ROWS_PARAM, _CLUSTERS, *rule_params)
    return [
        SqlFunction(
            name=f"{kind}_suppress", kind="scalar", params=suppress, returns=_SUPPRESSION, group=GROUP,
            scale={"release": 1, "primary_cells": 0, "secondary_cells": 0},
            doc=(f"Cell suppression under {text}: release is every record's cluster centroid with the sensitive "
                 "cells (cluster, attribute) NULL (primary suppression) and, for each of them, the same attribute of "
                 "the nearest cluster (centroids on the standardised attributes) whose cell is not itself sensitive "
                 "NULL too (secondary suppression), so that no suppressed value follows from a published total; "
                 "primary_cells and secondary_cells count "
                 f"the cells each step suppressed. Contributions are the original values in rows. {_NULLS}"),
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
    *_mitigation_rows("dominance"),
    *_mitigation_rows("p_percent"),
]
