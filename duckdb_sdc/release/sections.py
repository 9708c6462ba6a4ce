"""What a section of the release report sees and gives: an `Evaluation` (a connection holding the
relations ORIGINAL, the source's records, and MASKED, the released ones, both keyed by KEY) and the
`Row`s it returns, with the sections' names. The report (report.py) and its optional sections
(report_ml.py, report_weights.py) share them; failures.py and html.py read them."""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
from sqlglot import exp

from ..measures.catalog import BOXES, LOSS, SCORE  # the sections' names are the measure catalog's
from . import policy as pol
from .plan import DIALECT
from .spec import Rule, Spec, bound_columns

ORIGINAL, MASKED, KEY = "__sdc_eval_original", "__sdc_eval_masked", "__sdc_eval_key"


@dataclass(frozen=True)
class Row:
    section: str
    measure: str
    column: str | None  # None: all columns together
    value: float | None  # None: undefined for these data (note says why)
    note: str | None = None


@dataclass(frozen=True)
class Evaluation:
    """What a section sees: `con` holds the relations ORIGINAL (the source's records) and MASKED
    (the released records), both with the key column KEY and the columns under their own names."""
    con: duckdb.DuckDBPyConnection
    spec: Spec
    masked: tuple[str, ...]  # the masked columns released as values, in the order of the spec's rules
    quasi_identifiers: tuple[str, ...]
    boxes: tuple[Rule, ...] = ()  # the box rules (their columns are released as bounds and a box id)
    risk_columns: tuple[str, ...] = ()  # Spec.risk_columns: what distance-based risk is measured on
    policy: pol.Policy = field(default=pol.DEFAULTS)  # what the verdicts judge against
    scenario: tuple[str, ...] = ()  # [evaluation] quasi_identifiers: an intruder scenario shown beside the gate's

    def fetch(self, query: exp.Expression) -> list[tuple]:
        return self.con.execute(query.sql(dialect=DIALECT)).fetchall()

    def released(self, name: str) -> tuple[str, ...]:
        """The released columns (in MASKED) of a released source column: its bounds if boxed."""
        return bound_columns(name) if self.spec.rules[name].boxed else (name,)


__all__ = ["BOXES", "KEY", "LOSS", "MASKED", "ORIGINAL", "SCORE", "Evaluation", "Row"]
