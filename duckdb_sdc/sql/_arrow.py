"""Arrow plumbing for list functions: DuckDB hands a vectorised UDF one Arrow chunk of rows, each
row a list (the whole column of one group); we call a numpy function on the non-NULL values of every
row and hand back lists aligned with the input, NULLs left in place.

Every UDF's first argument is the name of the SQL function the user called (see `registry`); errors
of the numpy layer are reported under it (`reported`).
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Callable

import numpy as np
import pyarrow as pa

from .._validate import SdcError, fail, refuse_nonfinite, reporting
from .progress import group_done

# compute(values, *params) -> ndarray aligned with `values` (the non-NULL values)
RowCompute = Callable[..., np.ndarray]


@contextmanager
def reported(func: str, params: dict[str, str] | None = None):
    """Report errors raised inside under the SQL function `func`: an SdcError renamed (parameter
    names mapped by `params`, e.g. the numpy layer's x to the SQL xs), and an arithmetic or value
    error that escaped the numpy layer (an overflow on extreme values, ...) as an SdcError naming
    the function instead of a raw Python traceback."""
    try:
        with reporting(func, params):
            yield
    except SdcError:
        raise
    except (ArithmeticError, ValueError, IndexError) as err:
        raise fail(func, f"cannot compute a result for this input ({type(err).__name__}: {err}); "
                         "values this extreme or this degenerate are outside what it supports") from None


DATA_PARAMS: dict[str, str] = {}
"""A table form's name -> the parameter its registry row's Contract reads as 'original' (cols, col):
declared by `registry` when it collects the rows (the family modules below it build their UDFs with
this module)."""


def data_param(func: str, default: str) -> str:
    """The parameter of SQL function `func` that holds the data a UDF computes on, for its messages: a
    table form's (`DATA_PARAMS`) when the table form is the reporting name, else `default` (the list
    function's own: xs, rows)."""
    return DATA_PARAMS.get(func, default)


def reporting_name(arr) -> str:
    """The reporting name (the first argument, a constant)."""
    arr = single_array(arr)
    return arr[0].as_py() if len(arr) else ""


def single_array(arr) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        if arr.num_chunks == 1:
            return arr.chunk(0)
        if arr.num_chunks == 0:
            return pa.array([], type=arr.type)
        return pa.concat_arrays(arr.chunks)
    return arr


def float_values(child: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    """The list child as float64 numpy (NULL slots arbitrary) and its validity (None: all valid)."""
    if child.null_count == 0:
        return child.to_numpy(zero_copy_only=False), None
    valid = child.is_valid().to_numpy(zero_copy_only=False)
    return child.fill_null(0.0).to_numpy(zero_copy_only=False), valid


def list_udf(func: str, compute: RowCompute, out_type: pa.DataType, n_params: int, param: str = "xs") -> Callable:
    """Wrap `compute` as an Arrow UDF over (reporting name, xs DOUBLE[], param1, param2, ...).

    Per row: a NULL list gives NULL; an empty or all-NULL list comes back unchanged; otherwise NaN and
    infinity are refused, and compute(non_null_values, *row_params) fills the non-NULL slots.
    Parameters arrive as Python values (None for NULL); compute validates them. Errors name the
    reporting name, and the numpy layer's x is the SQL list's parameter `param` (xs).
    """

    def udf(name, xs, *params):
        fname = reporting_name(name) or func
        with reported(fname, {"x": data_param(fname, param)}):
            return _list_udf(fname, xs, params)

    def _list_udf(func, xs, params):
        lists = single_array(xs)
        rows = [single_array(p).to_pylist() for p in params]
        n_rows = len(lists)
        offsets = np.asarray(lists.offsets, dtype=np.int64)
        base = offsets[0]
        child = lists.values.slice(base, offsets[-1] - base)
        values, valid = float_values(child)
        out = np.zeros(values.shape[0], dtype=out_type.to_pandas_dtype())
        rel = offsets - base
        row_null = lists.is_null().to_numpy(zero_copy_only=False) if lists.null_count else None
        for r in range(n_rows):
            if row_null is not None and row_null[r]:
                continue
            a, b = rel[r], rel[r + 1]
            if a == b:
                continue
            seg = values[a:b]
            mask = None if valid is None else valid[a:b]
            x = seg if mask is None else seg[mask]
            if x.shape[0] == 0:
                continue
            refuse_nonfinite(func, param, x)
            result = compute(x, *(p[r] for p in rows))
            group_done()
            if mask is None and b - a == out.shape[0] and result.dtype == out.dtype:
                out = result  # one list without NULLs: no copy (10M values: 80 MB less)
            elif mask is None:
                out[a:b] = result
            else:
                out[a:b][mask] = result
        out_values = pa.array(out, type=out_type, mask=None if valid is None else ~valid)
        list_offsets = pa.array(rel, type=pa.int64() if pa.types.is_large_list(lists.type) else pa.int32())
        cls = pa.LargeListArray if pa.types.is_large_list(lists.type) else pa.ListArray
        return cls.from_arrays(list_offsets, out_values,
                               mask=None if row_null is None else pa.array(row_null))

    udf.__name__ = f"sdc_{func}"
    # DuckDB checks the callable's arity against the declared parameter types
    udf.__signature__ = inspect.Signature(
        [inspect.Parameter("name", inspect.Parameter.POSITIONAL_ONLY),
         inspect.Parameter("xs", inspect.Parameter.POSITIONAL_ONLY)]
        + [inspect.Parameter(f"p{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(n_params)]
    )
    return udf
