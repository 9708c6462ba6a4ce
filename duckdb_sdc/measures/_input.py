"""Input checks shared by every measure: an (original, masked) pair of equal shape, finite values."""

from __future__ import annotations

import numpy as np

from .._numerics import column_exponents, exponent
from .._validate import SdcError, fail, refuse_nonfinite


class UndefinedMeasure(SdcError):
    """The measure is undefined for these data (a constant original column, a single record, every
    original value 0). The numpy functions raise it; the SQL aggregates return NULL instead, and
    `evaluate` reports the value as missing with the message as its note."""


def undefined(func: str, message: str) -> UndefinedMeasure:
    return UndefinedMeasure(f"{func}: {message}")


def matrix(func: str, param: str, values) -> np.ndarray:
    """`values` as a C-contiguous float64 n x p matrix (a 1-D array is one column); finite values only."""
    a = np.asarray(values, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise fail(func, f"{param} must be a 1-D array (one column) or a 2-D n x p array, got shape {a.shape}")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise fail(func, f"{param} is empty (shape {a.shape}); a measure needs at least one record and one column")
    refuse_nonfinite(func, param, a, "leave out records with missing values")
    return np.ascontiguousarray(a)


def pair(func: str, x, xm) -> tuple[np.ndarray, np.ndarray]:
    """The original and masked data as two n x p float64 matrices of the same shape."""
    X = matrix(func, "x", x)
    XM = matrix(func, "xm", xm)
    if X.shape != XM.shape:
        raise fail(func, f"x and xm must have the same shape (one masked value per original value), "
                         f"got {_shape(x)} and {_shape(xm)}")
    return X, XM


def unit_columns(X: np.ndarray, XM: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X', XM', e): every column j of both sides scaled by the same power of two 2^-e_j, the one that
    puts the column's largest magnitude (over x and xm) in [1/2, 1). Exact (`duckdb_sdc._numerics`):
    a measure that is invariant under scaling a column computes the same numbers from X' and XM' at
    any scale, with no sum, difference or square overflowing at 1e308 or underflowing at 1e-300."""
    e = column_exponents(X, XM)  # of both sides together: an all-zero side must not pull e up to 0
    return np.ldexp(X, -e), np.ldexp(XM, -e), e


def unit_common(X: np.ndarray, XM: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(X', XM', e): both sides scaled by one power of two 2^-e for all columns (for the measures that
    mix columns in one unit, such as the mean absolute error over all cells)."""
    e = exponent(X, XM)
    return np.ldexp(X, -e), np.ldexp(XM, -e), e


def _shape(values) -> tuple:
    return tuple(np.shape(values))


def column_moments(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample standard deviation (n - 1; 0 for a single record) of every column, summed over
    each column's sorted values: they depend on the values only, never on the order of the records.
    SQL gives no order, and a last-bit change of a mean or sd can change which distances tie (record
    linkage) or whether a value sits on an interval's end (interval disclosure). The same sums as
    `stacked._moments` for many small groups."""
    S = np.sort(np.ascontiguousarray(A), axis=0)  # row-major: NumPy sums the rows in order (a column
    mean = S.mean(axis=0)                           # slice in column-major order would sum pairwise)
    if A.shape[0] < 2:
        return mean, np.zeros(A.shape[1])
    centred = S - mean
    return mean, np.sqrt((centred * centred).sum(axis=0) / (A.shape[0] - 1))


def sample_sd(func: str, X: np.ndarray, what: str = "x") -> np.ndarray:
    """Sample standard deviation (n - 1) of every column of X (see `column_moments`); an error for
    n = 1 or a constant column, where standardising is undefined."""
    n = X.shape[0]
    if n < 2:
        raise undefined(func, f"{what} has n = 1 record; the sample standard deviation (n - 1) is undefined")
    sd = column_moments(X)[1]
    constant = np.flatnonzero(np.ptp(X, axis=0) == 0)
    if constant.size:
        raise undefined(func, f"column {int(constant[0])} of {what} is constant (standard deviation 0); "
                         "standardising by it is undefined")
    return sd
