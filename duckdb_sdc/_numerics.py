"""Scale invariance: how every method and measure of duckdb_sdc stays exact from 1e-308 to 1e308.

The principle, stated once. Almost every method and measure is invariant or equivariant under a
positive scaling of the data: a partition of x is a partition of 2x, the group means of 2x are twice
those of x, IL1s and record linkage of 2x equal those of x. Multiplying float64 numbers by a power of
two is exact (unless a result leaves the normal range), and so is every later sum, difference,
product, quotient and comparison: with x' = x * 2^-e, fl(a' + b') = fl(a + b) * 2^-e and so on. So
a function

1. picks e from the largest magnitude of its data, so that max |x'| lies in [1/2, 1) (`exponent`);
2. computes on x' = x * 2^-e (`to_unit`), where sums of n values stay below n and sums of squares
   below n, so nothing overflows, and nothing that matters underflows (values 2^1022 times smaller
   than the largest are lost, as they would be in any sum with it);
3. scales a result in data units back by 2^e (`from_unit`), a quantity in squared units by 2^2e,
   and leaves a scale-free one (a share, a ratio, a partition) as it is.

Since x and x * 2^k give the same x' bit for bit, the function computes the same numbers for both:
the partition at 1e308 and at 1e-300 is the one at 1, and a result in data units is the one at 1
times 2^k exactly, or correctly rounded where it falls among the subnormal numbers. Where the scaled
back result is not a finite float64 (a mean squared error of 1e616), the function refuses with
`OutOfRange`, naming itself and the parameter; it never returns inf or NaN.

Columns that are scaled independently (a standardised attribute, a per-column measure) each get their
own exponent; quantities that compare columns with each other (unstandardised distances) share one.
docs/numerics.md lists what each family does and where it refuses; tests/methods/test_numerics.py checks it.
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import SdcError


class OutOfRange(SdcError):
    """A result that is not a finite float64 (it overflows), though the data are finite."""


def exponent(a, *more) -> int:
    """e with max |a| * 2^-e in [1/2, 1): the binary exponent of the largest magnitude of the finite
    values a (0 when a is empty or all zero); with more arrays, of the largest magnitude of all of them
    (an all-zero one adds nothing: it must not pull e up to 0 beside subnormal values)."""
    top = 0.0
    for part in (a, *more):
        arr = np.asarray(part, dtype=np.float64)
        if arr.size:
            top = max(top, float(max(-arr.min(), arr.max())))
    return math.frexp(top)[1] if top > 0.0 else 0


def column_exponents(A: np.ndarray, *more: np.ndarray) -> np.ndarray:
    """`exponent` of every column of the (n, p) matrix A (0 for an all-zero column); with more (m, p)
    matrices, of every column of all of them together."""
    tops = [np.maximum(-M.min(axis=0), M.max(axis=0)) for M in (A, *more) if M.shape[0]]
    if not tops:
        return np.zeros(A.shape[1], np.int64)
    return np.frexp(np.maximum.reduce(tops))[1].astype(np.int64)  # frexp(0) gives exponent 0


def to_unit(a, e: int | None = None) -> tuple[np.ndarray, int]:
    """(a * 2^-e, e), a new float64 array whose largest magnitude lies in [1/2, 1) when e is None
    (e from `exponent`); exact unless values lie more than 2^1022 below the largest."""
    arr = np.asarray(a, dtype=np.float64)
    if e is None:
        e = exponent(arr)
    return np.ldexp(arr, -e), e


def from_unit(func: str, what: str, r, e: int, *, power: int = 1, param: str | None = None):
    """r * 2^(power e), the result r of a computation on data scaled by 2^-e brought back to data
    units (power 2 for squared units). Refuses with `OutOfRange` when a finite r becomes infinite
    (naming `param`, the parameter holding the data, when given)."""
    with np.errstate(over="ignore", under="ignore"):
        scaled = np.ldexp(np.asarray(r, dtype=np.float64), power * e)
    finite_before = np.isfinite(r)
    if np.any(finite_before & ~np.isfinite(scaled)):
        raise out_of_range(func, what, param)
    return scaled if isinstance(r, np.ndarray) else float(scaled)


def out_of_range(func: str, what: str, param: str | None = None) -> OutOfRange:
    """The error of a result `what` that float64 cannot hold for the data (of parameter `param`)."""
    if param is None:
        return OutOfRange(f"{func}: {what} is larger than the largest float64 (about 1.8e308) for these data; "
                          "rescale the data (for example to thousands) and scale the result back")
    detail = (f"{what} is larger than the largest float64 (about 1.8e308) for these values of {param}; rescale "
              f"{param} (for example to thousands) and scale the result back")
    return OutOfRange(f"{func}: {detail}", func=func, param=param, detail=detail)


def check_finite(func: str, what: str, value, param: str | None = None):
    """value, or `OutOfRange` when it is infinite (a result that overflowed although the data are finite)."""
    if not np.all(np.isfinite(value)):
        raise out_of_range(func, what, param)
    return value


__all__ = ["OutOfRange", "check_finite", "column_exponents", "exponent", "from_unit", "out_of_range", "to_unit"]
