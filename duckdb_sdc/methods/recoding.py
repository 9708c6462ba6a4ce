"""Global recoding of a key column: every value of the column is replaced by a coarser one by one rule
for the whole column (sdcMicro's globalRecode, topBotCoding and groupAndRename; ARX's generalisation
hierarchies). NULL (None, NaN, NaT) stays NULL in place; a value no rule covers is refused, naming
the function, the column and up to five offending values, never recoded to NULL in silence. No DuckDB
here.

* `band(x, breaks, labels=None, closed='right')`: numeric bands. With breaks b_0 < b_1 < ... < b_m,
  `closed='right'` gives the bands [b_0, b_1], (b_1, b_2], ..., (b_m-1, b_m] (R's cut(right = TRUE,
  include.lowest = TRUE), the side sdcMicro's globalRecode uses), `closed='left'` gives [b_0, b_1),
  ..., [b_m-1, b_m]. The first (right) or last (left) band is closed on both sides, so the breaks
  cover [b_0, b_m] exactly; a value outside is refused (sdcMicro returns NA for it, and for a value
  equal to b_0). Default labels are the intervals as written above, numbers as the shortest text
  that reads back as the same double ('(18, 65]'); `labels` gives one text per band.
* `top_code(x, top, replacement=None)`, `bottom_code(x, bottom, replacement=None)`: every value
  above `top` (strictly) becomes `replacement` (default `top`), every value below `bottom` likewise
  (sdcMicro's topBotCoding, kind 'top' or 'bottom').
* `merge_categories(x, mapping)`: every value that is a key of `mapping` becomes its image; other
  values stay as they are (sdcMicro's groupAndRename, several groups at once).
* `generalise(x, hierarchy, level)`: the value's ancestor at `level` of a user hierarchy given as
  rows value, level 1, level 2, ... (ARX's hierarchy files). The hierarchy must be a tree: a value at
  one level has one parent at the next (checked: a value with two parents is refused, naming it and
  both); every value of the column must appear in the first column (checked). Level 0 is the value
  itself.
* `truncate_dates(d, unit)`: dates or timestamps to the first instant of their 'month', 'quarter'
  or 'year' (DuckDB's date_trunc), in the input's own unit.
* `age_in_years(birth, reference)`: completed years at the reference date(s): the difference of the
  years, less one when the reference's month and day come before the birth's; a person born on 29
  February completes a year on 1 March in a year without 29 February. A birth date after its
  reference is refused.

Cost O(n) per function (O(n log m) for m breaks); repeated values cost no more than distinct ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validate import as_number, fail, show
from ..params import Kind, choice

CLOSED = choice("right", "left", doc="'right': bands (a, b], the first also holding its lower break (sdcMicro, R's "
                                     "cut); 'left': bands [a, b), the last also holding its upper break")
UNITS = choice("month", "quarter", "year", doc="'month', 'quarter' or 'year'")
SHOWN = 5  # offending values named in an error


def _missing(values: np.ndarray) -> np.ndarray:
    return pd.isna(pd.Series(values, dtype=object if values.dtype == object else None)).to_numpy()


def shown(v) -> str:
    """A category as a message shows it: text quoted, numbers bare, dates and times quoted."""
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v)).lower()
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return _number_text(float(v)) if math.isfinite(v) else str(float(v))
    return repr(str(v))


def offending(values) -> str:
    """Up to five distinct values, as a message shows them, and how many more."""
    distinct = list(dict.fromkeys(values.tolist() if isinstance(values, np.ndarray) else list(values)))
    shown_ = ", ".join(shown(v) for v in distinct[:SHOWN])
    more = len(distinct) - SHOWN
    return shown_ + (f" and {more} more" if more > 0 else "")


def _number_text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e16 else repr(float(v))


def check_breaks(breaks, func: str) -> np.ndarray:
    """Breaks as a float array: at least two, finite, strictly increasing."""
    if breaks is None:
        raise fail(func, "breaks must not be NULL", "breaks")
    if isinstance(breaks, str):
        text = breaks.strip()
        if not (text.startswith("[") and text.endswith("]")):
            raise fail(func, f"breaks must be a list of numbers, got {show(breaks)}", "breaks")
        breaks = [v for v in text[1:-1].split(",") if v.strip()]
    values = []
    for v in breaks:
        if v is None or (isinstance(v, str) and v.strip().upper() == "NULL"):
            raise fail(func, "breaks must not contain NULL", "breaks")
        values.append(as_number(func, "breaks", v))
    b = np.array(values, np.float64)
    if b.shape[0] < 2:
        raise fail(func, f"breaks must hold at least two numbers (one band), got {b.shape[0]}", "breaks")
    if not np.isfinite(b).all():
        raise fail(func, f"breaks must be finite, got {_number_text(b[~np.isfinite(b)][0])}", "breaks")
    if (np.diff(b) <= 0).any():
        j = int(np.flatnonzero(np.diff(b) <= 0)[0])
        raise fail(func, f"breaks must be strictly increasing, got {_number_text(b[j])} then {_number_text(b[j + 1])}",
                   "breaks")
    return b


def band_labels(b: np.ndarray, closed: str) -> list[str]:
    """The default label of every band (module docstring)."""
    m = b.shape[0] - 1
    out = []
    for j in range(m):
        lo, hi = _number_text(b[j]), _number_text(b[j + 1])
        if closed == "right":
            out.append(f"{'[' if j == 0 else '('}{lo}, {hi}]")
        else:
            out.append(f"[{lo}, {hi}{']' if j == m - 1 else ')'}")
    return out


def band_index(x: np.ndarray, b: np.ndarray, closed: str) -> np.ndarray:
    """The band (0..m-1) of every finite value of x within [b_0, b_m] (no check here)."""
    m = b.shape[0] - 1
    if closed == "right":
        j = np.searchsorted(b, x, side="left") - 1  # b_j < x <= b_j+1
        return np.clip(j, 0, m - 1)
    j = np.searchsorted(b, x, side="right") - 1  # b_j <= x < b_j+1
    return np.clip(j, 0, m - 1)


def band(x, breaks, labels=None, closed: str = "right", *, column: str = "x") -> np.ndarray:
    """The label of every value's band (module docstring); an object array, None where x is NULL."""
    func = "band"
    closed = CLOSED.check(closed, func, "closed")
    b = check_breaks(breaks, func)
    m = b.shape[0] - 1
    if labels is None:
        names = band_labels(b, closed)
    else:
        names = [str(v) for v in labels]
        if len(names) != m:
            raise fail(func, f"labels must give one label per band ({m}), got {len(names)}", "labels")
    values = np.asarray(x, dtype=object)
    missing = _missing(values)
    try:
        v = np.array([float(t) for t in values[~missing]], np.float64)
    except (TypeError, ValueError):
        raise fail(func, f"column {column} must be numeric, got {offending(values[~missing][:SHOWN])}") from None
    bad = ~np.isfinite(v)
    if bad.any():
        raise fail(func, f"column {column} contains {offending(v[bad])}; NaN and infinite values are refused (use "
                         "NULL for a missing value)")
    outside = (v < b[0]) | (v > b[-1])
    if outside.any():
        raise fail(func, f"breaks do not cover column {column}: {offending(np.unique(v[outside]))} outside [{_number_text(b[0])}, "
                         f"{_number_text(b[-1])}]", "breaks")
    out = np.full(values.shape[0], None, dtype=object)
    out[~missing] = np.array(names, dtype=object)[band_index(v, b, closed)]
    return out


def _numbers(func: str, x, column: str) -> tuple[np.ndarray, np.ndarray]:
    values = np.asarray(x, dtype=object)
    missing = _missing(values)
    try:
        v = np.array([float(t) for t in values[~missing]], np.float64)
    except (TypeError, ValueError):
        raise fail(func, f"column {column} must be numeric, got {offending(values[~missing][:SHOWN])}") from None
    if not np.isfinite(v).all():
        raise fail(func, f"column {column} contains {offending(v[~np.isfinite(v)])}; NaN and infinite values are "
                         "refused (use NULL for a missing value)")
    return v, missing


def _coded(func: str, x, threshold, replacement, name: str, column: str, above: bool) -> np.ndarray:
    t = as_number(func, name, threshold)
    if not math.isfinite(t):
        raise fail(func, f"{name} must be a finite number, got {show(threshold)}", name)
    r = t if replacement is None else as_number(func, "replacement", replacement)
    if not math.isfinite(r):
        raise fail(func, f"replacement must be a finite number, got {show(replacement)}", "replacement")
    v, missing = _numbers(func, x, column)
    v = np.where(v > t, r, v) if above else np.where(v < t, r, v)
    out = np.full(missing.shape[0], np.nan)
    out[~missing] = v
    return out


def top_code(x, top, replacement=None, *, column: str = "x") -> np.ndarray:
    """Values above `top` become `replacement` (default `top`); float64, NaN where x is NULL."""
    return _coded("top_code", x, top, replacement, "top", column, True)


def bottom_code(x, bottom, replacement=None, *, column: str = "x") -> np.ndarray:
    """Values below `bottom` become `replacement` (default `bottom`); float64, NaN where x is NULL."""
    return _coded("bottom_code", x, bottom, replacement, "bottom", column, False)


def merge_categories(x, mapping: Mapping) -> np.ndarray:
    """Values that are keys of `mapping` become their images, the others stay; NULL stays NULL. A NULL
    key or image is refused (a NULL is never recoded, nor produced)."""
    func = "merge_categories"
    if not isinstance(mapping, Mapping):
        raise fail(func, f"mapping must map categories to their new names, got {show(mapping)}", "mapping")
    if any(pd.isna(k) for k in mapping):
        raise fail(func, "mapping must not have a NULL category (NULL stays NULL)", "mapping")
    bad = [k for k, v in mapping.items() if v is None or (isinstance(v, float) and math.isnan(v))]
    if bad:
        raise fail(func, f"mapping must not map to NULL (to suppress a value use local suppression): "
                         f"{offending(bad)}", "mapping")
    values = np.asarray(x, dtype=object)
    missing = _missing(values)
    out = values.copy()
    out[missing] = None
    for i in np.flatnonzero(~missing):
        v = values[i]
        if v in mapping:
            out[i] = mapping[v]
    return out


# ---------------------------------------------------------------------------------------------
# hierarchies


def check_hierarchy(rows, func: str, column: str = "x") -> list[dict]:
    """A hierarchy (rows value, level 1, ..., level h; all rows of equal length, h >= 1) as a list of
    h + 1 dicts: level -> {value at level 0: its ancestor there}. Refused: no rows, rows of unequal
    length, NULL cells, and a value with two parents at some level (not a tree)."""
    table = [list(r) for r in rows]
    if not table:
        raise fail(func, f"hierarchy of column {column} has no rows", "hierarchy")
    width = {len(r) for r in table}
    if len(width) > 1 or min(width) < 2:
        raise fail(func, f"hierarchy of column {column} must have rows of one length, a value and at least one "
                         f"level, got lengths {sorted(width)}", "hierarchy")
    h = width.pop() - 1
    if any(pd.isna(v) for r in table for v in r):
        raise fail(func, f"hierarchy of column {column} has an empty (NULL) cell", "hierarchy")
    levels: list[dict] = [{r[0]: r[0] for r in table}]
    for lv in range(1, h + 1):
        parent: dict = {}
        for r in table:
            child, up = r[lv - 1], r[lv]
            if child in parent and parent[child] != up:
                raise fail(func, f"hierarchy of column {column} is not a tree: {shown(child)} at level {lv - 1} has two "
                                 f"parents at level {lv}, {shown(parent[child])} and {shown(up)}", "hierarchy")
            parent.setdefault(child, up)
        levels.append({r[0]: r[lv] for r in table})
    return levels


def read_hierarchy(path: str, delimiter: str = ";") -> list[list[str]]:
    """The rows of a hierarchy file as ARX writes them: one row per value, its levels after it,
    separated by `delimiter` (';'), no header."""
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        return [row for row in csv.reader(f, delimiter=delimiter) if row]


def generalise(x, hierarchy, level: int, *, column: str = "x") -> np.ndarray:
    """Every value's ancestor at `level` (0: the value) of the hierarchy (rows value, level 1, ...);
    an object array, None where x is NULL. A value missing from the hierarchy is refused."""
    func = "generalise"
    levels = check_hierarchy(hierarchy, func, column)
    from .._validate import as_integer

    lv = as_integer(func, "level", level)
    if not 0 <= lv < len(levels):
        raise fail(func, f"level must be in 0..{len(levels) - 1} (the hierarchy's height), got {lv}", "level")
    values = np.asarray(x, dtype=object)
    missing = _missing(values)
    table = levels[lv]
    absent = [v for v in values[~missing] if v not in table]
    if absent:
        raise fail(func, f"hierarchy of column {column} lacks {offending(absent)}", "hierarchy")
    out = np.full(values.shape[0], None, dtype=object)
    out[~missing] = [table[v] for v in values[~missing]]
    return out


# ---------------------------------------------------------------------------------------------
# dates


def truncate_dates(d, unit: str) -> np.ndarray:
    """Dates or timestamps (datetime64, any unit; NaT stays NaT) to the first instant of their month,
    quarter or year, in the input's unit."""
    func = "truncate_dates"
    unit = UNITS.check(unit, func, "unit")
    a = np.asarray(d)
    if not np.issubdtype(a.dtype, np.datetime64):
        try:
            a = np.asarray(pd.to_datetime(pd.Series(d)).to_numpy())
        except (TypeError, ValueError):
            raise fail(func, f"d must be dates or timestamps, got {a.dtype}", "d") from None
    nat = np.isnat(a)
    months = a.astype("datetime64[M]")
    if unit == "year":
        start = a.astype("datetime64[Y]").astype("datetime64[M]")
    elif unit == "quarter":
        m = months.astype(np.int64)
        start = (m - m % 3).astype("datetime64[M]")
    else:
        start = months
    out = start.astype(a.dtype)
    out[nat] = np.datetime64("NaT")
    return out


def age_in_years(birth, reference, *, column: str = "birth") -> np.ndarray:
    """Completed years from `birth` to `reference` (one date or one per birth date), float64 with NaN
    where either is NULL (module docstring). A birth date after its reference is refused."""
    func = "age_in_years"
    b = pd.to_datetime(pd.Series(birth)).to_numpy()
    r = np.asarray(pd.to_datetime(pd.Series(np.broadcast_to(np.asarray(reference, dtype=object), b.shape))).to_numpy())
    nat = np.isnat(b) | np.isnat(r)
    by, ry = b.astype("datetime64[Y]").astype(np.int64), r.astype("datetime64[Y]").astype(np.int64)
    bm, rm = b.astype("datetime64[M]").astype(np.int64) % 12, r.astype("datetime64[M]").astype(np.int64) % 12
    bd = (b.astype("datetime64[D]") - b.astype("datetime64[M]").astype("datetime64[D]")).astype(np.int64)
    rd = (r.astype("datetime64[D]") - r.astype("datetime64[M]").astype("datetime64[D]")).astype(np.int64)
    years = ry - by - ((rm * 32 + rd) < (bm * 32 + bd))
    late = ~nat & (b.astype("datetime64[D]") > r.astype("datetime64[D]"))
    if late.any():
        raise fail(func, f"column {column} has birth dates after the reference date: "
                         f"{offending([str(v)[:10] for v in b[late]])}")
    out = years.astype(np.float64)
    out[nat] = np.nan
    return out



# the parameter kinds of the recodings (their SQL functions, duckdb_sdc.sql.recoding, and their release
# rules, duckdb_sdc.recodings)


@dataclass(frozen=True, eq=False)
class Breaks(Kind):
    """Band breaks: a list of at least two finite numbers, strictly increasing."""

    doc: str = "the breaks b_0 < b_1 < ... < b_m of the bands, at least two finite numbers"
    sql_type: str = "DOUBLE[]"
    valid: str = "[0, 500, 1000]"
    invalid: tuple[str, ...] = ("NULL", "[1]", "[2, 1]", "[0, 'inf'::DOUBLE]")

    def check(self, value, func, param, **context):
        return check_breaks(value, func)

    def accepts(self, value) -> bool:
        return isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)


def text_list(value) -> list | None:
    """A list parameter as a Python list: None, a list, or its SQL text ('[a, NULL, b]'; one bare text: [it])."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if not (text.startswith("[") and text.endswith("]")):
            return [value]
        inner = text[1:-1].strip()
        return [None if p.strip().upper() == "NULL" else p.strip() for p in inner.split(",")] if inner else []
    return list(value)


@dataclass(frozen=True, eq=False)
class Labels(Kind):
    """The labels of the bands: NULL (the intervals as text) or one non-NULL text per band."""

    doc: str = "NULL (the intervals, e.g. '(18, 65]') or one label per band"
    sql_type: str = "VARCHAR[]"
    valid: str = "NULL"
    invalid: tuple[str, ...] = ("[NULL]",)

    def check(self, value, func, param, **context):
        values = text_list(value)
        if values is not None and any(v is None for v in values):
            raise fail(func, f"{param} must not contain NULL", param)
        return values

    def accepts(self, value) -> bool:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)


@dataclass(frozen=True, eq=False)
class CategoryMapping(Kind):
    """A mapping of categories to their new names (a MAP); NULL is refused."""

    doc: str = "the categories to rename and their new names, e.g. MAP {'2': 'other', '9': 'other'}"
    sql_type: str = "MAP(VARCHAR, VARCHAR)"
    valid: str = "MAP {'1': 'one'}"
    invalid: tuple[str, ...] = ("NULL",)

    def check(self, value, func, param, **context):
        if value is None:
            raise fail(func, f"{param} must not be NULL", param)
        return value

    def accepts(self, value) -> bool:
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


BREAKS = Breaks()
LABELS = Labels()
MAPPING = CategoryMapping()


__all__ = ["BREAKS", "CLOSED", "LABELS", "MAPPING", "UNITS", "Breaks", "CategoryMapping", "Labels", "age_in_years", "band", "band_index", "band_labels", "bottom_code", "check_breaks",
           "check_hierarchy", "generalise", "merge_categories", "offending", "read_hierarchy", "shown", "text_list",
           "top_code", "truncate_dates"]
