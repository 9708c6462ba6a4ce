"""The error type of every duckdb_sdc function and the primitives the parameter kinds are made of.

Every error names the function, the parameter and the offending value, so that a message that
surfaces through DuckDB ("Invalid Input Error: ... SdcError: mdav_round: k must be ...") tells the
user exactly what to fix. The checks of parameters themselves are declared once, as parameter kinds,
in `duckdb_sdc.params`; this module holds what those kinds and the array checks share.

An error knows which function raised it (`SdcError.func`), which parameter it is about
(`SdcError.param`, when one is) and what is wrong (`SdcError.detail`), so that a caller can report it
under another name: a public numpy function reports errors of the helpers it calls under its own name
(`named`), and the SQL binding reports them under the SQL function the user called
(`SdcError.renamed`). No function takes a hidden "caller's name" argument.
"""

from __future__ import annotations

import functools
import math
import re
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np


class SdcError(ValueError):
    """Bad input to a duckdb_sdc function. The message starts with the function's name.

    `func`, `param` and `detail` are set when the error comes from `fail` (message
    "func: detail"); an error built from a message alone (a release spec's error) has them None.
    """

    def __init__(self, message: str, *, func: str | None = None, param: str | None = None,
                 detail: str | None = None):
        super().__init__(message)
        self.func = func
        self.param = param
        self.detail = detail

    def renamed(self, func: str, params: dict[str, str] | None = None) -> SdcError:
        """The same error reported by `func` (the function the user called), with parameter names
        mapped by `params` (e.g. {"x": "xs"}) where the detail starts with the parameter's name.
        An error without a function (a plain message) is returned unchanged."""
        if self.func is None or (self.func == func and not params):
            return self
        detail, param = self.detail, self.param
        new = (params or {}).get(param) if param is not None else None
        if new is not None:
            if detail.startswith(param) and not detail[len(param):len(param) + 1].isidentifier():
                detail = new + detail[len(param):]
            param = new
        err = type(self)(f"{func}: {detail}", func=func, param=param, detail=detail)
        err.__cause__ = self.__cause__
        return err



def error_message(error: Exception) -> str:
    """DuckDB's text of an error raised in a UDF, reduced to the duckdb_sdc message."""
    text = str(error)
    found = re.search(r"SdcError: (.*)", text, re.S)
    return found.group(1).strip() if found else text.strip()


_ABOUT_A_PARAMETER = re.compile(r"^([A-Za-z_]\w*) (?:must|contains|has|=|is) ")


def fail(func: str, message: str, param: str | None = None) -> SdcError:
    """The error of `func` saying `message`. When the message is about a parameter it starts with the
    parameter's name ("k must be ...", "xs contains nan"); `param` is then inferred unless given."""
    if param is None:
        about = _ABOUT_A_PARAMETER.match(message)
        param = about.group(1) if about else None
    return SdcError(f"{func}: {message}", func=func, param=param, detail=message)


@contextmanager
def reporting(func: str, params: dict[str, str] | None = None):
    """Inside, an SdcError is reported under `func` (parameter names mapped by `params`)."""
    try:
        yield
    except SdcError as err:
        renamed = err.renamed(func, params)
        if renamed is err:
            raise
        raise renamed from None


def named(fn):
    """Decorator of a public function: an SdcError raised inside it (by a helper or by another public
    function it calls) is reported under this function's name, so the user sees the name they called."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with reporting(name):
            return fn(*args, **kwargs)

    return wrapper


SHOWN = 120  # characters of a value an error message echoes; a longer one is cut


def show(value) -> str:
    """A value as the user wrote it: numbers (also those that arrive from SQL as text) bare, other
    text quoted; at most about SHOWN characters (a longer value is cut and its length said)."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return _cut(repr(value))
        return _cut(value.strip())
    return _cut(repr(value) if not isinstance(value, Real) or isinstance(value, bool) else str(value))


def _cut(text: str) -> str:
    if len(text) <= SHOWN:
        return text
    return f"{text[:SHOWN - 20]}... ({len(text)} characters)"


def refuse_nonfinite(func: str, param: str, a: np.ndarray, hint: str = "use NULL for a missing value") -> None:
    """An error naming the first NaN or +-inf of the array `a`, if it has one."""
    if not np.isfinite(a).all():
        bad = a[~np.isfinite(a)][0]
        raise fail(func, f"{param} contains {float(bad)}; NaN and infinite values are refused ({hint})", param)


def finite_values(func: str, param: str, values) -> np.ndarray:
    """Return `values` as a contiguous float64 array; refuse NaN and +-inf."""
    try:
        x = np.ascontiguousarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise fail(func, f"{param} must be numbers, got {type(values).__name__}", param) from None
    if x.ndim != 1:
        raise fail(func, f"{param} must be one-dimensional, got shape {x.shape}", param)
    refuse_nonfinite(func, param, x)
    return x


def as_integer(func: str, param: str, value) -> int:
    """An integer from an int, an integral float or numeric text (SQL hands parameters over as
    text); anything else is refused."""
    if isinstance(value, (bool, np.bool_)):
        raise fail(func, f"{param} must be an integer, got {show(value)}", param)
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
                raise fail(func, f"{param} must be an integer, got {show(value)}", param) from None
            if math.isfinite(as_float) and as_float.is_integer():
                return int(as_float)
            raise fail(func, f"{param} must be an integer, got {show(value)}", param)
    if isinstance(value, Real) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    raise fail(func, f"{param} must be an integer, got {show(value)}", param)


def as_number(func: str, param: str, value) -> float:
    """A float from a number or numeric text; anything else (bools included) is refused. May be
    NaN or infinite: the caller checks the range."""
    if isinstance(value, (bool, np.bool_)):
        raise fail(func, f"{param} must be a number, got {show(value)}", param)
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise fail(func, f"{param} must be a number, got {show(value)}", param) from None


def is_auto(value) -> bool:
    """True for the text 'auto' (any case, surrounding blanks ignored): choose c or k by the
    Freedman-Diaconis rule."""
    return isinstance(value, str) and value.strip().lower() == "auto"
