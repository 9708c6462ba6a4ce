"""A masking method is one declared record (duckdb_sdc.masking.MaskingMethod): what is derived from it
(the release vocabulary and its guarantee, the weighted runs, the engines' capability lists, the docs'
table), what registering refuses, and the plug-in path of CONTRIBUTING.md's "Add a masking method",
followed literally: a package declares a record through the entry point group, and the contract suite
and a release run on the method it adds."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from xml.etree import ElementTree

import duckdb
import pytest

from duckdb_sdc import guarantees, masking, outofcore
from duckdb_sdc._validate import SdcError
from duckdb_sdc.params import GROUP_SIZE, Param
from duckdb_sdc.release import METHODS as RELEASE_METHODS
from duckdb_sdc.sql import REGISTRY

ROOT = Path(__file__).resolve().parents[2]


def _toy(**overrides) -> masking.MaskingMethod:
    fields = dict(name="toy_round", data=masking.COLUMN, params=(Param("k", GROUP_SIZE),), run=lambda x, k: x,
                  guarantee=guarantees.MICROAGGREGATION)
    return masking.MaskingMethod(**{**fields, **overrides})


def test_a_method_without_a_guarantee_cannot_be_declared():
    with pytest.raises(SdcError, match=r"masking\.register: method 'toy_round' states no guarantee \(guarantee = None\)"):
        _toy(guarantee=None)
    with pytest.raises(SdcError, match=r"states no guarantee \(guarantee = 'k-anonymity'\)"):
        _toy(guarantee=guarantees.K_ANONYMITY)  # a model's name is not a statement


def test_a_record_refuses_unknown_data_and_capabilities():
    with pytest.raises(SdcError, match=r"method 'toy_round': data must be 'column' or 'records', got 'rows'"):
        _toy(data="rows")
    with pytest.raises(SdcError, match=r"capabilities \['gpu'\] unknown; known: spark buckets, out of core"):
        _toy(capabilities={"gpu"})


def test_registering_twice_is_refused_and_unregistering_forgets_the_guarantee():
    with pytest.raises(SdcError, match=r"masking\.register: method 'mdav_round' is already registered"):
        masking.register(_toy(name="mdav_round"))
    masking.register(_toy())
    try:
        assert guarantees.of("toy_round") is guarantees.MICROAGGREGATION
        assert masking.mask("toy_round", [1.0, 2.0], {"k": 2}) == [1.0, 2.0]
    finally:
        masking.unregister("toy_round")
    with pytest.raises(KeyError, match="no guarantee is stated for 'toy_round'"):
        guarantees.of("toy_round")
    assert "toy_round" not in masking.METHODS


def test_every_release_method_is_a_record_and_states_the_records_guarantee():
    with_rows = {r.name for r in REGISTRY}
    assert set(RELEASE_METHODS) == {m for m in masking.METHODS if m in with_rows and f"{m}_table" in with_rows}
    for name, rm in RELEASE_METHODS.items():
        assert rm.guarantee is masking.METHODS[name].guarantee is guarantees.of(name)
        assert rm.params == masking.METHODS[name].params[:len(rm.params)]


def test_the_capability_lists_are_the_records():
    from duckdb_sdc.spark import planner

    assert set(planner.POSITIONAL) == {m.name for m in masking.METHODS.values()
                                       if masking.SPARK_BUCKETS in m.capabilities}
    assert set(outofcore.METHODS) == {m.name for m in masking.METHODS.values() if masking.OUT_OF_CORE in m.capabilities}
    # what the engines implement: the Spark planner's per-method plans and outofcore's two paths
    assert set(planner.POSITIONAL) == {"ranking_round", "mdav_round", "idp_cbls", "idp_ls", "dp_um", "dp_laplace"}
    assert set(outofcore.METHODS) == {"ranking_round", "mdav_round", "efd_round", "ewd_round"}


def test_the_weighted_sql_functions_are_the_records_with_a_weighted_run():
    weighted = {r.name for r in REGISTRY if r.name.endswith("_weighted")}
    assert {f"{m}_weighted" for m in masking.weighted_methods()} <= weighted
    with pytest.raises(SdcError, match=r"rbd_round does not take sampling weights; the methods that do: mdav_round, "):
        masking.mask_weighted("rbd_round", [1.0, 2.0], [1.0, 1.0], {"c": 2})


def test_the_docs_table_of_methods_is_the_records():
    page = (ROOT / "docs" / "methods" / "index.md").read_text()
    assert masking.markdown() in page, "docs/methods/index.md: paste duckdb_sdc.masking.markdown() again"
    assert masking.markdown().count("\n| `") == len(masking.METHODS)


# ---------------------------------------------------------------------------------------------
# the plug-in recipe of CONTRIBUTING.md, followed literally

PLUGIN = '''\
"""A toy masking method: groups of k consecutive sorted values (the last takes the remainder),
each value replaced by its group's mean."""

import numpy as np

from duckdb_sdc import guarantees
from duckdb_sdc._validate import refuse_nonfinite
from duckdb_sdc.masking import COLUMN, MaskingMethod
from duckdb_sdc.params import GROUP_SIZE, Param


def pair_means(x, k):
    x = np.asarray(x, dtype=np.float64)
    refuse_nonfinite("toy_round", "xs", x)
    k = GROUP_SIZE.check(k, "toy_round", "k", n=len(x))
    order = np.argsort(x, kind="stable")
    out = np.empty_like(x)
    starts = list(range(0, len(x) - len(x) % k if len(x) % k else len(x), k))
    for i, s in enumerate(starts):
        e = len(x) if i == len(starts) - 1 else s + k
        v = x[order[s:e]]
        scale = 2.0 ** np.floor(np.log2(np.abs(v).max())) if np.abs(v).max() > 0 else 1.0
        out[order[s:e]] = (v / scale).mean() * scale  # no overflow at 1e308 (the contract's scale cases)
    return out


METHOD = MaskingMethod(
    "toy_round", COLUMN, (Param("k", GROUP_SIZE),), pair_means, guarantees.MICROAGGREGATION,
    paper="a test's toy",
    doc="Rounds a column to the means of groups of k consecutive sorted values; NULLs stay in place.",
    example="SELECT toy_round([1, 2, 3, 10, 11], 2)  -- [1.5, 1.5, 8.0, 8.0, 8.0]")


def plain_pair_means(x, k):
    """The same with a plain mean, whose sums overflow near 1e308."""
    x = np.asarray(x, dtype=np.float64)
    refuse_nonfinite("toy_plain_round", "xs", x)
    k = GROUP_SIZE.check(k, "toy_plain_round", "k", n=len(x))
    order = np.argsort(x, kind="stable")
    out = np.empty_like(x)
    g = len(x) // k
    for i in range(g):
        rows = order[i * k:] if i == g - 1 else order[i * k:(i + 1) * k]
        out[rows] = x[rows].mean()
    return out


OVERFLOW = "a plain mean's sums overflow to inf for values near 1.8e308"
EXPECTED = {f"{row}-{case}": OVERFLOW for row in ("toy_plain_round", "toy_plain_round_table")
            for case in ("scale-big", "scale-signed_big")}

PLAIN = MaskingMethod(
    "toy_plain_round", COLUMN, (Param("k", GROUP_SIZE),), plain_pair_means, guarantees.MICROAGGREGATION,
    paper="a test's toy", doc="toy_round with a plain mean.",
    example="SELECT toy_plain_round([1, 2, 3, 10, 11], 2)  -- [1.5, 1.5, 8.0, 8.0, 8.0]",
    expected_failures=EXPECTED)
'''


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """A package with the toy method and its entry point, importable through PYTHONPATH (a dist-info
    directory beside it is what pip would write)."""
    root = tmp_path_factory.mktemp("plugin")
    (root / "toy_sdc.py").write_text(PLUGIN)
    info = root / "toy_sdc-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-sdc\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{masking.ENTRY_POINTS}]\ntoy = toy_sdc:METHOD\nplain = toy_sdc:PLAIN\n")
    return root


def _env(plugin: Path) -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), str(ROOT)])}


def test_a_plugin_method_is_registered_with_its_sql_rows_and_its_release_rule(plugin, tmp_path):
    script = textwrap.dedent("""
        import duckdb_sdc
        from duckdb_sdc import guarantees, masking
        from duckdb_sdc.release import METHODS
        con = duckdb_sdc.connect()
        print(con.execute("SELECT toy_round([1, 2, 3, 10, 11], 2)").fetchone()[0])
        print(METHODS["toy_round"].guarantee is guarantees.MICROAGGREGATION, masking.METHODS["toy_round"].paper)
        con.execute("CREATE TABLE people AS SELECT i AS id, i % 2 AS region, i * 1.5 AS income FROM range(1, 9) r(i)")
        print(con.execute("SELECT list(income ORDER BY id) FROM toy_round_table('people', 'income', 2, strata := 'region')").fetchone()[0])
    """)
    out = subprocess.run([sys.executable, "-c", script], env=_env(plugin), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "[1.5, 1.5, 8.0, 8.0, 8.0]"
    assert lines[1] == "True a test's toy"
    # region 1: 1.5, 4.5, 7.5, 10.5 -> 3, 3, 9, 9; region 0: 3, 6, 9, 12 -> 4.5, 4.5, 10.5, 10.5
    assert sorted(float(v) for v in lines[2].strip("[]").split(", ")) == [3.0, 3.0, 4.5, 4.5, 9.0, 9.0, 10.5, 10.5]


def test_the_contract_suite_runs_on_the_plugin_method(plugin, tmp_path):
    """(Written with a plain x.mean(), the toy fails the suite's scale cases: its means overflow at 1e308.)"""
    report = tmp_path / "contract.xml"
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                          str(ROOT / "tests" / "sql" / "test_contract.py"), "-k", "toy_round"],
                         env=_env(plugin), capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    suite = ElementTree.parse(report).getroot().find("testsuite")
    cases = {c.get("name") for c in suite.iter("testcase")}
    assert int(suite.get("failures")) == int(suite.get("errors")) == 0
    # the generated cases of both rows, among them the valid call, NULLs, NaN, bad k and the scale cases
    for case in ("test_the_valid_call_runs[toy_round-valid]", "test_nulls_stay_in_place_and_take_no_part[toy_round-nulls]",
                 "test_the_valid_call_runs[toy_round_table-valid]"):
        assert case in cases
    assert sum("scale" in c for c in cases) >= 4 and len(cases) >= 20


def test_a_records_expected_failures_reach_the_contract_suite(plugin, tmp_path):
    """toy_plain_round declares on its record the four scale cases its plain mean fails, with the reason:
    they run as strict expected failures (each must fail), and every other case passes."""
    report = tmp_path / "contract.xml"
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                          "-rx", str(ROOT / "tests" / "sql" / "test_contract.py"), "-k", "toy_plain_round"],
                         env=_env(plugin), capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    suite = ElementTree.parse(report).getroot().find("testsuite")
    skipped = sorted(c.get("name") for c in suite.iter("testcase") if c.find("skipped") is not None)
    assert skipped == [f"test_scaled_data_give_the_rescaled_answer_or_a_clear_refusal[{row}-{case}]"
                       for row in ("toy_plain_round", "toy_plain_round_table")
                       for case in ("scale-big", "scale-signed_big")]
    assert "a plain mean's sums overflow" in out.stdout
    assert int(suite.get("failures")) == int(suite.get("errors")) == 0 and int(suite.get("tests")) >= 20


def test_a_record_checks_its_expected_failures_and_scale():
    base = dict(name="toy", data=masking.COLUMN, params=(), run=lambda x: x, guarantee=guarantees.MICROAGGREGATION)
    with pytest.raises(SdcError, match=r"expected failure 'other-valid' names no case of its rows \(keys are "
                                       r"'toy-<case>' or 'toy_table-<case>'\)"):
        masking.MaskingMethod(**base, expected_failures={"other-valid": "why"})
    with pytest.raises(SdcError, match="expected failure 'toy-valid' needs its reason"):
        masking.MaskingMethod(**base, expected_failures={"toy-valid": " "})
    with pytest.raises(SdcError, match="scale must be 1, 0 or None, got 2"):
        masking.MaskingMethod(**base, scale=2)
    m = masking.MaskingMethod(**base, expected_failures={"toy-nan": "a", "toy_table-nan": "b"})
    assert m.expected_failures_of("toy") == {"nan": "a"} and m.expected_failures_of("toy_table") == {"nan": "b"}


def test_a_broken_plugin_is_named(tmp_path):
    info = tmp_path / "broken-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{masking.ENTRY_POINTS}]\nbroken = no_such_module:METHOD\n")
    out = subprocess.run([sys.executable, "-c", "import duckdb_sdc.masking"], env=_env(tmp_path), capture_output=True,
                         text=True, timeout=300)
    assert out.returncode != 0
    assert "masking.load_entry_points: plug-in 'broken' (no_such_module:METHOD) cannot be loaded: " \
           "ModuleNotFoundError: No module named 'no_such_module'" in out.stderr
