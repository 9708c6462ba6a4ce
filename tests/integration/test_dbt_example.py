"""examples/dbt, for real, with dbt-core and dbt-duckdb: one copy of the project, each dbt command run
once. `dbt build` releases the seed with the package's sdc_release materialization (the same rows and
manifest as `duckdb-sdc release` gives for the same spec; the key dropped, the rows in a secret order),
masks it three ways by hand (the list functions, a table macro given what ref() renders) and passes
every test, a unit test among them; a build with the refusals enabled and stricter limits fails with
each message, writes nothing for a refused release and leaves the previous one as it was; `dbt build
--empty` passes; `dbt docs generate` shows the macros' descriptions; the warehouse opens in the DuckDB
1.5 CLI. Runs where the `dbt` extra is installed (`tasks.py test` installs it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

pytest.importorskip("dbt.adapters.duckdb", reason="the dbt extra is not installed (pip install -e '.[dbt]')")

import duckdb_sdc  # noqa: E402
from duckdb_sdc.release import parse_spec, release  # noqa: E402
from duckdb_sdc.measures import interval_disclosure, record_linkage  # noqa: E402
from integration.test_compat import compat_venv  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "dbt"
PACKAGE = ROOT / "dbt_duckdb_sdc"
RELEASED = ["region", "age", "income", "expenses"]
STRICTER = "{k_check: 6, income_max_check: 1000, max_linkage: 0.02, release_min_k: 50, show_refusals: true}"


def _dbt(folder: Path, *args: str) -> subprocess.CompletedProcess:
    (folder / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "DO_NOT_TRACK": "1", "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
           "DUCKDB_SDC_DBT_PATH": str(folder / "warehouse.duckdb"),
           "TMPDIR": str(folder / "tmp")}  # where the plugin makes its private workspace (see _no_workspace_left)
    command = [sys.executable, "-c", "import sys; from dbt.cli.main import cli; sys.exit(cli())",
               *args, "--profiles-dir", str(folder), "--project-dir", str(folder)]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    done.stdout = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)  # without dbt's colours
    return done


def _no_workspace_left(folder: Path) -> bool:
    """The plugin made its private workspace in the user's private folder of dbt's temporary folder,
    and removed it when dbt ended."""
    base = folder / "tmp" / f"duckdb-sdc-{os.getuid()}"
    return base.is_dir() and list(base.iterdir()) == []


def _rows(folder: Path, query: str) -> list[tuple]:
    con = duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True)  # plain: nothing registered
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A copy of the example project with the package of this clone installed where `dbt deps` puts a
    local package (a link in dbt_packages/), after `dbt build`."""
    folder = tmp_path_factory.mktemp("dbt") / "project"
    shutil.copytree(PROJECT, folder, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages", "*.duckdb",
                                                                   "package-lock.yml"))
    assert "local: ../../dbt_duckdb_sdc" in (folder / "packages.yml").read_text()
    (folder / "dbt_packages").mkdir()
    (folder / "dbt_packages" / "duckdb_sdc").symlink_to(PACKAGE, target_is_directory=True)
    done = _dbt(folder, "build")
    return folder, done


def test_dbt_build_releases_masks_and_every_test_passes(built):
    folder, done = built
    out = done.stdout
    assert done.returncode == 0, out[-4000:]
    assert _no_workspace_left(folder)
    assert "PASS=20" in out and "ERROR=0" in out, out[-2000:]
    assert re.search(r"OK created sql sdc_release model main\.people_release ", out)
    for test in ("k_anonymous_people_masked_income", "k_anonymous_people_grouped", "policy_people_grouped",
                 "policy_people_grouped_income", "k_anonymous_people_dp_income", "means_are_kept", "dp_income_in_domain",
                 r"people_grouped::people_grouped_pairs_share_their_means"):
        assert re.search(rf"PASS {test} ", out), test
    smallest, changed, rows = _rows(folder, """
        SELECT (SELECT min(n) FROM (SELECT count(*) n FROM people_masked WHERE income IS NOT NULL
                                    GROUP BY region, income)),
               count(*) FILTER (p.income <> m.income), count(*)
        FROM people p JOIN people_masked m USING (person_id)""")[0]
    dp_smallest, dp_changed, dp_nulls, low, high = _rows(folder, """
        SELECT (SELECT min(n) FROM (SELECT count(*) n FROM people_dp WHERE income IS NOT NULL
                                    GROUP BY region, income)),
               count(*) FILTER (p.income <> d.income), count(*) FILTER (d.income IS NULL),
               min(d.income), max(d.income)
        FROM people p JOIN people_dp d USING (person_id)""")[0]
    triples, grouped_rows, grouped_nulls = _rows(folder, """
        SELECT (SELECT min(n) FROM (SELECT count(*) n FROM people_grouped WHERE income IS NOT NULL
                                    AND expenses IS NOT NULL GROUP BY region, age, income, expenses)),
               count(*), count(*) FILTER (age IS NULL AND income IS NULL AND expenses IS NULL)
        FROM people_grouped""")[0]
    assert smallest >= 5 and rows == 240 and changed > 100
    # idp_cbls: clusters of at least k share one noised value, in the domain, the NULL income kept
    assert dp_smallest >= 5 and dp_changed > 200 and dp_nulls == 1 and 0 <= low and high <= 200000
    # the table macro on ref('people'): triples k-anonymous; a record with a NULL in any is released NULL
    assert triples >= 5 and grouped_rows == 240 and grouped_nulls == 3


def test_the_release_model_has_the_release_protections(built, tmp_path):
    """people_release: the key dropped (it has a rule, drop), the manifest beside it, the rows in an order
    unrelated to the source's, and the same rows and manifest as `duckdb-sdc release` writes from the
    same spec (the rendered config of the model) and the same records."""
    folder, _ = built
    columns = _rows(folder, "SELECT column_name FROM information_schema.columns WHERE table_name = 'people_release' "
                            "ORDER BY ordinal_position")
    assert [c for (c,) in columns] == RELEASED
    released = _rows(folder, "SELECT * FROM people_release")
    source_order = _rows(folder, "SELECT region FROM people WHERE income IS NOT NULL AND expenses IS NOT NULL "
                                 "ORDER BY person_id")
    assert len(released) == len(source_order) == 237
    assert [r[0] for r in released] != [r for (r,) in source_order]
    smallest = _rows(folder, "SELECT min(n) FROM (SELECT count(*) n FROM people_release GROUP BY ALL)")[0][0]
    assert smallest >= 5
    # nothing else is left in the warehouse: the release job's temporary copies are gone
    tables = _rows(folder, "SELECT table_schema, table_name FROM information_schema.tables ORDER BY ALL")
    assert tables == [("main", t) for t in ("people", "people_dp", "people_grouped", "people_masked",
                                             "people_release", "people_release_manifest")]
    manifest = _rows(folder, "SELECT column_name, rule, method, guarantee FROM people_release_manifest "
                             "ORDER BY column_name")
    assert [(c, r, m) for c, r, m, _ in manifest] == [
        ("age", "mask", "mdav_multi_round"), ("expenses", "mask", "mdav_multi_round"),
        ("income", "mask", "mdav_multi_round"), ("person_id", "key", None), ("region", "keep", None)]
    assert all(g.startswith("5-anonymity of age, income, expenses together") for c, r, _, g in manifest if r == "mask")

    # the same spec and records through duckdb-sdc release
    node = json.loads((folder / "target" / "manifest.json").read_text())["nodes"]["model.duckdb_sdc_example.people_release"]
    con = duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True)
    con.execute(f"COPY (SELECT * FROM people WHERE income IS NOT NULL AND expenses IS NOT NULL) "
                f"TO '{tmp_path / 'people.parquet'}'")
    con.close()
    doc = {**node["config"]["release_spec"], "source": {"files": ["people.parquet"], "key": "person_id"},
           "output": {"database": "release.duckdb", "table": "people_release"}}
    release(parse_spec(doc, base=tmp_path, name="people.toml"))
    con = duckdb.connect(str(tmp_path / "release.duckdb"), read_only=True)
    cli = con.execute("SELECT * FROM people_release").fetchall()
    fields = ("column_name, source_column, released_as, position, rule, method, parameters, strata, masked_with, "
              "epsilon, privacy_model, guarantee, source_type, released_type, epsilon_total")
    cli_manifest = con.execute(f"SELECT {fields} FROM release_manifest ORDER BY column_name").fetchall()
    con.close()
    assert sorted(released) == sorted(cli)
    assert _rows(folder, f"SELECT {fields} FROM people_release_manifest ORDER BY column_name") == cli_manifest


def test_the_warehouse_opens_in_the_duckdb_1_5_cli(built):
    """The profile attaches the warehouse in storage version v1.0.0: DuckDB 1.x clients read it."""
    folder, _ = built
    done = subprocess.run([str(compat_venv() / "bin" / "duckdb"), "-readonly", "-json", str(folder / "warehouse.duckdb"),
                           "-c", "SELECT version() AS v, (SELECT count(*) FROM people_release) AS released, "
                                 "(SELECT count(*) FROM people_release_manifest) AS manifest, "
                                 "(SELECT count(*) FROM people_grouped) AS grouped"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert row["v"].startswith("v1.5") and (row["released"], row["manifest"], row["grouped"]) == (237, 5, 240)


def test_refusals_and_stricter_limits_fail_the_build_with_their_messages(built):
    """With the refusals enabled and stricter limits: every refused release (an undeclared column, a
    breached policy, a stratum too small for its method: refused in SQL, and the release's transaction
    rolled back, an incremental setting, a microbatch model's table macro) fails its model with the refusal and writes nothing (people_release, refused by its policy now, stays as it was: the same
    rows in the same order), and the tests fail; the policy's failing rows hold the measured values,
    which match duckdb_sdc's own (dates and timestamps measured as epoch seconds), the note naming the
    raw column left out of the quasi-identifiers, and the published key."""
    folder, _ = built
    before = _rows(folder, "SELECT * FROM people_release")
    manifest_before = _rows(folder, "SELECT release_id, created_at FROM people_release_manifest")
    done = _dbt(folder, "build", "--store-failures", "--vars", STRICTER)
    assert _no_workspace_left(folder)  # a failed build too
    out = done.stdout
    assert done.returncode != 0
    assert re.search(r"Database Error in model refused_undeclared .*\n\s+refused_undeclared: source column without a "
                     r"rule in \[columns\] \(declare each as \"keep\", \"drop\" or a masking method\): 'income_text'", out)
    assert re.search(r"Database Error in model refused_policy .*\n\s+refused_policy: the release breaches its policy; "
                     r"nothing was written\n\s+k_anonymity = 1 breaches min_k = 5 \(>=\)", out)
    assert re.search(r"Database Error in model people_release .*\n\s+people_release: the release breaches its policy; "
                     r"nothing was written\n\s+k_anonymity = 5 breaches min_k = 50 \(>=\)", out)
    assert re.search(r"Database Error in model refused_small_stratum .*\n\s+refused_small_stratum: columns.income: "
                     r"mdav_round: k = 100 is larger than the number of non-NULL values \(\d+\) of income in stratum "
                     r"region = '\w+'", out)
    assert re.search(r"Compilation Error in model refused_incremental .*\n\s+sdc_release: model refused_incremental sets "
                     r"incremental_strategy or unique_key, but a release is rebuilt whole on every run", out)
    # a microbatch model's table macro argument (duckdb_sdc.sdc_table) is refused when its first batch compiles
    assert re.search(r"sdc_table: model refused_microbatch is a microbatch model, which masks each batch of its input "
                     r"alone \(this batch: \(select \* from \"warehouse\"\.\"main\"\.\"people_joined\" where joined >= "
                     r"'2024-01-01 00:00:00\+00:00' and joined < '2025-01-01 00:00:00\+00:00'\)\): k-anonymity and every "
                     r"group would hold within one batch only", out), out[-3000:]
    assert re.search(r"Batch 1 of 3 ERROR creating batch 2024 of main\.refused_microbatch", out)
    for test in ("k_anonymous_people_masked_income", "k_anonymous_people_masked_expenses",
                 "k_anonymous_people_dp_income", "k_anonymous_people_grouped", "dp_income_in_domain"):
        assert re.search(rf"FAIL \d+ {test} ", out), (test, out[-3000:])
    assert re.search(r"FAIL 2 policy_people_grouped ", out) and re.search(r"FAIL 1 policy_people_masked_without_age ", out)
    assert re.search(r"FAIL 1 policy_people_grouped_income ", out)
    assert re.search(r"FAIL 1 policy_people_masked_key ", out) and re.search(r"FAIL 2 policy_people_joined_shifted ", out)
    assert "means_are_kept" in out and not re.search(r"FAIL \d+ means_are_kept", out)
    tables = {t for (t,) in _rows(folder, "SELECT table_name FROM information_schema.tables")}
    assert not {t for t in tables if t.startswith("refused")}
    assert _rows(folder, "SELECT * FROM people_release") == before
    assert _rows(folder, "SELECT release_id, created_at FROM people_release_manifest") == manifest_before
    con = duckdb_sdc.connect(str(folder / "warehouse.duckdb"), access_mode="READ_ONLY")
    failures = con.execute("SELECT policy_limit, measured, allowed, note FROM main_dbt_test__audit.policy_people_grouped "
                           "ORDER BY policy_limit").fetchall()
    without_age = con.execute("SELECT * FROM main_dbt_test__audit.policy_people_masked_without_age").fetchall()
    income_only = con.execute("SELECT policy_limit, allowed FROM main_dbt_test__audit.policy_people_grouped_income"
                              ).fetchall()
    linkage = con.execute("""SELECT record_linkage([p.income, p.expenses], [g.income, g.expenses])
                             FROM people p JOIN people_grouped g USING (person_id)
                             WHERE g.income IS NOT NULL AND g.expenses IS NOT NULL""").fetchall()[0][0]
    key = con.execute("SELECT * FROM main_dbt_test__audit.policy_people_masked_key").fetchall()
    dated = con.execute("SELECT policy_limit, measured, allowed FROM main_dbt_test__audit.policy_people_joined_shifted "
                        "ORDER BY policy_limit").fetchall()
    # the dates and timestamps as a release's report measures them: epoch seconds, numpy's measures
    original, shifted = (np.column_stack(list(con.execute(f"SELECT epoch(joined), epoch(seen) FROM {t} "
                                                          "ORDER BY person_id").fetchnumpy().values()))
                         for t in ("people_joined", "people_joined_shifted"))
    types = con.execute("SELECT typeof(joined), typeof(seen) FROM people_joined_shifted LIMIT 1").fetchall()
    con.close()
    assert types == [("DATE", "TIMESTAMP")]
    assert dated == [("max_interval_disclosure", pytest.approx(interval_disclosure(original, shifted), rel=1e-12), 0.5),
                     ("max_record_linkage", pytest.approx(record_linkage(original, shifted), rel=1e-12), 0.1)]
    assert dated[1][1] > 0.9  # dates shifted by a few days link almost every record
    assert key == [("key", 1.0, 0.0, "the model publishes the key person_id, which links every record to its source "
                                     "record: readers must not see it (an sdc_release model drops it); set "
                                     "key_identifying: false if it identifies no one outside this model, or if readers "
                                     "never see this model with it (docs/dbt.md, sdc_policy)")]
    assert failures == [("max_record_linkage", pytest.approx(linkage, rel=1e-12), 0.02, None),
                        ("min_k", 5.0, 6.0, None)]
    assert income_only == [("min_k", 6.0)]  # masked columns left out and an exempt one are not a breach
    assert without_age == [("quasi_identifiers", 1.0, 0.0, "released unchanged and not a quasi-identifier: age "
                                                           "(list it in quasi_identifiers, or exempt it)")]


def test_dbt_build_empty_builds_every_model_empty_and_passes(built):
    """--empty: ref() renders an empty subquery, which the table macro takes (a strata table form on
    no row returns no row), the release of no record writes an empty table and its
    manifest, and the policy test passes (nothing can be measured)."""
    folder, _ = built
    done = _dbt(folder, "build", "--empty")
    assert done.returncode == 0, done.stdout[-4000:]
    assert "PASS=20" in done.stdout and "ERROR=0" in done.stdout
    assert _rows(folder, "SELECT (SELECT count(*) FROM people_grouped), (SELECT count(*) FROM people_release), "
                         "(SELECT count(*) FROM people_release_manifest), (SELECT count(*) FROM people)") == [(0, 0, 5, 240)]


def test_dbt_docs_generate_shows_the_macros_descriptions(built):
    folder, _ = built
    done = _dbt(folder, "docs", "generate")
    assert done.returncode == 0, done.stdout[-3000:]
    macros = json.loads((folder / "target" / "manifest.json").read_text())["macros"]
    described = {name.removeprefix("macro.duckdb_sdc."): m["description"] for name, m in macros.items()
                 if name.startswith("macro.duckdb_sdc.")}
    assert described["materialization_sdc_release_duckdb"].startswith("The `sdc_release` materialization: ")
    assert described["test_sdc_policy"].startswith("A generic model test that gates a masked model")
    assert described["test_k_anonymous"].startswith("A generic test that fails for every group")
    assert all(described.values()), described
    arguments = {a["name"] for a in macros["macro.duckdb_sdc.test_sdc_policy"]["arguments"]}
    assert {"original", "key", "quasi_identifiers", "exempt", "min_k"} <= arguments


def test_bad_arguments_are_compile_errors_that_name_the_test(built):
    """A bad argument stops dbt when it compiles, naming the test, the argument and the value (dbt stops
    at the first: k_anonymous and sdc_policy's min_k share the check sdc_whole_number)."""
    folder, _ = built
    bad = _dbt(folder, "test", "--select", "k_anonymous_people_grouped", "--vars", "{k_check: lots}")
    assert bad.returncode != 0
    assert "k_anonymous: k must be a whole number >= 1, got lots" in bad.stdout
