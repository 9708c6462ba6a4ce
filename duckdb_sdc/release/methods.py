"""The table of masking methods a release spec can name, derived from the SQL registry.

A spec names a method by its SQL function (`method = "mdav_round"`). A registry row is a release
method when it is a list function of one column (first parameter `xs DOUBLE[]`, returns `DOUBLE[]`)
or of a group of columns (first parameter `rows DOUBLE[][]`, one vector per record, returns
`DOUBLE[][]` aligned with it), AND the registry also has its table form `<name>_table`: that pair is
what every masking family provides, and it keeps helpers that merely return a list (labels,
sensitivities) out of the spec's vocabulary. Adding a masking family to the registry therefore adds its methods to
releases with no change here.

A method's parameters are the list function's parameters after `xs`. The spec's values are checked
against each parameter's declared type before any SQL is built (see `check_value`); the range checks
(k <= number of values, epsilon > 0, ...) stay where they are implemented once, in the function, and
run when the release is materialised.

Two parameter names carry meaning for releases:
* `epsilon`: the method is differentially private; the release splits a total budget over such
  columns and records what each spent (see `spec.split_epsilon`).
* `seed`: passed to the function but never written into the release (manifest included).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..sql.registry import REGISTRY, Param, SqlFunction

SECRET_PARAMS = frozenset({"seed"})
EPSILON = "epsilon"


COLUMN, ROWS = "column", "rows"


@dataclass(frozen=True)
class ReleaseMethod:
    name: str  # the spec's name, which is the SQL list function's name
    params: tuple[Param, ...]  # parameters after the list
    doc: str = ""
    kind: str = COLUMN  # COLUMN: xs DOUBLE[] (one column); ROWS: rows DOUBLE[][] (a group of columns)

    @property
    def is_dp(self) -> bool:
        return any(p.name == EPSILON for p in self.params)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.default is None)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


# the list type a method takes and returns -> how a release calls it
_KINDS = {"DOUBLE[]": COLUMN, "DOUBLE[][]": ROWS}


def _kind(row: SqlFunction, names: set[str]) -> str | None:
    if row.kind != "scalar" or not row.params or f"{row.name}_table" not in names:
        return None
    kind = _KINDS.get(row.params[0].type)
    return kind if kind is not None and row.returns == row.params[0].type else None


def derive(registry: tuple[SqlFunction, ...] = REGISTRY) -> dict[str, ReleaseMethod]:
    """Every masking list function of the registry: `f(xs DOUBLE[], ...) -> DOUBLE[]` masks one
    column; `f(rows DOUBLE[][], ...) -> DOUBLE[][]` (one vector per record) masks a group of columns
    together; either needs its table form `f_table` in the registry too."""
    names = {row.name for row in registry}
    out = {}
    for row in registry:
        kind = _kind(row, names)
        if kind is not None:
            out[row.name] = ReleaseMethod(row.name, row.params[1:], row.doc, kind)
    return out


METHODS: dict[str, ReleaseMethod] = derive()

_INTEGER = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UBIGINT", "UINTEGER"}
_NUMBER = {"DOUBLE", "FLOAT", "REAL"} | {"DECIMAL"}


def _alternatives(type_text: str) -> list[str]:
    return [t.strip() for t in re.split(r"\s+or\s+", type_text.strip()) if t.strip()]


def _matches(value, alternative: str) -> bool:
    upper = alternative.upper()
    if alternative.startswith("'") and alternative.endswith("'"):
        return isinstance(value, str) and value == alternative[1:-1]
    if upper in _INTEGER:
        return isinstance(value, int) and not isinstance(value, bool)
    if upper in _NUMBER or upper.startswith("DECIMAL"):
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(float(value)))
    if upper == "VARCHAR":
        return isinstance(value, str)
    if upper == "BOOLEAN":
        return isinstance(value, bool)
    # a type this table does not know: any plain scalar, the function validates it
    return isinstance(value, (str, int, float, bool))


def check_value(param: Param, value) -> str | None:
    """None when `value` fits the parameter's declared type, else what was expected."""
    alternatives = _alternatives(param.type)
    if any(_matches(value, alt) for alt in alternatives):
        return None
    return " or ".join(alternatives)
