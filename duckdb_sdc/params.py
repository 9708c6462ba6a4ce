"""Parameter kinds: the one vocabulary of duckdb_sdc's parameters, declared once as data.

A *kind* says everything about a sort of parameter (a group size, a number of intervals, an epsilon,
a seed, a column list, ...):

* `sql_type`: its type as the signatures and the function reference show it;
* `doc`: what it means, the default text of a parameter of this kind;
* `check(value, func, param, **context)`: validate and convert a value (from Python, or from SQL,
  which hands parameters over as text), raising `SdcError` that names the function, the parameter
  and the value; the numpy functions call it, so the check exists once;
* `accepts(value)`: whether a value from a release spec (TOML) has the right type (the range is
  checked by `check` when the release runs the function);
* `valid` and `invalid`: SQL literals the check accepts and refuses, which the registry-wide
  contract tests (tests/sql/test_contract.py) try on every parameter of the kind;
* `scales`: the value is in the data's unit (a domain bound, a distance): the contract suite's scale
  test multiplies it with the data.

A `Param` is a named parameter of a function: a name, a kind, a default (SQL literal) and, when it
says more than the kind, its own doc text. Parameters shared by many functions (the table, column,
strata and seed of the table forms, the list of values, ...) are declared once, at the end of this
module. docs/contributing-parameters.md explains how to declare a parameter, add a kind and add a
function.

Seeds have one kind everywhere (`SEED`): NULL for operating-system randomness, or an integer
0 <= seed < 2^63. A table form or a release masks each stratum with the seed `stratum_seed(seed,
column, stratum)` derived here (in Python, from SHA-256, so any engine can repeat it).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validate import as_integer, as_number, fail, finite_values, is_auto, show

AUTO = "auto"
SEED_BITS = 63
NAN = "'nan'::DOUBLE"  # the SQL literal of NaN, an invalid example of every numeric kind


def _num(v: float) -> str:
    """A bound as a message shows it: 0, 1, 0.5."""
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    return (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, (bool, np.bool_)) and math.isfinite(float(value)))


def _not_null(func: str, param: str, value) -> None:
    if value is None:
        raise fail(func, f"{param} must not be NULL", param)


class Kind:
    """A kind of parameter (see the module docstring). Subclasses are frozen dataclasses whose
    fields are the kind's settings (a minimum, the options of a choice, ...)."""

    sql_type: str = "ANY"
    valid: str = "NULL"
    invalid: tuple[str, ...] = ()
    scales: bool = False

    def check(self, value, func: str, param: str, **context) -> Any:
        """The value validated and converted, or an SdcError naming func, param and value."""
        return value

    def accepts(self, value) -> bool:
        """Whether a release spec's (TOML) value has this kind's type."""
        return isinstance(value, (str, int, float, bool))


# ---------------------------------------------------------------------------------------------
# counts and numbers


@dataclass(frozen=True, eq=False)
class GroupSize(Kind):
    """A minimum group (cluster, box) size k: an integer >= minimum and at most the number of values
    or records n (when the check is given n); with `auto`, also 'auto' (Freedman-Diaconis)."""

    minimum: int = 2
    auto: bool = False
    what: str = "non-NULL values"  # what n counts, for the message
    why: str = ""  # why the minimum, for the message
    doc: str = ""

    @property
    def sql_type(self) -> str:
        return "INTEGER or 'auto'" if self.auto else "INTEGER"

    @property
    def valid(self) -> str:
        return str(max(self.minimum, 3))

    @property
    def invalid(self) -> tuple[str, ...]:
        bad = ("NULL", str(self.minimum - 1), "-1", "2.5", NAN, "'many'", "1000000") + (() if self.auto else ("'auto'",))
        return tuple(dict.fromkeys(bad))

    def check(self, value, func, param, *, n: int | None = None, what: str | None = None):
        _not_null(func, param, value)
        if self.auto and is_auto(value):
            return AUTO
        k = as_integer(func, param, value)
        if k < self.minimum:
            why = f" ({self.why})" if self.why else ""
            raise fail(func, f"{param} must be >= {self.minimum}{why}, got {k}", param)
        if n is not None and k > n:
            raise fail(func, f"{param} = {k} is larger than the number of {what or self.what} ({n})", param)
        return k

    def accepts(self, value) -> bool:
        return _is_int(value) or (self.auto and isinstance(value, str) and is_auto(value))


@dataclass(frozen=True, eq=False)
class Count(Kind):
    """A number of intervals or groups: an integer >= minimum (it may exceed the number of values);
    with `auto`, also 'auto' (Freedman-Diaconis)."""

    minimum: int = 1
    auto: bool = False
    doc: str = ""

    @property
    def sql_type(self) -> str:
        return "INTEGER or 'auto'" if self.auto else "INTEGER"

    @property
    def valid(self) -> str:
        return str(max(self.minimum, 3))

    @property
    def invalid(self) -> tuple[str, ...]:
        bad = ("NULL", str(self.minimum - 1), "-1", "1.5", NAN, "'many'") + (() if self.auto else ("'auto'",))
        return tuple(dict.fromkeys(bad))

    def check(self, value, func, param, **context):
        _not_null(func, param, value)
        if self.auto and is_auto(value):
            return AUTO
        c = as_integer(func, param, value)
        if c < self.minimum:
            alt = " or 'auto'" if self.auto else ""
            raise fail(func, f"{param} must be >= {self.minimum}{alt}, got {c}", param)
        return c

    def accepts(self, value) -> bool:
        return _is_int(value) or (self.auto and isinstance(value, str) and is_auto(value))


@dataclass(frozen=True, eq=False)
class Integer(Kind):
    """An integer >= minimum (and <= maximum when set); NULL only when `nullable` (checked as None)."""

    minimum: int = 0
    maximum: int | None = None
    nullable: bool = False
    doc: str = ""
    sql_type: str = "INTEGER"

    @property
    def valid(self) -> str:
        return str(self.minimum)

    @property
    def invalid(self) -> tuple[str, ...]:
        bad = (str(self.minimum - 1),) + (("-1",) if self.minimum > -1 else ()) + ("1.5", NAN, "'many'")
        if self.maximum is not None:
            bad += (str(self.maximum + 1),)
        return tuple(dict.fromkeys(bad + (() if self.nullable else ("NULL",))))

    def check(self, value, func, param, **context):
        if value is None:
            if self.nullable:
                return None
            _not_null(func, param, value)
        v = as_integer(func, param, value)
        if v < self.minimum or (self.maximum is not None and v > self.maximum):
            top = f" and <= {self.maximum}" if self.maximum is not None else ""
            raise fail(func, f"{param} must be an integer >= {self.minimum}{top}, got {v}", param)
        return v

    def accepts(self, value) -> bool:
        return _is_int(value)


@dataclass(frozen=True, eq=False)
class Number(Kind):
    """A finite number, optionally bounded below and above (open or closed); NULL only when
    `nullable`. `scales`: in the data's unit (a domain bound, a distance)."""

    lower: float | None = None
    upper: float | None = None
    lower_open: bool = False
    upper_open: bool = False
    nullable: bool = False
    scales: bool = False
    doc: str = ""
    valid: str = "1"
    sql_type: str = "DOUBLE"
    why: str = ""  # why it may not be NULL, for the message

    def _range(self) -> str:
        if self.lower is not None and self.upper is not None:
            return (f"in {'(' if self.lower_open else '['}{_num(self.lower)}, {_num(self.upper)}"
                    f"{')' if self.upper_open else ']'}")
        if self.lower is not None:
            return f"a finite number {'>' if self.lower_open else '>='} {_num(self.lower)}"
        if self.upper is not None:
            return f"a finite number {'<' if self.upper_open else '<='} {_num(self.upper)}"
        return "a finite number"

    def _inside(self, v: float) -> bool:
        if not math.isfinite(v):
            return False
        if self.lower is not None and (v < self.lower or (self.lower_open and v == self.lower)):
            return False
        return not (self.upper is not None and (v > self.upper or (self.upper_open and v == self.upper)))

    @property
    def invalid(self) -> tuple[str, ...]:
        bad = ["'many'", "'inf'::DOUBLE", NAN]
        if self.lower is not None:
            bad.append(_num(self.lower) if self.lower_open else _num(self.lower - 1))
            if not self._inside(-1.0):
                bad.append("-1")  # a negative value, where the kind refuses one
        if self.upper is not None:
            bad.append(_num(self.upper) if self.upper_open else _num(self.upper + 1))
        return tuple(dict.fromkeys(bad + ([] if self.nullable else ["NULL"])))

    def check(self, value, func, param, **context):
        if value is None:
            if self.nullable:
                return None
            raise fail(func, f"{param} must not be NULL" + (f" ({self.why})" if self.why else ""), param)
        v = as_number(func, param, value)
        if not self._inside(v):
            raise fail(func, f"{param} must be {self._range()}, got {show(value)}", param)
        return v

    def accepts(self, value) -> bool:
        return _is_real(value)


@dataclass(frozen=True, eq=False)
class Seed(Kind):
    """A random seed: NULL (None) for operating-system randomness, never reproducible, or an integer
    0 <= seed < 2^63 for a stream that repeats exactly."""

    doc: str = ("NULL: operating-system randomness (every call differs); an integer 0 <= seed < 2^63: "
                "reproducible")
    sql_type: str = "BIGINT"
    valid: str = "7"
    invalid: tuple[str, ...] = ("-1", "9223372036854775808", "1.5", NAN, "'x'")

    def check(self, value, func, param, **context) -> int | None:
        if value is None:
            return None
        s = as_integer(func, param, value)
        if not 0 <= s < 2 ** SEED_BITS:
            raise fail(func, f"{param} must be an integer in [0, 2^{SEED_BITS}), got {s}", param)
        return s

    def accepts(self, value) -> bool:
        return _is_int(value)


def stratum_seed(seed: int | None, column: str, stratum: int) -> int | None:
    """The seed with which a table form or a release masks column `column` in stratum number
    `stratum`: the first 63 bits of SHA-256 over (seed, column, stratum) encoded as
    8 bytes of seed (big-endian), the column's UTF-8 bytes and 8 bytes of stratum (big-endian),
    each preceded by its length as 4 bytes (big-endian). None stays None (operating-system
    randomness). Distinct columns and strata get independent streams that repeat exactly.

    `stratum` is the stratum's position, from 0, in the ascending order of the strata values (NULLS
    LAST; in the engine's default order, which is binary for text); 0 without strata. Any engine can
    compute it (DuckDB: row_number() OVER (ORDER BY strata NULLS LAST) - 1)."""
    if seed is None:
        return None
    parts = [int(seed).to_bytes(8, "big"), column.encode("utf-8"), int(stratum).to_bytes(8, "big")]
    digest = hashlib.sha256(b"".join(len(p).to_bytes(4, "big") + p for p in parts)).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


# ---------------------------------------------------------------------------------------------
# choices and switches


@dataclass(frozen=True, eq=False)
class Choice(Kind):
    """One of a fixed set of names (case and surrounding blanks ignored); returns it in lower case."""

    options: tuple[str, ...] = ()
    doc: str = ""
    sql_type: str = "VARCHAR"

    @property
    def valid(self) -> str:
        return f"'{self.options[0]}'"

    @property
    def invalid(self) -> tuple[str, ...]:
        return ("NULL", "'none of these'")

    def check(self, value, func, param, **context) -> str:
        _not_null(func, param, value)
        text = str(value).strip().lower()
        if text not in self.options:
            raise fail(func, f"{param} must be one of {', '.join(repr(o) for o in self.options)}, "
                             f"got {show(value)}", param)
        return text

    def accepts(self, value) -> bool:
        return isinstance(value, str)


@dataclass(frozen=True, eq=False)
class Flag(Kind):
    """A boolean switch; SQL hands BOOLEAN arguments over as the text 'true' or 'false'."""

    doc: str = ""
    sql_type: str = "BOOLEAN"
    valid: str = "true"
    invalid: tuple[str, ...] = ("NULL", "'maybe'")

    def check(self, value, func, param, **context) -> bool:
        _not_null(func, param, value)
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        text = str(value).strip().lower()
        if text in ("true", "t", "1"):
            return True
        if text in ("false", "f", "0"):
            return False
        raise fail(func, f"{param} must be true or false, got {show(value)}", param)

    def accepts(self, value) -> bool:
        return isinstance(value, bool)


@dataclass(frozen=True, eq=False)
class Text(Kind):
    """A non-NULL text, such as a box method's characteristic (parsed by the function)."""

    doc: str = ""
    sql_type: str = "VARCHAR"
    valid: str = "'mean(1)'"
    invalid: tuple[str, ...] = ("NULL",)

    def check(self, value, func, param, **context) -> str:
        _not_null(func, param, value)
        return str(value)

    def accepts(self, value) -> bool:
        return isinstance(value, str)


# ---------------------------------------------------------------------------------------------
# names of tables and columns (checked in SQL by the table forms, in Python by `check`)


def _name(func: str, param: str, value, what: str) -> str:
    _not_null(func, param, value)
    if not isinstance(value, str) or not value.strip():
        raise fail(func, f"{param} must name {what}, got {show(value)}", param)
    return value


@dataclass(frozen=True, eq=False)
class Name(Kind):
    """One name, of a table or view (`of = "table"`, possibly qualified: 'schema.table') or of a column
    (of the table, or of a column the function adds); with `optional`, NULL too (none: an optional
    weight column). In SQL: __sdc_name (sql/00_internal.sql)."""

    of: str = "column"
    doc: str = "name of the column"
    sql_type: str = "VARCHAR"
    optional: bool = False

    @property
    def invalid(self) -> tuple[str, ...]:
        return ("''",) if self.optional else ("NULL", "''")

    @property
    def valid(self) -> str:
        return "'t'" if self.of == "table" else "'x'"

    def check(self, value, func, param, **context) -> str | None:
        if value is None and self.optional:
            return None
        return _name(func, param, value, f"a {self.of}")

    def accepts(self, value) -> bool:
        return isinstance(value, str) and bool(value.strip())


@dataclass(frozen=True, eq=False)
class ColumnNames(Kind):
    """A non-empty list of distinct column names (one name counts as a list of one); with
    `optional`, NULL is allowed (none, or every column, as the parameter says)."""

    optional: bool = False
    doc: str = ""
    sql_type: str = "VARCHAR or VARCHAR[]"
    valid: str = "['x']"

    @property
    def invalid(self) -> tuple[str, ...]:
        return ("[]", "['x', 'x']", "[NULL]") + (() if self.optional else ("NULL",))

    def check(self, value, func, param, **context) -> list[str] | None:
        if value is None and self.optional:
            return None
        _not_null(func, param, value)
        names = [value] if isinstance(value, str) else list(value)
        if not names:
            raise fail(func, f"{param} must name at least one column", param)
        if any(n is None for n in names):
            raise fail(func, f"{param} must not contain NULL", param)
        for n in names:
            _name(func, param, n, "columns")
        seen = [n for i, n in enumerate(names) if n in names[:i]]
        if seen:
            raise fail(func, f"{param} names column {seen[0]!r} twice", param)
        return names

    def accepts(self, value) -> bool:
        names = [value] if isinstance(value, str) else value
        return isinstance(names, list) and bool(names) and all(isinstance(n, str) for n in names)


@dataclass(frozen=True, eq=False)
class KeyNames(ColumnNames):
    """The key variables (quasi-identifiers) of a measure of key combinations (duckdb_sdc.measures.keys):
    column names as ColumnNames, the columns of any type. Unlike masked data, a record with a NULL key
    takes part: the NULL matches any value, or is a value of its own, as the function's `nulls` says."""

    valid: str = "['s', 'c']"


# ---------------------------------------------------------------------------------------------
# data and per-column values


@dataclass(frozen=True, eq=False)
class Data(Kind):
    """The data a function works on: `shape` 'values' (xs DOUBLE[]: one column as a list),
    'records' (rows DOUBLE[][]: one vector per record), 'labels' (BIGINT[] aligned with the records),
    'column' (an aggregate's numeric argument), 'vector' (an aggregate's numeric[] row vector).
    `scales`: the contract suite's scale test multiplies it (weights and labels do not scale)."""

    shape: str = "values"
    doc: str = ""
    scales: bool = True
    source: str = "list(column)"  # what gives such a list, for the message about a wrong type ('values')

    @property
    def sql_type(self) -> str:
        return {"values": "DOUBLE[]", "records": "DOUBLE[][]", "labels": "BIGINT[]", "column": "numeric",
                "vector": "numeric[]"}[self.shape]

    @property
    def valid(self) -> str:
        return {"values": "[3.0, 1.0, 2.0]", "records": "[[3.0, 1.0], [1.0, 2.0], [2.0, 2.0]]",
                "labels": "[0, 0, 1]", "column": "1.0", "vector": "[1.0, 2.0]"}[self.shape]

    @property
    def invalid(self) -> tuple[str, ...]:
        return {"values": ("'abc'", "['a', 'b']", "5", "[1.0, 'nan'::DOUBLE]", "[1.0, 'inf'::DOUBLE]",
                           "[1.0, '-inf'::DOUBLE]"),
                "records": ("'abc'", "[1.0, 2.0]", "[[1.0, 'nan'::DOUBLE]]", "[[1.0, 'inf'::DOUBLE]]",
                            "[[1.0, '-inf'::DOUBLE]]"),
                "labels": ("'abc'", "['a']", "5"),
                "column": ("'abc'", "'nan'::DOUBLE", "'inf'::DOUBLE", "'-inf'::DOUBLE"),
                "vector": ("'abc'", "[1.0, 'nan'::DOUBLE]", "[1.0, 'inf'::DOUBLE]")}[self.shape]

    def wrong_type(self, param: str, got: str) -> str | None:
        """What a list function says of a list of this shape of SQL type `got` that is not one (the
        macros of sql/00_internal.sql and 25_multivariate.sql say it); None for an aggregate's data."""
        return {"values": f"{param} must be a list of numbers such as {self.source} gives, got {got}",
                "records": f"{param} must be a list of numeric lists, one per record, such as list([a, b, c]) gives, "
                           f"got {got}",
                "labels": f"{param} must be a list of integer cluster ids such as mdav_multi_labels gives, got {got}",
                }.get(self.shape)

    def check(self, value, func, param, **context) -> np.ndarray:
        if self.shape in ("values", "column"):
            return finite_values(func, param, value)
        return np.asarray(value)

    def accepts(self, value) -> bool:
        return False  # data come from the table, never from a spec


@dataclass(frozen=True, eq=False)
class PerColumn(Kind):
    """A number for every column, or a list with one per column (numbers of kind `each`); NULL (None)
    only when `nullable`."""

    each: Number = field(default_factory=Number)
    nullable: bool = False
    doc: str = ""
    sql_type: str = "DOUBLE or DOUBLE[]"

    @property
    def scales(self) -> bool:
        return self.each.scales

    @property
    def valid(self) -> str:
        return self.each.valid

    @property
    def invalid(self) -> tuple[str, ...]:
        bad = tuple(b for b in self.each.invalid if b != "NULL")
        return bad + (f"[{self.each.valid}, {self.each.valid}, {self.each.valid}, {self.each.valid}, "
                      f"{self.each.valid}]",) + (() if self.nullable else ("NULL",))

    def check(self, value, func, param, *, n: int | None = None, **context) -> np.ndarray | None:
        """An (n,) array (one value broadcast to n), or None for NULL when allowed. A text such as
        SQL hands over ('[1, 2]' or '5') is read as a list or one number."""
        if value is None:
            if self.nullable:
                return None
            self.each.check(value, func, param)  # the number's own refusal of NULL
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("[") and text.endswith("]"):
                value = [None if p.strip().upper() == "NULL" else p for p in text[1:-1].split(",")]
        values = list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]
        if n is not None and len(values) not in (1, n):
            raise fail(func, f"{param} must be one number or one per attribute ({n}), got {len(values)}", param)
        out = np.array([self.each.check(v, func, param) for v in values], dtype=np.float64)
        return np.broadcast_to(out, (n,)).copy() if n is not None else out

    def accepts(self, value) -> bool:
        if isinstance(value, list):
            return all(self.each.accepts(v) for v in value)
        return self.each.accepts(value)


@dataclass(frozen=True, eq=False)
class Weights(Kind):
    """A list of positive weights, one per column (the split of a privacy budget); NULL for equal
    shares."""

    doc: str = ""
    sql_type: str = "DOUBLE[]"
    valid: str = "NULL"
    invalid: tuple[str, ...] = ("[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]", "[0.0]", "[-1.0]")

    def check(self, value, func, param, *, n: int | None = None, **context) -> list[float] | None:
        if value is None:
            return None
        values = list(value)
        if n is not None and len(values) != n:
            raise fail(func, f"{param} must have one weight per column ({n} columns), got {values}", param)
        weight = Number(lower=0, lower_open=True)
        return [weight.check(v, func, f"{param} weight") for v in values]

    def accepts(self, value) -> bool:
        return isinstance(value, list) and all(_is_real(v) for v in value)


@dataclass(frozen=True, eq=False)
class AttributeNames(Kind):
    """The names of a group's attributes, in order (a release fills it with the rule's columns);
    JSON text when it comes from SQL. NULL: none."""

    doc: str = ""
    sql_type: str = "VARCHAR[]"
    valid: str = "NULL"
    invalid: tuple[str, ...] = ()

    def check(self, value, func, param, **context) -> list[str] | None:
        if value is None:
            return None
        out = value
        if isinstance(value, str):
            try:
                out = json.loads(value)
            except ValueError:
                out = None
        if not isinstance(out, (list, tuple)) or not all(isinstance(x, str) for x in out):
            raise fail(func, f"{param} must be a list of attribute names, got {show(value)}", param)
        return list(out)

    def accepts(self, value) -> bool:
        return isinstance(value, list) and all(isinstance(x, str) for x in value)


@dataclass(frozen=True, eq=False)
class SqlTyped(Kind):
    """A parameter declared by its SQL type alone (a plug-in's function, see `Param`): any value of
    that type; its function checks the range. `sql_type` is one of SQL_TYPES, a list of one
    (`INTEGER[]`), or alternatives joined by ' or '."""

    sql_type: str = "VARCHAR"
    doc: str = ""
    valid: str = "NULL"

    def accepts(self, value) -> bool:
        return any(_accepts_type(value, t.strip()) for t in self.sql_type.split(" or "))


SQL_TYPES = {"TINYINT": _is_int, "SMALLINT": _is_int, "INTEGER": _is_int, "BIGINT": _is_int, "HUGEINT": _is_int,
             "UBIGINT": _is_int, "UINTEGER": _is_int, "DOUBLE": _is_real, "FLOAT": _is_real, "REAL": _is_real,
             "VARCHAR": lambda v: isinstance(v, str), "BOOLEAN": lambda v: isinstance(v, bool)}


def _accepts_type(value, sql_type: str) -> bool:
    if sql_type.endswith("[]"):
        return isinstance(value, list) and all(_accepts_type(v, sql_type[:-2]) for v in value)
    test = SQL_TYPES.get(sql_type.upper())
    return bool(test and test(value))


def kind_of_type(sql_type: str) -> Kind:
    """The kind of a parameter declared by a SQL type name: the data kinds for DOUBLE[] and
    DOUBLE[][] (so that a plug-in's list function is a release method like ours), otherwise
    `SqlTyped`. A type this module cannot read is an error naming it."""
    text = " ".join(sql_type.split())
    data = {"DOUBLE[]": VALUES, "DOUBLE[][]": RECORDS}
    if text.upper() in data:
        return data[text.upper()]
    for alternative in text.split(" or "):
        base = alternative.strip()
        while base.endswith("[]"):
            base = base[:-2]
        if base.upper() not in SQL_TYPES:
            raise ValueError(f"Param: unknown SQL type {sql_type!r}; use a kind of duckdb_sdc.params "
                             f"or one of {', '.join(sorted(SQL_TYPES))} (with [] for a list)")
    return SqlTyped(sql_type=text)


# ---------------------------------------------------------------------------------------------
# parameters


@dataclass(frozen=True)
class Param:
    """A parameter of a function: its name, its kind (a `Kind`, or a SQL type name that
    `kind_of_type` reads), its default as a SQL literal (None: required) and its doc text (the
    kind's when empty)."""

    name: str
    kind: Kind | str
    default: str | None = None
    doc: str = ""
    example: str | None = None  # a SQL literal valid in a typical call (the kind's `valid` when None)

    def __post_init__(self):
        if isinstance(self.kind, str):
            object.__setattr__(self, "kind", kind_of_type(self.kind))
        if not self.doc:
            object.__setattr__(self, "doc", self.kind.doc)

    @property
    def type(self) -> str:
        """The SQL type as signatures and the reference show it."""
        return self.kind.sql_type

    @property
    def valid(self) -> str:
        """A SQL literal of a valid value in a typical call (the contract tests start from it)."""
        return self.example if self.example is not None else self.kind.valid

    def check(self, value, func: str, **context):
        return self.kind.check(value, func, self.name, **context)

    @property
    def default_value(self):
        """The default as a Python value (None for NULL or a required parameter)."""
        return literal_value(self.default)


def literal_value(literal: str | None):
    """A SQL literal of a default (NULL, 'text', 10, 0.2, true) as a Python value."""
    if literal is None or literal.strip().upper() == "NULL":
        return None
    text = literal.strip()
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1].replace("''", "'")
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        return float(text)


# ---------------------------------------------------------------------------------------------
# the kinds of duckdb_sdc's functions


VALUES = Data("values", doc="the column as a list, e.g. list(income); any numeric list type")
RECORDS = Data("records", doc="the records as a list of equally long numeric lists, e.g. list([a, b, c])")
LABELS = Data("labels", doc="cluster id of every record, aligned with rows (e.g. mdav_multi_labels)", scales=False)
COLUMN_VALUES = Data("column", doc="the values (an aggregate's argument)")
ROW_VECTOR = Data("vector", doc="a record as a row vector, e.g. [a, b, c]")

_ONE = "a group of one record releases its value unchanged"  # why deterministic masking needs k >= 2
GROUP_SIZE = GroupSize(2, why=_ONE, doc="minimum group size, 2 <= k <= number of non-NULL values")
GROUP_SIZE_AUTO = GroupSize(2, auto=True, why=_ONE, doc="minimum group size, 2 <= k <= number of non-NULL values, or "
                                                        "'auto' (Freedman-Diaconis, at least 2)")
CLUSTER_SIZE = GroupSize(2, what="records without NULL attributes", why=_ONE,
                         doc="minimum cluster size, 2 <= k <= number of records without NULL")
DP_CLUSTER_SIZE = GroupSize(1, doc="cluster size of individual ranking microaggregation (the last cluster takes "
                                   "the remainder), 1 <= k <= number of non-NULL values")
CBLS_CLUSTER_SIZE = GroupSize(3, why="iDP-CBLS replaces the smallest and the largest value of each cluster, so "
                                     "clusters need 3 values",
                              doc="cluster size, 3 <= k <= number of non-NULL values (the last cluster takes the "
                                  "remainder)")
INTERVALS = Count(1, auto=True, doc="number of intervals >= 1, or 'auto' (Freedman-Diaconis; refused where it "
                                       "leaves a value alone in its interval)")
COUNT = Count(1, doc="a count >= 1")
INTEGER_1 = Integer(1, doc="an integer >= 1")
NONNEGATIVE_INTEGER = Integer(0, doc="an integer >= 0")
POSITIVE = Number(lower=0, lower_open=True, doc="a finite number > 0")
NONNEGATIVE = Number(lower=0, doc="a finite number >= 0")
P_PERCENT = Number(lower=0, upper=1e6, lower_open=True,
                   doc="the p% rule's p, a fraction: 0 < p <= 1e6 (0.1 for the 10% rule; taken to 9 decimals)")
PERCENT = Number(lower=0, upper=100, lower_open=True, doc="a percentage, 0 < p <= 100")
TAIL_PERCENT = Number(lower=0, upper=50, doc="a percentage of the values, 0 <= p <= 50")
FRACTION = Number(lower=0, upper=1, lower_open=True, doc="a fraction, 0 < r <= 1")
EPSILON = Number(lower=0, lower_open=True, doc="privacy budget, > 0")
BOUND = Number(scales=True, doc="bound of the attribute's domain (public, not taken from the data)",
               why="the sensitivity is defined by the domain [lb, ub]; bounds taken from the data would void the "
                   "guarantee")
OPTIONAL_BOUND = Number(scales=True, nullable=True, doc="optional bound of the domain: clamps inputs and outputs")
OPTIONAL_POSITIVE = Number(lower=0, lower_open=True, nullable=True, scales=True, doc="a finite number > 0, or NULL")
DISTANCE = PerColumn(Number(lower=0, lower_open=True, scales=True), nullable=True,
                     doc="distance at which two values count as different: one for every attribute or one per "
                         "attribute, each > 0")
SPLIT = Weights(doc="NULL: equal shares; or one positive weight per column (budget_j = epsilon w_j / sum w)")
SEED = Seed()
FLAG = Flag()
TEXT = Text()
TABLE = Name(of="table", doc="table or view name (may be qualified: 'schema.table')")
COLUMN = Name()
COLUMNS = ColumnNames(doc="the column(s) forming the records (a name or a list of names)")
STRATA = ColumnNames(optional=True, doc="column(s) whose groups are masked separately")
KEYS = KeyNames(doc="the key variables (quasi-identifiers) whose combinations are counted")
ATTRIBUTE_NAMES = AttributeNames(doc="names of the attributes, so that the characteristic can name them")




def choice(*options: str, doc: str = "") -> Choice:
    """The kind of a parameter that takes one of `options`."""
    return Choice(tuple(options), doc=doc or "one of " + ", ".join(f"'{o}'" for o in options))


REPRESENTATIVE = choice("mean", "median", doc="'mean' or 'median' of the group")
POINT = choice("mean", "median", "midpoint", doc="rounding point of an interval: 'mean', 'median' or 'midpoint'")
CENTROID = choice("mean", "median", doc="centroid of a bootstrap sample: 'mean' or 'median'")
REMAINDER = choice("group", "nearest",
                   doc="'group': the last 2k..3k-1 records form a group of k and a group of the rest (textbook); "
                       "'nearest': groups of k while k remain, the n mod k left join their nearest clusters")
MONDRIAN_MODE = choice("strict", "relaxed",
                       doc="'strict' (cut at the median only if both sides keep >= k) or 'relaxed' (halves of "
                           "floor/ceil(m/2))")
TIES = choice("random", "first", doc="'random' (pseudo-random from the values and seed, independent of row order) "
                                     "or 'first' (row order)")
IL1S_FORM = choice("yancey", "sdcmicro", "sum",
                   doc="the IL1s term: 'yancey' (100 times Yancey, Winkler & Creecy's mean of |x - x'| / (sqrt(2) "
                       "S_j)), 'sdcmicro' (100 times the mean of sqrt(2) |x - x'| / S_j, as sdcMicro's dUtility "
                       "computed it before 5.0.3: twice as large) or 'sum' (the un-normalised sum of |x - x'| / "
                       "(sqrt(2) S_j) that dUtility reports as IL1s since 5.0.3, as it is)")
MECHANISM = choice("idp_cbls", "idp_ls", "dp_um", "dp_laplace",
                   doc="'idp_cbls', 'idp_ls', 'dp_um' or 'dp_laplace'")

# parameters shared by many functions, declared once
XS_PARAM = Param("xs", VALUES)
ROWS_PARAM = Param("rows", RECORDS)
TBL_PARAM = Param("tbl", TABLE)
COL_PARAM = Param("col", COLUMN, doc="name of the column to mask")
COLS_PARAM = Param("cols", COLUMNS)
STRATA_PARAM = Param("strata", STRATA, "NULL")
SEED_PARAM = Param("seed", SEED, "NULL")
REPRESENTATIVE_PARAM = Param("representative", REPRESENTATIVE, "'mean'")


# ---------------------------------------------------------------------------------------------
# sampling weights (duckdb_sdc.methods.weights)


@dataclass(frozen=True, eq=False)
class SamplingWeights(Data):
    """Sampling weights aligned with the data: shape 'weights' (a list `DOUBLE[]` aligned with xs or
    rows, e.g. list(w ORDER BY id) beside list(x ORDER BY id)) or 'weight' (an aggregate's column).
    Every weight of a non-NULL value must be a finite number > 0; a NULL weight beside a non-NULL value
    is refused; weights never scale with the data. `invalid` are SQL expressions ('{t}' the data
    table, columns id and w) that the contract suite tries on every parameter of the kind."""

    shape: str = "weights"
    doc: str = ""
    scales: bool = False

    @property
    def sql_type(self) -> str:
        return "DOUBLE[]" if self.shape == "weights" else "numeric"

    @property
    def valid(self) -> str:
        return "(SELECT list(w ORDER BY id) FROM {t})" if self.shape == "weights" else "w"

    @property
    def invalid(self) -> tuple[str, ...]:
        bad = ("0", "-1", "NULL", "'nan'::DOUBLE", "'inf'::DOUBLE")
        if self.shape == "weights":
            return tuple(f"(SELECT list(CASE WHEN id = 2 THEN {b} ELSE w END ORDER BY id) FROM {{t}})" for b in bad) + (
                "(SELECT list(w ORDER BY id) FROM {t} WHERE id > 1)", "NULL::DOUBLE[]")
        return tuple(f"CASE WHEN id = 2 THEN {b} ELSE w END" for b in bad)

    def check(self, value, func, param, *, n: int | None = None, **context) -> np.ndarray:
        """The weights as a float64 array of finite numbers > 0 (n of them when n is given; a NULL
        weight, None, is refused as not finite), or an error naming func, param and the value."""
        if value is None:
            raise fail(func, f"{param} must not be NULL", param)
        try:
            w = np.array([np.nan if v is None else v for v in value], dtype=np.float64)
        except (TypeError, ValueError):
            raise fail(func, f"{param} must be numbers, got {show(value)}", param) from None
        if n is not None and w.shape[0] != n:
            raise fail(func, f"{param} has {w.shape[0]} weights but there are {n} values; give one weight per value",
                       param)
        bad = ~(np.isfinite(w) & (w > 0))
        if bad.any():
            raise fail(func, f"{param} must be finite numbers > 0, got {float(w[bad][0])!r}", param)
        return w

    def accepts(self, value) -> bool:
        return False  # weights come from the table (a spec names the weight column), never from a value


WEIGHT_LIST = SamplingWeights("weights", doc="sampling weight of every value, aligned with xs (or rows): finite, > 0; "
                                             "e.g. list(w ORDER BY id) beside list(x ORDER BY id)")
WEIGHT_COLUMN = SamplingWeights("weight", doc="the record's sampling weight (an aggregate's argument): finite, > 0")
WEIGHT_NAME = Name(doc="name of the sampling-weight column (finite, > 0 where the masked value is not NULL)")


# small strata (duckdb_sdc.strata): what a table form or a release does with a stratum too small for the method
@dataclass(frozen=True, eq=False)
class RestStratum(Kind):
    """The label of the rest stratum of small_strata = 'rest': a text, or a list of texts with one per
    strata column (the strata columns must be text); NULL: none."""

    doc: str = ""
    sql_type: str = "VARCHAR or VARCHAR[]"
    valid: str = "NULL"
    invalid: tuple[str, ...] = ("[]", "[NULL]", "['a', NULL]")

    def check(self, value, func, param, *, n: int | None = None, **context) -> list[str] | None:
        """The label as a list (one text per strata column), None for NULL; `n`: the number of strata
        columns, when known. A text from SQL that reads as a JSON list of texts is that list."""
        if value is None:
            return None
        if isinstance(value, str):
            text = value.strip()
            parsed = None
            if text.startswith("[") and text.endswith("]"):  # JSON, or a list as DuckDB prints it
                try:
                    parsed = json.loads(text)
                except ValueError:
                    inner = text[1:-1].strip()
                    parsed = [None if p.strip().upper() == "NULL" else p.strip()
                              for p in inner.split(",")] if inner else []
            value = parsed if isinstance(parsed, list) else [value]
        if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
            raise fail(func, f"{param} must be a text or a non-empty list of texts (one per strata column), "
                             f"got {show(value)}", param)
        if n is not None and len(value) != n:
            raise fail(func, f"{param} must give one label per strata column ({n}), got {len(value)}: {list(value)}",
                       param)
        return list(value)

    def accepts(self, value) -> bool:
        return isinstance(value, str) or (isinstance(value, list) and bool(value)
                                          and all(isinstance(v, str) for v in value))


SMALL_STRATA = choice("refuse", "nearest", "rest",
                      doc="a stratum with fewer records than the method needs: 'refuse' (an error naming it), "
                          "'nearest' (pooled into its nearest stratum in the order of the strata values) or "
                          "'rest' (pooled into the rest stratum rest_stratum); pooled records carry the pool's "
                          "strata values (docs/releases/small-strata.md)")
REST_STRATUM = RestStratum(doc="with small_strata = 'rest': the rest stratum's label, a text (one per strata "
                               "column as a list; the strata columns must be text); NULL otherwise")
SMALL_STRATA_PARAM = Param("small_strata", SMALL_STRATA, "'refuse'")
REST_STRATUM_PARAM = Param("rest_stratum", REST_STRATUM, "NULL")
STRATA_PARAMS = (STRATA_PARAM, SMALL_STRATA_PARAM, REST_STRATUM_PARAM)  # a table form's strata and small strata
POOLING_ARGS = "small_strata := small_strata, rest_stratum := rest_stratum"  # passed on to the table forms' SQL
