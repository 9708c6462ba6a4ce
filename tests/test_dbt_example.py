"""`dbt build` on examples/dbt: the plugin registers duckdb_sdc, the model masks a seed table, and the
project's tests check k-anonymity. Runs where the `dbt` extra is installed (`tasks.py test` installs it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("dbt.adapters.duckdb", reason="the dbt extra is not installed (pip install -e '.[dbt]')")

PROJECT = Path(__file__).resolve().parents[1] / "examples" / "dbt"


def _dbt(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DO_NOT_TRACK": "1", "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
           "DUCKDB_SDC_DBT_PATH": str(folder / "warehouse.duckdb")}
    command = [sys.executable, "-c", "import sys; from dbt.cli.main import cli; sys.exit(cli())",
               *args, "--profiles-dir", str(folder), "--project-dir", str(folder)]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)  # without dbt's colours


def test_dbt_build_masks_the_seed_and_the_k_anonymity_tests_pass_and_bite(tmp_path):
    folder = tmp_path / "dbt"
    shutil.copytree(PROJECT, folder, ignore=shutil.ignore_patterns("target", "logs", "*.duckdb"))
    done = _dbt(folder, "build")
    assert done.returncode == 0, done.stdout[-4000:]
    assert "PASS=12" in done.stdout and "ERROR=0" in done.stdout
    con = duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True)  # plain: nothing registered
    smallest, changed, rows = con.execute("""
        SELECT (SELECT min(n) FROM (SELECT count(*) n FROM people_masked WHERE income IS NOT NULL
                                    GROUP BY region, income)),
               count(*) FILTER (p.income <> m.income), count(*)
        FROM people p JOIN people_masked m USING (person_id)""").fetchall()[0]
    dp_smallest, dp_changed, dp_nulls, low, high = con.execute("""
        SELECT (SELECT min(n) FROM (SELECT count(*) n FROM people_dp WHERE income IS NOT NULL
                                    GROUP BY region, income)),
               count(*) FILTER (p.income <> d.income), count(*) FILTER (d.income IS NULL),
               min(d.income), max(d.income)
        FROM people p JOIN people_dp d USING (person_id)""").fetchall()[0]
    con.close()
    assert smallest >= 5 and rows == 240 and changed > 100
    # idp_cbls: clusters of at least k share one noised value, in the domain, the NULL income kept
    assert dp_smallest >= 5 and dp_changed > 200 and dp_nulls == 1 and 0 <= low and high <= 200000
    # the same tests with a larger k, or a narrower domain, fail: they check something
    stricter = _dbt(folder, "test", "--vars", "{k_check: 6, income_max: 1000}")
    assert stricter.returncode != 0
    for test in ("k_anonymous_people_masked_income", "k_anonymous_people_masked_expenses",
                 "k_anonymous_people_dp_income", "dp_income_in_domain"):
        assert re.search(rf"FAIL \d+ {test}", stdout := _plain(stricter.stdout)), (test, stdout[-3000:])
    assert "means_are_kept" in stdout and not re.search(r"FAIL \d+ means_are_kept", stdout)
