"""The global recodings a release spec can name, declared once: one `Recoding` record per SQL function of
sql/70_recoding.sql that recodes a column value by value (docs/methods/recoding.md). From the records come
the release rule (`age = { method = "truncate_date", unit = "year" }`, duckdb_sdc.release.spec), the
released column's type and its SQL (the function called on the source column with every parameter a
literal, duckdb_sdc.release.plan), the manifest's words (duckdb_sdc.release.manifest) and the docs' table of
recodings (`markdown()` on docs/methods/index.md).

A recoding's guarantee is required: the statements are duckdb_sdc.guarantees' (`RECODING`, `CODING`), the
ones its SQL functions state (`guarantees.FUNCTIONS`), never other words. None of them is a privacy model:
how many records share a released combination is measured by the release's gate (k-anonymity over every
released column), where a recoded column takes part with its released values.

No DuckDB here.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass

from . import guarantees as g
from ._validate import fail, show
from .guarantees import Guarantee
from .methods.recoding import BREAKS, CLOSED, LABELS, MAPPING, UNITS
from .params import Kind, Number, Param

# the source types a recoding accepts (duckdb_sdc.release.spec.type_class reads a column's type so)
NUMBERS, TEXT, DATES = "numbers", "text", "dates"
TYPE_CLASSES = (NUMBERS, TEXT, DATES)

_INTEGER_RANGES = {t: (-(2 ** (b - 1)), 2 ** (b - 1) - 1) for t, b in
                   (("TINYINT", 8), ("SMALLINT", 16), ("INTEGER", 32), ("BIGINT", 64), ("HUGEINT", 128))}
_INTEGER_RANGES.update({t: (0, 2 ** b - 1) for t, b in
                        (("UTINYINT", 8), ("USMALLINT", 16), ("UINTEGER", 32), ("UBIGINT", 64), ("UHUGEINT", 128))})


@dataclass(frozen=True, eq=False)
class ReferenceDate(Kind):
    """A calendar date given in the spec (a TOML date, 2024-06-30)."""

    doc: str = "a date, written in the spec as a TOML date (reference = 2024-06-30)"
    sql_type: str = "DATE"
    valid: str = "DATE '2024-06-30'"

    def check(self, value, func, param, **context):
        if not self.accepts(value):
            raise fail(func, f"{param} must be a date (a TOML date such as 2024-06-30), got {show(value)}", param)
        return value

    def accepts(self, value) -> bool:
        return isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)


THRESHOLD = Number(doc="the threshold, a finite number")
REPLACEMENT = Number(nullable=True, doc="the value given to the values beyond the threshold (default: the threshold)")
REFERENCE = ReferenceDate()


@dataclass(frozen=True)
class Recoding:
    """A global recoding, declared once.

    * `name`: its SQL function (sql/70_recoding.sql), which a release spec names as its method;
    * `accepts`: the source types it recodes (NUMBERS, TEXT, DATES);
    * `params`: its parameters after the column, as kinds, in the order of the SQL function (a required
      one is passed by position, an optional one by name, each as a literal);
    * `released_type(source_type, params)`: the released column's type (the SQL call is cast to it);
    * `guarantee`: what it guarantees (required: a recoding without one cannot be declared);
    * `check(params, func)`: what the kinds cannot check alone (labels against breaks), raising an SdcError;
    * `paper`, `doc`: where it is defined, and the docs' words."""

    name: str
    accepts: frozenset[str]
    params: tuple[Param, ...]
    released_type: Callable[[str, dict], str]
    guarantee: Guarantee | None = None
    check: Callable[[dict, str], None] | None = None
    paper: str = ""
    doc: str = ""

    def __post_init__(self):
        if not isinstance(self.guarantee, Guarantee):
            raise fail("recodings.register", f"recoding {self.name!r} states no guarantee (guarantee = "
                                             f"{self.guarantee!r}): declare the duckdb_sdc.guarantees.Guarantee it meets")
        unknown = sorted(set(self.accepts) - set(TYPE_CLASSES))
        if not self.accepts or unknown:
            raise fail("recodings.register", f"recoding {self.name!r}: accepts must name some of "
                                             f"{', '.join(TYPE_CLASSES)}, got {sorted(self.accepts)}")

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.default is None)

    def effective_params(self, given: dict) -> dict:
        """Every parameter with the value used (the defaults read from their SQL literals)."""
        return {p.name: given[p.name] if p.name in given else p.default_value for p in self.params}


def _same_number_type(source_type: str, params: dict) -> str:
    """Top and bottom coding release the source's integer type when every threshold and replacement is an
    integer within its range, else DOUBLE (a fractional threshold, a DECIMAL or FLOAT column)."""
    low_high = _INTEGER_RANGES.get(source_type)
    values = [v for v in params.values() if v is not None]
    if low_high is not None and all(isinstance(v, int) and low_high[0] <= v <= low_high[1] for v in values):
        return source_type
    return "DOUBLE"


def _labels_per_band(params: dict, func: str) -> None:
    breaks = BREAKS.check(params["breaks"], func, "breaks")
    labels = LABELS.check(params.get("labels"), func, "labels")
    if labels is not None and len(labels) != len(breaks) - 1:
        raise fail(func, f"labels must give one label per band ({len(breaks) - 1}), got {len(labels)}", "labels")


def _some_categories(params: dict, func: str) -> None:
    if not params["mapping"]:
        raise fail(func, "mapping must name at least one category", "mapping")


DECLARED: tuple[Recoding, ...] = (
    Recoding("recode_bands", frozenset({NUMBERS}),
             (Param("breaks", BREAKS), Param("labels", LABELS, "NULL"), Param("closed", CLOSED, "'right'")),
             lambda t, p: "VARCHAR", g.RECODING, check=_labels_per_band, paper="sdcMicro's globalRecode",
             doc="numbers to the label of their band; breaks must cover every value (else the release fails, "
                 "naming one)"),
    Recoding("top_code", frozenset({NUMBERS}), (Param("top", THRESHOLD), Param("replacement", REPLACEMENT, "NULL")),
             _same_number_type, g.CODING, paper="sdcMicro's topBotCoding (kind 'top')",
             doc="values above top become replacement (default top)"),
    Recoding("bottom_code", frozenset({NUMBERS}),
             (Param("bottom", THRESHOLD), Param("replacement", REPLACEMENT, "NULL")),
             _same_number_type, g.CODING, paper="sdcMicro's topBotCoding (kind 'bottom')",
             doc="values below bottom become replacement (default bottom)"),
    Recoding("merge_categories", frozenset({TEXT, NUMBERS}), (Param("mapping", MAPPING),),
             lambda t, p: "VARCHAR", g.CODING, check=_some_categories, paper="sdcMicro's groupAndRename",
             doc="the categories the mapping names become their new names; the others are released as text"),
    Recoding("truncate_date", frozenset({DATES}), (Param("unit", UNITS),), lambda t, p: "DATE", g.RECODING,
             paper="ARX's date hierarchies", doc="a date or timestamp to the first day of its month, quarter or year"),
    Recoding("age_in_years", frozenset({DATES}), (Param("reference", REFERENCE),), lambda t, p: "INTEGER",
             g.RECODING,
             doc="a birth date to the completed years at the reference date"),
)

RECODINGS: dict[str, Recoding] = {}


def register(recoding: Recoding) -> None:
    """Add a recoding to the release vocabulary (its SQL function must exist in sql/70_recoding.sql)."""
    if not isinstance(recoding, Recoding):
        raise TypeError(f"duckdb_sdc.recodings.register: expected a Recoding, got {recoding!r}")
    if recoding.name in RECODINGS:
        raise fail("recodings.register", f"recoding {recoding.name!r} is declared twice")
    RECODINGS[recoding.name] = recoding


for _r in DECLARED:
    register(_r)


def markdown() -> str:
    """The table of docs/methods/index.md: one row per recoding a release rule can name."""
    lines = ["| recoding | recodes | parameters | released as | privacy model | after |", "|---|---|---|---|---|---|"]
    for r in RECODINGS.values():
        params = ", ".join(f"`{p.name}`" + ("" if p.default is None else f" (default {p.default})") for p in r.params)
        released = {"VARCHAR": "text", "DATE": "DATE", "INTEGER": "INTEGER"}.get(r.released_type("DOUBLE", {}))
        if r.released_type("INTEGER", {}) != r.released_type("DOUBLE", {}):  # top and bottom coding
            released = "the column's integer type when every value given is an integer in its range, else DOUBLE"
        lines.append(f"| `{r.name}` | {', '.join(t for t in TYPE_CLASSES if t in r.accepts)} | {params} | {released} "
                     f"| {r.guarantee.model} | {r.paper} |")
    return "\n".join(lines) + "\n"


__all__ = ["DATES", "DECLARED", "NUMBERS", "RECODINGS", "REFERENCE", "TEXT", "TYPE_CLASSES", "Recoding",
           "ReferenceDate", "markdown", "register"]
