"""The release policy: limits a release must meet, measured on the would-be release before anything
is written (`duckdb-sdc release`: a breach writes nothing, prints each failed limit with its measured
value and exits 3) and on an existing release (`duckdb-sdc evaluate --check`, exit 3 on a breach).

    [policy]
    min_k = 5                     # k-anonymity over the quasi-identifiers, all together
    max_unique_share = 0.0        # share of records alone in their quasi-identifier class
    max_record_linkage = 0.2      # distance-based record linkage over the numeric quasi-identifiers
    max_interval_disclosure = 0.5 # interval disclosure of the same columns
    max_sensitive_share = 0.1     # share of cells sensitive under the dominance or the p% rule

Each limit is optional; a spec without [policy] gates nothing, and the report judges its sections
against `DEFAULTS` (documented in docs/releases/policy.md) instead. What is measured, exactly:

* The quasi-identifiers Q are the released columns an intruder is assumed to know: every column of
  the release table, of any type (numbers, text, dates, categories, strata), but those the spec marks
  `identifying = false`, or exactly the columns [policy] quasi_identifiers lists (`Spec.
  quasi_identifiers`). A boxed column counts as its two bounds; a date or timestamp as its epoch
  seconds. [evaluation] quasi_identifiers is a report scenario and never changes Q.
* k_anonymity: the smallest number of released records sharing one combination of Q's released
  values; NULL counts as a value (a record whose NULL is rare is as identifiable as one with a rare
  value). unique_share: the share of records alone in their combination.
* record_linkage: `duckdb_sdc.measures.record_linkage` (rank 1) between the original and the released
  values of the numeric columns of Q released as values, with every masked column released as values,
  over the records complete in all of them; interval_disclosure: `measures.interval_disclosure`
  (k = 0.05) on the same columns and records. A kept numeric column takes part exactly as it is
  released: a kept column with unique values makes linkage easy, and the measure shows it.
* sensitive_share: over every masked attribute, the share of cells (records of a stratum sharing the
  released values of the attribute's rule, or a box) that the report's dominance rule or p% rule
  ([evaluation] dominance_n, dominance_r, p_percent; absolute contributions) flags: the larger of
  the two shares.

A measure that cannot be computed (no quasi-identifier, no numeric one released as values, no
record) cannot meet a limit: the limit fails with the reason, never passes ("when a rule cannot
decide, it refuses").

The measures come from SQL that sqlglot builds (standard GROUP BY and window functions, so another
engine can run it: `classes_query`) and from the numpy measures on collected columns
(`linkage_measures`, `sensitive_counts`), so the Spark engine can reuse this module with its own
collection of the same columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np
from sqlglot import exp

from ..measures.catalog import K_ANONYMITY, RISK, SENSITIVE  # the report's section names

LOWER, HIGHER = "lower is better", "higher is better"


@dataclass(frozen=True)
class Limit:
    key: str  # the [policy] key
    measure: str  # the report's measure (overall row of `section`)
    section: str  # the report's section
    at_least: bool  # True: measured >= limit; False: measured <= limit
    what: str  # for messages and docs

    def holds(self, measured: float, limit: float) -> bool:
        return measured >= limit if self.at_least else measured <= limit

    @property
    def sign(self) -> str:
        return ">=" if self.at_least else "<="



LIMITS = (
    Limit("min_k", "k_anonymity", K_ANONYMITY, True, "k-anonymity over the quasi-identifiers, all together"),
    Limit("max_unique_share", "unique_share", K_ANONYMITY, False,
          "share of records alone in their quasi-identifier combination"),
    Limit("max_record_linkage", "record_linkage", RISK, False,
          "distance-based record linkage over the numeric quasi-identifiers and masked columns"),
    Limit("max_interval_disclosure", "interval_disclosure", RISK, False,
          "interval disclosure (k = 0.05) over the same columns"),
    Limit("max_sensitive_share", "sensitive_share", SENSITIVE, False,
          "share of cells sensitive under the dominance or the p% rule"),
)
LIMIT = {limit.key: limit for limit in LIMITS}
EPSILON_BUDGET = "epsilon_budget"  # not a limit of one release: the ledger's (release/ledger.py)


@dataclass(frozen=True)
class Policy:
    min_k: int | None = None
    max_unique_share: float | None = None
    max_record_linkage: float | None = None
    max_interval_disclosure: float | None = None
    max_sensitive_share: float | None = None
    quasi_identifiers: tuple[str, ...] | None = None  # [policy] quasi_identifiers: the gate's narrower set
    epsilon_budget: float | None = None  # epsilon of every release of the source together (release/ledger.py)
    origin: str = field(default="[policy]", compare=False)  # where the limits come from, for messages

    def limits(self) -> list[tuple[Limit, float]]:
        """The limits set, in LIMITS order, with their values."""
        return [(limit, getattr(self, limit.key)) for limit in LIMITS if getattr(self, limit.key) is not None]

    def as_dict(self) -> dict:
        return {f.name: (list(v) if isinstance(v, tuple) else v) for f in fields(self)
                if f.name != "origin" and (v := getattr(self, f.name)) is not None}


# What the report judges against when a spec has no [policy] (never a gate: a release without a
# policy is written whatever it measures). Documented in docs/releases/policy.md.
DEFAULTS = Policy(min_k=3, max_unique_share=0.0, max_record_linkage=0.25, max_interval_disclosure=0.5,
                  origin="the documented defaults (no [policy] in the spec)")


def parse(table: dict, error) -> Policy | None:
    """The [policy] table of a spec (None when absent). `error(where, message)` makes the exception."""
    if not table:
        return None
    unknown = [k for k in table if k not in LIMIT and k != EPSILON_BUDGET]
    if unknown:
        raise error("policy", f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                              f"allowed: {', '.join((*LIMIT, 'quasi_identifiers', EPSILON_BUDGET))}")
    values = {}
    for key, value in table.items():
        where = f"policy.{key}"
        if key == EPSILON_BUDGET:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value <= 0:
                raise error(where, f"must be a finite number > 0 (the epsilon every release of the source may "
                                   f"spend together), got {value!r}")
            values[key] = float(value)
        elif key == "min_k":
            if isinstance(value, bool) or not isinstance(value, int) or value < 2:
                raise error(where, f"must be an integer >= 2 (a class of one record is unique), got {value!r}")
            values[key] = value
        else:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1 \
                    or not math.isfinite(value):
                raise error(where, f"must be a share in [0, 1], got {value!r}")
            values[key] = float(value)
    return Policy(**values)


# ---------------------------------------------------------------------------------------------
# measuring


def _identifier(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def classes_query(relation: exp.Expression, columns: list[str]) -> exp.Select:
    """(smallest class, classes, records alone, records) of `relation` grouped by `columns`, NULL
    counting as a value (GROUP BY puts NULLs together). Standard SQL: sqlglot transpiles it."""
    size = _identifier("__sdc_n")
    inner = exp.select(exp.Count(this=exp.Star()).as_(size)).from_(relation)
    inner = inner.group_by(*(exp.Column(this=_identifier(c)) for c in columns))
    n = exp.Column(this=size.copy())
    return exp.select(
        exp.Min(this=n.copy()), exp.Count(this=exp.Star()),
        exp.Sum(this=exp.If(this=exp.EQ(this=n.copy(), expression=exp.Literal.number(1)),
                            true=exp.Literal.number(1), false=exp.Literal.number(0))),
        exp.Sum(this=n.copy()),
    ).from_(inner.subquery(_identifier("__sdc_classes")))


def classes(rows: tuple) -> dict[str, float | None]:
    """k_anonymity and unique_share from a row of `classes_query`."""
    smallest, count, alone, records = rows
    if not records:
        return {"k_anonymity": None, "unique_share": None}
    return {"k_anonymity": float(smallest), "unique_share": float(alone or 0) / float(records)}


def linkage_measures(x: np.ndarray, xm: np.ndarray) -> dict[str, float | None]:
    """record_linkage and interval_disclosure of original x and released xm (n x p, NaN for NULL),
    over the records complete on both sides (listwise, as evaluate_masking's overall rows)."""
    from ..measures import interval_disclosure, record_linkage

    complete = ~(np.isnan(x).any(axis=1) | np.isnan(xm).any(axis=1))
    if x.shape[1] == 0 or complete.sum() < 2:
        return {"record_linkage": None, "interval_disclosure": None}
    return {"record_linkage": record_linkage(x[complete], xm[complete]),
            "interval_disclosure": interval_disclosure(x[complete], xm[complete], 0.05)}


def sensitive_counts(values: np.ndarray, labels: np.ndarray, dominance_n: int, dominance_r: float,
                     p: float) -> tuple[int, int, int]:
    """(cells, dominance-sensitive cells, p%-sensitive cells) of one attribute: `values` the original
    contributions of the records in a cell, `labels` their cell ids (any integers); absolute values,
    as the report applies the rules."""
    from .._validate import reporting
    from ..methods import sensitivity as sv

    if values.shape[0] == 0:
        return 0, 0, 0
    X = values.reshape(-1, 1)
    with reporting("policy"):
        dominance = sv.sensitive_cells(X, labels, sv.dominance_rule(dominance_n, dominance_r, absolute=True))
        p_cells = sv.sensitive_cells(X, labels, sv.p_percent_rule(p, absolute=True))
    return int(dominance.shape[0]), int(dominance.sum()), int(p_cells.sum())


# ---------------------------------------------------------------------------------------------
# judging


@dataclass(frozen=True)
class Outcome:
    limit: Limit
    bound: float
    value: float | None  # None: could not be measured
    reason: str | None = None  # why it could not be measured

    @property
    def passed(self) -> bool:
        return self.value is not None and self.limit.holds(self.value, self.bound)

    def text(self) -> str:
        bound = f"{self.limit.key} = {_show(self.bound)}"
        if self.value is None:
            return f"{self.limit.measure} could not be measured ({self.reason}); {bound} is not met"
        verdict = "meets" if self.passed else "breaches"
        return f"{self.limit.measure} = {_show(self.value)} {verdict} {bound} ({self.limit.sign})"


def _show(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.4g}"


def judge(policy: Policy, measured: dict[str, tuple[float | None, str | None]]) -> list[Outcome]:
    """Every limit of the policy against the measured values ({measure: (value, reason)})."""
    out = []
    for limit, bound in policy.limits():
        value, reason = measured.get(limit.measure, (None, "not measured"))
        out.append(Outcome(limit, bound, value, reason))
    return out


class PolicyBreach(Exception):
    """The would-be release breaches its policy: nothing was written (the command exits with 3)."""

    def __init__(self, name: str, outcomes: list[Outcome]):
        self.outcomes = [o for o in outcomes if not o.passed]
        lines = [f"{name}: the release breaches its policy; nothing was written"]
        lines += [f"  {o.text()}" for o in self.outcomes]
        super().__init__("\n".join(lines))


__all__ = ["DEFAULTS", "LIMITS", "Limit", "Outcome", "Policy", "PolicyBreach", "classes", "classes_query", "judge",
           "linkage_measures", "parse", "sensitive_counts"]
