"""The plain SQL example scripts run in order through the Python duckdb module (as in
`duckdb-sdc sql example.duckdb -f ...`), and their results say what they should."""

from __future__ import annotations

from pathlib import Path

import pytest

import duckdb_sdc
from duckdb_sdc.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ("01_load.sql", "02_mask.sql", "03_evaluate.sql")


def _run(con, name):
    last = None
    for statement in con.extract_statements((ROOT / "examples" / "sql" / name).read_text()):
        last = con.execute(statement.query).fetchall()
    return last


def test_sql_examples_load_mask_and_evaluate(monkeypatch):
    monkeypatch.chdir(ROOT)  # the scripts read the seed by a path relative to the repository root
    con = duckdb_sdc.connect()
    loaded = _run(con, SCRIPTS[0])
    assert sum(r[1] for r in loaded) == 240
    preview = _run(con, SCRIPTS[1])
    assert [r[0] for r in preview] == [1, 2, 3, 4, 5]
    assert con.execute("SELECT count(*), count(DISTINCT income) FROM people_masked").fetchall()[0][0] == 240
    protection = _run(con, SCRIPTS[2])
    assert dict(protection) == {"expenses": pytest.approx(protection[0][1]), "income": protection[1][1]}
    assert all(n >= 5 for _, n in protection)
    utility = con.execute("SELECT avg(income) FROM people").fetchall()[0][0]
    assert con.execute("SELECT avg(income) FROM people_masked").fetchall()[0][0] == pytest.approx(utility)
    con.close()


def test_sql_examples_run_in_the_sql_command(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(ROOT)
    db = str(tmp_path / "example.duckdb")
    for name in SCRIPTS:
        assert main(["sql", db, "-f", str(ROOT / "examples" / "sql" / name)]) == 0
    assert "smallest_group" in capsys.readouterr().out
