"""Information loss and disclosure risk on numpy arrays (no DuckDB here).

x is the original data and xm the masked data: 1-D arrays (one column) or 2-D n x p arrays, record i
of xm masking record i of x, finite values (leave out records with missing values, or use `evaluate`,
which takes NaN as missing). Every function validates its input and raises `SdcError` naming itself,
the parameter and the value; where a measure is undefined for the data it raises rather than return
NaN. The SQL binding (`duckdb_sdc.sql.measures` and `sql/10_measures.sql`) computes the same numbers.
Every measure of `evaluate` and of the release report is declared once in `catalog.py` (direction,
unit, scope, section, engines), and every list of their names is derived from it.
"""

from __future__ import annotations

from ._input import UndefinedMeasure
from . import catalog
from .catalog import Measure, register
from .evaluate import EVALUATE_GLOBAL_MAX_N, Row, evaluate, il_dr_score
from .loss import IL_COMPONENTS, entropy, il1, il1s, il1s_sum, il_metrics, mae, mse, regression_utility, sse_sst
from .ranks import DEFAULT_SEED, TIES, rank_bounded_mae, rank_bounded_mse, rank_mae, rank_mse, ranks
from .risk import (
    global_linkage,
    interval_disclosure,
    rank_interval_disclosure,
    record_linkage,
    sd_interval_disclosure,
    standardise,
)

__all__ = [
    "DEFAULT_SEED", "EVALUATE_GLOBAL_MAX_N", "IL_COMPONENTS", "Measure", "UndefinedMeasure", "OVERALL", "PER_COLUMN",
    "Row", "TIES", "catalog", "register",
    "entropy", "evaluate", "global_linkage", "il1", "il1s", "il1s_sum", "il_dr_score", "il_metrics",
    "interval_disclosure", "mae", "mse", "rank_bounded_mae", "rank_bounded_mse", "rank_interval_disclosure",
    "rank_mae", "rank_mse", "ranks", "record_linkage", "regression_utility", "sd_interval_disclosure",
    "sse_sst", "standardise",
]


def __getattr__(name: str):
    """PER_COLUMN and OVERALL: the names of evaluate's measures on each column alone and on all columns
    together, derived from the catalog when read (so that a measure registered later is in them)."""
    if name == "PER_COLUMN":
        return catalog.per_column()
    if name == "OVERALL":
        return catalog.overall()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
