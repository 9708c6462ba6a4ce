"""SQL rows for rounding to multiples of a base (`duckdb_sdc.methods.base_rounding`): base_round, its
labels, set-of-attraction sizes and chosen base, and the table form."""

from __future__ import annotations

import inspect

import numpy as np
import pyarrow as pa

from .. import masking
from .._validate import refuse_nonfinite
from ..methods import base_rounding as br
from ..params import COL_PARAM, POOLING_ARGS, STRATA_PARAMS, TBL_PARAM, XS_PARAM
from ._arrow import float_values, list_udf, reported, reporting_name, single_array
from .progress import group_done
from .function import Contract, SqlFunction, Udf

GROUP = "Rounding to multiples of a base"

_PARAMS = masking.METHODS["base_round"].params  # alpha, unit, base
_ARGS = ", ".join(f"{p.name}::VARCHAR" for p in _PARAMS)

_RULE = ("the smallest base b among the multiples of unit for which every value's set of attraction, the values "
         "rounded to the same multiple q b (q = floor(x / b + 1/2)), holds at least alpha records (unit NULL: four "
         "significant digits at the search's lower bound, or the data's decimal resolution where coarser, so "
         "integer data get integer bases), or the given base (refused unless it meets alpha); b = 0 and the values "
         "unchanged when every distinct value already occurs alpha times and no base is given (Senavirathne & "
         "Torra 2019, after Willenborg & De Waal)")


def _round(x, alpha, unit, base):
    return masking.mask("base_round", x, (alpha, unit, base))


def _labels(x, alpha, unit, base):
    return br.base_rounding(x, alpha, unit=unit, base=base).labels


def _sizes(x, alpha, unit, base):
    return br.base_rounding(x, alpha, unit=unit, base=base).sizes


def _base_udf(name, xs, alpha, unit, base):
    """One DOUBLE per list: the chosen base (NULL for a NULL or empty list). Errors name `name`."""
    func = reporting_name(name) or "base_round_base"
    with reported(func, {"x": "xs"}):
        return _bases(func, xs, alpha, unit, base)


def _bases(func, xs, alpha, unit, base):
    lists = single_array(xs)
    alphas, units, bases = (single_array(a).to_pylist() for a in (alpha, unit, base))
    offsets = np.asarray(lists.offsets, dtype=np.int64)
    child = lists.values.slice(offsets[0], offsets[-1] - offsets[0])
    values, valid = float_values(child)
    rel = offsets - offsets[0]
    out: list[float | None] = []
    for r in range(len(lists)):
        a, b = rel[r], rel[r + 1]
        x = values[a:b] if valid is None else values[a:b][valid[a:b]]
        if not lists[r].is_valid or x.shape[0] == 0:
            out.append(None)
            continue
        refuse_nonfinite(func, "xs", x)
        out.append(br.base_rounding(x, alphas[r], unit=units[r], base=bases[r]).b)
        group_done()
    return pa.array(out, type=pa.float64())


_base_udf.__signature__ = inspect.Signature(
    [inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY) for name in ("name", "xs", "alpha", "unit", "base")])


def _list_row(name: str, compute, returns: str, pa_type, doc: str, example: str) -> SqlFunction:
    return SqlFunction(
        name=name, kind="scalar", params=(XS_PARAM, *_PARAMS), returns=returns, group=GROUP, doc=doc, example=example,
        udf=Udf(list_udf(name, compute, pa_type, len(_PARAMS)), ("DOUBLE[]",) + ("VARCHAR",) * len(_PARAMS), returns),
        scale=None,  # the bases are decimal (multiples of a decimal unit): data scaled by 2^e get other bases
        contract=Contract({"xs": "original"}),
    )


FUNCTIONS: list[SqlFunction] = [
    _list_row(
        "base_round", _round, "DOUBLE[]", pa.float64(),
        doc=(f"Rounds a column to the multiples of {_RULE}. Every value is replaced by the double nearest to its "
             "multiple; the result is aligned with xs; NULLs stay NULL in place and count in no set. An error "
             "when alpha exceeds the number of values. Use it with GROUP BY to round strata separately."),
        example="SELECT region, base_round(list(income), 5) FROM people GROUP BY region"),
    _list_row(
        "base_round_labels", _labels, "BIGINT[]", pa.int64(),
        doc=("The sets of attraction of base_round: the number of each value's rounding point, 0..g-1 in increasing "
             "order of the points, aligned with xs; NULL where xs is NULL."),
        example="SELECT base_round_labels([1, 2, 3, 11, 12, 13], 3)  -- [0, 0, 0, 1, 1, 1]"),
    _list_row(
        "base_round_sizes", _sizes, "BIGINT[]", pa.int64(),
        doc=("The size of each value's set of attraction under base_round (the number of values rounded to the same "
             "multiple), its protection; at least alpha. NULL where xs is NULL."),
        example="SELECT list_min(base_round_sizes(list(income), 5)) FROM people"),
    SqlFunction(
        name="base_round_base", kind="scalar", params=(XS_PARAM, *_PARAMS), returns="DOUBLE", group=GROUP,
        doc=("The base b that base_round chooses for the list: the smallest multiple of unit meeting alpha, or the "
             "given base (0 when the values need no rounding); NULL for a NULL or empty list."),
        example="SELECT region, base_round_base(list(income), 5) FROM people GROUP BY region",
        udf=Udf(_base_udf, ("DOUBLE[]",) + ("VARCHAR",) * len(_PARAMS), "DOUBLE"),
        scale=None,
        contract=Contract({"xs": "original"}),
    ),
    SqlFunction(
        name="base_round_table", kind="table", params=(TBL_PARAM, COL_PARAM, *_PARAMS, *STRATA_PARAMS), returns="table",
        group=GROUP,
        doc=("Table form of base_round: the rows of tbl with column col rounded (same column names and order; the "
             "column becomes DOUBLE), optionally each stratum with its own base. Each stratum's values reach the "
             "method in the order of the rows' whole content. Rows come back in no particular order."),
        example="SELECT * FROM base_round_table('people', 'income', 5, strata := 'region')",
        body=f"FROM query(__sdc_mask_column_sql('base_round', tbl, col, [{_ARGS}], strata, {POOLING_ARGS}))",
        contract=Contract({"col": "original"}, result="rows"),
    ),
]
