"""The measure catalog (duckdb_sdc/measures/catalog.py): one declaration per measure, from which
evaluate's rows, the report's directions and units, the trade-off's choices and the Spark engine's
transpiled measures are derived; CONTRIBUTING.md's "Add a measure", run literally on a copy of the
catalog; plug-ins through the entry point group duckdb_sdc.measures."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from release_helpers import base_doc, people, write_db, write_spec

from duckdb_sdc import measures as m
from duckdb_sdc.measures import catalog, loss
from duckdb_sdc.measures.catalog import BOTH, HIGHER, LOSS, LOWER, Measure, MeasureError
from duckdb_sdc.release import format_report, load_spec, release, report
from duckdb_sdc.release.tradeoff import SweepError, check_measures

ROOT = Path(__file__).resolve().parents[2]
rep = importlib.import_module("duckdb_sdc.release.report")  # (the package's `report` is the function)
pol = importlib.import_module("duckdb_sdc.release.policy")


@pytest.fixture
def copy(monkeypatch):
    """A temporary copy of the catalog: what a test registers is gone afterwards."""
    monkeypatch.setattr(catalog, "CATALOG", dict(catalog.CATALOG))
    return catalog.CATALOG


def _toy(**changes) -> dict:
    fields = dict(name="toy", direction=LOWER, unit="units of the column", scope=BOTH, section=LOSS,
                  doc="a toy measure", compute=loss.mae)
    return {**fields, **changes}


def test_a_measure_without_a_direction_cannot_be_registered(copy):
    fields = _toy()
    del fields["direction"]
    with pytest.raises(MeasureError, match=r"measure 'toy': direction is required"):
        catalog.register(Measure(**fields))
    with pytest.raises(MeasureError, match=r"measure 'toy': direction must be one of 'lower', 'higher' or ''.*got 'up'"):
        catalog.register(Measure(**_toy(direction="up")))
    assert "toy" not in copy


@pytest.mark.parametrize("change, message", [
    ({"scope": "rows"}, r"measure 'toy': scope must be one of 'column', 'overall', 'both', got 'rows'"),
    ({"section": "utility"}, r"measure 'toy': section must be one of .*got 'utility'"),
    ({"compute": None}, r"measure 'toy': compute must be a function f\(x, xm\) -> float"),
    ({"computed_by": "boxes_section"}, r"measure 'toy': compute must be None for a measure computed by boxes_section"),
    ({"engines": ("polars",)}, r"measure 'toy': engines must be a non-empty tuple of 'duckdb', 'spark', got \('polars',\)"),
    ({"doc": "two\nlines"}, r"measure 'toy': doc must be one line"),
    ({"name": " toy"}, r"measure ' toy': name must be a non-empty name"),
])
def test_a_bad_declaration_names_the_measure_and_the_parameter(change, message):
    with pytest.raises(MeasureError, match=message):
        Measure(**_toy(**change))


def test_a_name_is_declared_once(copy):
    with pytest.raises(MeasureError, match=r"register: measure 'mae' \(from duckdb_sdc\) is already declared"):
        catalog.register(Measure(**_toy(name="mae")))
    with pytest.raises(MeasureError, match=r"register: measure must be a duckdb_sdc.measures.catalog.Measure"):
        catalog.register({"name": "toy"})
    assert copy["mae"] is catalog.BUILTIN[0]


def test_evaluate_gives_every_declared_measure_in_catalog_order():
    x, xm = np.random.default_rng(3).normal(size=(2, 40, 3))
    rows = m.evaluate(x, x + 0.1 * xm, ["a", "b", "c"])
    declared = catalog.evaluated()
    assert [(r.measure, r.column) for r in rows] == (
        [(d.name, c) for c in "abc" for d in declared if d.scope in (catalog.COLUMN, BOTH)]
        + [(d.name, None) for d in declared if d.scope in (catalog.OVERALL, BOTH)])
    assert m.PER_COLUMN == catalog.per_column() and m.OVERALL == catalog.overall()
    assert set(catalog.reported()) == {d.name for d in declared}  # the report shows every one today


def test_the_report_prints_each_declared_direction_and_unit():
    rows = [rep.Row(d.section if d.section in catalog.SECTIONS else LOSS, d.name, None, 1.0)
            for d in catalog.CATALOG.values()]
    frame = rep.rows_frame(rows)
    assert list(zip(frame["measure"], frame["direction"], frame["unit"])) == [
        (d.name, d.direction, d.unit) for d in catalog.CATALOG.values()]
    text = format_report(frame)
    for d in catalog.CATALOG.values():
        if d.name != rep.VERDICT:
            assert re.search(rf"^{re.escape(d.name)} +1 +{re.escape(d.direction or '-')}  {re.escape(d.unit)}$",
                             text, re.M), d.name


def test_sections_agree_with_the_sql_registry_and_the_policy():
    from duckdb_sdc.sql.measures import GROUP_LOSS, GROUP_RISK
    from duckdb_sdc.sql.registry import REGISTRY

    groups = {f.name: f.group for f in REGISTRY if f.group in (GROUP_LOSS, GROUP_RISK)}
    for d in catalog.evaluated():
        base = d.name.split(".")[0].removesuffix("_second")
        if base in groups and d.name != "il_dr_score":
            assert (d.section == catalog.RISK) == (groups[base] == GROUP_RISK), d.name
        assert rep.section_of(d.name) == d.section
    for limit in pol.LIMITS:
        declared = catalog.measure(limit.measure)
        assert limit.section == declared.section and limit.at_least == (declared.direction == HIGHER), limit.key


def test_the_docs_state_the_declared_directions():
    """docs/releases/policy.md gives each limit's direction and unit; docs/methods/measures.md says
    which of evaluate's measures are higher-is-better."""
    page = (ROOT / "docs/releases/policy.md").read_text(encoding="utf-8")
    for limit in pol.LIMITS:
        declared = catalog.measure(limit.measure)
        assert f"* **{limit.key}** ({declared.direction} is better; {declared.unit})" in page, limit.key
    text = " ".join((ROOT / "docs/methods/measures.md").read_text(encoding="utf-8").split())
    assert ("Lower is better for every measure except the entropy of the masked columns and the regression's R²"
            in text)
    assert {d.name for d in catalog.evaluated() if d.direction == HIGHER} == {"entropy", "regression_utility.r2"}


def test_the_spark_measures_are_those_the_spark_engine_computes():
    pytest.importorskip("pyspark")
    from duckdb_sdc.spark.report import SQL_MEASURES

    spark = {d.name for d in catalog.engine(catalog.SPARK) if d.computed_by == catalog.EVALUATE}
    gate = {limit.measure for limit in pol.LIMITS if limit.section == catalog.RISK}
    assert spark == set(SQL_MEASURES) | {"interval_disclosure"} | gate  # measure_rows; the gate's risk
    assert SQL_MEASURES == ("mae", "mse", "il1", "il1s", "il1s_sum", "sse_sst")


def _recipe() -> dict[str, str]:
    """The code blocks of CONTRIBUTING.md's "Add a measure", by their titles (the file each goes in)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("## Add a measure\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r'^( *)```python title="([^"]+)"\n(.*?)^\1```', section, re.M | re.S)
    return {title: textwrap.dedent("\n".join(line[len(indent):] for line in body.splitlines()))
            for indent, title, body in blocks}


@pytest.fixture
def max_error(copy, monkeypatch):
    """The recipe's steps 1 and 2, as written: the function added to measures/loss.py, its Measure
    to the catalog (a copy)."""
    recipe = _recipe()
    assert list(recipe) == ["duckdb_sdc/measures/loss.py", "duckdb_sdc/measures/catalog.py", "tests/methods/test_measures.py"]
    module = dict(vars(loss))
    exec(recipe["duckdb_sdc/measures/loss.py"], module)
    monkeypatch.setattr(loss, "max_error", module["max_error"], raising=False)
    declared = eval(recipe["duckdb_sdc/measures/catalog.py"].strip().removesuffix(","), dict(vars(catalog)))
    catalog.register(declared)
    return declared


def test_the_recipe_adds_a_measure_to_evaluate(max_error):
    namespace = {"np": np, "m": m}
    exec(_recipe()["tests/methods/test_measures.py"], namespace)  # the recipe's step 3, its own test
    namespace["test_max_error_is_the_largest_absolute_change"]()
    assert m.PER_COLUMN[-1] == m.OVERALL[-1] == "max_error"
    x, xm = np.array([[1.0, np.nan], [4.0, 2.0], [0.0, 3.0]]), np.array([[1.5, 1.0], [1.0, 2.0], [0.0, np.nan]])
    got = {(r.measure, r.column): (r.value, r.note) for r in m.evaluate(x, xm, ["a", "b"])}
    assert got["max_error", "a"] == (3.0, None)  # pairwise: every record of a
    assert got["max_error", "b"] == (0.0, None)  # the one record with both values of b
    assert got["max_error", None] == (3.0, None)  # listwise: the one complete record
    check_measures("max_error", "record_linkage")
    with pytest.raises(SweepError, match="choose one of .*max_error"):
        check_measures("record_linkage", "record_linkage")


def test_the_recipe_adds_a_measure_to_the_report(max_error, tmp_path):
    catalog.register(Measure(**_toy(name="unreported", report=False)))  # evaluate computes it, the report not
    assert "unreported" in m.PER_COLUMN and "unreported" not in catalog.reported()
    with pytest.raises(SweepError, match="'unreported' is not an information loss measure"):
        check_measures("unreported", "record_linkage")
    df = people(120)
    write_db(tmp_path / "src.duckdb", "people", df)
    spec = load_spec(write_spec(tmp_path, base_doc()))
    release(spec)
    got = report(spec)
    assert "unreported" not in set(got["measure"])
    mine = got[got["measure"] == "max_error"]
    assert list(mine["column"].fillna("*")) == ["income", "expenses", "*"]
    assert set(mine["section"]) == {LOSS} and set(mine["direction"]) == {LOWER}
    assert set(mine["unit"]) == {"units of the column"}
    rel = _released(tmp_path).merge(df, on="id", suffixes=("_m", ""))
    assert mine["value"].iloc[0] == pytest.approx(float(np.nanmax(np.abs(rel["income"] - rel["income_m"]))), rel=1e-12)
    assert re.search(r"^max_error +[\d.e+]+ +[\d.e+]+ +[\d.e+]+ +lower  units of the column$", format_report(got), re.M)
    income = got[(got["section"] == LOSS) & (got["column"] == "income")]["measure"].tolist()
    assert income[-1] == "max_error" and income[-2] == "entropy"  # evaluate's order: the catalog's


def _released(folder: Path) -> pd.DataFrame:
    import duckdb

    con = duckdb.connect(str(folder / "out/release.duckdb"), read_only=True)
    try:
        return con.execute("SELECT id, income, expenses FROM people").df()
    finally:
        con.close()


def _plugin(folder: Path, module: str, source: str, entry: str) -> Path:
    """A distribution on `folder` as an installer leaves it (a module and its .dist-info with
    METADATA and entry_points.txt), with no installer."""
    (folder / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = folder / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{catalog.GROUP}]\n{entry}\n", encoding="utf-8")
    return folder


_PLUGIN = '''
    import numpy as np
    from duckdb_sdc.measures.catalog import BOTH, LOSS, LOWER, Measure

    def max_error(x, xm):
        return float(np.max(np.abs(np.asarray(x) - np.asarray(xm))))

    MAX_ERROR = Measure("plugin_max_error", LOWER, "units of the column", BOTH, LOSS,
                        "largest absolute change of a value", compute=max_error)
'''


def test_a_plugin_registers_through_the_entry_point_group(copy, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_plugin(tmp_path, "toy_measure_plugin", _PLUGIN,
                                            "max_error = toy_measure_plugin:MAX_ERROR")))
    monkeypatch.delitem(sys.modules, "toy_measure_plugin", raising=False)
    added = catalog.load_plugins()
    assert [d.name for d in added] == ["plugin_max_error"] and copy["plugin_max_error"] is added[0]
    rows = {(r.measure, r.column): r.value for r in m.evaluate([1.0, 5.0], [2.0, 1.0], ["a"])}
    assert rows["plugin_max_error", "a"] == rows["plugin_max_error", None] == 4.0
    sys.modules.pop("toy_measure_plugin", None)
    # and at import, in a fresh interpreter
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", "from duckdb_sdc.measures import catalog; "
                          "print(catalog.direction('plugin_max_error'), catalog.per_column()[-1])"],
                         env=env, capture_output=True, text=True, check=True).stdout
    assert out == "('lower', 'units of the column') plugin_max_error\n"


@pytest.mark.parametrize("source, entry, message", [
    ("", "broken = toy_missing_module:MEASURE",
     r"the plug-in 'broken' = 'toy_missing_module:MEASURE' of toy_broken_plugin \(entry point group "
     r"'duckdb_sdc.measures'\) failed to load: ModuleNotFoundError"),
    ("from duckdb_sdc.measures.catalog import Measure\nMEASURE = Measure('nodir', unit='', scope='both', "
     "section='information loss', doc='x', compute=len)\n", "nodir = toy_broken_plugin:MEASURE",
     r"the plug-in 'nodir' .* failed to load: MeasureError: Measure: measure 'nodir': direction is required"),
    ("MEASURE = 42\n", "number = toy_broken_plugin:MEASURE",
     r"register: measure must be a duckdb_sdc.measures.catalog.Measure \(from the plug-in 'number' = "
     r"'toy_broken_plugin:MEASURE' of toy_broken_plugin .*\), got int 42"),
    ("from duckdb_sdc.measures.catalog import CATALOG\nMEASURE = CATALOG['mae']\n", "again = toy_broken_plugin:MEASURE",
     r"register: measure 'mae' \(from the plug-in 'again' .*\) is already declared"),
])
def test_a_broken_plugin_is_named(copy, tmp_path, monkeypatch, source, entry, message):
    monkeypatch.syspath_prepend(str(_plugin(tmp_path, "toy_broken_plugin", source, entry)))
    monkeypatch.delitem(sys.modules, "toy_broken_plugin", raising=False)
    with pytest.raises(MeasureError, match=message):
        catalog.load_plugins()
    sys.modules.pop("toy_broken_plugin", None)


def test_the_catalog_imports_no_engine():
    code = ("import sys; from duckdb_sdc.measures import catalog; "
            "print(sorted(n for n in ('duckdb', 'pyspark', 'sqlglot') if n in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"
