"""The table of masking methods a release spec can name, derived from the method records and the SQL
registry.

A spec names a method by its SQL function (`method = "mdav_round"`). A registry row is a release
method when it is a registered masking method (`duckdb_sdc.masking.register`: a record that states
its guarantee) whose list function is of one column (first parameter `xs DOUBLE[]`, returns
`DOUBLE[]`), of a group of columns (first parameter `rows DOUBLE[][]`, one vector per record, returns
`DOUBLE[][]` aligned with it), or a box method (`rows DOUBLE[][]` in, one box per record out as
`BOX_TYPE[]`: a box id and a lower and an upper bound per attribute), AND the registry also has its
table form `<name>_table`: that pair is what every masking family provides, and it keeps helpers
that merely return a list (labels, sensitivities) out of the spec's vocabulary. The kind is read off
the row's types, never its name, so adding a masking family (its records and its registry rows)
adds its methods to releases with no change here; a registry row without a record is not a
release method, since nothing would state what it guarantees.

A method's parameters are the list function's parameters after `xs`. The spec's values are checked
against each parameter's kind (`duckdb_sdc.params`: its `accepts` says which TOML values have the
right type) before any SQL is built (see `check_value`); the range checks (k <= number of values,
epsilon > 0, ...) stay where they are implemented once, in the kind's check, which the function runs
when the release is materialised.

Three parameter names carry meaning for releases:
* `epsilon`: the method is differentially private; the release splits a total budget over such
  columns and records what each spent (see `spec.split_epsilon`).
* `seed`: passed to the function but never written into the release (manifest included).
* `names`: the release passes the names of the rule's columns (in the rule's order), so that other
  parameters can name them (`characteristic = "corr(income, expenses)"`); a spec cannot set it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import masking
from ..guarantees import Guarantee
from ..params import RECORDS, VALUES, Data, Param
from ..sql.registry import REGISTRY, SqlFunction

SECRET_PARAMS = frozenset({"seed"})
EPSILON = "epsilon"
NAMES = "names"  # filled by the release with the rule's column names

COLUMN, ROWS, BOXES = "column", "rows", "boxes"
# what a box method returns per record: its box's id (numbered within the list) and bounds
BOX_TYPE = "STRUCT(box BIGINT, lower DOUBLE[], upper DOUBLE[])"


@dataclass(frozen=True)
class ReleaseMethod:
    name: str  # the spec's name, which is the SQL list function's name
    params: tuple[Param, ...]  # parameters after the list
    doc: str = ""
    kind: str = COLUMN  # COLUMN: xs DOUBLE[] (one column); ROWS: rows DOUBLE[][] (a group of
    # columns); BOXES: rows DOUBLE[][] in, a box per record out (each column released as two bounds)
    guarantee: Guarantee | None = None  # the method record's (duckdb_sdc.masking.MaskingMethod.guarantee)

    @property
    def is_dp(self) -> bool:
        return any(p.name == EPSILON for p in self.params)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.default is None)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def settable(self) -> tuple[Param, ...]:
        """The parameters a spec may set (not the ones the release fills in)."""
        return tuple(p for p in self.params if p.name != NAMES)


def _type(text: str) -> str:
    """A type name normalised for comparison (case and blanks)."""
    return " ".join(text.upper().split()).replace("( ", "(").replace(" )", ")")


# (the kind of the data a method takes, the type it returns) -> how a release calls it
_SHAPES = {(VALUES, "DOUBLE[]"): COLUMN, (RECORDS, "DOUBLE[][]"): ROWS, (RECORDS, _type(BOX_TYPE) + "[]"): BOXES}


def _kind(row: SqlFunction, names: set[str]) -> str | None:
    if row.kind != "scalar" or not row.params or f"{row.name}_table" not in names:
        return None
    if any(isinstance(p.kind, Data) for p in row.params[1:]):
        return None  # a second data argument (the weights of `<method>_weighted`): a spec sets no data
    return next((shape for (data, returns), shape in _SHAPES.items()
                 if row.params[0].kind is data and _type(row.returns) == returns), None)


def derive(registry: tuple[SqlFunction, ...] = REGISTRY, records=None) -> dict[str, ReleaseMethod]:
    """Every masking list function of the registry that has a registered record (`records`: by
    default `masking.METHODS`): `f(xs DOUBLE[], ...) -> DOUBLE[]` masks one column;
    `f(rows DOUBLE[][], ...) -> DOUBLE[][]` (one vector per record) masks a group of columns together;
    `f(rows DOUBLE[][], ...) -> BOX_TYPE[]` releases every record of a group (or of one column) as a
    box; each needs its table form `f_table` in the registry too."""
    records = masking.METHODS if records is None else records
    names = {row.name for row in registry}
    out = {}
    for row in registry:
        kind = _kind(row, names)
        if kind is not None and row.name in records:
            out[row.name] = ReleaseMethod(row.name, row.params[1:], row.doc, kind, records[row.name].guarantee)
    return out


METHODS: dict[str, ReleaseMethod] = derive()


def check_value(param: Param, value) -> str | None:
    """None when a spec's (TOML) `value` has the type of the parameter's kind, else what was expected
    (the kind's SQL type, e.g. "INTEGER or 'auto'"). A list type (`DOUBLE[]`, e.g. one eps per
    attribute) takes a TOML array of such values."""
    return None if param.kind.accepts(value) else param.type
