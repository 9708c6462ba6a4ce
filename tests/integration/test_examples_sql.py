"""The plain SQL example scripts run in order through the Python duckdb module (as in
`duckdb-sdc sql example.duckdb -f ...`), and their results say what they should."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import duckdb_sdc
from duckdb_sdc import measures
from duckdb_sdc.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ("01_load.sql", "02_mask.sql", "03_evaluate.sql")


def _run_all(con, name):
    """The rows of every statement of the script."""
    return [con.execute(s.query).fetchall()
            for s in con.extract_statements((ROOT / "examples" / "sql" / name).read_text())]


def _run(con, name):
    return _run_all(con, name)[-1]


def test_sql_examples_load_mask_and_evaluate(monkeypatch):
    monkeypatch.chdir(ROOT)  # the scripts read the seed by a path relative to the repository root
    con = duckdb_sdc.connect()
    loaded = _run(con, SCRIPTS[0])
    assert sum(r[1] for r in loaded) == 240
    preview = _run(con, SCRIPTS[1])
    assert [r[0] for r in preview] == [1, 2, 3, 4, 5]
    assert con.execute("SELECT count(*), count(DISTINCT income) FROM people_masked").fetchall()[0][0] == 240
    loss, by_region, risk, everything, protection = _run_all(con, SCRIPTS[2])
    assert dict(protection) == {"expenses": pytest.approx(protection[0][1]), "income": protection[1][1]}
    assert all(n >= 5 for _, n in protection)
    # the figures are the numpy measures (rounded as the script rounds them)
    x = con.execute("SELECT p.income, p.expenses, m.income, m.expenses FROM people p "
                    "JOIN people_masked m USING (person_id) "
                    "WHERE p.income IS NOT NULL AND p.expenses IS NOT NULL").fetchnumpy()  # complete records
    orig = np.column_stack([x["income"], x["expenses"]]).astype(float)
    masked = np.column_stack([x["income_1"], x["expenses_1"]]).astype(float)
    income = con.execute("SELECT p.income, m.income FROM people p JOIN people_masked m USING (person_id) "
                         "WHERE p.income IS NOT NULL").fetchall()
    x0, xm0 = np.array(income, dtype=float).T
    assert loss[0][0] == "income" and loss[0][2] == round(measures.il1s(x0, xm0), 5)
    assert loss[0][3] == round(measures.sse_sst(x0, xm0), 4)
    assert [r[0] for r in by_region] == ["east", "north", "south", "west"]
    assert risk[0] == (round(measures.record_linkage(orig, masked), 4),
                       round(measures.interval_disclosure(orig, masked, 0.05), 4))
    table = {(m, c): v for m, c, v in everything}
    assert table[("record_linkage", None)] == round(measures.record_linkage(orig, masked), 6)
    assert ("il1s", "expenses") in table and len(everything) == 2 * len(measures.PER_COLUMN) + len(measures.OVERALL)
    utility = con.execute("SELECT avg(income) FROM people").fetchall()[0][0]
    assert con.execute("SELECT avg(income) FROM people_masked").fetchall()[0][0] == pytest.approx(utility)
    con.close()


def test_sql_examples_run_in_the_sql_command(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(ROOT)
    db = str(tmp_path / "example.duckdb")
    for name in SCRIPTS:
        assert main(["sql", db, "-f", str(ROOT / "examples" / "sql" / name)]) == 0
    out = capsys.readouterr().out
    assert "smallest_group" in out and "record_linkage" in out and "interval_disclosure" in out
