"""A release is readable by DuckDB 1.x clients: the demo's release opened by the 1.x `duckdb` CLI and the
1.x `duckdb` Python package of a separate virtual environment, value for value as DuckDB 2.0 reads it.

The environment is <repo>/.venv-compat (tasks.py creates it), or the folder named by the environment
variable DUCKDB_SDC_COMPAT_VENV; it holds duckdb==1.5.6 and duckdb-cli==1.5.6 from the package index.
Without it these tests fail and say how to create it: a release format nobody checks is a promise
nobody keeps.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import textwrap
from pathlib import Path

import duckdb
import pytest

from duckdb_sdc import demo
from duckdb_sdc.release import load_spec, release
from duckdb_sdc.release.spec import DEFAULT_STORAGE_VERSION

ROOT = Path(__file__).resolve().parents[2]
COMPAT_VERSION = "1.5.6"
QUERIES = {  # what an analyst reads from a release: the table (no key: in content order), the manifest
    "table": "SELECT * FROM people ORDER BY ALL",
    "manifest": "SELECT * FROM release_manifest ORDER BY column_name",
    "types": "SELECT table_name, column_name, data_type FROM information_schema.columns "
             "ORDER BY table_name, ordinal_position",
}


def compat_venv() -> Path:
    folder = Path(os.environ.get("DUCKDB_SDC_COMPAT_VENV", ROOT / ".venv-compat"))
    python, cli = folder / "bin" / "python", folder / "bin" / "duckdb"
    if not (python.is_file() and cli.is_file()):
        pytest.fail(f"no DuckDB 1.x environment at {folder}: create it with\n"
                    f"    python3 -m venv {folder}\n"
                    f"    {folder}/bin/pip install duckdb=={COMPAT_VERSION} duckdb-cli=={COMPAT_VERSION}\n"
                    "(python3 tasks.py test does this), or point DUCKDB_SDC_COMPAT_VENV at such an environment",
                    pytrace=False)
    return folder


def _write_demo_release(folder: Path, storage_version: str | None = None) -> Path:
    """The demo's source and spec (as `duckdb-sdc demo` writes them), released."""
    demo.write_source(folder / "demo_source.duckdb")
    text = demo.spec_text(5, folder / "demo_release.toml")
    if storage_version is not None:
        text = text.replace('[output]\n', f'[output]\nstorage_version = "{storage_version}"\n')
    spec_path = folder / "demo_release.toml"
    spec_path.write_text(text, encoding="utf-8")
    return release(load_spec(spec_path)).path


@pytest.fixture(scope="module")
def demo_release(tmp_path_factory) -> Path:
    return _write_demo_release(tmp_path_factory.mktemp("compat"))


def _as_text_like_the_cli(value) -> str:
    """A timestamp as DuckDB's CLI prints it: trailing zeros of the fraction dropped (.7232, not .723200)."""
    text = str(value)
    return text.rstrip("0").rstrip(".") if isinstance(value, datetime.datetime) and "." in text else text


def _as_json(rows: list[tuple], text=str) -> list[list]:
    """Rows as the clients print them: JSON values, timestamps as text."""
    return json.loads(json.dumps([list(r) for r in rows], default=text))


def _read_here(path: Path, query: str, text=str) -> list[list]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return _as_json(con.execute(query).fetchall(), text)
    finally:
        con.close()


def _cli(path: Path, query: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(compat_venv() / "bin" / "duckdb"), "-readonly", "-json", str(path), "-c", query],
                          capture_output=True, text=True, timeout=120)


def test_the_compat_environment_holds_duckdb_1x():
    folder = compat_venv()
    cli = subprocess.run([str(folder / "bin" / "duckdb"), "--version"], capture_output=True, text=True, timeout=60)
    assert cli.stdout.startswith(f"v{COMPAT_VERSION}"), cli.stdout + cli.stderr
    py = subprocess.run([str(folder / "bin" / "python"), "-c", "import duckdb; print(duckdb.__version__)"],
                        capture_output=True, text=True, timeout=60)
    assert py.stdout.strip() == COMPAT_VERSION, py.stderr


def test_the_default_release_has_storage_version_64(demo_release):
    con = duckdb.connect(str(demo_release), read_only=True)
    tags = con.execute("SELECT tags FROM duckdb_databases() WHERE NOT internal AND database_name <> 'temp'"
                       ).fetchall()
    con.close()
    assert DEFAULT_STORAGE_VERSION == "v1.0.0"
    assert tags == [({"storage_version": "v1.0.0+"},)]


@pytest.mark.parametrize("what", list(QUERIES))
def test_the_1x_cli_reads_the_demo_release_value_for_value(demo_release, what):
    done = _cli(demo_release, QUERIES[what])
    assert done.returncode == 0, done.stderr
    cli_rows = json.loads(done.stdout)
    expected = _read_here(demo_release, QUERIES[what], _as_text_like_the_cli)
    assert len(expected) > 0
    header = list(cli_rows[0])
    assert [[row[c] for c in header] for row in cli_rows] == expected


def test_the_1x_python_package_reads_the_demo_release_value_for_value(demo_release):
    script = textwrap.dedent(f"""
        import json, sys, duckdb
        con = duckdb.connect(sys.argv[1], read_only=True)
        queries = json.loads(sys.argv[2])
        out = {{name: [list(r) for r in con.execute(q).fetchall()] for name, q in queries.items()}}
        out["types"] = [list(r) for r in con.execute("DESCRIBE people").fetchall()]
        print(json.dumps({{"version": duckdb.__version__, "rows": out}}, default=str))
    """)
    done = subprocess.run([str(compat_venv() / "bin" / "python"), "-c", script, str(demo_release), json.dumps(QUERIES)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["version"] == COMPAT_VERSION
    for what, query in QUERIES.items():
        if what != "types":
            assert got["rows"][what] == _read_here(demo_release, query), what
    assert [r[:2] for r in got["rows"]["types"]] == [
        ["region", "VARCHAR"], ["age", "DOUBLE"], ["household_size", "DOUBLE"],
        ["income", "DOUBLE"], ["expenses", "DOUBLE"], ["savings", "DOUBLE"]]


def test_a_1x_client_has_no_duckdb_sdc_function(demo_release):
    """The release holds data, never functions: masking happened before it was written."""
    done = _cli(demo_release, "SELECT mdav_round([1, 2, 3], 3)")
    assert done.returncode != 0 and "mdav_round does not exist" in done.stderr


def test_a_release_in_the_20_format_is_not_readable_by_1x(tmp_path):
    """Why the default matters: the same release written as DuckDB 2.0 writes by default."""
    path = _write_demo_release(tmp_path, storage_version="v2.0.0")
    done = _cli(path, "SELECT count(*) FROM people")
    assert done.returncode != 0
    assert "we can only read versions between 64 and 68" in done.stderr


def test_a_column_type_the_storage_version_cannot_hold_is_refused_and_nothing_is_written(tmp_path):
    """VARIANT columns need storage v1.5.0: the release refuses (no file), and says so."""
    from release_helpers import write_spec

    con = duckdb.connect(str(tmp_path / "src.duckdb"))
    con.execute("CREATE TABLE t AS SELECT i AS id, i * 1.5 AS x, i::VARIANT AS v FROM range(20) r(i)")
    con.close()
    doc = {"source": {"database": "src.duckdb", "table": "t", "key": "id"},
           "output": {"database": "out/release.duckdb", "table": "t"},
           "columns": {"id": {"rule": "keep", "identifying": False}, "x": {"method": "mdav_round", "k": 5}, "v": "keep"}}
    spec = load_spec(write_spec(tmp_path, doc))
    with pytest.raises(Exception, match="VARIANT columns are not supported in storage versions prior to v1.5.0"):
        release(spec)
    assert not (tmp_path / "out" / "release.duckdb").exists()
    assert [p.name for p in (tmp_path / "out").iterdir()] == []
    doc["output"]["storage_version"] = "v1.5.0"
    assert release(load_spec(write_spec(tmp_path, doc))).rows == 20
