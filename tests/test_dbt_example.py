"""`dbt build` on examples/dbt: the plugin registers duckdb_sdc, the model masks a seed table, and the
project's tests check k-anonymity. Runs where the `dbt` extra is installed (`tasks.py test` installs it)."""

from __future__ import annotations

import os
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


def test_dbt_build_masks_the_seed_and_the_k_anonymity_tests_pass_and_bite(tmp_path):
    folder = tmp_path / "dbt"
    shutil.copytree(PROJECT, folder, ignore=shutil.ignore_patterns("target", "logs", "*.duckdb"))
    done = _dbt(folder, "build")
    assert done.returncode == 0, done.stdout[-4000:]
    assert "PASS=7" in done.stdout and "ERROR=0" in done.stdout
    con = duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True)  # plain: nothing registered
    smallest, changed, rows = con.execute("""
        SELECT (SELECT min(n) FROM (SELECT count(*) n FROM people_masked WHERE income IS NOT NULL
                                    GROUP BY region, income)),
               count(*) FILTER (p.income <> m.income), count(*)
        FROM people p JOIN people_masked m USING (person_id)""").fetchall()[0]
    con.close()
    assert smallest >= 5 and rows == 240 and changed > 100
    # the same tests with a larger k fail: they check something
    stricter = _dbt(folder, "test", "--select", "people_masked", "--vars", "{k_check: 6}")
    assert stricter.returncode != 0 and "FAIL" in stricter.stdout
