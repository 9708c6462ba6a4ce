"""Small strata in the table forms and in releases: pooled results equal masking each pooled stratum
directly (the source recoded by the slow reference of test_small_strata), the refusal names the
stratum, its size and the k, pooled strata columns carry the pool's values, the manifest records the
pooling, and the report's k-anonymity holds over the released strata."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pandas as pd
import pytest
from release_helpers import toml_dump, write_db
from methods.test_small_strata import reference_nearest, reference_rest

from duckdb_sdc import strata as sm
from duckdb_sdc.release import load_spec, parse_spec, release, report
from duckdb_sdc.release.policy import K_ANONYMITY
from duckdb_sdc.release.spec import SpecError
from duckdb_sdc.sql import connect


@pytest.fixture(scope="module")
def con():
    c = connect()
    yield c
    c.close()


def _people(seed: int, sizes: dict, nulls: float = 0.1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = [r for r, n in sizes.items() for _ in range(n)]
    n = len(region)
    income = np.round(rng.uniform(1000, 9000, n), 4)
    income[rng.random(n) < nulls] = np.nan
    return pd.DataFrame({"id": np.arange(1, n + 1), "region": region, "sex": rng.choice(["f", "m"], n),
                         "income": income, "savings": np.round(rng.uniform(0, 500, n), 4)})


def _reference_recoded(df: pd.DataFrame, strata: list[str], needs, how: str, usable: list[list[str]],
                       rest=None) -> pd.DataFrame:
    """The source with its strata recoded by the slow reference of the decision."""
    keys = sorted({tuple(r) for r in df[strata].itertuples(index=False)},
                  key=lambda t: tuple((v is None, v) for v in t))
    rows = [int((df[strata].apply(tuple, axis=1) == k).sum()) for k in keys]
    counts = [[int(df[(df[strata].apply(tuple, axis=1) == k)][cols].notna().all(axis=1).sum()) for cols in usable]
              for k in keys]
    if how == "nearest":
        target = reference_nearest(rows, counts, needs)
    else:
        rest_index = keys.index(tuple(rest)) if tuple(rest) in keys else None
        target = reference_rest(rows, counts, needs, rest_index)
    assert target is not None
    mapping = {k: (tuple(rest) if t == sm.REST_TARGET else keys[t]) for k, t in zip(keys, target)}
    out = df.copy()
    recoded = [mapping[tuple(r)] for r in df[strata].itertuples(index=False)]
    for j, c in enumerate(strata):
        out[c] = [r[j] for r in recoded]
    return out


def _sorted(rows):
    return sorted(rows, key=lambda r: tuple((v is None, v) for v in r))


CASES = [  # (method, column(s), arguments after the column, what each need counts)
    ("mdav_round", "'income'", "5", [["income"]]),
    ("ewd_round", "'income'", "3, stochastic := true, seed := 4", [["income"]]),
    ("rank_swap", "'income'", "40, seed := 9", [["income"]]),
    ("mdav_multi_round", "['income', 'savings']", "4", [["income", "savings"]]),
    ("dp_um", "['income', 'savings']", "3, 1.0, 0, 10000, seed := 2", [["income"], ["savings"]]),
    # the weighted table forms (column w the sampling weights) pool as their methods do
    ("mdav_round_weighted", "'income', 'w'", "5", [["income"]]),
    ("mdav_multi_round_weighted", "['income', 'savings'], 'w'", "4", [["income", "savings"]]),
]


@pytest.mark.parametrize("how", ["nearest", "rest"])
@pytest.mark.parametrize("method, cols, args, usable", CASES, ids=[c[0] for c in CASES])
def test_a_pooled_table_form_equals_the_table_form_on_the_recoded_table(con, method, cols, args, usable, how):
    rng = np.random.default_rng(len(method))
    pooled = 0
    for trial in range(3):
        sizes = {name: int(rng.integers(1, 14)) for name in ("east", "north", "south", "west", "zeta")}
        sizes.update(north=1, zeta=2)  # small for every method here
        df = _people(trial, sizes, nulls=0.05)
        df["w"] = rng.integers(1, 5, len(df)).astype(float)
        needs = [sm.need(method.removesuffix("_weighted"), [int(args.split(",")[0])] if method not in ("ewd_round", "rank_swap") else
                         {"c": 3} if method == "ewd_round" else {"p": 40}, "x") for _ in usable]
        rest = ["other"] if how == "rest" else None
        try:
            expected_df = _reference_recoded(df, ["region"], needs, how, usable, rest)
        except AssertionError:  # the reference refuses: so must the table form
            con.register("people_df", df)
            extra = ", rest_stratum := 'other'" if rest else ""
            with pytest.raises(duckdb.Error, match=f"{method}_table: .*(all 5 strata pooled|the rest stratum)"):
                con.execute(f"SELECT * FROM {method}_table('people_df', {cols}, {args}, strata := 'region', "
                            f"small_strata := '{how}'{extra})").fetchall()
            continue
        con.register("people_df", df)
        con.register("recoded_df", expected_df)
        extra = ", rest_stratum := 'other'" if rest else ""
        got = con.execute(f"SELECT * FROM {method}_table('people_df', {cols}, {args}, strata := 'region', "
                          f"small_strata := '{how}'{extra})").fetchall()
        expected = con.execute(f"SELECT * FROM {method}_table('recoded_df', {cols}, {args}, strata := 'region')").fetchall()
        assert _sorted(got) == _sorted(expected)
        assert {r[1] for r in got} == set(expected_df["region"])  # the pool's values are released
        pooled += expected_df["region"].nunique() < df["region"].nunique()
    assert pooled >= 1


def test_several_strata_columns_pool_in_the_lexicographic_order(con):
    df = _people(3, {"east": 7, "north": 5, "south": 3})
    needs = [sm.need("mdav_round", {"k": 3}, "income")]
    expected_df = _reference_recoded(df, ["region", "sex"], needs, "nearest", [["income"]])
    con.register("people_df", df)
    con.register("recoded_df", expected_df)
    got = con.execute("SELECT * FROM mdav_round_table('people_df', 'income', 3, strata := ['region', 'sex'], "
                      "small_strata := 'nearest')").fetchall()
    expected = con.execute("SELECT * FROM mdav_round_table('recoded_df', 'income', 3, "
                           "strata := ['region', 'sex'])").fetchall()
    assert _sorted(got) == _sorted(expected)
    assert len({(r[1], r[2]) for r in got}) < len({(r[1], r[2]) for r in df.itertuples(index=False)})


def test_the_table_form_refuses_a_small_stratum_by_default_naming_it(con):
    df = _people(1, {"east": 12, "north": 3, "south": 9}, nulls=0)
    con.register("people_df", df)
    with pytest.raises(duckdb.Error, match=r"mdav_round_table: k = 5 is larger than the number of non-NULL values "
                                           r"\(3\) of income in stratum region = 'north'; small_strata := 'rest' \(with "
                                           r"rest_stratum := 'other'\) pools the small strata into one stratum "
                                           r"labelled so, 'nearest' pools each into a neighbouring stratum, whose "
                                           r"values its records then carry"):
        con.execute("SELECT * FROM mdav_round_table('people_df', 'income', 5, strata := 'region')").fetchall()
    # a stratum whose values are all NULL is not small: nothing of it is released
    df.loc[df["region"] == "north", "income"] = np.nan
    con.register("people_df", df)
    out = con.execute("SELECT region, income FROM mdav_round_table('people_df', 'income', 5, strata := 'region') "
                      "WHERE region = 'north'").fetchall()
    assert out == [("north", None)] * 3


def test_rest_needs_text_strata_and_its_label(con):
    df = _people(1, {"east": 12, "north": 3, "south": 9}).assign(code=lambda d: d["region"].map(
        {"east": 1, "north": 2, "south": 3}))
    con.register("people_df", df)
    with pytest.raises(duckdb.Error, match=r"mdav_round_table: rest_stratum is a text, and strata column 'code' is "
                                           r"BIGINT; use small_strata = 'nearest'"):
        con.execute("SELECT * FROM mdav_round_table('people_df', 'income', 5, strata := 'code', small_strata := 'rest', "
                    "rest_stratum := 'other')").fetchall()
    with pytest.raises(duckdb.Error, match=r"mdav_round_table: rest_stratum must give one label per strata column "
                                           r"\(2\), got 1"):
        con.execute("SELECT * FROM mdav_round_table('people_df', 'income', 5, strata := ['region', 'sex'], "
                    "small_strata := 'rest', rest_stratum := 'other')").fetchall()
    # 'nearest' on an integer strata column: the pools take existing values
    got = con.execute("SELECT DISTINCT code FROM mdav_round_table('people_df', 'income', 5, strata := 'code', "
                      "small_strata := 'nearest') ORDER BY code").fetchall()
    assert got == [(1,), (3,)]


# ---------------------------------------------------------------------------------------------
# releases


def _spec_doc(masking: dict, region: str = "keep", **columns) -> dict:
    return {"source": {"database": "src.duckdb", "table": "people", "key": "id"},
            "output": {"database": "out.duckdb", "table": "people"},
            "masking": {"strata": ["region"], **masking},
            "columns": {"id": {"rule": "keep", "identifying": False}, "region": region, "sex": "drop", "savings": "drop",
                        "income": {"method": "mdav_round", "k": 4}, **columns}}


def _release(folder, doc) -> tuple[pd.DataFrame, pd.DataFrame]:
    (folder / "spec.toml").write_text(toml_dump(doc))
    spec = load_spec(folder / "spec.toml")
    release(spec)
    c = duckdb.connect(str(folder / "out.duckdb"), read_only=True)
    out = c.execute("SELECT * FROM people ORDER BY id").fetchdf()
    manifest = c.execute("SELECT * FROM release_manifest").fetchdf()
    c.close()
    return out, manifest


SIZES = {"a": 3, "b": 12, "c": 2, "d": 9}


@pytest.mark.parametrize("how", ["nearest", "rest"])
def test_a_pooled_release_equals_the_release_of_the_recoded_source(tmp_path, how):
    df = _people(5, SIZES)
    needs = [sm.need("mdav_round", {"k": 4}, "income")]
    rest = ["other"] if how == "rest" else None
    write_db(tmp_path / "src.duckdb", "people", df)
    masking = {"small_strata": how, **({"rest_stratum": "other"} if rest else {})}
    got, manifest = _release(tmp_path, _spec_doc(masking))
    recoded = tmp_path / "recoded"
    recoded.mkdir()
    write_db(recoded / "src.duckdb", "people", _reference_recoded(df, ["region"], needs, how, [["income"]], rest))
    expected, _ = _release(recoded, _spec_doc({}))
    pd.testing.assert_frame_equal(got, expected)
    assert set(got["region"]) == ({"b", "d"} if how == "nearest" else {"b", "d", "other"})
    # the manifest records the pooling, with the values of the released strata column
    params = json.loads(manifest.set_index("column_name").loc["income", "parameters"])
    into = {"a": "b", "c": "d"} if how == "nearest" else {"a": "other", "c": "other"}
    recorded = params["small_strata"]
    assert recorded["pooled"] == [{"from": {"region": s}, "records": SIZES[s], "into": {"region": into[s]}}
                                  for s in ("a", "c")]
    assert (recorded["small_strata"], recorded["needs"], recorded["strata_before"], recorded["strata_pooled"],
            recorded["records_pooled"]) == (how, {"income": 4}, 4, 2, 5)
    guarantee = manifest.set_index("column_name")["guarantee"]
    assert guarantee["region"] == (f"none: released as in the source, except 2 small strata whose records carry their "
                                   f"pool's values (small_strata = '{how}'; see the masked columns' "
                                   "parameters.small_strata)")
    assert guarantee["income"].startswith(f"4-anonymity of income within each stratum of region after 2 small strata "
                                          f"were pooled (small_strata = '{how}')")


def test_the_report_finds_k_anonymity_over_the_released_pooled_strata(tmp_path):
    write_db(tmp_path / "src.duckdb", "people", _people(6, SIZES, nulls=0))
    _release(tmp_path, _spec_doc({"small_strata": "nearest"}))
    rep = report(load_spec(tmp_path / "spec.toml"))
    part = rep[(rep["section"] == K_ANONYMITY) & (rep["measure"] == "k_anonymity")]
    assert part.set_index("column")["value"]["income"] >= 4


def test_a_dropped_strata_column_is_not_recoded_and_its_values_are_not_in_the_manifest(tmp_path):
    write_db(tmp_path / "src.duckdb", "people", _people(7, SIZES))
    out, manifest = _release(tmp_path, _spec_doc({"small_strata": "nearest"}, region="drop"))
    assert "region" not in out.columns
    params = json.loads(manifest.set_index("column_name").loc["income", "parameters"])["small_strata"]
    assert "pooled" not in params and (params["strata_pooled"], params["records_pooled"]) == (2, 5)
    text = manifest.to_json(date_format="iso")
    assert "'a'" not in text and '"a"' not in text  # no stratum value of the dropped column


def test_the_release_refuses_a_small_stratum_by_default_naming_rule_stratum_size_and_k(tmp_path):
    write_db(tmp_path / "src.duckdb", "people", _people(8, SIZES, nulls=0))
    with pytest.raises(SpecError, match=r"^spec.toml: columns.income: mdav_round: k = 4 is larger than the number of "
                                        r"non-NULL values \(3\) of income in stratum region = 'a'; set \[masking\] "
                                        r"small_strata = \"rest\" \(with rest_stratum = \"other\"\) to pool the "
                                        r"small strata into one stratum labelled so, or \"nearest\" to pool each "
                                        r"into a neighbouring stratum, whose values its records then carry"):
        _release(tmp_path, _spec_doc({}))
    assert not (tmp_path / "out.duckdb").exists()
    # the rest stratum still too small: refused, naming it
    other = tmp_path / "other"
    other.mkdir()
    write_db(other / "src.duckdb", "people", _people(8, {"a": 1, "b": 12, "c": 2}, nulls=0))
    with pytest.raises(SpecError, match=r"the rest stratum region = 'other' \(strata region = 'a', region = 'c' "
                                        r"pooled\); use small_strata 'nearest' instead"):
        _release(other, _spec_doc({"small_strata": "rest", "rest_stratum": "other"}))


@pytest.mark.parametrize("masking, columns, message", [
    ({"small_strata": "closest"}, {}, r"masking.small_strata: must be one of 'refuse', 'nearest', 'rest', got 'closest'"),
    ({"small_strata": "rest"}, {}, r"masking.rest_stratum: is missing"),
    ({"rest_stratum": "other"}, {}, r"masking.rest_stratum: is only used with small_strata = \"rest\""),
    ({"small_strata": "rest", "rest_stratum": ["a", "b"]}, {},
     r"masking.rest_stratum: must give one label per strata column \(1\), got 2"),
    ({"small_strata": "nearest"}, {"savings": {"method": "mdav_round", "k": 3, "strata": ["sex"]}},
     r"masking.small_strata: pools the strata of every masked column once, but the rules are stratified differently"),
])
def test_spec_errors(tmp_path, masking, columns, message):
    with pytest.raises(SpecError, match=message):
        parse_spec(_spec_doc(masking, **columns), base=tmp_path)


def test_a_sweep_pools_for_each_k_as_a_release_would(tmp_path):
    from duckdb_sdc.release.tradeoff import SweepError, sweep

    write_db(tmp_path / "src.duckdb", "people", _people(9, SIZES, nulls=0))
    (tmp_path / "spec.toml").write_text(toml_dump(_spec_doc({"small_strata": "nearest"})))
    df = sweep(load_spec(tmp_path / "spec.toml"), "k", [2, 4])
    k = df[(df["section"] == K_ANONYMITY) & (df["measure"] == "k_anonymity") & (df["column"] == "income")]
    assert list(k["parameter_value"]) == [2, 4] and all(k["value"].to_numpy() >= [2, 4])
    (tmp_path / "spec.toml").write_text(toml_dump(_spec_doc({})))
    with pytest.raises(SweepError, match=r"k = 4 is larger than the number of non-NULL values of income \(2\) in "
                                         r"the stratum region = 'c'; nothing was computed"):
        sweep(load_spec(tmp_path / "spec.toml"), "k", [2, 4])


_KEY_NOTES = ["duckdb-sdc release: note: not counted as quasi-identifiers by the policy gate and the report: id "
              "(columns.id: identifying = false)\n",
              "duckdb-sdc release: note: the key 'id' is released: it links every released record to its source "
              "record (the spec says it identifies no one outside this release)\n"]


@pytest.mark.parametrize("how, into", [("nearest", ("b", "d")), ("rest", ("other", "other"))])
def test_the_release_command_says_which_strata_values_it_rewrote(tmp_path, capsys, how, into):
    """Issue 33 item 8: 'nearest' releases the records of a small stratum with another stratum's values
    (region 'a' released as 'b'); the manifest said so only in its JSON. The command says it on standard
    error, also with --quiet, and the returned result carries the same sentence."""
    from duckdb_sdc.cli import main

    write_db(tmp_path / "src.duckdb", "people", _people(5, SIZES))
    masking = {"small_strata": how, **({"rest_stratum": "other"} if how == "rest" else {})}
    (tmp_path / "spec.toml").write_text(toml_dump(_spec_doc(masking)))
    assert main(["release", str(tmp_path / "spec.toml"), "--quiet"]) == 0
    # the notes every release prints (the spec's key kept with identifying = false), then the pooling
    err = capsys.readouterr().err.splitlines(keepends=True)
    assert [line for line in err if "small_strata" not in line] == _KEY_NOTES
    assert "".join(line for line in err if "small_strata" in line) == (f"duckdb-sdc release: note: small_strata = {how!r} pooled 2 small strata (5 records) into others; "
                   f"their records are released with the pool's values: region = 'a' (3 records) as region = "
                   f"{into[0]!r}; region = 'c' (2 records) as region = {into[1]!r} (the manifest's "
                   "parameters.small_strata lists every one)\n")
    out = duckdb.connect(str(tmp_path / "out.duckdb"), read_only=True)
    assert sorted(out.execute("SELECT DISTINCT region FROM people").fetchall()) == sorted(
        {("b",), ("d",)} | {(t,) for t in into})
    out.close()


def test_the_pooling_summary_names_no_value_of_a_dropped_strata_column(tmp_path):
    write_db(tmp_path / "src.duckdb", "people", _people(7, SIZES))
    (tmp_path / "spec.toml").write_text(toml_dump(_spec_doc({"small_strata": "nearest"}, region="drop")))
    result = release(load_spec(tmp_path / "spec.toml"))
    assert result.pooled == ("small_strata = 'nearest' pooled 2 small strata (5 records) into others; the strata "
                             "columns are not released, so no released value changed")


def test_the_pooling_summary_names_the_first_ten_pooled_strata(tmp_path):
    from duckdb_sdc.release import pooling

    sizes = {f"s{i:02d}": 2 for i in range(12)} | {"z": 30}
    write_db(tmp_path / "src.duckdb", "people", _people(9, sizes, nulls=0))
    (tmp_path / "spec.toml").write_text(toml_dump(_spec_doc({"small_strata": "rest", "rest_stratum": "other"})))
    result = release(load_spec(tmp_path / "spec.toml"))
    assert result.pooled.startswith("small_strata = 'rest' pooled 12 small strata (24 records) into others; their "
                                    "records are released with the pool's values: region = 's00' (2 records) as "
                                    "region = 'other'; ")
    assert result.pooled.count(" as region = 'other'") == pooling.SHOWN
    assert result.pooled.endswith("region = 's09' (2 records) as region = 'other'; and 2 more (the manifest's "
                                  "parameters.small_strata lists every one)")


def test_a_release_without_pooling_says_nothing_of_it(tmp_path, capsys):
    from duckdb_sdc.cli import main

    write_db(tmp_path / "src.duckdb", "people", _people(5, {"a": 12, "b": 12}))
    (tmp_path / "spec.toml").write_text(toml_dump(_spec_doc({"small_strata": "nearest"})))
    assert main(["release", str(tmp_path / "spec.toml"), "--quiet"]) == 0
    assert capsys.readouterr().err.splitlines(keepends=True) == _KEY_NOTES
