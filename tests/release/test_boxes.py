"""Box anonymisation in releases: a box method (`box_release`) in a spec releases every column of its
group as `<col>_lower` and `<col>_upper` plus one box id column, read back by a plain connection and
compared with the numpy layer; the manifest, the leak scan, the report and the errors."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from release_helpers import FILE_BYTES, base_doc, people, scan_release, write_db, write_spec

from duckdb_sdc import guarantees, masking, methods
from duckdb_sdc.cli import main
from duckdb_sdc.methods import boxes as bx
from duckdb_sdc.release import (SpecError, dry_run, format_report, load_spec, parse_spec, plan_release, release,
                                report, sweep)
from duckdb_sdc.release import methods as release_methods
from duckdb_sdc.release.methods import BOX_TYPE, Param, check_value
from duckdb_sdc.release.plan import DIALECT, parse_back
from duckdb_sdc.release.report import BOXES, K_ANONYMITY, LOSS, SENSITIVE
from duckdb_sdc.release.tradeoff import SweepError
from duckdb_sdc.sql import boxes as sql_boxes
from duckdb_sdc.sql import connect
from duckdb_sdc.sql.registry import REGISTRY, SqlFunction

GROUP = ["income", "expenses"]
BOUNDS = ["income_lower", "income_upper", "expenses_lower", "expenses_upper"]
BOX = "income_expenses_box"
CHARACTERISTIC = "corr(income, expenses)"


@pytest.fixture
def source(tmp_path):
    df = people(240)
    write_db(tmp_path / "src.duckdb", "people", df)
    return tmp_path, df


def _doc(**settings):
    doc = base_doc()
    del doc["columns"]["income"], doc["columns"]["expenses"]
    doc["columns"]["age"] = {"method": "mdav_round", "k": 3}  # a column released as values beside the boxes
    doc["groups"] = [{"columns": GROUP, "method": "box_release", "k": 5, "characteristic": CHARACTERISTIC,
                      **settings}]
    return doc


def _load(folder, doc, name="spec.toml"):
    """A spec with [[groups]] (arrays of tables written by hand)."""
    doc = dict(doc)
    groups = doc.pop("groups", [])
    path = write_spec(folder, doc, name)
    text = path.read_text()
    for g in groups:
        text += "\n[[groups]]\n" + "".join(f"{json.dumps(k)} = {json.dumps(v)}\n" for k, v in g.items())
    path.write_text(text)
    return load_spec(path)


def _table(path, relation="people") -> pd.DataFrame:
    plain = duckdb.connect(str(path), read_only=True)  # nothing registered
    out = plain.execute(f'SELECT * FROM "{relation}"').df()
    plain.close()
    return out


def _expected_boxes(df, k, l=None, eps=None, columns=GROUP, characteristic=CHARACTERISTIC):
    """The numpy layer per region (regions in sorted order, records in key order), box ids renumbered
    over the release as the release documents: 1.. in the order (region, box id within the region)."""
    out, offset = {}, 0
    for _, part in df.sort_values("id").groupby("region", sort=True):
        X = part[columns].to_numpy(dtype=float)
        complete = ~np.isnan(X).any(axis=1)
        rel = bx.box_release(X[complete], characteristic, k, l, eps, list(columns))
        for i, label, lo, hi in zip(part["id"].to_numpy()[complete], rel.labels, rel.lower, rel.upper):
            out[int(i)] = (offset + int(label) + 1, lo, hi)
        out.update({int(i): None for i in part["id"].to_numpy()[~complete]})
        offset += int(rel.labels.max()) + 1
    return out


@pytest.mark.parametrize("settings", [{}, {"l": 2, "eps": [900.0, 400]}])
def test_a_box_group_is_released_as_bounds_and_box_ids(source, settings):
    folder, df = source
    spec = _load(folder, _doc(**settings))
    result = release(spec)
    assert result.columns == 8 and result.masked == ["age", "income", "expenses"]
    path = folder / "out" / "release.duckdb"
    plain = duckdb.connect(str(path), read_only=True)
    described = plain.execute("DESCRIBE people").fetchall()
    view = [r[0] for r in plain.execute("DESCRIBE people_public").fetchall()]
    plain.close()
    assert [(r[0], r[1]) for r in described] == [
        ("id", "BIGINT"), ("region", "VARCHAR"), ("age", "DOUBLE"), ("income_lower", "DOUBLE"),
        ("income_upper", "DOUBLE"), ("expenses_lower", "DOUBLE"), ("expenses_upper", "DOUBLE"), (BOX, "BIGINT")]
    assert view == ["region", "age", *BOUNDS, BOX]
    rel = _table(path)
    expected = _expected_boxes(df, 5, settings.get("l"), settings.get("eps"))
    assert sorted(rel["id"]) == sorted(expected)
    for row in rel.itertuples(index=False):
        want = expected[row.id]
        if want is None:  # a NULL income: no box, no bounds
            assert pd.isna(getattr(row, BOX)) and all(pd.isna(getattr(row, b)) for b in BOUNDS)
            continue
        assert getattr(row, BOX) == want[0]
        assert [row.income_lower, row.expenses_lower] == list(want[1])
        assert [row.income_upper, row.expenses_upper] == list(want[2])
    boxed = rel.dropna(subset=[BOX]).merge(df[["id", *GROUP]], on="id")
    assert len(boxed) == df["income"].notna().sum()
    # every record's original values lie in its box
    for c in GROUP:
        assert ((boxed[f"{c}_lower"] <= boxed[c]) & (boxed[c] <= boxed[f"{c}_upper"])).all()
    # every box holds >= k records, all of one region; the ids are 1..G, unique over the release
    per_box = boxed.groupby(BOX).agg(n=("id", "size"), regions=("region", "nunique"))
    assert per_box["n"].min() >= 5 and (per_box["regions"] == 1).all()
    assert sorted(per_box.index) == list(range(1, len(per_box) + 1))
    # a box's bounds are the smallest and largest value of its records
    for c in GROUP:
        tight = boxed.groupby(BOX)[c].agg(["min", "max"])
        assert (boxed.groupby(BOX)[f"{c}_lower"].nunique() == 1).all()
        assert np.array_equal(boxed.groupby(BOX)[f"{c}_lower"].first(), tight["min"])
        assert np.array_equal(boxed.groupby(BOX)[f"{c}_upper"].first(), tight["max"])
    if settings:  # l-diversity: >= l values eps_i apart of every attribute in every box
        for c, eps in zip(GROUP, settings["eps"]):
            for _, values in boxed.groupby(BOX)[c]:
                v = np.sort(values.to_numpy())
                assert v[-1] - v[0] >= eps
    # the values column beside the boxes is mdav_round per region, as always
    for _, part in df.sort_values("id").groupby("region"):
        got = rel.set_index("id").loc[part["id"], "age"].to_numpy()
        assert np.allclose(got, methods.mdav_round(part["age"].to_numpy(dtype=float), 3), rtol=1e-12)


def test_box_releases_are_reproducible_and_the_script_parses_back(source):
    folder, _ = source
    spec = _load(folder, _doc())
    script = dry_run(spec)
    con = connect()
    plan = plan_release(con, spec)
    con.close()
    parsed = parse_back(plan.sql())
    assert len(parsed) == len(plan.statements()) == len(parse_back(script)) == 62  # with the strata counted (small strata), 42 COMMENT ON
    for original, back in zip(plan.statements(), parsed):
        if original.key != "detach":  # sqlglot reads DETACH's name as a bare word
            assert back.sql(DIALECT, comments=False) == original.sql(DIALECT, comments=False)
    assert 'DENSE_RANK() OVER (ORDER BY "__sdc_s1", STRUCT_EXTRACT("__sdc_value", \'box\'))' in script
    assert "names := ['income', 'expenses']" in script
    release(spec)
    first = _table(spec.output.database).sort_values("id").reset_index(drop=True)
    release(spec)
    assert _table(spec.output.database).sort_values("id").reset_index(drop=True).equals(first)


def test_one_column_boxed_in_columns_is_interval_rounding(source):
    folder, df = source
    doc = base_doc()
    doc["columns"]["income"] = {"method": "box_release", "k": 4, "characteristic": "mean(income)",
                                "box_column": "income band"}
    release(load_spec(write_spec(folder, doc)))
    rel = _table(folder / "out" / "release.duckdb")
    assert list(rel.columns) == ["id", "region", "age", "income_lower", "income_upper", "income band", "expenses"]
    expected = _expected_boxes(df, 4, columns=["income"], characteristic="mean(income)")
    for row in rel.itertuples(index=False):
        want = expected[row.id]
        got = (row[5], row.income_lower, row.income_upper)
        assert (got[0] == want[0] and [got[1]] == list(want[1]) and [got[2]] == list(want[2])) if want else \
            all(pd.isna(g) for g in got)
    # interval rounding: boxes of one attribute do not overlap within a region
    spans = rel.dropna(subset=["income band"]).groupby(["region", "income band"])[["income_lower", "income_upper"]].first()
    for _, part in spans.groupby(level="region"):
        part = part.sort_values("income_lower")
        assert (part["income_lower"].to_numpy()[1:] > part["income_upper"].to_numpy()[:-1]).all()


def test_manifest_has_a_row_per_released_column(source):
    folder, _ = source
    release(_load(folder, _doc(l=2, eps=[900.0, 400])))
    plain = duckdb.connect(str(folder / "out" / "release.duckdb"), read_only=True)
    rows = plain.execute("SELECT column_name, source_column, released_as, position, rule, method, parameters, "
                         "masked_with, strata, source_type, released_type FROM release_manifest ORDER BY rowid").fetchall()
    plain.close()
    assert [r[:5] for r in rows] == [
        ("id", "id", "value", 1, "key"), ("region", "region", "value", 2, "keep"), ("age", "age", "value", 3, "mask"),
        ("income_lower", "income", "lower", 4, "mask"), ("income_upper", "income", "upper", 5, "mask"),
        ("expenses_lower", "expenses", "lower", 6, "mask"), ("expenses_upper", "expenses", "upper", 7, "mask"),
        (BOX, None, "box", 8, "mask"), ("note", "note", None, None, "drop")]
    boxes = [r for r in rows if r[5] == "box_release"]
    assert len(boxes) == 5 and {r[6] for r in boxes} == {json.dumps(
        {"characteristic": CHARACTERISTIC, "eps": [900.0, 400], "k": 5, "l": 2, "names": GROUP}, sort_keys=True)}
    assert all(r[7] == GROUP and r[8] == ["region"] for r in boxes)
    assert [(r[9], r[10]) for r in boxes] == [("DOUBLE", "DOUBLE")] * 4 + [(None, "BIGINT")]
    assert rows[2][5:8] == ("mdav_round", json.dumps({"k": 3, "representative": "mean"}), None)


def test_no_original_value_of_a_boxed_column_leaks_beyond_its_shared_bounds(source):
    """A box's bounds are the smallest and largest value among its >= k records (the method's tight
    bounds): those are the only places an original value of a boxed column may appear, and each one
    there is shared by every record of its box. Nowhere else: not in the box id, the manifest, the
    other columns, or the file's bytes as text."""
    folder, df = source
    release(_load(folder, _doc()))
    path = folder / "out" / "release.duckdb"
    raw = {c: set(df[c].dropna()) for c in GROUP}
    found = scan_release(path, raw["income"] | raw["expenses"])
    bound_columns = {(r, b) for r in ("people", "people_public") for b in BOUNDS}
    assert set(found) >= bound_columns | {("people", BOX), ("release_manifest", "spec"), FILE_BYTES}
    assert {where: v for where, v in found.items() if v and where not in bound_columns} == {}
    rel = _table(path).dropna(subset=[BOX]).merge(df[["id", *GROUP]], on="id")
    size = rel.groupby(BOX)["id"].transform("size")
    for c in GROUP:
        for side, extreme in (("lower", "min"), ("upper", "max")):
            bound = rel[f"{c}_{side}"]
            leaked = bound.isin(raw[c])
            assert leaked.any()  # the scan has teeth: tight bounds are original values ...
            # ... each the extreme of its own box, which every record of the box (>= 5) shares
            assert (bound[leaked] == rel.groupby(BOX)[c].transform(extreme)[leaked]).all()
            assert size[leaked].min() >= 5
            # and no bound is a value of the other attribute
            assert not bound.isin(raw[next(o for o in GROUP if o != c)]).any()


def test_hostile_names_in_a_box_group(tmp_path):
    df = people(120)
    hostile = ["it's", "x; DROP TABLE sentinel; --"]
    df = df.rename(columns={"income": hostile[0], "expenses": hostile[1]})
    write_db(tmp_path / "src.duckdb", "people", df, extra_tables=("sentinel",))
    doc = base_doc()
    del doc["columns"]["income"], doc["columns"]["expenses"]
    doc["groups"] = [{"columns": hostile, "method": "box_release", "k": 4, "strata": [],
                      "characteristic": f"corr({hostile[0]}, {hostile[1]})"}]
    spec = _load(tmp_path, doc)
    assert len(parse_back(dry_run(spec))) == 59  # 42 of them COMMENT ON
    release(spec)
    rel = _table(tmp_path / "out" / "release.duckdb").sort_values("id")
    box = "_".join(hostile) + "_box"
    assert list(rel.columns) == ["id", "region", "age", f"{hostile[0]}_lower", f"{hostile[0]}_upper",
                                 f"{hostile[1]}_lower", f"{hostile[1]}_upper", box]
    # no strata: the method's boxes of the whole table, ids its numbers + 1
    X = df.sort_values("id")[hostile].to_numpy(dtype=float)
    complete = ~np.isnan(X).any(axis=1)
    labels = bx.box_release(X[complete], "corr(1, 2)", 4).labels
    assert rel[box].dropna().astype(int).tolist() == (labels + 1).tolist()
    src = duckdb.connect(str(tmp_path / "src.duckdb"), read_only=True)
    assert src.execute("SELECT * FROM sentinel").fetchall() == [(1,)]
    src.close()


# ---------------------------------------------------------------------------------------------
# errors, each naming the spec location


@pytest.mark.parametrize("settings, message", [
    ({"k": 1000}, r"groups\[0\]: box_release: k = 1000 is larger than the number of records without NULL"),
    ({"l": 6, "eps": 1.0}, r"groups\[0\]: box_release: l = 6 is larger than k = 5"),
    ({"l": 2, "eps": 0}, r"groups\[0\]: box_release: eps must be a finite number > 0, got 0"),
    ({"l": 2, "eps": [1.0, -1.0]}, r"groups\[0\]: box_release: eps must be a finite number > 0, got -1"),
    ({"l": 2, "eps": [1.0, 2.0, 3.0]}, r"groups\[0\]: box_release: eps must be one number or one per attribute \(2\), got 3"),
    ({"l": 2}, r"groups\[0\]: box_release: eps must be given with l"),
    ({"characteristic": "corr(income, age)"},
     r"groups\[0\]: box_release: characteristic 'corr\(income, age\)': unknown attribute 'age'; "
     r"use the attribute names 'income', 'expenses' or positions 1\.\.2"),
    ({"characteristic": "median(income)"}, r"groups\[0\]: box_release: characteristic 'median\(income\)'"),
])
def test_bad_box_parameters_stop_the_release_naming_the_group(source, settings, message):
    folder, _ = source
    with pytest.raises(SpecError, match=message):
        release(_load(folder, _doc(**settings)))
    assert [p.name for p in (folder / "out").iterdir()] == []  # atomic: nothing written


@pytest.mark.parametrize("change, message", [
    (lambda d: d["groups"][0].update(eps="wide"), r"groups\[0\]\.eps: box_release expects DOUBLE or DOUBLE\[\], got 'wide'"),
    (lambda d: d["groups"][0].update(eps=[1.0, "a"]), r"groups\[0\]\.eps: box_release expects DOUBLE or DOUBLE\[\]"),
    (lambda d: d["groups"][0].update(k=[5, 6]), r"groups\[0\]\.k: box_release expects INTEGER, got \[5, 6\]"),
    (lambda d: d["groups"][0].pop("characteristic"), r"groups\[0\]: box_release needs characteristic"),
    (lambda d: d["groups"][0].update(names=["a", "b"]),
     r"groups\[0\]\.names: box_release's names are the rule's columns \['income', 'expenses'\], passed by the release"),
    (lambda d: d["groups"][0].update(box_column="__sdc_box"), r"groups\[0\]\.box_column: names starting with '__sdc_'"),
    (lambda d: d["columns"].update(age={"method": "mdav_round", "k": 3, "box_column": "b"}),
     r"columns\.age\.box_column: mdav_round releases values, not boxes"),
    (lambda d: d["groups"].append({"columns": ["age", "id"], "method": "mdav_round", "k": 3}),
     r"mdav_round masks one column: declare it in \[columns\]"),
])
def test_box_spec_mistakes(source, change, message):
    folder, _ = source
    doc = _doc()
    change(doc)
    with pytest.raises(SpecError, match=message):
        _load(folder, doc)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["groups"][0].update(box_column="AGE"),
     r"groups\[0\]: the release table would have two columns named 'AGE' \(the other from columns\.age\); "
     r"drop or rename a source column, or set groups\[0\]\.box_column"),
    (lambda d: d["columns"].update(note="keep") or d["groups"][0].update(box_column="note"),
     r"two columns named 'note'"),
    (lambda d: (d["columns"].pop("note"), d["groups"][0].update(columns=["income", "expenses", "note"])),
     r"groups\[0\]: box_release masks numbers, column 'note' is VARCHAR"),
])
def test_released_names_must_be_distinct(source, change, message):
    folder, _ = source
    doc = _doc()
    change(doc)
    with pytest.raises(SpecError, match=message):
        dry_run(_load(folder, doc))


def test_a_source_column_named_like_a_bound_is_a_clash(tmp_path):
    df = people(60)
    df["income_upper"] = df["income"]
    write_db(tmp_path / "src.duckdb", "people", df)
    doc = _doc()
    doc["columns"]["income_upper"] = "keep"
    with pytest.raises(SpecError, match=r"columns\.income_upper: the release table would have two columns named "
                                        r"'income_upper' \(the other from groups\[0\]\); drop or rename a source column$"):
        dry_run(_load(tmp_path, doc))


# ---------------------------------------------------------------------------------------------
# the method table and parameter checks


def test_the_box_kind_is_derived_from_the_types():
    assert sql_boxes.BOX_TYPE == BOX_TYPE  # the release's contract is the box family's type
    rows = (Param("rows", "DOUBLE[][]"), Param("k", "INTEGER"))
    fake = (SqlFunction("test_boxes", "scalar", rows, f"{BOX_TYPE.lower()}[]", "boxes"),
            SqlFunction("test_boxes_table", "table", (), "table", "its table form"),
            SqlFunction("test_no_table", "scalar", rows, f"{BOX_TYPE}[]", "no table form: not a method"),
            SqlFunction("test_other_struct", "scalar", rows, "STRUCT(box BIGINT)[]", "not a box"),
            SqlFunction("test_other_struct_table", "table", (), "table", ""))
    # each stand-in has a record (a release method is a registered record with its rows)
    records = {**masking.METHODS, **{name: masking.MaskingMethod(name, masking.RECORDS, (), lambda X: X,
                                                                 guarantees.BOX_RELEASE)
                                     for name in ("test_boxes", "test_no_table", "test_other_struct")}}
    derived = release_methods.derive(REGISTRY + fake, records)
    assert derived["test_boxes"].kind == "boxes" and derived["box_release"].kind == "boxes"
    assert "test_no_table" not in derived and "test_other_struct" not in derived
    assert [p.name for p in derived["box_release"].settable] == ["k", "characteristic", "l", "eps"]


@pytest.mark.parametrize("type_, value, ok", [
    ("DOUBLE or DOUBLE[]", 1.5, True), ("DOUBLE or DOUBLE[]", [1, 2.5], True), ("DOUBLE or DOUBLE[]", [], True),
    ("DOUBLE or DOUBLE[]", [1, "a"], False), ("DOUBLE or DOUBLE[]", [[1.0]], False),
    ("DOUBLE or DOUBLE[]", [True], False), ("DOUBLE", [1.0], False), ("VARCHAR[]", ["a", "b"], True),
    ("VARCHAR[]", "a", False), ("INTEGER[]", [1, 2], True), ("INTEGER[]", [1, 2.5], False),
])
def test_check_value_takes_lists_where_the_type_is_a_list(type_, value, ok):
    assert (check_value(Param("p", type_), value) is None) == ok


# ---------------------------------------------------------------------------------------------
# the report and the trade-off


def test_the_report_of_a_box_release(source, capsys):
    folder, df = source
    spec = _load(folder, _doc())
    release(spec)
    rep = report(spec)
    rel = _table(folder / "out" / "release.duckdb")
    got = {(s, m, None if pd.isna(c) else c): (v, n) for s, m, c, v, n, *_ in rep.itertuples(index=False)}
    # the measures comparing values judge the column released as values; the boxed ones get a note
    measured = {c for (s, m, c) in got if s == LOSS and m != "measures"}
    assert measured == {"age", None}
    for c in GROUP:
        value, note = got[(LOSS, "measures", c)]
        assert pd.isna(value) and "released as boxes (box_release, groups[0])" in note and "bounds, not a value" in note
    # the boxes section, computed directly from the release file and the source
    joined = rel.merge(df[["id", *GROUP]], on="id").dropna(subset=[BOX])
    for c in GROUP:
        width = joined[f"{c}_upper"] - joined[f"{c}_lower"]
        assert got[(BOXES, "mean_width", c)][0] == pytest.approx(width.mean(), rel=1e-12)
        assert got[(BOXES, "mean_width_sd", c)][0] == pytest.approx(width.mean() / joined[c].std(ddof=0), rel=1e-12)
        assert got[(BOXES, "mean_lower", c)][0] == pytest.approx(joined[f"{c}_lower"].mean(), rel=1e-12)
        assert got[(BOXES, "mean_upper", c)][0] == pytest.approx(joined[f"{c}_upper"].mean(), rel=1e-12)
        assert got[(BOXES, "mean_lower", c)][0] <= joined[c].mean() <= got[(BOXES, "mean_upper", c)][0]
        assert got[(BOXES, "in_box_share", c)][0] == 1.0
    assert got[(BOXES, "boxes", BOX)][0] == joined[BOX].nunique()
    assert got[(BOXES, "records_per_box", BOX)][0] == pytest.approx(len(joined) / joined[BOX].nunique())
    # k-anonymity: a boxed column is its pair of bounds (within the region); the box ids alone
    for c in GROUP:
        sizes = joined.groupby(["region", f"{c}_lower", f"{c}_upper"]).size()
        assert got[(K_ANONYMITY, "k_anonymity", c)][0] == sizes.min() >= 5
        assert got[(K_ANONYMITY, "classes", c)][0] == len(sizes)
    box_sizes = joined.groupby(BOX).size()
    assert got[(K_ANONYMITY, "k_anonymity", BOX)][0] == box_sizes.min() >= 5
    assert got[(K_ANONYMITY, "classes", BOX)][0] == len(box_sizes)
    everything = rel.dropna(subset=["age", *BOUNDS]).groupby(["region", "age", *BOUNDS]).size()
    assert got[(K_ANONYMITY, "k_anonymity", None)][0] == everything.min()
    # sensitive cells: a box is a cell
    assert got[(SENSITIVE, "cells", "income")][0] == got[(SENSITIVE, "cells", "expenses")][0] == len(box_sizes)
    text = format_report(rep)
    assert any(line.startswith("boxes ") for line in text.splitlines())
    assert main(["evaluate", str(folder / "spec.toml")]) == 0
    assert "see the boxes section" in capsys.readouterr().out


def test_tradeoff_refuses_a_box_methods_parameter_and_evaluates_boxes_beside_a_sweep(source):
    folder, _ = source
    spec = _load(folder, _doc())
    with pytest.raises(SweepError, match=r"spec\.toml: groups\[0\]: box_release releases boxes, and a sweep plots "
                                         r"measures that compare released values"):
        sweep(spec, "k", [3, 4])
    doc = _doc()
    doc["columns"]["age"] = {"method": "efd_round", "c": 4}
    data = sweep(_load(folder, doc), "c", [3, 5])  # the boxes are held fixed and still reported
    assert list(data["parameter_value"].unique()) == [3, 5]
    widths = data[(data["section"] == BOXES) & (data["measure"] == "mean_width")]
    assert len(widths) == 4 and widths["value"].notna().all()
    assert main(["tradeoff", str(folder / "spec.toml"), "--k", "3,4"]) == 2


def test_the_docs_spec_example_is_a_valid_spec():
    page = (Path(__file__).resolve().parents[2] / "docs" / "releases" / "spec.md").read_text()
    example = page[page.index("```toml"):]  # the page's first example: every key, commented
    example = example[example.index("\n") + 1:]
    spec = parse_spec(tomllib.loads(example[:example.index("```")]), name="people.toml")
    boxes = [r for r in spec.masked() if r.boxed]
    assert [(r.columns, r.box_column, r.params["eps"]) for r in boxes] == [(("waist", "hips"), "body_box", [1.0, 2.5])]
    assert spec.rules["weight"].method.name == "mdav_multi_round"
