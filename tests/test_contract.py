"""The contract every registered SQL function keeps, generated from the registry: no case is written by
hand for a function. For each function the suite builds a valid call from its parameters' kinds
(duckdb_sdc.params; data come from small tables, every other parameter takes its default or its
kind's valid example) and then checks:

* the call runs; NULL data (a NULL list, all-NULL data, no data) give NULL or come back as they are,
  NULLs stay in place and take no part (the result on the other values is the result without them);
* NaN, +inf and -inf in the data, and data of the wrong type, are refused with an error naming the
  function (and the parameter or the column);
* every invalid example of every parameter's kind is refused with an error naming the function and
  the parameter;
* every docstring example runs, and where it states its result (`-- 0.25`) the result is that;
* scale: on the same data multiplied by 2^1014 (values up to 1.75e308) and by 2^-1064 (subnormal
  values), the function returns the rescaled answer (the registry row's `scale` says which power of the
  factor) within rounding, or refuses with an error naming it; never inf, NaN or a wrong value.

One session-scoped connection; small data, so the whole suite stays fast.
"""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandas as pd
import pytest

import duckdb_sdc
from duckdb_sdc._validate import SdcError
from duckdb_sdc.params import TABLE, Data, KeyNames, SamplingWeights, Seed
from duckdb_sdc.sql import REGISTRY

BIG, TINY = 2.0 ** 1014, 2.0 ** -1064
N = 12
NULL_IDS = (3, 7)  # rows whose data are NULL in the table with NULLs


def _data(signed: bool = False) -> pd.DataFrame:
    """12 records of integers in [1, 1000] (exact at every scale), or in [-1000, 1000] when signed."""
    rng = np.random.default_rng(11)
    x = rng.choice(np.arange(1, 1001), N, replace=False).astype(float)
    y = rng.choice(np.arange(1, 1001), N, replace=False).astype(float)
    if signed:
        x[::2] *= -1
        y[1::3] *= -1
    return pd.DataFrame({
        "id": np.arange(1, N + 1), "s": ["a", "b", "a", "b", "c", "a", "b", "c", "a", "b", "c", "a"],
        "c": np.repeat(np.arange(4), 3), "x": x, "y": y,
        "xm": x + rng.integers(-3, 4, N), "ym": y + rng.integers(-3, 4, N),
        "w": rng.integers(1, 5, N),  # weights (integers): never scaled
    })


def _scaled(df: pd.DataFrame, factor: float) -> pd.DataFrame:
    out = df.copy()
    for col in ("x", "y", "xm", "ym"):
        out[col] = out[col] * factor
    out["lo"] = np.minimum(out["x"], out["y"])  # a box's bounds, lo <= hi
    out["hi"] = np.maximum(out["x"], out["y"])
    return out


@pytest.fixture(scope="module")
def con():
    c = duckdb_sdc.connect(threads=1)
    base = _data()
    for name, df in {"t": _scaled(base, 1.0), "t_big": _scaled(base, BIG), "t_tiny": _scaled(base, TINY),
                     "t_sgn": _scaled(_data(True), 1.0), "t_sgn_big": _scaled(_data(True), BIG)}.items():
        c.register("df", df)
        c.execute(f"CREATE TABLE {name} AS SELECT * FROM df")
        c.unregister("df")
    c.execute("CREATE TABLE tn AS SELECT * REPLACE (CASE WHEN id IN (3, 7) THEN NULL ELSE x END AS x, "
              "CASE WHEN id IN (3, 7) THEN NULL ELSE y END AS y, CASE WHEN id IN (3, 7) THEN NULL ELSE xm END AS xm, "
              "CASE WHEN id IN (3, 7) THEN NULL ELSE ym END AS ym, CASE WHEN id IN (3, 7) THEN NULL ELSE lo END AS lo, "
              "CASE WHEN id IN (3, 7) THEN NULL ELSE hi END AS hi) FROM t")
    c.execute("CREATE TABLE tf AS SELECT * FROM t WHERE id NOT IN (3, 7)")  # t without the NULL rows
    c.execute("CREATE TABLE tz AS SELECT * REPLACE (NULL::DOUBLE AS x, NULL::DOUBLE AS y, NULL::DOUBLE AS xm, "
              "NULL::DOUBLE AS ym, NULL::DOUBLE AS lo, NULL::DOUBLE AS hi) FROM t")
    c.execute("CREATE TABLE te AS SELECT * FROM t LIMIT 0")
    data = ("x", "y", "xm", "ym", "lo", "hi")
    for name, bad in (("tnan", "'nan'"), ("tinf", "'inf'"), ("tninf", "'-inf'")):
        c.execute(f"CREATE TABLE {name} AS SELECT * REPLACE ("
                  + ", ".join(f"CASE WHEN id = 2 THEN {bad}::DOUBLE ELSE {d} END AS {d}" for d in data) + ") FROM t")
    c.execute("CREATE TABLE tv AS SELECT * REPLACE (" + ", ".join(f"'v' || {d} AS {d}" for d in data)
              + ") FROM t")  # data of the wrong type
    _example_tables(c)
    yield c
    c.close()


def _example_tables(c) -> None:
    """The tables the docstring examples read."""
    rng = np.random.default_rng(5)
    n = 60
    people = pd.DataFrame({"id": np.arange(n), "region": rng.choice(["north", "south", "east"], n),
                           "income": rng.integers(1000, 90000, n).astype(float),
                           "expenses": rng.integers(500, 50000, n).astype(float),
                           "savings": rng.integers(0, 30000, n).astype(float), "age": rng.integers(18, 90, n)})
    j = pd.DataFrame({"id": np.arange(n), "region": people["region"], "income": people["income"],
                      "a": people["income"], "b": people["expenses"], "c": people["savings"],
                      "y": people["age"].astype(float)})
    for col in ("income", "a", "b", "c", "y"):
        j[f"{col}_m"] = j[col] + rng.integers(-50, 51, n)
    for name, df in (("people", people), ("people_masked", people.assign(income=people["income"] + 7)), ("j", j)):
        c.register("df", df)
        c.execute(f"CREATE TABLE {name} AS SELECT * FROM df")
        c.unregister("df")
    c.execute("CREATE TABLE clustered AS SELECT * FROM mdav_multi_labels_table('people', ['income', 'savings'], 5, "
              "strata := 'region')")
    c.execute("CREATE TABLE weighted AS SELECT income, savings, 1 + id % 3 AS w FROM people")
    c.execute("CREATE TABLE weighted_people AS SELECT *, 1 + id % 4 AS w FROM people")
    c.execute("CREATE TABLE weighted_j AS SELECT *, 1 + id % 4 AS w FROM j")
    c.execute("CREATE TABLE released AS SELECT income_lower, income_upper, savings_lower, savings_upper, "
              "1 + id % 3 AS w FROM box_release_table('people', ['income', 'savings'], 5, 'mean(1)')")
    # hierarchies (value, level 1, top) for the recoding family: of age and region for the examples, and
    # h_any over every value of the data tables' columns (as text), which the valid calls use
    c.execute("CREATE TABLE age_h AS SELECT a AS age, (a // 10 * 10) || '-' || (a // 10 * 10 + 9) AS decade, "
              "'*' AS top FROM range(0, 121) r(a)")
    c.execute("CREATE TABLE region_h AS SELECT region, CASE WHEN region IN ('north', 'east') THEN 'north-east' "
              "ELSE 'south-west' END AS half, '*' AS top FROM (SELECT DISTINCT region FROM people)")
    c.execute("CREATE TABLE h_any AS SELECT v, 'g' || (hash(v) % 2) AS g, '*' AS top FROM (SELECT x::VARCHAR AS v FROM t "
              "UNION SELECT y::VARCHAR FROM t UNION SELECT s FROM t UNION SELECT c::VARCHAR FROM t "
              "UNION SELECT id::VARCHAR FROM t) WHERE v IS NOT NULL")


# ---------------------------------------------------------------------------------------------
# building calls from the kinds


def _is_data(p) -> bool:
    return isinstance(p.kind, Data)


# an aggregate's data argument by parameter name (the columns of the data tables)
_AGG_COLUMNS = {"x": "x", "xm": "xm", "y": "y", "w": "w", "value": "x", "lower": "lo", "upper": "hi",
                "x_lower": "lo", "x_upper": "hi", "y_lower": "lo", "y_upper": "hi"}
_AGG_VECTORS = {"x": "[x, y]", "xm": "[xm, ym]"}
# a table function's names by parameter name
_TABLE_NAMES = {"tbl": "{t}", "original": "{t}", "masked": "{t}", "released": "{t}"}
_COLUMN_NAMES = {"col": "'x'", "cols": "['x', 'y']", "key": "'id'", "columns": "['x', 'y']", "clusters": "'c'",
                 "weight": "'w'"}


def _data_arg(row, p, table: str) -> str:
    """SQL of a data argument read from `table`."""
    shape = p.kind.shape
    if row.kind == "aggregate":
        return _AGG_VECTORS[p.name] if shape == "vector" else _AGG_COLUMNS[p.name]
    if shape == "values":
        return f"(SELECT list(x ORDER BY id) FROM {table})"
    if shape == "records":
        return f"(SELECT list([x, y] ORDER BY id) FROM {table})"
    if shape == "labels":
        return f"(SELECT list(c ORDER BY id) FROM {table})"
    if shape == "weights":  # sampling weights aligned with the values
        return f"(SELECT list(w ORDER BY id) FROM {table})"
    raise AssertionError(f"{row.name}: no data of shape {shape} for a {row.kind} function")


def _value(row, p, table: str) -> str | None:
    """SQL of a parameter's value in the valid call; None: leave it to its default."""
    if _is_data(p):
        return _data_arg(row, p, table)
    if p.kind is TABLE or p.name in _TABLE_NAMES:
        return "'" + _TABLE_NAMES.get(p.name, "{t}").format(t=table) + "'"
    if p.name in _COLUMN_NAMES and row.kind == "table":
        return _COLUMN_NAMES[p.name]
    if isinstance(p.kind, Seed):
        return p.kind.valid  # seeded: the contract compares results
    if p.default is not None:
        return None
    return p.valid


def _call(row, table: str = "t", override: dict[str, str] | None = None) -> str:
    """The SQL query of a valid call of `row` on `table` (one of the data tables), with some
    parameters' SQL replaced by `override`."""
    override = override or {}
    args = []
    for p in row.params:
        value = override.get(p.name, _value(row, p, table))
        if value is None:
            continue
        args.append(value if p.default is None else f"{p.name} := {value}")
    call = f"{row.name}({', '.join(args)})"
    if row.kind == "table":
        return f"SELECT * FROM {call}"
    if row.kind == "aggregate":
        return f"SELECT {call} FROM {table}"
    return f"SELECT {call}"


def _has_data(row) -> bool:
    return any(_is_data(p) for p in row.params) or any(p.kind is TABLE for p in row.params)


def _rows(con, sql: str):
    cur = con.execute(sql)
    rows = cur.fetchall()
    return [d[0] for d in cur.description], rows


def _result(con, row, sql: str):
    """The result: a table's rows ordered by id (id first when it has one), else the one value."""
    names, rows = _rows(con, sql)
    if row.kind == "table":
        if "id" in names:
            i = names.index("id")
            rows = sorted(rows, key=lambda r: r[i])
        return names, rows
    return rows[0][0]


def _error_classes(cls=SdcError) -> set[str]:
    """SdcError and its subclasses (OutOfRange, UndefinedMeasure, ...): the errors a UDF may raise."""
    return {cls.__name__}.union(*(_error_classes(sub) for sub in cls.__subclasses__()))


def _clean(message: str) -> str:
    """The message without DuckDB's prefix for an SdcError raised in a UDF; any other Python
    exception keeps its 'Python exception occurred' (a raw traceback, never acceptable)."""
    for name in _error_classes():
        message = message.replace(f"Python exception occurred while executing the UDF: {name}: ", "")
    return message


def _refused(con, sql: str, *names: str) -> str:
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    message = str(info.value)
    assert "Python exception" not in _clean(message), message  # never a raw traceback
    assert "Parser Error" not in message, message
    for name in names:
        assert name in message, f"{name!r} not in {message!r}"
    return message


FUNCTIONS = [row for row in REGISTRY]
DATA_FUNCTIONS = [row for row in REGISTRY if _has_data(row)]
ids = lambda row: row.name  # noqa: E731


# ---------------------------------------------------------------------------------------------
# the valid call, NULLs, empty data


@pytest.mark.parametrize("row", FUNCTIONS, ids=ids)
def test_the_valid_call_runs(con, row):
    result = _result(con, row, _call(row))
    assert result is not None


def _key_measure(row) -> bool:
    """A measure of key combinations (duckdb_sdc.measures.keys): a record with a NULL key takes part (the
    NULL matches any value, or is a value of its own, as its `nulls` says), and a table without records
    is refused."""
    return any(isinstance(p.kind, KeyNames) for p in row.params)


def _null_result(value) -> bool:
    """NULL, or a struct of NULLs."""
    return value is None or (isinstance(value, dict) and all(v is None for v in value.values()))


def _lists(value) -> list:
    """The lists aligned with the data in a list function's result (a STRUCT's list fields)."""
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, list)]
    return [value]


def _one_value(row) -> bool:
    """A list function whose result is one value for the whole list (base_round_base), not values
    aligned with it: like an aggregate, it is NULL without data and ignores NULLs."""
    return row.kind == "scalar" and not row.returns.endswith("[]") and not row.returns.startswith("STRUCT")


@pytest.mark.parametrize("row", DATA_FUNCTIONS, ids=ids)
def test_no_data_and_all_null_data(con, row):
    if row.kind == "scalar":
        data = next(p for p in row.params if _is_data(p))
        assert con.execute(_call(row, override={data.name: "NULL"})).fetchall()[0][0] is None
        empty = "[]::DOUBLE[]" if data.kind.shape == "values" else "[]::DOUBLE[][]"
        overrides = {data.name: empty}
        overrides.update({p.name: "[]::BIGINT[]" for p in row.params if _is_data(p) and p.kind.shape == "labels"})
        overrides.update({p.name: "[]::DOUBLE[]" for p in row.params if _is_data(p) and p.kind.shape == "weights"})
        if _one_value(row):
            assert con.execute(_call(row, override=overrides)).fetchall()[0][0] is None
            assert con.execute(_call(row, "tz")).fetchall()[0][0] is None
            return
        assert all(v == [] for v in _lists(con.execute(_call(row, override=overrides)).fetchall()[0][0]))
        for got in _lists(con.execute(_call(row, "tz")).fetchall()[0][0]):
            assert len(got) == N and all(_null_result(v) for v in got), got
    elif row.kind == "aggregate":
        assert _null_result(_result(con, row, _call(row, "tz"))) or row.name in _COUNTS
        assert _null_result(_result(con, row, _call(row, "te"))) or row.name in _COUNTS
    elif _key_measure(row):
        _refused(con, _call(row, "te"), row.name, "has no records")
        assert _result(con, row, _call(row, "tz"))[1]
    else:
        names, rows = _result(con, row, _call(row, "tz"))
        if "id" not in names:  # a report over the data (a row per measure): it runs on no data too
            _result(con, row, _call(row, "te"))
            return
        assert _result(con, row, _call(row, "te"))[1] == []
        assert len(rows) == N
        data_cols = [i for i, n in enumerate(names) if n in ("x", "y") or n.endswith(("_lower", "_upper"))]
        if any(_is_data(p) for p in row.params) or data_cols:
            assert all(r[i] is None for r in rows for i in data_cols)


_COUNTS = {"fd_intervals", "fd_group_size"}  # counts: no data is 1 interval (documented)


def _drop_null_positions(value):
    return [v for i, v in enumerate(value) if i + 1 not in NULL_IDS]


@pytest.mark.parametrize("row", DATA_FUNCTIONS, ids=ids)
def test_nulls_stay_in_place_and_take_no_part(con, row):
    if _key_measure(row):  # a NULL key takes part: every record is counted, none gets a NULL measure
        override = {"keys": "['x', 's']"} | ({"sensitive": "'c'"} if any(p.name == "sensitive" for p in row.params) else {})
        if any(p.name == "max_suppressed" for p in row.params):  # the NULL records' class is smaller than k
            override["max_suppressed"] = "0.5"
        names, rows = _result(con, row, _call(row, "tn", override))
        added = [i for i, n in enumerate(names) if n not in con.sql("SELECT * FROM tn").columns]
        counted = [r[names.index("records")] for r in rows] if "records" in names else [N]
        assert len(rows) == N if "id" in names else (sum(counted) == N or set(counted) == {N})  # per stratum, per column
        assert all(r[i] is not None for r in rows for i in added if "id" in names)
        return
    with_nulls = _result(con, row, _call(row, "tn"))
    without = _result(con, row, _call(row, "tf"))
    if _one_value(row):
        assert with_nulls == without
    elif row.kind == "scalar":
        if isinstance(with_nulls, dict):  # a STRUCT: its lists aligned with the data, its counts
            assert {k: v for k, v in with_nulls.items() if not isinstance(v, list)} == \
                {k: v for k, v in without.items() if not isinstance(v, list)}
        for got, expected in zip(_lists(with_nulls), _lists(without)):
            assert [got[i - 1] for i in NULL_IDS] == [None, None]
            assert _drop_null_positions(got) == expected
    elif row.kind == "aggregate":
        assert with_nulls == without
    else:
        names, rows = with_nulls
        if "id" not in names:  # a report over the data: the same without the NULL rows
            assert rows == without[1]
            return
        data_cols = [i for i, n in enumerate(names) if n in ("x", "y") or n.endswith(("_lower", "_upper"))]
        assert all(r[i] is None for r in rows if r[names.index("id")] in NULL_IDS for i in data_cols)
        assert [r for r in rows if r[names.index("id")] not in NULL_IDS] == without[1]


# ---------------------------------------------------------------------------------------------
# bad data and bad parameters


def _reads_numbers(row) -> bool:
    """Whether the function reads numeric data: a numeric list parameter (not labels), or a table
    form with a column parameter."""
    if row.kind == "table":
        return any(p.name in ("col", "cols", "columns") for p in row.params)
    return any(_is_data(p) and p.kind.shape != "labels" for p in row.params)


NUMERIC_READERS = [row for row in DATA_FUNCTIONS if _reads_numbers(row)]


@pytest.mark.parametrize("bad", ["tnan", "tinf", "tninf"])
@pytest.mark.parametrize("row", NUMERIC_READERS, ids=ids)
def test_nan_and_infinity_are_refused(con, row, bad):
    _refused(con, _call(row, bad), row.name)


@pytest.mark.parametrize("row", [r for r in DATA_FUNCTIONS if r.kind != "table" or _reads_numbers(r)], ids=ids)
def test_data_of_the_wrong_type_are_refused(con, row):
    if row.kind == "scalar":
        data = next(p for p in row.params if _is_data(p))
        for bad in data.kind.invalid:
            _refused(con, _call(row, override={data.name: bad}), row.name)
    else:
        _refused(con, _call(row, "tv"), row.name)


def _param_cases():
    for row in REGISTRY:
        for p in row.params:
            if _is_data(p):
                continue
            for bad in p.kind.invalid:
                yield pytest.param(row, p, bad, id=f"{row.name}-{p.name}={bad}")


@pytest.mark.parametrize("row, param, bad", list(_param_cases()))
def test_invalid_parameter_values_are_refused(con, row, param, bad):
    _refused(con, _call(row, override={param.name: bad}), f"{row.name}", param.name)


def _weight_cases():
    for row in REGISTRY:
        for p in row.params:
            if isinstance(p.kind, SamplingWeights):
                for bad in p.kind.invalid:
                    yield pytest.param(row, p, bad, id=f"{row.name}-{p.name}={bad}")


@pytest.mark.parametrize("row, param, bad", list(_weight_cases()))
def test_invalid_sampling_weights_are_refused(con, row, param, bad):
    """A weight of 0, < 0, NULL, NaN or infinite beside a value, a list of another length, a NULL list:
    refused naming the function and the weights."""
    _refused(con, _call(row, override={param.name: bad.format(t="t")}), row.name, param.name)


# ---------------------------------------------------------------------------------------------
# docstring examples


def _stated(example: str) -> str | None:
    """The result an example states after `--`, if any."""
    if "--" not in example:
        return None
    return example.split("--", 1)[1].strip()


def _check_stated(stated: str, rows) -> None:
    every = stated.endswith(" for every value")
    text = stated.removesuffix(" for every value")
    expected = eval(text, {"__builtins__": {}})  # numbers and lists only, written in the registry
    if every:
        assert all(v == pytest.approx(expected, rel=1e-12) for v in rows[0][0]), rows
    elif isinstance(expected, tuple):  # one value per row (the last column)
        assert [r[-1] for r in rows] == pytest.approx(list(expected), rel=1e-12)
    else:
        assert rows[0][0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("row", FUNCTIONS, ids=ids)
def test_docstring_example_runs_and_gives_what_it_states(con, row):
    rows = con.execute(row.example.split("--", 1)[0]).fetchall()
    assert rows
    stated = _stated(row.example)
    if stated is not None:
        _check_stated(stated, rows)


# ---------------------------------------------------------------------------------------------
# scale


def _leaves(value, power):
    """(value, power) of every number in a result: lists elementwise, STRUCTs by field (power a dict
    per field), integers compared exactly (power 0: ids and counts)."""
    if value is None:
        yield None, power
    elif isinstance(value, dict):
        for key, v in value.items():
            yield from _leaves(v, power[key] if isinstance(power, dict) else power)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v, power)
    elif isinstance(value, bool) or isinstance(value, str):
        yield value, 0
    elif isinstance(value, int):
        yield value, 0
    else:
        yield float(value), power


def _table_leaves(names, rows, scale):
    """A table's numbers: floats (data, bounds, shares) with the row's power, integers exactly."""
    for r in rows:
        for v in r:
            yield from _leaves(v, scale if isinstance(v, float) else 0)


def _compare(base, got, factor: float, rel: float) -> list[str]:
    """What is wrong with `got` (the result on data times factor) against `base` (on the data)."""
    problems = []
    top = max((abs(b) for b, _ in base if isinstance(b, float) and math.isfinite(b)), default=0.0)
    if len(base) != len(got):
        return [f"{len(got)} values instead of {len(base)}"]
    for (b, p), (g, _) in zip(base, got):
        if isinstance(b, float) and not math.isfinite(b):  # a limit (e.g. an infinite half-width)
            if g != b:
                problems.append(f"{g!r} instead of {b!r}")
            continue
        if isinstance(g, float) and not math.isfinite(g):
            problems.append(f"{g} (expected {b} * factor^{p})")
            continue
        if g is None and b is not None:
            problems.append(f"NULL instead of {b} * factor^{p}")
            continue
        if b is None or isinstance(b, (str, bool)) or p == 0 and not isinstance(b, float):
            if g != b:
                problems.append(f"{g!r} instead of {b!r}")
            continue
        with np.errstate(over="ignore", under="ignore"):
            expected = b * factor ** p if p >= 0 else b / factor ** -p
            scale = top * factor ** p if p >= 0 else top / factor ** -p
        if not math.isfinite(expected):
            problems.append(f"{g} where the rescaled answer {b} * factor^{p} is not representable (should refuse)")
            continue
        tol = rel * abs(expected) + rel * abs(scale) + 64 * 2.0 ** -1074
        if abs(g - expected) > tol:
            problems.append(f"{g} instead of {expected}")
    return problems


def _scale_cases():
    for row in REGISTRY:
        if not _has_data(row):
            continue
        for label, table, factor in (("big", "t_big", BIG), ("tiny", "t_tiny", TINY), ("signed_big", "t_sgn_big", BIG)):
            yield pytest.param(row, table, factor, id=f"{row.name}-{label}")


def _scaled_override(row, factor: float) -> dict[str, str]:
    """Parameters in the data's unit (domain bounds, distances) scaled with the data."""
    out = {}
    for p in row.params:
        if not _is_data(p) and p.kind.scales:
            value = _value(row, p, "t")
            if value is not None and value != "NULL":
                out[p.name] = repr(float(value) * factor)
    return out


@pytest.mark.parametrize("row, table, factor", list(_scale_cases()))
def test_scaled_data_give_the_rescaled_answer_or_a_clear_refusal(con, row, table, factor):
    base_table = "t_sgn" if table.startswith("t_sgn") else "t"
    try:
        base = _result(con, row, _call(row, base_table))
    except duckdb.Error:
        # refused in the normal range (e.g. negative contributions): refused at any scale too, clearly
        _refused(con, _call(row, table, _scaled_override(row, factor)), row.name)
        return
    try:
        got = _result(con, row, _call(row, table, _scaled_override(row, factor)))
    except duckdb.Error as err:
        message = str(err)
        assert row.name in message and "Python exception occurred" not in _clean(message), message
        return
    rel = 1e-9 if factor > 1 else 1e-5
    if row.scale is None:  # no single power: never inf or NaN
        values = _table_leaves(*got, 0) if row.kind == "table" else _leaves(got, 0)
        problems = [f"{g}" for g, _ in values if isinstance(g, float) and not math.isfinite(g)]
    elif row.kind == "table":
        names, rows = got
        problems = _compare(list(_table_leaves(*base, row.scale)), list(_table_leaves(names, rows, row.scale)),
                            factor, rel)
    else:
        problems = _compare(list(_leaves(base, row.scale)), list(_leaves(got, row.scale)), factor, rel)
    assert not problems, f"{row.name} at scale {factor:g}: {problems[:3]}"

