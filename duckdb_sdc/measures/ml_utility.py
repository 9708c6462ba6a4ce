"""Analytical utility judged by a model: train on the masked data, test on the original, and the
reverse (Senavirathne & Torra 2019 train decision trees on rounded data and test them on the
original; random forests on the Census set are the other common check of masked data).

    from duckdb_sdc.measures.ml_utility import ml_utility
    ml_utility(x, xm, y)                         # x, xm: n x p features; y: class labels
    ml_utility(x, xm, y, ym, task="regression", model="random_forest")

Definition. The n records are split into `folds` folds (shuffled, seeded). For every fold, a model is
fitted on the other folds and predicts the fold's records, in four ways:

* original: fitted on the original features and target, predicting the original records
  (the baseline: what the data give when nothing is masked);
* masked_to_original: fitted on the masked features and target, predicting the original records
  (what an analyst who only sees the release learns about the real population);
* original_to_masked: fitted on the original data, predicting the masked records (whether models
  built on real data still work on the release);
* masked: fitted on the masked data, predicting the masked records.

Each way's predictions of all n records (every record predicted by the model that did not see it)
are scored once: accuracy (share of correct classes) for classification, R^2 for regression.
`difference` = original - masked_to_original: the utility the masking cost (0: none; it can be
negative by chance). The target may be masked too (`ym`, default: released unmasked, ym = y).

Models (scikit-learn, the optional extra `ml`): 'decision_tree' (CART, no depth limit: the seed
paper's) and 'random_forest' (100 trees, one job, so the result does not depend on the machine).
Seeded and reproducible: the folds and every model use `seed`, the package's one seed kind (an
integer 0 <= seed < 2^63, default 0; None draws from the operating system's randomness, so the scores
then differ between calls); scikit-learn gets a 32-bit random_state: the seed itself below 2^32, else
one derived from it (`_random_state`).

No DuckDB here; scikit-learn is imported when the function runs, and its absence is a clear error
naming the extra.
"""

from __future__ import annotations

import numpy as np

from .._validate import fail
from ..params import SEED, Integer, choice

TASK = choice("classification", "regression", doc="'classification' (accuracy) or 'regression' (R^2)")
MODEL = choice("decision_tree", "random_forest", doc="'decision_tree' or 'random_forest' (100 trees)")
FOLDS = Integer(2, doc="number of cross-validation folds, 2 <= folds <= records")
TASKS = TASK.options
MODELS = MODEL.options
WAYS = ("original", "masked_to_original", "original_to_masked", "masked")
EXTRA_HINT = "pip install 'duckdb-sdc[ml]'"


def sklearn_or_error(func: str):
    """The scikit-learn modules ml_utility uses, or an error naming the extra."""
    try:
        from sklearn import ensemble, metrics, model_selection, tree
    except ImportError:
        raise fail(func, f"needs scikit-learn, which is the optional extra 'ml': {EXTRA_HINT}") from None
    return ensemble, metrics, model_selection, tree


def _features(func: str, name: str, values) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    a = a[:, None] if a.ndim == 1 else a
    if a.ndim != 2 or a.shape[1] == 0:
        raise fail(func, f"{name} must be an n x p array of features with p >= 1, got shape {np.shape(values)}")
    if not np.isfinite(a).all():
        raise fail(func, f"{name} contains {float(a[~np.isfinite(a)][0])}; leave out records with missing values")
    return a


def _target(func: str, name: str, values, n: int, task: str) -> np.ndarray:
    a = np.asarray(values)
    if a.ndim != 1 or a.shape[0] != n:
        raise fail(func, f"{name} must hold one value per record ({n}), got shape {a.shape}")
    if task == "regression":
        try:
            a = a.astype(np.float64)
        except (TypeError, ValueError):
            raise fail(func, f"{name} must be numeric for regression") from None
        if not np.isfinite(a).all():
            raise fail(func, f"{name} contains {float(a[~np.isfinite(a)][0])}; leave out records with missing values")
    elif a.dtype.kind == "f" and np.isnan(a).any():
        raise fail(func, f"{name} contains nan; leave out records with missing values")
    return a


def _random_state(seed: int | None) -> int:
    """scikit-learn's random_state (an integer below 2^32) for a seed of the package's one seed kind
    (`params.SEED`: 0 <= seed < 2^63, None for operating-system randomness): a seed below 2^32 as it
    is, a larger one (or None) the first 32-bit word of NumPy's SeedSequence of it."""
    if seed is not None and seed < 2**32:
        return seed
    return int(np.random.SeedSequence(seed).generate_state(1)[0])


def _model(modules, task: str, model: str, seed: int):
    ensemble, _, _, tree = modules
    if model == "decision_tree":
        cls = tree.DecisionTreeClassifier if task == "classification" else tree.DecisionTreeRegressor
        return cls(random_state=seed)
    cls = ensemble.RandomForestClassifier if task == "classification" else ensemble.RandomForestRegressor
    return cls(n_estimators=100, random_state=seed, n_jobs=1)


def ml_utility(x, xm, y, ym=None, *, task: str = "classification", model: str = "decision_tree",
               folds: int = 5, seed: int = 0) -> dict:
    """Scores of a model trained and tested on original and masked records (see the module
    docstring). Returns {'metric': 'accuracy' or 'r2', 'original', 'masked_to_original',
    'original_to_masked', 'masked', 'difference'}."""
    func = "ml_utility"
    task = TASK.check(task, func, "task")
    model = MODEL.check(model, func, "model")
    seed = _random_state(SEED.check(seed, func, "seed"))
    X = _features(func, "x", x)
    XM = _features(func, "xm", xm)
    if X.shape != XM.shape:
        raise fail(func, f"x and xm must have the same shape, got {X.shape} and {XM.shape}")
    n = X.shape[0]
    folds = FOLDS.check(folds, func, "folds")
    if folds > n:
        raise fail(func, f"folds = {folds} is larger than the number of records ({n})")
    Y = _target(func, "y", y, n, task)
    YM = Y if ym is None else _target(func, "ym", ym, n, task)
    modules = sklearn_or_error(func)
    _, metrics, model_selection, _ = modules
    splitter = model_selection.KFold(n_splits=folds, shuffle=True, random_state=seed)
    sides = {"original": (X, Y), "masked": (XM, YM)}
    predictions = {way: np.empty(n, dtype=(np.float64 if task == "regression" else Y.dtype)) for way in WAYS}
    for train, test in splitter.split(X):
        for fitted_on in ("original", "masked"):
            A, b = sides[fitted_on]
            fitted = _model(modules, task, model, seed).fit(A[train], b[train])
            for tested_on in ("original", "masked"):
                way = fitted_on if fitted_on == tested_on else f"{fitted_on}_to_{tested_on}"
                predictions[way][test] = fitted.predict(sides[tested_on][0][test])
    score = metrics.accuracy_score if task == "classification" else metrics.r2_score
    truth = {"original": Y, "masked_to_original": Y, "original_to_masked": YM, "masked": YM}
    out: dict = {"metric": "accuracy" if task == "classification" else "r2"}
    for way in WAYS:
        out[way] = float(score(truth[way], predictions[way]))
    out["difference"] = out["original"] - out["masked_to_original"]
    return out


__all__ = ["EXTRA_HINT", "MODELS", "TASKS", "WAYS", "ml_utility", "sklearn_or_error"]
