"""The SQL side of small strata (duckdb_sdc.strata): `__sdc_pool_strata`, the internal UDF that the
table forms' pooled source (`__sdc_pooled_source_sql` in sql/00_internal.sql) calls once with every
stratum's counts, in the order that numbers the strata, and that returns each stratum's target (the
stratum whose values it takes, or -1 for the rest stratum), or refuses."""

from __future__ import annotations

import json

import pyarrow as pa

from .. import masking, strata
from .._validate import fail
from ..params import REST_STRATUM, SMALL_STRATA
from ._arrow import reported, reporting_name, single_array

TYPES = ("VARCHAR", "VARCHAR", "VARCHAR[]") + ("VARCHAR",) * 4 + ("VARCHAR[]", "BOOLEAN[]", "BIGINT[]", "BIGINT[][]", "VARCHAR[]")
RETURNS = "BIGINT[]"


def _method(name: str) -> str:
    """The masking method whose need a table form has: a labels function's is its rounding method's, a
    weighted function's (`<method>_weighted`) its method's (weights change representatives, not groups)."""
    if name not in masking.METHODS and name.endswith("_weighted"):
        name = name[: -len("_weighted")]
    if name not in masking.METHODS and name.endswith("_labels"):
        return name[: -len("_labels")] + "_round"
    return name


def decide(func, method, args, needs, how, rest, names, labels, is_rest, rows, counts, types) -> list[int]:
    """The targets of table form `func`'s strata (see the module). A table without a record has no
    stratum (the aggregated lists arrive as NULL): no target, and the result has no row. Its
    `small_strata` and `rest_stratum` are still checked; whether a rest stratum's text fits the
    strata columns' types is read off the strata, so an empty table, which has none, is not refused
    for it."""
    how = SMALL_STRATA.check(how, func, "small_strata")
    rest = REST_STRATUM.check(rest, func, "rest_stratum", n=len(names))
    if how == strata.REST:
        for name, type_ in zip(names, types):
            if type_ != "VARCHAR":
                raise fail(func, f"rest_stratum is a text, and strata column {name!r} is {type_}; use small_strata = "
                                 "'nearest' (the pools take the values of existing strata), or cast the column to "
                                 "text", "rest_stratum")
    known = _method(method) in masking.METHODS  # a plug-in's table form states no need: nothing is small
    wanted = [strata.need(_method(method), args, ", ".join(cols), func=func) for cols in needs] if known else []
    rest_index = next((i for i, r in enumerate(is_rest) if r), None)
    rest_label = ", ".join(f"{n} = {v!r}" for n, v in zip(names, rest or ()))
    return strata.pool(how, rows, counts, wanted, labels, rest_index=rest_index, rest_label=rest_label, func=func,
                       hint="small_strata := 'rest' (with rest_stratum := 'other') pools the small strata into one "
                            "stratum labelled so, 'nearest' pools each into a neighbouring stratum, whose values its "
                            "records then carry")


def pool_strata(fname, method, args, needs, how, rest, names, labels, is_rest, rows, counts, types):
    arrays = (fname, method, args, needs, how, rest, names, labels, is_rest, rows, counts, types)
    func = reporting_name(fname) or "small_strata"
    columns = [single_array(a).to_pylist() for a in arrays]
    out = []
    with reported(func):
        for f, method, args, needs, how, rest, names, labels, is_rest, rows, counts, types in zip(*columns):
            rest = None if rest is None else json.loads(rest)
            # an empty table: list() over no stratum is NULL, not []
            labels, is_rest, rows, counts, types = (v or [] for v in (labels, is_rest, rows, counts, types))
            out.append(decide(f, method, args, json.loads(needs), how, rest, json.loads(names), labels, is_rest,
                              rows, counts, types))
    return pa.array(out, type=pa.list_(pa.int64()))
