"""The report's machine-learning utility section: how well a model trained on the release predicts
the original records (`duckdb_sdc.measures.ml_utility`), one released column at a time.

`ml_section(ev)` is a report section (a function of an `Evaluation` returning `report.Row`s), to be
listed in `report.SECTIONS`. For every masked column released as values, in the spec's order, that
column is the target and the other masked value columns are the features; the records are those
complete in all of them (joined on the key); a decision tree regression, 5 folds, seed 0. Rows,
in the section ML_UTILITY, column = the target:

* `ml_utility.original`: R^2 of models fitted on the original data (the baseline);
* `ml_utility.masked_to_original`: R^2 on the original records of models fitted on the release;
* `ml_utility.original_to_masked`: R^2 on the released records of models fitted on the original;
* `ml_utility.difference`: original - masked_to_original, the utility the masking cost.

The section says why it has no values (a row with a note) when fewer than two columns are masked
as values, when fewer than `FOLDS` records are complete, or when scikit-learn (the extra `ml`) is
not installed; above ML_MAX_N complete records it uses a seeded sample of ML_MAX_N and says so.
"""

from __future__ import annotations

import numpy as np
from sqlglot import exp

from .._validate import SdcError
from ..measures.catalog import ML_UTILITY
from ..measures.ml_utility import EXTRA_HINT, ml_utility, sklearn_or_error
from .plan import column, ident
from .sections import KEY, MASKED, ORIGINAL, Evaluation, Row

FOLDS = 5
SEED = 0
ML_MAX_N = 100_000  # a tree per fold and direction: about 1 s per 100k records and column here
_REPORTED = ("original", "masked_to_original", "original_to_masked", "difference")


def _records(ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
    """The original and masked values of the masked value columns, records complete on both sides,
    in key order."""
    names = ev.masked
    original, masked = ident("__sdc_o"), ident("__sdc_m")
    query = (exp.select(*(column(c, "__sdc_o") for c in names), *(column(c, "__sdc_m") for c in names))
             .from_(exp.Table(this=ident(ORIGINAL), alias=exp.TableAlias(this=original)))
             .join(exp.Table(this=ident(MASKED), alias=exp.TableAlias(this=masked)), using=[ident(KEY)])
             .where(exp.and_(*(exp.Not(this=exp.Is(this=column(c, side), expression=exp.Null()))
                               for c in names for side in ("__sdc_o", "__sdc_m"))))
             .order_by(column(KEY, "__sdc_o")))
    rows = ev.fetch(query)
    data = np.array(rows, dtype=np.float64).reshape(len(rows), 2 * len(names))
    return data[:, :len(names)], data[:, len(names):]


def ml_section(ev: Evaluation) -> list[Row]:
    """Model utility of every masked value column as the target of the others (module docstring)."""
    names = ev.masked
    if len(names) < 2:
        return [Row(ML_UTILITY, "ml_utility", None, None,
                    "needs at least two columns masked as values (one is the target, the others the features)")]
    try:
        sklearn_or_error("ml_utility")
    except SdcError:
        return [Row(ML_UTILITY, "ml_utility", None, None, f"needs scikit-learn, the optional extra 'ml': {EXTRA_HINT}")]
    X, XM = _records(ev)
    n = X.shape[0]
    if n < FOLDS:
        return [Row(ML_UTILITY, "ml_utility", None, None, f"{n} complete records; {FOLDS} folds need at least {FOLDS}")]
    note = None
    if n > ML_MAX_N:
        keep = np.sort(np.random.default_rng(SEED).choice(n, ML_MAX_N, replace=False))
        X, XM = X[keep], XM[keep]
        note = f"a seeded sample of {ML_MAX_N} of the {n} complete records"
    rows = []
    for j, target in enumerate(names):
        others = [i for i in range(len(names)) if i != j]
        scores = ml_utility(X[:, others], XM[:, others], X[:, j], XM[:, j], task="regression",
                            model="decision_tree", folds=FOLDS, seed=SEED)
        why = f"decision tree regression of {target!r} on the other masked columns, R^2, {FOLDS} folds"
        why += f"; {note}" if note else ""
        rows += [Row(ML_UTILITY, f"ml_utility.{way}", target, scores[way], why) for way in _REPORTED]
    return rows


__all__ = ["FOLDS", "ML_MAX_N", "ML_UTILITY", "SEED", "ml_section"]
