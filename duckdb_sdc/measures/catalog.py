"""The measure catalog: one declared `Measure` per measure of the release report and of
`duckdb_sdc.measures.evaluate`, from which every list of measure names is derived (no DuckDB or Spark
import here).

    from duckdb_sdc.measures.catalog import CATALOG, per_column, overall, direction
    CATALOG["il1s"].unit          # 'sd units / sqrt(2)'
    per_column()                  # what evaluate computes on each column alone, in its order
    direction("entropy")          # ('higher', 'bits (information kept)')

A declaration says the measure's name, which way is better (`direction`, required), its unit, its
scope (each column alone, all columns together, or both), the report section that prints it, what
computes it, whether the release report shows it, which engines compute it, a one-line doc and its
source. Derived from the declarations, in declaration order: `per_column()` and `overall()` (the rows
of `evaluate`, hence of `evaluate_masking` and of the report's measures), `evaluated()`, `reported()`,
`direction(name)` (the report's "better" and "unit" columns), `section_of(name)`, `engine(name)`.

A plug-in package registers measures through the entry point group `duckdb_sdc.measures`, read
when this module is imported (as sqlglot finds its dialects): in the plug-in's pyproject.toml,

    [project.entry-points."duckdb_sdc.measures"]
    max_error = "my_package.measures:MAX_ERROR"

where `MAX_ERROR` is a `Measure` (or a tuple of them) whose `compute` is a function of the original
and the masked values. A plug-in that fails to load, or declares a bad measure, raises `MeasureError`
naming the entry point and its distribution.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from typing import Callable, Union

from .._validate import SdcError
from . import loss, risk

# which way is better: less information lost and less risk are "lower"; a figure shown as a
# baseline or a count is "neither" (printed as "-")
LOWER, HIGHER, NEITHER = "lower", "higher", ""
DIRECTIONS = (LOWER, HIGHER, NEITHER)

# the scope: each column alone (rows with the column's name), all columns together (column None), both
COLUMN, OVERALL, BOTH = "column", "overall", "both"
SCOPES = (COLUMN, OVERALL, BOTH)

# the report's sections, in the order it prints them (`release.report`), and the ML utility section
# that a spec asks for ([evaluation] ml_utility)
LOSS, RISK, SCORE, BOXES, K_ANONYMITY, SENSITIVE = (
    "information loss", "disclosure risk", "IL-DR score", "boxes", "k-anonymity", "sensitive cells")
ML_UTILITY = "ML utility"
SECTIONS = (LOSS, RISK, SCORE, BOXES, K_ANONYMITY, SENSITIVE, ML_UTILITY)
EVERY_SECTION = "every section"  # the verdict row ends each one

# what computes a measure: `evaluate` (duckdb_sdc.measures.evaluate, hence the SQL table macro
# evaluate_masking and the report's measures section), or one of the report's section functions
EVALUATE = "evaluate"
COMPUTERS = (EVALUATE, "boxes_section", "k_anonymity_section", "sensitivity_section", "ml_section",
             "weights_section", "verdict_rows")

DUCKDB, SPARK = "duckdb", "spark"
ENGINES = (DUCKDB, SPARK)

GROUP = "duckdb_sdc.measures"  # the entry point group of plug-in measures

Compute = Union[Callable[..., float], str, None]


class MeasureError(SdcError):
    """A measure declaration the catalog refuses."""


@dataclass(frozen=True)
class Measure:
    """One measure. `compute`, for a measure computed by `evaluate`: a function f(x, xm) -> float
    of the original and the masked values (1-D for a column alone, n x p for all columns together;
    raise `UndefinedMeasure` where the measure is undefined for the data), or the name of the step
    of evaluate.py that computes several measures at once ("ranks", "il_metrics", ...); None for a
    measure a report section computes (`computed_by` names it)."""
    name: str
    # the fields below up to `doc` are required (None refused: a measure without a direction cannot
    # be registered); they default to None only so that the refusal names the measure
    direction: str | None = None  # LOWER, HIGHER or NEITHER
    unit: str | None = None  # what the number counts ("" for a plain count)
    scope: str | None = None  # COLUMN, OVERALL or BOTH
    section: str | None = None  # the report section that prints it (one of SECTIONS, or EVERY_SECTION)
    doc: str | None = None  # one line: what it measures
    source: str = ""  # the paper or the tool it follows ("" for a plain statistic)
    compute: Compute = None
    computed_by: str = EVALUATE  # EVALUATE or a report section function (COMPUTERS)
    report: bool = True  # the release report (duckdb-sdc evaluate) shows it
    engines: tuple[str, ...] = (DUCKDB,)  # the engines whose report or policy gate compute it

    def __post_init__(self):
        def bad(param: str, value, allowed: str):
            raise MeasureError(f"Measure: measure {self.name!r}: {param} must be {allowed}, got {value!r}")

        if not isinstance(self.name, str) or not self.name.strip() or self.name != self.name.strip():
            bad("name", self.name, "a non-empty name without surrounding spaces")
        for param in ("direction", "unit", "scope", "section", "doc"):
            if getattr(self, param) is None:
                raise MeasureError(f"Measure: measure {self.name!r}: {param} is required (no default)")
        if self.direction not in DIRECTIONS:
            bad("direction", self.direction, f"one of {LOWER!r}, {HIGHER!r} or {NEITHER!r} (neither is better)")
        if self.scope not in SCOPES:
            bad("scope", self.scope, f"one of {', '.join(map(repr, SCOPES))}")
        if self.section not in (*SECTIONS, EVERY_SECTION):
            bad("section", self.section, f"one of {', '.join(map(repr, (*SECTIONS, EVERY_SECTION)))}")
        if self.computed_by not in COMPUTERS:
            bad("computed_by", self.computed_by, f"one of {', '.join(map(repr, COMPUTERS))}")
        if self.computed_by == EVALUATE and not (callable(self.compute) or isinstance(self.compute, str)):
            bad("compute", self.compute, "a function f(x, xm) -> float (or a step of evaluate.py) for a "
                "measure computed by evaluate")
        if self.computed_by != EVALUATE and self.compute is not None:
            bad("compute", self.compute, f"None for a measure computed by {self.computed_by}")
        if not isinstance(self.engines, tuple) or not self.engines or any(e not in ENGINES for e in self.engines):
            bad("engines", self.engines, f"a non-empty tuple of {', '.join(map(repr, ENGINES))}")
        if not isinstance(self.unit, str):
            bad("unit", self.unit, "a string")
        if not isinstance(self.doc, str) or not self.doc.strip() or "\n" in self.doc:
            bad("doc", self.doc, "one line saying what the measure measures")

    @property
    def per_column(self) -> bool:
        return self.scope in (COLUMN, BOTH)

    @property
    def overall(self) -> bool:
        return self.scope in (OVERALL, BOTH)


def _entropy(x, xm) -> float:
    return loss.entropy(xm)  # of the masked values alone: the information they keep


_BOTH_ENGINES = (DUCKDB, SPARK)
_DDR = "Domingo-Ferrer & Torra 2001; sdcMicro dRisk (Templ)"

BUILTIN: tuple[Measure, ...] = (
    # information loss, computed by evaluate on every column alone and on all together
    Measure("mae", LOWER, "units of the column", BOTH, LOSS, "mean absolute error, sum |x - x'| / (n p)",
            compute=loss.mae, engines=_BOTH_ENGINES),
    Measure("mse", LOWER, "squared units", BOTH, LOSS, "mean squared error, sum (x - x')^2 / (n p)",
            compute=loss.mse, engines=_BOTH_ENGINES),
    Measure("il1", LOWER, "mean relative change", BOTH, LOSS, "mean of |x - x'| / |x| over the values x != 0",
            "Domingo-Ferrer & Torra 2001", compute=loss.il1, engines=_BOTH_ENGINES),
    Measure("il1s", LOWER, "sd units / sqrt(2)", BOTH, LOSS, "mean of |x - x'| / (sqrt(2) S_j)",
            "Yancey, Winkler & Creecy 2002", compute=loss.il1s, engines=_BOTH_ENGINES),
    Measure("il1s_sum", LOWER, "sum of sd units / sqrt(2)", BOTH, LOSS,
            "sum of |x - x'| / (sqrt(2) S_j), the IL1s that sdcMicro's dUtility reports",
            "sdcMicro dUtility (Templ)", compute=loss.il1s_sum, engines=_BOTH_ENGINES),
    Measure("sse_sst", LOWER, "percent of SST", BOTH, LOSS, "100 SSE / SST on the standardised columns",
            "the microaggregation literature (Domingo-Ferrer & Mateo-Sanz 2002)", compute=loss.sse_sst,
            engines=_BOTH_ENGINES),
    Measure("rank_mae", LOWER, "ranks", BOTH, LOSS, "mean absolute change of the ranks", "Chaibub Neto",
            compute="ranks"),
    Measure("rank_mse", LOWER, "squared ranks", BOTH, LOSS, "mean squared change of the ranks", "Chaibub Neto",
            compute="ranks"),
    Measure("rank_bounded_mae", LOWER, "share of the maximum", BOTH, LOSS,
            "absolute change of the ranks over its largest possible value", "Chaibub Neto", compute="ranks"),
    Measure("rank_bounded_mse", LOWER, "share of the maximum", BOTH, LOSS,
            "squared change of the ranks over its largest possible value", "Chaibub Neto", compute="ranks"),
    Measure("entropy", HIGHER, "bits (information kept)", BOTH, LOSS,
            "Shannon entropy of the masked values, summed over the columns", "Shannon 1948", compute=_entropy),
    # information loss of all columns together
    Measure("il_metrics.il1", LOWER, "mean relative change", OVERALL, LOSS, "mean variation of the values",
            "Domingo-Ferrer & Torra 2001", compute="il_metrics"),
    Measure("il_metrics.means", LOWER, "mean relative change", OVERALL, LOSS, "mean variation of the means",
            "Domingo-Ferrer & Torra 2001", compute="il_metrics"),
    Measure("il_metrics.covariances", LOWER, "mean relative change", OVERALL, LOSS,
            "mean variation of the covariances (i <= j)", "Domingo-Ferrer & Torra 2001", compute="il_metrics"),
    Measure("il_metrics.variances", LOWER, "mean relative change", OVERALL, LOSS, "mean variation of the variances",
            "Domingo-Ferrer & Torra 2001", compute="il_metrics"),
    Measure("il_metrics.correlations", LOWER, "mean absolute change", OVERALL, LOSS,
            "mean absolute error of the correlations (i < j)", "Domingo-Ferrer & Torra 2001", compute="il_metrics"),
    Measure("il_metrics", LOWER, "percent", OVERALL, LOSS, "100 times the mean of the five il_metrics",
            "Domingo-Ferrer & Torra 2001", compute="il_metrics"),
    Measure("regression_utility.mse", LOWER, "squared units of the response", OVERALL, LOSS,
            "MSE of the masked data's OLS fit predicting the original response", compute="regression_utility"),
    Measure("regression_utility.r2", HIGHER, "share of variance", OVERALL, LOSS, "R^2 of the masked data's OLS fit",
            compute="regression_utility"),
    Measure("regression_utility.r2_original", NEITHER, "share of variance (the baseline)", OVERALL, LOSS,
            "R^2 of the same regression fitted on the original data", compute="regression_utility"),
    # disclosure risk
    Measure("interval_disclosure", LOWER, "share of records", BOTH, RISK,
            "share of records whose original values all lie in x' +- k sd(x'_j)", "sdcMicro dRisk (Templ)",
            compute="interval_disclosure", engines=_BOTH_ENGINES),
    Measure("sd_interval_disclosure", LOWER, "share of values", BOTH, RISK,
            "share of original values in an sd-based interval around the masked one, p = 1..10 percent", _DDR,
            compute=risk.sd_interval_disclosure),
    Measure("rank_interval_disclosure", LOWER, "share of values", BOTH, RISK,
            "share of original values in a rank-based interval around the masked one, p = 1..10 percent", _DDR,
            compute=risk.rank_interval_disclosure),
    Measure("record_linkage", LOWER, "share of records", BOTH, RISK,
            "share of masked records whose nearest original is their own (DDR)", _DDR,
            compute=risk.record_linkage, engines=_BOTH_ENGINES),
    Measure("record_linkage_second", LOWER, "share of records", OVERALL, RISK,
            "record linkage counting the own original among the two nearest", _DDR, compute="record_linkage_second"),
    Measure("global_linkage", LOWER, "share of records", OVERALL, RISK,
            "share of masked records matched to their own original by the least-distance assignment",
            "Herranz et al.", compute="global_linkage"),
    Measure("il_dr_score", LOWER, "percent", OVERALL, SCORE, "0.25 (IL + 100 IL1s + 100 DDR + 100 IDR)",
            "Senavirathne & Torra 2019", compute="il_dr_score"),
    # the boxes section (release.report.boxes_section)
    Measure("mean_width", LOWER, "units of the column", COLUMN, BOXES, "mean width of the boxes of a column",
            computed_by="boxes_section"),
    Measure("mean_width_sd", LOWER, "sd units", COLUMN, BOXES, "mean width over the sd of the original values",
            computed_by="boxes_section"),
    Measure("mean_lower", NEITHER, "units of the column", COLUMN, BOXES,
            "lower bound of the column's mean over the boxes", computed_by="boxes_section"),
    Measure("mean_upper", NEITHER, "units of the column", COLUMN, BOXES,
            "upper bound of the column's mean over the boxes", computed_by="boxes_section"),
    Measure("in_box_share", HIGHER, "share of records", COLUMN, BOXES,
            "share of records whose original value lies in their box", computed_by="boxes_section"),
    Measure("boxes", NEITHER, "boxes", COLUMN, BOXES, "number of boxes of a box rule", computed_by="boxes_section"),
    Measure("records_per_box", HIGHER, "records", COLUMN, BOXES, "mean number of records in a box",
            computed_by="boxes_section"),
    # the k-anonymity section (release.report.k_anonymity_section); the policy's min_k, max_unique_share
    Measure("k_anonymity", HIGHER, "records", BOTH, K_ANONYMITY,
            "smallest number of released records sharing their quasi-identifier values", "Samarati & Sweeney 1998",
            computed_by="k_anonymity_section", engines=_BOTH_ENGINES),
    Measure("classes", NEITHER, "classes", BOTH, K_ANONYMITY, "number of distinct quasi-identifier combinations",
            computed_by="k_anonymity_section", engines=_BOTH_ENGINES),
    Measure("unique_share", LOWER, "share of records", BOTH, K_ANONYMITY,
            "share of records alone in their quasi-identifier combination", computed_by="k_anonymity_section",
            engines=_BOTH_ENGINES),
    # the sensitive cells section (release.report.sensitivity_section); the policy's max_sensitive_share
    Measure("cells", NEITHER, "cells", BOTH, SENSITIVE, "number of released cells", computed_by="sensitivity_section"),
    Measure("dominance_cells", LOWER, "cells", BOTH, SENSITIVE, "cells sensitive under the (n, k) dominance rule",
            "Hundepool et al., Statistical Disclosure Control", computed_by="sensitivity_section"),
    Measure("dominance_share", LOWER, "share of cells", BOTH, SENSITIVE, "share of cells the dominance rule flags",
            "Hundepool et al., Statistical Disclosure Control", computed_by="sensitivity_section"),
    Measure("p_percent_cells", LOWER, "cells", BOTH, SENSITIVE, "cells sensitive under the p% rule",
            "Hundepool et al., Statistical Disclosure Control", computed_by="sensitivity_section"),
    Measure("p_percent_share", LOWER, "share of cells", BOTH, SENSITIVE, "share of cells the p% rule flags",
            "Hundepool et al., Statistical Disclosure Control", computed_by="sensitivity_section"),
    Measure("sensitive_share", LOWER, "share of cells", OVERALL, SENSITIVE,
            "the larger of the dominance and the p% shares over every masked attribute",
            computed_by="sensitivity_section", engines=_BOTH_ENGINES),
    Measure("suppressed_records", LOWER, "records", COLUMN, SENSITIVE,
            "records whose value the rule's cell suppression removed", computed_by="sensitivity_section"),
    # the ML utility section (release.report_ml.ml_section), with [evaluation] ml_utility
    Measure("ml_utility.original", NEITHER, "R^2 (the baseline)", COLUMN, ML_UTILITY,
            "cross-validated R^2 of a model trained and tested on the original records", computed_by="ml_section"),
    Measure("ml_utility.masked_to_original", HIGHER, "R^2", COLUMN, ML_UTILITY,
            "R^2 on the original records of a model trained on the released ones", computed_by="ml_section"),
    Measure("ml_utility.original_to_masked", HIGHER, "R^2", COLUMN, ML_UTILITY,
            "R^2 on the released records of a model trained on the original ones", computed_by="ml_section"),
    Measure("ml_utility.difference", LOWER, "R^2 lost", COLUMN, ML_UTILITY,
            "original R^2 minus the masked-to-original R^2", computed_by="ml_section"),
    # the weighted measures (release.report_weights.weights_section), with [source] weight
    Measure("weighted_mae", LOWER, "units of the column", COLUMN, LOSS, "mean absolute error with sampling weights",
            computed_by="weights_section"),
    Measure("weighted_mse", LOWER, "squared units", COLUMN, LOSS, "mean squared error with sampling weights",
            computed_by="weights_section"),
    Measure("weighted_il1s", LOWER, "sd units / sqrt(2)", COLUMN, LOSS, "IL1s with sampling weights",
            "Yancey, Winkler & Creecy 2002", computed_by="weights_section"),
    Measure("expected_reidentifications", LOWER, "records", OVERALL, RISK,
            "sum over the records of 1 / F_k, F_k the estimated population frequency of their combination",
            "sdcMicro (Templ)", computed_by="weights_section"),
    Measure("expected_reidentification_share", LOWER, "share of records", OVERALL, RISK,
            "expected re-identifications over the number of records", "sdcMicro (Templ)",
            computed_by="weights_section"),
    # the verdict row that ends every section (release.report.verdict_rows)
    Measure("verdict", NEITHER, "1 pass, 0 fail", OVERALL, EVERY_SECTION,
            "whether the section's measures meet the policy (NULL: not judged)", computed_by="verdict_rows",
            engines=_BOTH_ENGINES),
)

CATALOG: dict[str, Measure] = {}


def register(measure: Measure, *, origin: str = "duckdb_sdc") -> Measure:
    """Adds `measure` to CATALOG (after the ones already there: the order of evaluate's rows).
    Refuses anything but a Measure and a name already declared; `origin` names who registers it in
    the message."""
    if not isinstance(measure, Measure):
        raise MeasureError(f"register: measure must be a duckdb_sdc.measures.catalog.Measure "
                           f"(from {origin}), got {type(measure).__name__} {measure!r}")
    if measure.name in CATALOG:
        raise MeasureError(f"register: measure {measure.name!r} (from {origin}) is already declared; "
                           "choose another name")
    CATALOG[measure.name] = measure
    return measure


def load_plugins() -> list[Measure]:
    """Registers the measures of every installed entry point of the group GROUP (a Measure or a
    tuple of them), in the order of their names, and returns them. A plug-in that fails to load, or
    gives anything but new measures, raises MeasureError naming it."""
    added = []
    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        dist = getattr(getattr(ep, "dist", None), "name", None) or "an unknown distribution"
        origin = f"the plug-in {ep.name!r} = {ep.value!r} of {dist} (entry point group {GROUP!r})"
        try:
            declared = ep.load()
        except Exception as e:  # whatever the plug-in raises: say which one it is
            raise MeasureError(f"duckdb_sdc.measures: {origin} failed to load: {type(e).__name__}: {e}") from e
        for measure in declared if isinstance(declared, (tuple, list)) else (declared,):
            added.append(register(measure, origin=origin))
    return added


def measure(name: str) -> Measure:
    """The declaration of `name`; a clear error for an undeclared name."""
    try:
        return CATALOG[name]
    except KeyError:
        raise MeasureError(f"measure: {name!r} is not a declared measure; known: {', '.join(CATALOG)}") from None


def evaluated() -> tuple[Measure, ...]:
    """The measures `evaluate` computes, in catalog order."""
    return tuple(m for m in CATALOG.values() if m.computed_by == EVALUATE)


def per_column() -> tuple[str, ...]:
    """The names of evaluate's measures on each column alone, in the order of its rows."""
    return tuple(m.name for m in evaluated() if m.per_column)


def overall() -> tuple[str, ...]:
    """The names of evaluate's measures on all columns together, in the order of its rows."""
    return tuple(m.name for m in evaluated() if m.overall)


def reported() -> tuple[str, ...]:
    """The names of evaluate's measures that the release report's measures section shows."""
    return tuple(m.name for m in evaluated() if m.report)


def direction(name: str) -> tuple[str, str]:
    """(direction, unit) of a row of the report: the declared measure's, or (NEITHER, "") for a row
    that only carries a note."""
    m = CATALOG.get(name)
    return (m.direction, m.unit) if m is not None else (NEITHER, "")


def section_of(name: str) -> str:
    """The report section of a declared measure."""
    return measure(name).section


def engine(name: str) -> tuple[Measure, ...]:
    """The declared measures that the engine `name` computes (DUCKDB or SPARK), in catalog order."""
    if name not in ENGINES:
        raise MeasureError(f"engine: name must be one of {', '.join(map(repr, ENGINES))}, got {name!r}")
    return tuple(m for m in CATALOG.values() if name in m.engines)


for _m in BUILTIN:
    register(_m)
load_plugins()

__all__ = ["BOTH", "BUILTIN", "CATALOG", "COLUMN", "DUCKDB", "EVALUATE", "GROUP", "HIGHER", "LOWER", "Measure",
           "MeasureError", "NEITHER", "OVERALL", "SPARK", "direction", "engine", "evaluated", "load_plugins",
           "measure", "overall", "per_column", "register", "reported", "section_of"]
