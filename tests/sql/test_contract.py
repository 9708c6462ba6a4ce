"""The contract every registered SQL function keeps, generated from the registry: no case is written by
hand for a function. Everything the suite knows of a function comes from its registry row: its
parameters' kinds (duckdb_sdc.params) and its `contract` (duckdb_sdc.sql.registry.Contract: which of
the test data each data or column parameter reads, what a table function returns, what an aggregate
gives without data, and the cases it is expected to fail, with their reasons). A row that lacks a
declaration the suite needs fails `test_every_row_declares_its_contract`, which says what to declare.

For each function the suite builds a valid call (data from small tables, every other parameter its
default or its kind's valid example) and then checks:

* the call runs; NULL data (a NULL list, all-NULL data, no data) give NULL (or the declared `no_data`)
  or come back as they are, NULLs stay in place and take no part (the result on the other values is
  the result without them);
* NaN, +inf and -inf in the data, and data of the wrong type, are refused with an error naming the
  function (and the parameter or the column);
* every invalid example of every parameter's kind (NULL, negative and NaN among them for numbers) is
  refused with the kind's own message, naming the function and the parameter: the SQL functions say
  exactly what the kinds' Python checks say;
* a table function given a column that does not exist (one case per column parameter) names the
  function, the parameter and the column; given a table that does not exist (one case per table
  parameter, and a name whose schema does not exist), it fails with DuckDB's catalog error naming the
  table, pointing at the call (DuckDB binds a table name before any of the function's own SQL runs: see
  docs/contributing-parameters.md), which `duckdb_sdc.sql.missing_table.reword` (and so `duckdb-sdc
  sql`) words as the function's error about the parameter;
* a table function given a table of nothing but the columns it names returns the same columns (less
  the others), one row per record, or the same report;
* every docstring example runs, and where it states its result (`-- 0.25`) the result is that;
* scale: on the same data multiplied by 2^1014 (values up to 1.75e308) and by 2^-1064 (subnormal
  values), the function returns the rescaled answer (the registry row's `scale` says which power of the
  factor) within rounding, or refuses with an error naming it; never inf, NaN or a wrong value.

One module-scoped connection; one small table per kind of data, so the whole suite stays fast.
"""

from __future__ import annotations

import inspect
import math
import re

import duckdb
import numpy as np
import pandas as pd
import pytest

import duckdb_sdc
from duckdb_sdc._validate import SdcError
from duckdb_sdc.params import STRATA, ColumnNames, Data, GroupSize, Name, PerColumn, SamplingWeights, Seed, Weights
from duckdb_sdc.sql import REGISTRY
from duckdb_sdc.sql.missing_table import reword
from duckdb_sdc.sql.registry import READS, RESULTS

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
# what the rows declare (duckdb_sdc.sql.registry.Contract), and nothing else

# The columns of the data tables that each role of Contract.reads takes: a parameter naming one column,
# or holding one value per record, takes the first; a list of columns, a record or a row vector takes
# them all.
ROLE_COLUMNS = {"original": ("x", "y"), "masked": ("xm", "ym"), "second": ("y",), "lower": ("lo",),
                "upper": ("hi",), "weights": ("w",), "labels": ("c",), "key": ("id",),
                "keys": ("s", "x"),  # a categorical key and one with NULLs in the table with NULLs
                "sensitive": ("c",), "categories": ("x",), "names": ("x", "y")}
NUMERIC_ROLES = ("original", "masked", "second", "lower", "upper")  # the roles whose data must be finite numbers
DATA_COLUMNS = ("id", "s", "c", "x", "y", "xm", "ym", "w", "lo", "hi")  # the data tables' columns
MISSING = "no_such_column"  # a column no data table has
MISSING_TABLES = ("no_such_table", "no_such_schema.t")


def _is_data(p) -> bool:
    return isinstance(p.kind, Data)


def _is_table(p) -> bool:
    return isinstance(p.kind, Name) and p.kind.of == "table"


def _names_columns(p) -> bool:
    """Whether the parameter names a column or columns (the strata excepted: their kind says what they are)."""
    return (isinstance(p.kind, Name) and p.kind.of == "column") or (isinstance(p.kind, ColumnNames)
                                                                   and p.kind is not STRATA)


def _needs_role(p) -> bool:
    return _is_data(p) or _names_columns(p)


def _undeclared(row) -> list[str]:
    """What the row must still declare for the suite to build its cases (empty when nothing)."""
    c = row.contract
    if c is None:
        return ["declare contract=Contract(...) on its registry row (duckdb_sdc.sql.registry.Contract; "
                "docs/contributing-parameters.md, 'The contract')"]
    problems = []
    params = {p.name: p for p in row.params}
    for p in row.params:
        if _needs_role(p) and p.name not in c.reads:
            problems.append(f"declare what parameter {p.name!r} reads: Contract(reads={{{p.name!r}: <role>}}) "
                            f"with a role of {sorted(READS)}")
    for name, role in c.reads.items():
        if name not in params:
            problems.append(f"Contract.reads names {name!r}, which is no parameter of it")
        elif role not in READS:
            problems.append(f"Contract.reads gives {name!r} the role {role!r}; the roles are {sorted(READS)}")
        elif not _needs_role(params[name]):
            problems.append(f"Contract.reads gives {name!r} a role, but it is neither data nor a column name")
    if row.kind == "table" and c.result not in RESULTS:
        problems.append(f"declare what the table function returns: Contract(result=...), one of {sorted(RESULTS)}")
    if row.kind != "table" and c.result is not None:
        problems.append("Contract.result is for table functions only")
    if c.no_data is not None and row.kind != "aggregate":
        problems.append("Contract.no_data is for aggregates only")
    for case, reason in c.expected_failures.items():
        if not str(reason).strip():
            problems.append(f"the expected failure {case!r} needs its reason")
    return problems


FUNCTIONS = [row for row in REGISTRY if not _undeclared(row)]  # a row that lacks a declaration fails below
_CASE_NAMES: dict[str, set[str]] = {}  # the cases generated for each function, by name


def _case(row, case: str, *values):
    """One generated case of `row`, an expected failure (strict) when the row declares it one."""
    _CASE_NAMES.setdefault(row.name, set()).add(case)
    reason = row.contract.expected_failures.get(case)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(row, *values, id=f"{row.name}-{case}", marks=marks)


def _role(row, p) -> str:
    return row.contract.reads[p.name]


def _columns(row, p) -> tuple[str, ...]:
    """The data tables' columns that parameter p of row takes."""
    cols = ROLE_COLUMNS[_role(row, p)]
    one = isinstance(p.kind, Name) or (_is_data(p) and p.kind.shape not in ("records", "vector"))
    return cols[:1] if one else cols


def _attributes(row) -> int:
    """The number of attributes the valid call hands the function: the columns of its 'original' data
    (or the names it reports)."""
    return max((len(_columns(row, p)) for p in row.params
                if _needs_role(p) and _role(row, p) in ("original", "names")), default=1)


# ---------------------------------------------------------------------------------------------
# building calls from the declarations


def _data_arg(row, p, table: str) -> str:
    """SQL of a data argument read from `table`."""
    cols = _columns(row, p)
    value = f"[{', '.join(cols)}]" if len(cols) > 1 else cols[0]
    if row.kind == "aggregate":
        return value
    return f"(SELECT list({value} ORDER BY id) FROM {table})"


def _names_arg(row, p, cols=None) -> str:
    cols = _columns(row, p) if cols is None else cols
    if isinstance(p.kind, Name):
        return f"'{cols[0]}'"
    return "[" + ", ".join(f"'{c}'" for c in cols) + "]"


def _value(row, p, table: str) -> str | None:
    """SQL of a parameter's value in the valid call; None: leave it to its default."""
    if _is_data(p):
        return _data_arg(row, p, table)
    if _is_table(p):
        return f"'{table}'"
    if _names_columns(p) and _role(row, p) != "adds":
        return _names_arg(row, p)
    if isinstance(p.kind, Seed):
        return p.kind.valid  # seeded: the contract compares results
    if p.example is not None:  # the row's own example of a typical call, even beside a default
        return p.example
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
    return any(_is_data(p) or _is_table(p) for p in row.params)


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


def _computed(row, names) -> list[int]:
    """Positions of the columns a table function that returns rows computes: the columns it adds and
    those of its 'original' data, which it masks in place."""
    masked = {c for p in row.params if _names_columns(p) and _role(row, p) in ("original", "categories")
              for c in _columns(row, p)}
    return [i for i, n in enumerate(names) if n not in DATA_COLUMNS or n in masked]


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
    assert "Candidate macros" not in message, message  # a parameter of the macro was refused by DuckDB's binder
    for name in names:
        assert name in message, f"{name!r} not in {message!r}"
    return message


def _names_param(message: str, func: str, param: str) -> bool:
    """Whether the message is the function's error about the parameter ('f: p must ...', 'f: p of table')."""
    return re.search(rf"\b{re.escape(func)}: {re.escape(param)}\b", message) is not None


DATA_FUNCTIONS = [row for row in FUNCTIONS if _has_data(row)]
TABLE_FUNCTIONS = [row for row in FUNCTIONS if row.kind == "table"]


# ---------------------------------------------------------------------------------------------
# the declarations


@pytest.mark.parametrize("row", REGISTRY, ids=lambda row: row.name)
def test_every_row_declares_its_contract(row):
    problems = _undeclared(row)
    assert not problems, f"{row.name} (duckdb_sdc.sql registry): " + "; ".join(problems)
    unknown = set(row.contract.expected_failures) - _CASE_NAMES.get(row.name, set())
    assert not unknown, (f"{row.name}: Contract.expected_failures names cases the suite does not generate: "
                         f"{sorted(unknown)}; its cases are {sorted(_CASE_NAMES.get(row.name, ()))}")


def test_a_row_without_its_declarations_is_told_what_to_declare():
    from duckdb_sdc.params import COL_PARAM, GROUP_SIZE, TBL_PARAM, XS_PARAM, Param
    from duckdb_sdc.sql.registry import Contract, SqlFunction

    bare = SqlFunction("f", "scalar", (XS_PARAM,), "DOUBLE[]", "doc")
    assert _undeclared(bare) == [
        "declare contract=Contract(...) on its registry row (duckdb_sdc.sql.registry.Contract; "
        "docs/contributing-parameters.md, 'The contract')"]
    table = SqlFunction("f_table", "table", (TBL_PARAM, COL_PARAM, Param("k", GROUP_SIZE)), "table", "doc",
                        contract=Contract({"k": "original"}, no_data=1, expected_failures={"scale-big": " "}))
    assert _undeclared(table) == [
        f"declare what parameter 'col' reads: Contract(reads={{'col': <role>}}) with a role of {sorted(READS)}",
        "Contract.reads gives 'k' a role, but it is neither data nor a column name",
        f"declare what the table function returns: Contract(result=...), one of {sorted(RESULTS)}",
        "Contract.no_data is for aggregates only",
        "the expected failure 'scale-big' needs its reason"]


# ---------------------------------------------------------------------------------------------
# the valid call, NULLs, empty data


@pytest.mark.parametrize("row", [_case(row, "valid") for row in FUNCTIONS])
def test_the_valid_call_runs(con, row):
    result = _result(con, row, _call(row))
    assert result is not None


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


@pytest.mark.parametrize("row", [_case(row, "no-data") for row in DATA_FUNCTIONS])
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
        for table in ("tz", "te"):
            got = _result(con, row, _call(row, table))
            if row.contract.no_data is None:
                assert _null_result(got), (f"{row.name} gives {got!r} without data; NULL is the rule (declare "
                                           "Contract(no_data=...) where the function documents another value)")
            else:
                assert got == row.contract.no_data, got
    elif _counts_keys(row):  # a table without records is refused; records whose other data are NULL count
        _refused(con, _call(row, "te"), row.name, "has no records")
        assert _result(con, row, _call(row, "tz"))[1]
    else:
        names, rows = _result(con, row, _call(row, "tz"))
        if row.contract.result == "report":  # a report over the data: it runs on no data too
            _result(con, row, _call(row, "te"))
            return
        assert _result(con, row, _call(row, "te"))[1] == []
        assert len(rows) == N
        assert all(r[i] is None for r in rows for i in _computed(row, names)), rows


def _counts_keys(row) -> bool:
    """A measure (or protection) of key combinations: a parameter reads 'keys' (see READS)."""
    return any(_needs_role(p) and _role(row, p) == "keys" for p in row.params)


def _drop_null_positions(value):
    return [v for i, v in enumerate(value) if i + 1 not in NULL_IDS]


@pytest.mark.parametrize("row", [_case(row, "nulls") for row in DATA_FUNCTIONS])
def test_nulls_stay_in_place_and_take_no_part(con, row):
    if _counts_keys(row):  # a NULL key takes part: every record is counted, none gets a NULL measure
        names, rows = _result(con, row, _call(row, "tn"))
        added = [i for i, n in enumerate(names) if n not in DATA_COLUMNS]
        if row.contract.result == "rows":
            assert len(rows) == N and all(r[i] is not None for r in rows for i in added), rows
        elif "records" in names:  # per stratum, or per column
            counted = [r[names.index("records")] for r in rows]
            assert sum(counted) == N or set(counted) == {N}, counted
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
        if row.contract.result == "report":  # a report over the data: the same without the NULL rows
            assert rows == without[1]
            return
        computed = _computed(row, names)
        assert all(r[i] is None for r in rows if r[names.index("id")] in NULL_IDS for i in computed)
        assert [r for r in rows if r[names.index("id")] not in NULL_IDS] == without[1]


# ---------------------------------------------------------------------------------------------
# bad data and bad parameters


def _reads_numbers(row) -> bool:
    """Whether the function reads numeric data: a parameter whose role is numeric data (not labels,
    weights, keys)."""
    return any(_needs_role(p) and _role(row, p) in NUMERIC_ROLES for p in row.params)


NUMERIC_READERS = [row for row in DATA_FUNCTIONS if _reads_numbers(row)]


@pytest.mark.parametrize("row, bad", [_case(row, bad, table) for row in NUMERIC_READERS
                                      for bad, table in (("nan", "tnan"), ("inf", "tinf"), ("-inf", "tninf"))])
def test_nan_and_infinity_are_refused(con, row, bad):
    _refused(con, _call(row, bad), row.name)


@pytest.mark.parametrize("row", [_case(row, "wrong-type") for row in DATA_FUNCTIONS
                                 if row.kind != "table" and _reads_numbers(row)])
def test_data_of_the_wrong_type_are_refused(con, row):
    _refused(con, _call(row, "tv"), row.name)


def _list_data_cases():
    for row in FUNCTIONS:
        if row.kind != "scalar":
            continue
        for p in row.params:
            if _is_data(p) and not isinstance(p.kind, SamplingWeights):
                for bad in p.kind.invalid:
                    yield _case(row, f"{p.name}={bad}", p, bad)


@pytest.mark.parametrize("row, param, bad", list(_list_data_cases()))
def test_bad_lists_are_refused_with_the_kinds_message(con, row, param, bad):
    """A list of the wrong type, or with NaN or an infinity, is refused naming the function and the
    parameter, with the message of its kind (params.Data)."""
    message = _refused(con, _call(row, override={param.name: bad}), row.name)
    special = re.search(r"'(-?inf|nan)'::DOUBLE", bad)
    if special:
        expected = (f"{row.name}: {param.name} contains {special.group(1)}; NaN and infinite values are refused "
                    "(use NULL for a missing value)")
    else:
        expected = f"{row.name}: " + param.kind.wrong_type(param.name, con.execute(f"SELECT typeof({bad})").fetchone()[0])
    assert expected in message, f"{message!r} does not say {expected!r}"


def _param_cases():
    for row in FUNCTIONS:
        for p in row.params:
            if _is_data(p):
                continue
            for bad in p.kind.invalid:
                yield _case(row, f"{p.name}={bad}", p, bad)


def _context(row, p) -> dict:
    """What the kind's check is given besides the value, in the valid call: the number of values or
    records (a group size), the number of attributes (a value per attribute)."""
    if isinstance(p.kind, GroupSize):
        return {"n": N}
    if isinstance(p.kind, (PerColumn, Weights)):
        return {"n": _attributes(row)}
    if "keys" in inspect.signature(p.kind.check).parameters:  # a value per key (the hierarchies)
        return {"keys": max(len(_columns(row, q)) for q in row.params if _needs_role(q) and _role(row, q) == "keys")}
    return {}


def _kind_messages(con, row, p, literal: str) -> tuple[list[str], str]:
    """(messages, text): what the kind's own check says of the literal, handed over as SQL hands it to
    a UDF (as text) or to a pure-SQL check (as the value), and the text."""
    text, value = con.execute(f"SELECT ({literal})::VARCHAR, ({literal})").fetchone()
    messages = []
    for v in (text, value):
        try:
            p.check(v, row.name, **_context(row, p))
        except SdcError as err:
            messages.append(str(err))
    return messages, text


def _says(message: str, expected: str, text: str | None) -> bool:
    """Whether the SQL error says what the kind says: its message, or its message with the value
    written as DuckDB writes it (a list: [a, NULL] where Python writes ['a', None])."""
    if expected in message:
        return True
    head, sep, _ = expected.rpartition(", got ")
    return bool(sep) and text is not None and f"{head}, got {text}" in message


@pytest.mark.parametrize("row, param, bad", list(_param_cases()))
def test_invalid_parameter_values_are_refused_with_the_kinds_message(con, row, param, bad):
    message = _refused(con, _call(row, override={param.name: bad}), row.name, param.name)
    assert _names_param(message, row.name, param.name), message
    expected, text = _kind_messages(con, row, param, bad)
    assert expected, f"the kind of {row.name}.{param.name} accepts its own invalid example {bad}"
    assert any(_says(message, e, text) for e in expected), f"{message!r} does not say {expected[0]!r}"


def _weight_cases():
    for row in FUNCTIONS:
        for p in row.params:
            if isinstance(p.kind, SamplingWeights):
                for bad in p.kind.invalid:
                    yield _case(row, f"{p.name}={bad}", p, bad)


@pytest.mark.parametrize("row, param, bad", list(_weight_cases()))
def test_invalid_sampling_weights_are_refused(con, row, param, bad):
    """A weight of 0, < 0, NULL, NaN or infinite beside a value, a list of another length, a NULL list:
    refused naming the function and the weights."""
    _refused(con, _call(row, override={param.name: bad.format(t="t")}), row.name, param.name)


# ---------------------------------------------------------------------------------------------
# names of tables and columns that do not exist


def _missing_column_cases():
    for row in TABLE_FUNCTIONS:
        for p in row.params:
            if p.kind is STRATA or (_names_columns(p) and _role(row, p) not in ("adds", "names")):
                yield _case(row, f"missing-column-{p.name}", p)


@pytest.mark.parametrize("row, param", list(_missing_column_cases()))
def test_a_missing_column_is_named_with_its_parameter(con, row, param):
    if param.kind is STRATA:
        bad = f"'{MISSING}'"
    else:
        bad = _names_arg(row, param, _columns(row, param)[:-1] + (MISSING,))
    message = _refused(con, _call(row, override={param.name: bad}), row.name, MISSING)
    assert _names_param(message, row.name, param.name), message


def _missing_table_cases():
    for row in TABLE_FUNCTIONS:
        for p in row.params:
            if _is_table(p):
                for name in MISSING_TABLES:
                    yield _case(row, f"missing-table-{p.name}={name}", p, name)


@pytest.mark.parametrize("row, param, name", list(_missing_table_cases()))
def test_a_missing_table_is_named_with_its_parameter_where_duckdb_sdc_runs_the_statement(con, row, param, name):
    """DuckDB binds a table name before any SQL of the function runs, so its error is its own: a Catalog
    Error naming the table (or its schema) and pointing at the call, never a parser error or a traceback.
    Where duckdb_sdc runs the statement (`duckdb-sdc sql`, `missing_table.reword`), the error names the
    function and the parameter."""
    sql = _call(row, override={param.name: f"'{name}'"})
    message = _refused(con, sql, row.name, name.split(".")[0])
    assert message.startswith("Catalog Error:"), message
    why = " because schema \"no_such_schema\" does not exist" if "." in name else ""
    shown = name if "." not in name else f'"{name}"'
    assert reword(message, sql) == (f"{row.name}: {param.name} = '{name}' names no table or view "
                                    f"(Catalog Error: Table with name {shown} does not exist{why})")


def _columns_read(row) -> list[str]:
    """The data tables' columns that the valid call of table function `row` names, in order."""
    cols: list[str] = []
    for p in row.params:
        if _names_columns(p) and _role(row, p) not in ("adds", "names"):
            cols += [c for c in _columns(row, p) if c not in cols]
    return cols


@pytest.mark.parametrize("row", [_case(row, "only-columns-read") for row in TABLE_FUNCTIONS
                                 if any(_is_table(p) for p in row.params)])
def test_a_table_of_only_the_columns_it_reads_is_enough(con, row):
    """A table holding nothing but the columns the call names (no key, nothing beside them): the same
    columns come back as from a fuller table, less those it lacks, one row per record; a report, the
    same report. (Before: box_release_table failed there with DuckDB's 'Star expression ... resulted in
    an empty set of columns'.)"""
    cols = sorted(_columns_read(row), key=DATA_COLUMNS.index)  # in the order of the fuller table
    table = f"only_{row.name}"
    con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT {', '.join(cols)} FROM t")
    names, rows = _result(con, row, _call(row, table))
    full_names, full_rows = _result(con, row, _call(row, "t"))
    assert names == [n for n in full_names if n not in DATA_COLUMNS or n in cols], names
    if row.contract.result == "report":
        assert rows == full_rows
    else:
        assert len(rows) == N


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


@pytest.mark.parametrize("row", [_case(row, "example") for row in FUNCTIONS])
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
    for row in DATA_FUNCTIONS:
        for label, table, factor in (("big", "t_big", BIG), ("tiny", "t_tiny", TINY), ("signed_big", "t_sgn_big", BIG)):
            yield _case(row, f"scale-{label}", table, factor)


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

