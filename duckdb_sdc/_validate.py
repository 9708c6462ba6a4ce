"""Argument validation shared by every public function (numpy API and SQL binding).

Every error names the function, the parameter and the offending value, so that a message that
surfaces through DuckDB ("Invalid Input Error: ... SdcError: mdav_round: k must be ...") tells the
user exactly what to fix.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np


class SdcError(ValueError):
    """Bad input to a duckdb_sdc function. The message starts with the function's name."""


def fail(func: str, message: str) -> SdcError:
    return SdcError(f"{func}: {message}")


def show(value) -> str:
    """A value as the user wrote it: numbers (also those that arrive from SQL as text) bare, other
    text quoted."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return repr(value)
        return value.strip()
    return repr(value) if not isinstance(value, Real) or isinstance(value, bool) else str(value)


def refuse_nonfinite(func: str, param: str, a: np.ndarray, hint: str = "use NULL for a missing value") -> None:
    """An error naming the first NaN or +-inf of the array `a`, if it has one."""
    if not np.isfinite(a).all():
        bad = a[~np.isfinite(a)][0]
        raise fail(func, f"{param} contains {float(bad)}; NaN and infinite values are refused ({hint})")


def finite_values(func: str, param: str, values) -> np.ndarray:
    """Return `values` as a contiguous float64 array; refuse NaN and +-inf."""
    x = np.ascontiguousarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise fail(func, f"{param} must be one-dimensional, got shape {x.shape}")
    refuse_nonfinite(func, param, x)
    return x


def _as_integer(func: str, param: str, value) -> int:
    if isinstance(value, bool):
        raise fail(func, f"{param} must be an integer, got {show(value)}")
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                as_float = float(text)
            except ValueError:
                raise fail(func, f"{param} must be an integer, got {show(value)}") from None
            if math.isfinite(as_float) and as_float.is_integer():
                return int(as_float)
            raise fail(func, f"{param} must be an integer, got {show(value)}")
    if isinstance(value, Real) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    raise fail(func, f"{param} must be an integer, got {show(value)}")


MIN_GROUP = 2  # the smallest group a deterministic masking method may form: k = 1 masks nothing


def group_size(func: str, k, n: int, param: str = "k", *, what: str = "non-NULL values",
               minimum: int = MIN_GROUP) -> int:
    """Validate a minimum group size k against n values (or records, `what`): minimum <= k <= n.
    The default minimum, 2, is that of deterministic masking (a group of one releases its value
    unchanged); noise-based mechanisms and ranks pass minimum=1."""
    if k is None:
        raise fail(func, f"{param} must not be NULL")
    kk = _as_integer(func, param, k)
    if kk < minimum:
        why = " (a group of one record releases its value unchanged)" if minimum == MIN_GROUP else ""
        raise fail(func, f"{param} must be >= {minimum}{why}, got {kk}")
    if kk > n:
        raise fail(func, f"{param} = {kk} is larger than the number of {what} ({n})")
    return kk


def positive_number(func: str, param: str, value, *, allow_zero: bool = False) -> float:
    if value is None:
        raise fail(func, f"{param} must not be NULL")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise fail(func, f"{param} must be a number, got {show(value)}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise fail(func, f"{param} must be a finite number {bound}, got {show(value)}")
    return v


def choice(func: str, param: str, value, options: tuple[str, ...]) -> str:
    if value is None:
        raise fail(func, f"{param} must not be NULL")
    text = str(value).strip().lower()
    if text not in options:
        raise fail(func, f"{param} must be one of {', '.join(repr(o) for o in options)}, got {show(value)}")
    return text


def integer_at_least(func: str, param: str, value, minimum: int) -> int:
    """An integer parameter >= minimum (e.g. the n of the (n, r) dominance rule)."""
    if value is None:
        raise fail(func, f"{param} must not be NULL")
    v = _as_integer(func, param, value)
    if v < minimum:
        raise fail(func, f"{param} must be an integer >= {minimum}, got {v}")
    return v


# ---------------------------------------------------------------------------------------------
# discretisation (rounding by intervals) and "auto" parameters


def is_auto(value) -> bool:
    """True for the text 'auto' (any case, surrounding blanks ignored): choose c or k by the
    Freedman-Diaconis rule."""
    return isinstance(value, str) and value.strip().lower() == "auto"


def interval_count(func: str, c, param: str = "c", *, auto: bool = True) -> int:
    """Validate a number of intervals: an integer >= 1 (it may exceed the number of values).
    `auto`: whether the message mentions the alternative 'auto' (checked by the caller)."""
    if c is None:
        raise fail(func, f"{param} must not be NULL")
    cc = _as_integer(func, param, c)
    if cc < 1:
        raise fail(func, f"{param} must be >= 1{' or ' + repr('auto') if auto else ''}, got {cc}")
    return cc


def flag(func: str, param: str, value) -> bool:
    """A boolean switch; SQL hands BOOLEAN arguments over as the text 'true' or 'false'."""
    if value is None:
        raise fail(func, f"{param} must not be NULL")
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "t", "1"):
        return True
    if text in ("false", "f", "0"):
        return False
    raise fail(func, f"{param} must be true or false, got {show(value)}")


def seed_value(func: str, value, param: str = "seed", *, bits: int = 63) -> int | None:
    """A random seed: NULL/None (fresh entropy, not reproducible) or an integer 0 <= seed < 2^bits."""
    if value is None:
        return None
    s = _as_integer(func, param, value)
    if not 0 <= s < 2**bits:
        raise fail(func, f"{param} must be an integer in [0, 2^{bits}), got {s}")
    return s
