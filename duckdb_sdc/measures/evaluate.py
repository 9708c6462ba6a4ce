"""The whole evaluation of an (original, masked) pair at once: every measure, per column and overall,
as tidy rows, and the seed's single IL-DR score."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._numerics import OutOfRange
from .._validate import fail, named
from ..params import IL1S_FORM
from . import catalog, loss, ranks, risk
from ._input import UndefinedMeasure, pair, undefined


IL1S_FORMS = IL1S_FORM.options


@named
def il_dr_score(x, xm, k: float = 0.05, *, max_outside: int = 0, il1s_form: str = "yancey") -> float:
    """The IL-DR score of the rounding paper (Senavirathne & Torra 2019), lower is better: the mean of
    two information-loss and two disclosure-risk terms, each in percent,

        0.25 * (IL + 100 * IL1s + 100 * DDR + 100 * IDR)

    with IL = il_metrics(...)["composite"] (the Domingo-Ferrer & Torra metrics, already 100 times a
    mean), IL1s the standardised mean absolute error, DDR = record_linkage (rank 1) and
    IDR = interval_disclosure(k) (intervals x' +- k sd(x'_j)).

    Where the paper is ambiguous (it computes the measures with sdcMicro and gives the score as the
    plain mean of the four percentages, without the formulas of the terms), two choices are exposed:
    * `max_outside`, the interval-disclosure term: 0 (default) counts a record at risk when all its
      original values lie in their intervals, as the measure is defined (the SDID measure that
      sdcMicro's `dRisk` documentation cites: Mateo-Sanz, Sebe & Domingo-Ferrer 2004), which is what
      `dRisk` computes since sdcMicro 5.5.2 (September 2020); 1 counts it with at most one value
      outside, what `dRisk`'s code computed before (`rowSums(...) %in% 0:1`), in the versions of the
      paper's time; with one column every record is then at risk (IDR = 1).
    * `il1s_form`, the IL1s term: 'yancey' (default) is Yancey, Winkler & Creecy's
      (1 / (n p)) sum |x - x'| / (sqrt(2) S_j); 'sdcmicro' is what sdcMicro's
      `dUtility(method = "IL1")` computed before 5.0.3 (October 2017), whose code read
      `abs((x - xm) / sd(x) * sqrt(2))`: (1 / (n p)) sum sqrt(2) |x - x'| / S_j, exactly twice as
      large. Since 5.0.3 sdcMicro keeps Yancey's form as "IL1old" and reports "IL1s" as the
      un-normalised sum, `il1s_sum`; 'sum' takes that sum as the term, as it is (not times 100):
      it is not a mean and grows with n p, but it is what a score computed from sdcMicro's dUtility
      in the paper's time adds up (docs/methods/il-dr-paper.md compares the readings).
    Scaling: every term is a percentage (the IL1s term is 100 times a mean of standardised
    differences, which can exceed 100). Needs n >= 2 and no constant original column (IL1s)."""
    X, XM = pair("il_dr_score", x, xm)
    form = IL1S_FORM.check(il1s_form, "il_dr_score", "il1s_form")
    il = loss.il_metrics(X, XM)["composite"]
    if il is None:
        raise undefined("il_dr_score", _IL_UNDEFINED)
    il1s = loss.il1s_sum(X, XM) / 100.0 if form == "sum" else loss.il1s(X, XM) * (2.0 if form == "sdcmicro" else 1.0)
    return _score(il, il1s, risk.record_linkage(X, XM), risk.interval_disclosure(X, XM, k, max_outside=max_outside))


_IL_UNDEFINED = "the IL metrics are undefined for these data (every original value is 0)"
_SCORE_TERMS = ("il1s", "record_linkage", "interval_disclosure")  # besides the IL metrics' composite


def _score(il: float, il1s: float, ddr: float, idr: float) -> float:
    return 0.25 * (il + 100.0 * il1s + 100.0 * ddr + 100.0 * idr)


def _score_of(overall: dict[str, tuple[float | None, str | None]]) -> tuple[float | None, str | None]:
    """il_dr_score from the overall measures already computed: the same value, or the same note
    (the first undefined term, in il_dr_score's order)."""
    il, note = overall["il_metrics"]
    if note is None and il is None:
        note = f"il_dr_score: {_IL_UNDEFINED}"
    if note is not None:
        return None, note
    terms = [overall[m] for m in _SCORE_TERMS]
    for value, why in terms:
        if value is None:
            return None, why
    return _score(il, *(value for value, _ in terms)), None


@dataclass(frozen=True)
class Row:
    measure: str
    column: str | None  # None: over all columns together
    value: float | None  # None: undefined for these data (the note says why)
    note: str | None = None


# global linkage solves an n x n assignment (O(n^3): 0.1 s at 1000 records, 0.5 s at 2000, 4 s at 5000);
# an evaluation, which a trade-off sweep repeats for every parameter value, runs it up to this many
EVALUATE_GLOBAL_MAX_N = 2000


def _value(func, *args, **kw) -> tuple[float | None, str | None]:
    """(value, None), or (None, the reason) for a measure undefined for the data or beyond float64's
    range (an MSE of values near 1e308)."""
    try:
        return func(*args, **kw), None
    except (UndefinedMeasure, OutOfRange) as e:
        return None, str(e)


def _measures(X: np.ndarray, XM: np.ndarray, k: float, seed: int, names) -> dict[str, tuple[float | None, str | None]]:
    """The measures `names` of one (column or overall) evaluation that are computed on the data alone:
    a declared function f(x, xm), or one step shared by several measures (the four rank measures from
    one ranking); {name: (value, note)} in the order of `names`. The overall-only steps are `_overall`'s."""
    out = {}
    for name in names:
        compute = catalog.CATALOG[name].compute
        if callable(compute):
            out[name] = _value(compute, X, XM)
        elif compute == "ranks":
            if name not in out:
                got = ranks.rank_measures(X, XM, seed=seed)
                out.update({m: (v, None) for m, v in got.items() if m in names})
        elif compute == "interval_disclosure":
            out[name] = _value(risk.interval_disclosure, X, XM, k)
        elif compute not in _OVERALL_STEPS or X.ndim == 1:
            raise fail("evaluate", f"measure {name!r} declares compute = {compute!r}, which is no step of "
                       f"evaluate on {'one column' if X.ndim == 1 else 'all columns'}; declare a function "
                       "f(x, xm) -> float")
    return {m: out[m] for m in names if m in out}


# the steps of _overall, each computing measures that need all columns together
_OVERALL_STEPS = ("il_metrics", "regression_utility", "record_linkage_second", "global_linkage", "il_dr_score")


def _overall(Xc: np.ndarray, XMc: np.ndarray, k: float, seed: int, names: list[str],
             wanted: list[str]) -> dict[str, tuple[float | None, str | None]]:
    """The overall measures named in `wanted` (catalog.overall() names) on the complete records, each
    computed once, with what the composite ones need."""
    need = set(wanted) | ({*_SCORE_TERMS, "il_metrics"} if "il_dr_score" in wanted else set())
    out = _measures(Xc, XMc, k, seed, [m for m in catalog.overall() if m in need])
    if any(m.startswith("il_metrics") for m in need):
        il, note = _value(loss.il_metrics, Xc, XMc)
        for part in loss.IL_COMPONENTS:
            out[f"il_metrics.{part}"] = (None, note) if il is None else (
                il[part], None if il[part] is not None else "undefined for these data (see il_metrics)")
        out["il_metrics"] = (None, note) if il is None else (il["composite"], None)
    if any(m.startswith("regression_utility") for m in need):
        fit, note = _value(loss.regression_utility, Xc, XMc)
        for part in ("mse", "r2", "r2_original"):
            out[f"regression_utility.{part}"] = (None, note) if fit is None else (
                fit[part], f"regression_utility: response {names[0]!r} on the other columns")
    if "record_linkage_second" in need:
        out["record_linkage_second"] = (_value(risk.record_linkage, Xc, XMc, 2) if Xc.shape[0] > 1
                                        else (None, "record_linkage: a single record has no second nearest"))
    if "global_linkage" in need:
        out["global_linkage"] = (_value(risk.global_linkage, Xc, XMc) if Xc.shape[0] <= EVALUATE_GLOBAL_MAX_N
                                 else (None, f"global_linkage: not run on {Xc.shape[0]} records in an evaluation "
                                             f"(O(n^3); at most {EVALUATE_GLOBAL_MAX_N}); call global_linkage "
                                             f"directly for up to {risk.GLOBAL_LINKAGE_MAX_N}"))
    if "il_dr_score" in need:
        out["il_dr_score"] = _score_of(out)
    return out


@named
def evaluate(x, xm, columns=None, *, k: float = 0.05, seed: int = ranks.DEFAULT_SEED,
             listwise: bool = True, measures=None) -> list[Row]:
    """Every measure of this package for one (original, masked) pair, as tidy rows
    (measure, column, value, note): first each measure of `catalog.per_column()` on every column alone,
    then each measure of `catalog.overall()` on all columns together (column None), in the catalog's
    order (duckdb_sdc/measures/catalog.py declares them). A measure that is undefined for these
    data (e.g. il1s with a constant column) or beyond float64's range (the MSE of values near 1e308)
    has value None and the reason in `note`; nothing is NaN or infinite.
    The regression utility takes the first column as the response (its note names it); global
    linkage runs on up to EVALUATE_GLOBAL_MAX_N complete records (above: None, and a note).

    x and xm may contain NaN for missing values (as pandas and the SQL binding deliver NULL): a column
    alone uses the records where both its values are present (pairwise); the overall measures use the
    records complete in every column on both sides (listwise).

    `measures`: None for every measure, or the names (of per_column() and overall()) to compute; the rows
    of the others are left out, and each computed value is the one the whole evaluation gives (the
    release's policy gate computes only what its limits need).
    """
    seed = ranks.tie_seed("evaluate", seed)  # once, so that every column breaks ties alike
    X = np.asarray(x, dtype=np.float64)
    XM = np.asarray(xm, dtype=np.float64)
    X = X[:, None] if X.ndim == 1 else X
    XM = XM[:, None] if XM.ndim == 1 else XM
    if X.ndim != 2 or X.shape != XM.shape:
        raise fail("evaluate", f"x and xm must be n x p arrays of the same shape, got {np.shape(x)} and {np.shape(xm)}")
    p = X.shape[1]
    names = [f"c{j}" for j in range(p)] if columns is None else [str(c) for c in columns]
    if len(names) != p:
        raise fail("evaluate", f"columns names {len(names)} columns, the data have {p}")
    if np.isinf(X).any() or np.isinf(XM).any():
        raise fail("evaluate", "x or xm contains an infinite value")
    only = None
    every_column, every_overall = catalog.per_column(), catalog.overall()
    if measures is not None:
        only = frozenset(measures)
        unknown = sorted(only - set(every_column) - set(every_overall))
        if unknown:
            raise fail("evaluate", f"measures names unknown measures {unknown}; known: {', '.join(every_overall)}")
    per_column = [m for m in every_column if only is None or m in only]
    rows: list[Row] = []
    for j, name in enumerate(names):
        ok = ~(np.isnan(X[:, j]) | np.isnan(XM[:, j]))
        if not ok.any():
            rows += [Row(m, name, None, "no record has both values") for m in per_column]
            continue
        if not per_column:
            continue
        for m, (v, note) in _measures(X[ok, j], XM[ok, j], k, seed, per_column).items():
            rows.append(Row(m, name, v, note))
    overall_names = [m for m in every_overall if only is None or m in only]
    ok = ~(np.isnan(X).any(axis=1) | np.isnan(XM).any(axis=1))
    if not ok.any():
        return rows + [Row(m, None, None, "no record is complete") for m in overall_names]
    overall = _overall(X[ok], XM[ok], k, seed, names, overall_names)
    return rows + [Row(m, None, *overall[m]) for m in overall_names]
