"""The pure-SQL macros (the files under sql/) work in a plain DuckDB 1.5 shell, the oldest DuckDB the
docs name for them: every file read in order by the 1.5.6 command line client of .venv-compat (see
integration/test_compat.py), every macro's registry example run there on the function reference's tables and
compared with what DuckDB 2.0 with duckdb_sdc registered returns, the measures at the extremes of the
floating-point range, and every macro's description in duckdb_functions().

Before this test, il1s, il1s_sum and sse_sst failed for any input in 1.5.6 ("VARPOP is out of range":
1.5 raises where the sum of squared deviations of an unused scaling overflows, 2.0 returns infinity).
"""

from __future__ import annotations

import datetime
import json
import math
import subprocess
from pathlib import Path

import pytest

import duckdb_sdc
from duckdb_sdc.demo import make_microdata
from duckdb_sdc.sql import REGISTRY, sql_files
from duckdb_sdc.sql.docs import SETUP

from integration.test_compat import compat_venv

SOURCE_ROWS = [r for r in REGISTRY if r.source is not None]
# macros defined under sql/ that call a Python UDF of duckdb_sdc, so that they need register(con)
NEEDS_PYTHON = {"box_release_table": "__sdc_box_release"}
TABLES = ("people", "people_masked", "j", "clustered", "released", "weighted", "weighted_people", "weighted_j")


def _cli(db: Path, sql: str, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(compat_venv() / "bin" / "duckdb"), *flags, str(db)], input=sql,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def shells(tmp_path_factory):
    """(2.0 connection with duckdb_sdc and the reference page's tables, a 1.5 database file holding the
    files under sql/ read in order and the same tables)."""
    folder = tmp_path_factory.mktemp("compat_sql")
    make_microdata(1000).to_csv(folder / "people.csv", index=False)
    con = duckdb_sdc.connect()
    con.execute(f"SET file_search_path = '{folder}'")
    con.execute(SETUP.replace("'people.csv'", f"'{folder / 'people.csv'}'"))
    script = []
    for name, text in sql_files():
        (folder / name).write_text(text, encoding="utf-8")
        script.append(f".read '{folder / name}'")
    for table in TABLES:
        con.execute(f"COPY {table} TO '{folder / table}.parquet' (FORMAT parquet)")
        script.append(f"CREATE TABLE {table} AS FROM '{folder / table}.parquet';")
    db = folder / "v15.duckdb"
    done = _cli(db, "\n".join(script) + "\n", "-bail")
    assert done.returncode == 0 and "Error" not in done.stdout + done.stderr, done.stdout + done.stderr
    yield con, db
    con.close()


def _run15(db: Path, query: str) -> list[dict]:
    done = _cli(db, query + ";\n", "-readonly", "-json", "-bail")
    assert done.returncode == 0 and not done.stderr, f"DuckDB 1.5 failed on {query}:\n{done.stderr}"
    return json.loads(done.stdout) if done.stdout.strip() else []


def _same(a, b) -> bool:
    """1.5's JSON (a) equals 2.0's value (b): floats to 12 digits, HUGEINT as the JSON text of the integer."""
    if isinstance(a, str) and isinstance(b, int):
        return a == str(b)
    if isinstance(a, str) and isinstance(b, (datetime.date, datetime.datetime)):  # JSON writes ISO text
        return a == b.isoformat(sep=" ") if isinstance(b, datetime.datetime) else a == b.isoformat()
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _run20(con, query: str) -> list[dict]:
    result = con.execute(query)
    names = [d[0] for d in result.description]
    return [dict(zip(names, row)) for row in result.fetchall()]


def test_the_sql_files_define_every_source_row_and_the_python_ones_are_named(shells):
    _, db = shells
    defined = {r["function_name"] for r in _run15(
        db, "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type IN ('macro', 'table_macro')")}
    assert {r.name for r in SOURCE_ROWS} <= defined
    assert set(NEEDS_PYTHON) <= {r.name for r in SOURCE_ROWS}


@pytest.mark.parametrize("row", [r for r in SOURCE_ROWS if r.name not in NEEDS_PYTHON], ids=lambda r: r.name)
def test_every_sql_only_macro_gives_in_duckdb_15_what_it_gives_in_20(shells, row):
    con, db = shells
    query = row.example.split("--")[0].strip()
    if "GROUP BY" in query.upper() and "ORDER BY" not in query.upper():
        query += " ORDER BY ALL"
    old, new = _run15(db, query), _run20(con, query)
    assert len(new) > 0
    assert _same([list(r.values()) for r in old], [list(r.values()) for r in new]), (row.name, old[:3], new[:3])


@pytest.mark.parametrize("name, udf", list(NEEDS_PYTHON.items()))
def test_a_macro_that_needs_python_says_so_in_duckdb_15(shells, name, udf):
    _, db = shells
    row = next(r for r in SOURCE_ROWS if r.name == name)
    done = _cli(db, row.example + ";\n", "-readonly")
    assert f"{udf} does not exist" in done.stderr


@pytest.mark.parametrize("measure", ["mae", "mse", "il1", "il1s", "il1s_sum", "sse_sst"])
def test_the_measures_at_the_extremes_in_duckdb_15(shells, measure):
    """The three scalings of a measure are computed in one pass; none may raise in 1.5 where it is not
    the one picked, and the picked one gives the value at 1 (rescaled for mae and mse)."""
    con, db = shells
    values = "(VALUES (1.0, 1.5), (2.0, 2.0), (-3.0, -1.0), (7.0, 6.0), (NULL, 1.0), (4.0, NULL)) t(x, xm)"
    power = {"mae": 1, "mse": 2}.get(measure, 0)
    large, small = (1e150, 1e-150) if measure == "mse" else (1e300, 1e-300)  # 2^400 = 2.6e120: both scaled
    for scale in (1.0, large, small, 2.0 ** -1070):
        query = f"SELECT {measure}(x * {scale!r}, xm * {scale!r}) AS v FROM {values}"
        old, new = _run15(db, query)[0]["v"], _run20(con, query)[0]["v"]
        at_one = _run20(con, f"SELECT {measure}(x, xm) AS v FROM {values}")[0]["v"]
        assert _same(old, new), (measure, scale, old, new)
        if scale != 2.0 ** -1070:  # subnormal inputs lose digits in the product itself
            assert math.isclose(old, at_one * scale ** power, rel_tol=1e-12), (measure, scale)


@pytest.mark.parametrize("measure", ["mae", "mse", "il1", "il1s", "il1s_sum", "sse_sst"])
@pytest.mark.parametrize("bad", ["'nan'::DOUBLE", "'inf'::DOUBLE", "-'inf'::DOUBLE"])
@pytest.mark.parametrize("side", ["x", "xm"])
def test_nan_and_infinity_are_refused_by_name_in_both(shells, measure, bad, side):
    con, db = shells
    args = f"{bad}, v" if side == "x" else f"v, {bad}"
    query = f"SELECT {measure}({args}) FROM range(10) t(v)"
    done = _cli(db, query + ";\n", "-readonly")
    assert f"{measure}: x or xm contains NaN or an infinity" in done.stderr, done.stdout + done.stderr
    with pytest.raises(Exception, match=f"{measure}: x or xm contains NaN or an infinity"):
        con.execute(query).fetchall()


def test_every_sql_macro_has_its_description_in_duckdb_15(shells):
    _, db = shells
    comments = {r["function_name"]: r["comment"] for r in _run15(
        db, "SELECT function_name, comment FROM duckdb_functions() WHERE function_type IN ('macro', 'table_macro')")}
    for row in SOURCE_ROWS:
        assert comments[row.name] == " ".join(row.doc.split()), row.name
