"""Masking the values of one whole stratum: the one per-stratum masking path of the Spark engine.

`mask_stratum` calls the very function the DuckDB release calls for a stratum (the registry row's
Arrow UDF, which validates the parameters and calls the numpy layer), on the stratum's values handed
over in the order of the release key, with the parameters written as the SQL binding receives them
(text). So for a whole stratum the Spark engine and the DuckDB engine run the same code.

Seeds: a seeded rule's stratum gets `duckdb_sdc.params.stratum_seed(seed, column, stratum_index)`,
with stratum_index the stratum's position in the ascending order of the strata values (NULLS LAST)
and column the rule's first column: the contract of `duckdb_sdc.masking`, the one the DuckDB release
and the table forms follow, so the same seed gives the same release on either engine. The UDF it
calls reports errors under the method's SQL name and masks through `duckdb_sdc.masking.mask`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..params import SEED, stratum_seed
from ..release.methods import BOXES, COLUMN, NAMES, ROWS, SECRET_PARAMS, ReleaseMethod
from ..sql.registry import REGISTRY

_ROWS_BY_NAME = {row.name: row for row in REGISTRY}


def _sql_text(value) -> str | None:
    """A parameter value as the SQL binding receives it (the macros pass `param::VARCHAR`)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_sql_text(v) for v in value) + "]"
    return str(value)


def _default_text(literal: str | None) -> str | None:
    """A registry default (a SQL literal) as the text the binding receives."""
    if literal is None or literal.upper() == "NULL":
        return None
    if literal.startswith("'") and literal.endswith("'"):
        return literal[1:-1].replace("''", "'")
    return literal


@dataclass(frozen=True)
class StratumCall:
    """A masking rule's method and parameters, ready to be called on one stratum at a time."""
    method: ReleaseMethod
    params: dict  # the rule's parameters as written (plus the epsilon a budget split assigned)
    columns: tuple[str, ...]  # the rule's columns (one for a column method)

    def texts(self, stratum_index: int) -> list[str | None]:
        out = []
        for p in self.method.params:
            if p.name == NAMES:
                out.append(json.dumps(list(self.columns)))
            elif p.name in self.params:
                value = self.params[p.name]
                if p.name in SECRET_PARAMS and value is not None:
                    value = stratum_seed(SEED.check(value, self.method.name, p.name), self.columns[0], stratum_index)
                out.append(_sql_text(value))
            else:
                out.append(_default_text(p.default))
        return out


def _list_of_values(values: np.ndarray) -> pa.Array:
    """One list (a whole stratum) of doubles, NaN becoming NULL."""
    mask = np.isnan(values)
    inner = pa.array(values, type=pa.float64(), mask=mask if mask.any() else None)
    return pa.ListArray.from_arrays(pa.array([0, values.shape[0]], pa.int32()), inner)


def _list_of_records(X: np.ndarray) -> pa.Array:
    """One list of records (m x p, NaN = NULL attribute)."""
    m, p = X.shape
    flat = X.ravel()
    mask = np.isnan(flat)
    values = pa.array(flat, type=pa.float64(), mask=mask if mask.any() else None)
    records = pa.ListArray.from_arrays(pa.array(np.arange(m + 1) * p, pa.int32()), values)
    return pa.ListArray.from_arrays(pa.array([0, m], pa.int32()), records)


def _float(arr: pa.Array) -> np.ndarray:
    return arr.to_numpy(zero_copy_only=False).astype(np.float64) if arr.null_count == 0 else \
        np.asarray(arr.fill_null(np.nan).to_numpy(zero_copy_only=False), dtype=np.float64)


def _records_out(arr: pa.Array, m: int, p: int) -> np.ndarray:
    """list<list<double>> of one stratum -> (m, p), NaN for a NULL record or value."""
    records = arr.values
    out = np.full((m, p), np.nan)
    valid = records.is_valid().to_numpy(zero_copy_only=False)
    if valid.any():
        flat = _float(records.flatten())
        out[valid] = flat.reshape(-1, p)
    return out


@dataclass(frozen=True)
class Boxes:
    """A box method's result for one stratum: per record its box id within the stratum (-1: no box)
    and the box's lower and upper bounds per column (NaN without a box)."""
    box: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def mask_stratum(call: StratumCall, values: np.ndarray, stratum_index: int):
    """The masked values of one stratum. values: the stratum's records in key order, a float array
    (NaN for NULL) of shape (m,) for a column method or (m, p) for a group. Returns an array of the
    same shape (NaN for NULL), or `Boxes` for a box method. Raises SdcError as the SQL function does."""
    row = _ROWS_BY_NAME[call.method.name]
    name = pa.array([row.name], pa.string())  # the reporting name every UDF takes first
    params = [pa.array([t], pa.string()) for t in call.texts(stratum_index)]
    kind = call.method.kind
    if kind == COLUMN:
        result = row.udf.fn(name, _list_of_values(np.asarray(values, np.float64)), *params)
        return _float(result.values)
    X = np.asarray(values, np.float64)
    if X.ndim == 1:
        X = X[:, None]
    m, p = X.shape
    result = row.udf.fn(name, _list_of_records(X), *params)
    if kind == ROWS:
        return _records_out(result, m, p)
    assert kind == BOXES
    structs = result.values
    valid = structs.is_valid().to_numpy(zero_copy_only=False)
    box = np.full(m, -1, np.int64)
    lower = np.full((m, p), np.nan)
    upper = np.full((m, p), np.nan)
    if valid.any():
        box[valid] = structs.field("box").filter(structs.is_valid()).to_numpy(zero_copy_only=False)
        lower[valid] = _float(structs.field("lower").filter(structs.is_valid()).flatten()).reshape(-1, p)
        upper[valid] = _float(structs.field("upper").filter(structs.is_valid()).flatten()).reshape(-1, p)
    return Boxes(box, lower, upper)


__all__ = ["Boxes", "StratumCall", "mask_stratum", "stratum_seed"]
