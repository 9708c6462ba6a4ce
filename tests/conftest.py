from __future__ import annotations

import os
import tempfile
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

import duckdb_sdc
from duckdb_sdc import datasets

# The test files that take longest (seconds of one core in a fresh CI run, from pytest's --junitxml: contract
# 346, spark_release 167, docs 136, examples 126, release_leaks 92, spark_release_rules 85, examples_long 78,
# dbt_example 66, cli 57, small_strata_sql 45, release_tradeoff 45, dbt_package 39; the whole suite 1845),
# in that order, run first. pytest-xdist hands whole files to the workers in collection order
# (`--dist loadfile --no-loadscope-reorder`, as tasks.py runs it; its default order, most tests first,
# left the one-test example files to run alone at the end), so the longest start first and the short
# files fill the gaps.
LONGEST_FIRST = ("spark/test_kill.py", "spark/test_cluster.py", "release/test_kill.py", "sql/test_contract.py",
                 "spark/test_release.py", "integration/test_docs.py", "integration/test_examples.py",
                 "release/test_leaks.py", "spark/test_release_rules.py", "integration/test_examples_long.py",
                 "integration/test_dbt_example.py", "integration/test_cli.py", "sql/test_small_strata.py",
                 "release/test_tradeoff.py", "integration/test_dbt_package.py")  # paths under tests/


# Every release records itself in the ledger (duckdb_sdc/release/ledger.py), by default under
# $XDG_DATA_HOME: the tests never touch the user's, and each test has a ledger of its own (a module
# fixture's releases go to the session's), so that no test's releases compose with another's.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="duckdb-sdc-tests-xdg-")


@pytest.fixture(autouse=True)
def _own_ledger(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg")))


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    here = Path(__file__).resolve().parent
    # stable: the others keep their order
    items.sort(key=lambda item: rank.get(item.path.resolve().relative_to(here).as_posix(), len(rank)))


@pytest.fixture
def con():
    connection = duckdb_sdc.connect()
    yield connection
    connection.close()


@pytest.fixture
def shared_data() -> Path:
    """The folder of the reference microdata sets bundled in the package (duckdb_sdc.datasets), with
    their sdcMicro file names (Tarragona.csv, CASCrefmicrodata.csv, EIA.csv, testdata.csv, free1.csv):
    present in every clone and every installation, so no test skips."""
    return datasets.path("tarragona").parent


@pytest.fixture
def people(con):
    """Table people(id, region, income BIGINT) of 600 records, 25 incomes NULL; returns the frame (NaN
    for NULL). Test modules that need other columns define their own."""
    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({
        "id": np.arange(n),
        "region": rng.choice(["north", "south", "east"], n),
        "income": np.round(rng.lognormal(10, 0.8, n)),
    })
    df.loc[rng.choice(n, 25, replace=False), "income"] = np.nan  # NULLs in the table
    con.execute("CREATE TABLE people AS SELECT id, region, income::BIGINT AS income FROM df")
    return df


@pytest.fixture(autouse=True)
def leak_scan_of_every_release(request, monkeypatch):
    """Issue 13: every release the test suite writes is scanned for raw values of its masked columns
    (release_helpers.leak_scan): the releases planned in this process (each scanned before the next
    one is planned, and at the end of the test), and the specs (*.toml) under the test's tmp_path
    whose release files exist at its end (releases written by a subprocess: the CLI, the demo)."""
    import json

    from release_helpers import leak_scan

    from duckdb_sdc.release import load_spec
    from duckdb_sdc.release import run as release_run
    from duckdb_sdc.release.report import _comparable

    pending, scanned = [], set()
    # asked for now, so that it outlives this fixture's teardown
    folder = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None

    def scan(spec) -> None:
        out = spec.output.database
        if not out.is_file() or str(out.resolve()) in scanned:
            return
        try:
            plain = duckdb.connect(str(out), read_only=True)
            written = plain.execute("SELECT any_value(spec) FROM release_manifest").fetchall()[0][0]
            plain.close()
        except duckdb.Error:
            return  # not a release file (a test writing something else there)
        if written is None or _comparable(json.loads(written)) != _comparable(spec.public_text()):
            return  # written from another spec since
        problems = leak_scan(spec)
        assert not problems, f"leak scan of {out}: {problems}"
        scanned.add(str(out.resolve()))

    def flush() -> None:
        while pending:
            scan(pending.pop(0))

    planning = release_run.plan_release

    def plan_release(con, spec, *args, **kwargs):
        flush()
        scanned.discard(str(spec.output.database.resolve()))  # to be written again
        pending.append(spec)
        return planning(con, spec, *args, **kwargs)

    monkeypatch.setattr(release_run, "plan_release", plan_release)
    yield
    flush()
    if folder is not None:
        for path in sorted(folder.rglob("*.toml")):
            try:
                spec = load_spec(path)
            except Exception:  # a spec a test wrote to be refused
                continue
            scan(spec)
