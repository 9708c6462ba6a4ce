"""`dbt deps` and `dbt build` on examples/dbt, for real: the plugin registers duckdb_sdc, the models mask
a seed table (the list functions, and a table macro given the name ref() renders), and the generic
tests of the repository's dbt package (dbt_duckdb_sdc: k_anonymous, sdc_policy) pass, then fail when
their limits are made stricter. Runs where the `dbt` extra is installed (`tasks.py test` installs it)."""

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

import duckdb_sdc  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "examples" / "dbt"
PACKAGE = ROOT / "dbt_duckdb_sdc"


def _dbt(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DO_NOT_TRACK": "1", "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
           "DUCKDB_SDC_DBT_PATH": str(folder / "warehouse.duckdb")}
    command = [sys.executable, "-c", "import sys; from dbt.cli.main import cli; sys.exit(cli())",
               *args, "--profiles-dir", str(folder), "--project-dir", str(folder)]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=900)


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)  # without dbt's colours


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A copy of the example project (its packages.yml pointed at this clone's package), after
    `dbt deps` and `dbt build`."""
    folder = tmp_path_factory.mktemp("dbt") / "project"
    shutil.copytree(PROJECT, folder, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages", "*.duckdb",
                                                                   "package-lock.yml"))
    packages = folder / "packages.yml"
    assert "local: ../../dbt_duckdb_sdc" in packages.read_text()
    packages.write_text(packages.read_text().replace("../../dbt_duckdb_sdc", str(PACKAGE)))
    deps = _dbt(folder, "deps")
    assert deps.returncode == 0, _plain(deps.stdout)[-3000:]
    done = _dbt(folder, "build")
    return folder, done


def test_dbt_build_masks_the_seed_and_every_test_passes(built):
    folder, done = built
    out = _plain(done.stdout)
    assert done.returncode == 0, out[-4000:]
    assert "PASS=17" in out and "ERROR=0" in out
    for test in ("k_anonymous_people_masked_income", "k_anonymous_people_grouped", "policy_people_grouped",
                 "k_anonymous_people_dp_income", "means_are_kept", "dp_income_in_domain"):
        assert re.search(rf"PASS {test} ", out), test
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
    pairs, grouped_rows, grouped_nulls = con.execute("""
        SELECT (SELECT min(n) FROM (SELECT count(*) n FROM people_grouped WHERE income IS NOT NULL
                                    AND expenses IS NOT NULL GROUP BY region, income, expenses)),
               count(*), count(*) FILTER (income IS NULL AND expenses IS NULL) FROM people_grouped""").fetchall()[0]
    con.close()
    assert smallest >= 5 and rows == 240 and changed > 100
    # idp_cbls: clusters of at least k share one noised value, in the domain, the NULL income kept
    assert dp_smallest >= 5 and dp_changed > 200 and dp_nulls == 1 and 0 <= low and high <= 200000
    # the table macro on ref('people'): pairs k-anonymous; a record with a NULL in either is released NULL
    assert pairs >= 5 and grouped_rows == 240 and grouped_nulls == 3


def test_the_tests_fail_when_their_limits_are_stricter(built):
    """The same tests with a larger k, a narrower domain or a lower linkage limit fail: they check
    something. The policy's failing rows hold the measured values, which match duckdb_sdc's own."""
    folder, _ = built
    stricter = _dbt(folder, "test", "--store-failures", "--vars", "{k_check: 6, income_max: 1000, max_linkage: 0.05}")
    out = _plain(stricter.stdout)
    assert stricter.returncode != 0
    for test in ("k_anonymous_people_masked_income", "k_anonymous_people_masked_expenses",
                 "k_anonymous_people_dp_income", "k_anonymous_people_grouped", "dp_income_in_domain"):
        assert re.search(rf"FAIL \d+ {test} ", out), (test, out[-3000:])
    assert re.search(r"FAIL 2 policy_people_grouped ", out), out[-3000:]
    assert "means_are_kept" in out and not re.search(r"FAIL \d+ means_are_kept", out)
    con = duckdb_sdc.connect(str(folder / "warehouse.duckdb"), access_mode="READ_ONLY")
    failures = con.execute("SELECT policy_limit, measured, allowed, note FROM main_dbt_test__audit.policy_people_grouped "
                           "ORDER BY policy_limit").fetchall()
    linkage = con.execute("""SELECT record_linkage([p.income, p.expenses], [g.income, g.expenses])
                             FROM people p JOIN people_grouped g USING (person_id)
                             WHERE g.income IS NOT NULL AND g.expenses IS NOT NULL""").fetchall()[0][0]
    con.close()
    assert failures == [("max_record_linkage", pytest.approx(linkage, rel=1e-12), 0.05, None),
                        ("min_k", 5.0, 6.0, None)]


def test_bad_arguments_are_compile_errors_that_name_the_test(built):
    folder, _ = built
    bad = _dbt(folder, "test", "--select", "k_anonymous_people_grouped", "--vars", "{k_check: lots}")
    assert bad.returncode != 0
    assert "k_anonymous: k must be a whole number >= 1, got lots" in _plain(bad.stdout)
    bad = _dbt(folder, "test", "--select", "policy_people_grouped", "--vars", "{max_linkage: 2}")
    assert bad.returncode != 0
    assert "sdc_policy: max_record_linkage must be a number between 0 and 1, got 2" in _plain(bad.stdout)
