"""`duckdb-sdc tradeoff`: parameter sweeps of a spec, evaluated in memory, and their plots."""

from __future__ import annotations

import json
import re
import struct
import sys

import pandas as pd
import pytest
from release_helpers import base_doc, people, write_db, write_spec

from duckdb_sdc.cli import main
from duckdb_sdc.release import SpecError, load_spec, parse_values, release, report, sweep
from duckdb_sdc.release import plot as plot_module
from duckdb_sdc.release.plot import DATA_ID, PlotUnavailable
from duckdb_sdc.release.report import ALL
from duckdb_sdc.release.tradeoff import SweepError, check_measures, variant

pytest.importorskip("matplotlib", reason="the plot extra is not installed (pip install -e '.[plot]')")


@pytest.fixture
def folder(tmp_path):
    write_db(tmp_path / "src.duckdb", "people", people(150))
    return tmp_path


@pytest.mark.parametrize("param, text, expected", [
    ("k", "3..6", [3, 4, 5, 6]),
    ("k", "3..12:4", [3, 7, 11]),
    ("k", "10,3, 5,5", [3, 5, 10]),
    ("c", "7", [7]),
    ("epsilon", "0.5,1,2", [0.5, 1.0, 2.0]),
    ("epsilon", "0.1..10:3", [pytest.approx(0.1), pytest.approx(1.0), pytest.approx(10.0)]),
])
def test_parse_values(param, text, expected):
    assert parse_values(param, text) == expected


def test_an_epsilon_range_is_log_spaced_with_ten_values_by_default():
    values = parse_values("epsilon", "0.01..1")
    assert len(values) == 10 and values[0] == pytest.approx(0.01) and values[-1] == pytest.approx(1.0)
    ratios = [b / a for a, b in zip(values, values[1:])]
    assert max(ratios) == pytest.approx(min(ratios))


@pytest.mark.parametrize("param, text, message", [
    ("k", "3..x", r"--k '3\.\.x': 'x' is not a whole number"),
    ("k", "2.5..4", r"'2\.5' is not a whole number"),
    ("k", "0..5", r"values must be > 0, got 0"),
    ("k", "9..3", r"the range ends below its start"),
    ("epsilon", "-1,2", r"values must be > 0, got -1"),
    ("epsilon", "a lot", r"'a lot' is not a number"),
    ("gamma", "1", r"cannot sweep 'gamma'"),
])
def test_bad_values(param, text, message):
    with pytest.raises(SweepError, match=message):
        parse_values(param, text)


def test_check_measures():
    check_measures("il1s", "record_linkage")
    check_measures("il_metrics", "interval_disclosure")
    with pytest.raises(SweepError, match=r"--il 'record_linkage' is not an information loss measure; choose one of mae"):
        check_measures("record_linkage", "record_linkage")
    with pytest.raises(SweepError, match=r"--dr 'il1s' is not a disclosure risk measure"):
        check_measures("il1s", "il1s")


def test_variant_sets_the_parameter_where_the_method_has_it(folder):
    doc = base_doc()
    doc["columns"]["age"] = {"method": "idp_cbls", "k": 5}
    doc["masking"]["total_epsilon"] = 1.0
    spec = load_spec(write_spec(folder, doc))
    k7 = variant(spec, "k", 7)
    assert {r.column: r.params["k"] for r in k7.masked()} == {"age": 7, "income": 7, "expenses": 7}
    assert k7.rules["expenses"].params["representative"] == "median"  # the rest is kept
    eps = variant(spec, "epsilon", 0.25)
    assert eps.rules["age"].epsilon == 0.25 and eps.total_epsilon is None
    assert eps.rules["income"].params == spec.rules["income"].params


def test_a_sweep_point_equals_the_report_of_a_release_with_that_value(folder):
    spec = load_spec(write_spec(folder, base_doc()))
    data = sweep(spec, "k", [4, 6])
    assert list(data.columns[:2]) == ["parameter", "parameter_value"] and set(data["parameter"]) == {"k"}
    doc = base_doc()
    doc["columns"]["income"]["k"] = doc["columns"]["expenses"]["k"] = 6
    released = load_spec(write_spec(folder, doc, "k6.toml"))
    release(released)
    expected = report(released)
    got = data[data["parameter_value"] == 6].drop(columns=["parameter", "parameter_value"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-12)
    k = data[(data["measure"] == "k_anonymity") & (data["column"] == "income")]
    assert list(k["value"]) == [4.0, 6.0]


def test_sweep_mistakes(folder):
    spec = load_spec(write_spec(folder, base_doc()))
    with pytest.raises(SweepError, match=r"no masked column has the parameter c \(methods with it: efd_round"):
        sweep(spec, "c", [3])
    with pytest.raises(SpecError, match=r"columns\.income: mdav_round: k = 500 is larger .* \(at k = 500\)"):
        sweep(spec, "k", [5, 500])


def _png_size(path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def _data(page: str) -> dict:
    found = re.search(rf'<script type="application/json" id="{DATA_ID}">(.*?)</script>', page, re.S)
    return json.loads(found.group(1))


def test_tradeoff_command_writes_a_png_and_a_self_contained_page(folder, capsys):
    path = write_spec(folder, base_doc())
    assert main(["tradeoff", str(path), "--k", "3..12", "--out", str(folder / "plots")]) == 0
    out = capsys.readouterr().out
    png, page = folder / "plots" / "spec_tradeoff_k.png", folder / "plots" / "spec_tradeoff_k.html"
    assert f"wrote {png} and {page}" in out
    assert out.splitlines()[0].split() == ["k", "il1s", "record_linkage", "k_anonymity", "(all)"]
    width, height = _png_size(png)
    assert width >= 1000 and height >= 500 and png.stat().st_size > 30_000
    text = page.read_text()
    data = _data(text)
    points = pd.DataFrame(data["points"]["rows"], columns=data["points"]["columns"])
    assert len(points) == 10 * 3  # 10 values x (income, expenses, all columns)
    assert list(points["curve"].unique()) == ["income", "expenses", ALL]
    assert points["parameter_value"].tolist()[:10] == list(range(3, 13))
    assert points["il1s"].notna().all() and points["record_linkage"].notna().all()
    # a bigger k loses more and links fewer records
    overall = points[points["curve"] == ALL]
    assert overall["il1s"].iloc[-1] > overall["il1s"].iloc[0]
    assert overall["record_linkage"].iloc[-1] < overall["record_linkage"].iloc[0]
    income = points[points["curve"] == "income"]
    assert income["k_anonymity"].tolist() == list(range(3, 13))
    sweep_rows = pd.DataFrame(data["sweep"]["rows"], columns=data["sweep"]["columns"])
    assert set(sweep_rows["parameter_value"]) == set(range(3, 13)) and len(sweep_rows) > 10 * 50
    # the page holds the figure and the table, and loads nothing
    assert text.count("<svg") == 1 and text.count("<tr>") == 1 + 30
    assert not re.search(r"<(script|img|link|iframe)[^>]+(src|href)=", text)


def test_an_epsilon_sweep_of_dp_columns(folder):
    doc = base_doc()
    doc["columns"]["income"] = {"method": "idp_cbls", "k": 5, "seed": 1}
    doc["columns"]["expenses"] = {"method": "ewd_round", "c": "auto"}
    doc["masking"]["total_epsilon"] = 2.0
    path = write_spec(folder, doc)
    assert main(["tradeoff", str(path), "--epsilon", "0.1..10:4", "--quiet", "--out", str(folder)]) == 0
    data = _data((folder / "spec_tradeoff_epsilon.html").read_text())
    points = pd.DataFrame(data["points"]["rows"], columns=data["points"]["columns"])
    assert len(points) == 4 * 2 and list(points["curve"].unique()) == ["income", ALL]
    assert _png_size(folder / "spec_tradeoff_epsilon.png")[0] >= 1000


def test_tradeoff_user_errors_exit_2_with_one_line(folder, capsys, monkeypatch):
    path = write_spec(folder, base_doc())
    for args, message in [
        (["--k", "3..x"], "duckdb-sdc tradeoff: error: --k '3..x': 'x' is not a whole number"),
        (["--c", "3..5"], "duckdb-sdc tradeoff: error: spec.toml: no masked column has the parameter c"),
        (["--k", "3", "--dr", "mae"], "duckdb-sdc tradeoff: error: --dr 'mae' is not a disclosure risk measure"),
    ]:
        assert main(["tradeoff", str(path), *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith(message) and err.count("\n") == 1
    # a measure without a value at any point (global linkage above the evaluation's limit) plots nothing
    monkeypatch.setattr(sys.modules["duckdb_sdc.measures.evaluate"], "EVALUATE_GLOBAL_MAX_N", 3)
    assert main(["tradeoff", str(path), "--k", "3..4", "--dr", "global_linkage", "--out", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("duckdb-sdc tradeoff: error: --dr 'global_linkage' has no value at any k "
                          "(global_linkage: not run on ") and "at most 3" in err and err.count("\n") == 1
    assert not (folder / "spec_tradeoff_k.png").exists()

    def missing():
        raise PlotUnavailable('plots need matplotlib: pip install "duckdb-sdc[plot]"')

    monkeypatch.setattr(plot_module, "require_matplotlib", missing)
    assert main(["tradeoff", str(path), "--k", "3..5"]) == 2
    assert capsys.readouterr().err == ('duckdb-sdc tradeoff: error: plots need matplotlib: '
                                       'pip install "duckdb-sdc[plot]"\n')
