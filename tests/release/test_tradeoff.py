"""`duckdb-sdc tradeoff`: parameter sweeps of a spec, evaluated in memory, and their plots."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys

import duckdb
import pandas as pd
import pytest
from release_helpers import base_doc, people, write_db, write_spec

from duckdb_sdc.cli import main
from duckdb_sdc.release import SpecError, load_spec, parse_values, release, report, sweep
from duckdb_sdc.release import plot as plot_module
from duckdb_sdc.release.methods import BOXES, METHODS, ROWS
from duckdb_sdc.release.plot import DATA_ID
from duckdb_sdc.release.report import ALL
from duckdb_sdc.release.tradeoff import MAX_POINTS, SweepError, check_measures, variant

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
    with pytest.raises(SweepError, match=r"columns\.income: mdav_round: k = 500 is larger than the number of "
                                         r"non-NULL values of income \(\d+\) in the stratum region = '\w+'; "
                                         r"nothing was computed: sweep k up to \d+"):
        sweep(spec, "k", [5, 500])
    # a lower bound of the method fails at the first (smallest) value, before any point is evaluated
    doc = base_doc()
    doc["columns"]["income"] = {"method": "idp_cbls", "k": 5, "seed": 1}
    doc["masking"]["total_epsilon"] = 1.0
    with pytest.raises(SpecError, match=r"columns\.income: idp_cbls: k .*\(at k = 2\)"):
        sweep(load_spec(write_spec(folder, doc)), "k", [2, 5])


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
    doc["columns"]["expenses"] = {"method": "efd_round", "c": "auto"}  # ewd leaves the largest alone: refused
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

    # more values than a sweep takes: refused at once (it was a MemoryError traceback)
    assert main(["tradeoff", str(path), "--k", "1..9223372036854775807"]) == 2
    assert capsys.readouterr().err == (
        "duckdb-sdc tradeoff: error: --k '1..9223372036854775807': 9223372036854775807 values; a sweep masks and "
        "evaluates the data once per value, so it takes at most 1000 (give a step, e.g. 3..500:5, or fewer values)\n")


def test_an_out_of_range_k_fails_before_any_point_is_computed(folder, monkeypatch):
    """It used to mask and evaluate every smaller k first (and fail after minutes on large data)."""
    from duckdb_sdc.release import tradeoff

    evaluated = []
    real = tradeoff.evaluate_relations
    monkeypatch.setattr(tradeoff, "evaluate_relations", lambda ev, *a: evaluated.append(1) or real(ev, *a))
    spec = load_spec(write_spec(folder, base_doc()))
    largest = min(people(150).groupby("region")["income"].count())
    assert len(sweep(spec, "k", [3, largest])) > 0 and len(evaluated) == 2  # the largest valid k runs
    evaluated.clear()
    with pytest.raises(SweepError, match=rf"k = {largest + 1} is larger .* sweep k up to {largest}$"):
        sweep(spec, "k", list(range(3, largest + 2)))
    assert evaluated == []


def test_a_group_method_is_checked_on_its_complete_records(folder):
    doc = base_doc()
    del doc["columns"]["income"], doc["columns"]["expenses"]
    path = write_spec(folder, doc)
    path.write_text(path.read_text() + '\n[[groups]]\ncolumns = ["income", "expenses"]\n'
                    'method = "mdav_multi_round"\nk = 3\n')
    spec = load_spec(path)
    df = people(150)
    complete = df.dropna(subset=["income", "expenses"]).groupby("region").size().min()
    with pytest.raises(SweepError, match=rf"groups\[0\]: mdav_multi_round: k = {complete + 1} is larger than the "
                                         rf"number of records without NULL of income, expenses \({complete}\)"):
        sweep(spec, "k", [3, complete + 1])


@pytest.mark.parametrize("method", sorted(m for m, rm in METHODS.items() if rm.param("k") and rm.kind != BOXES))
def test_every_swept_k_is_a_group_size_bounded_by_the_values(con, method):
    """check_range assumes k is a minimum group size, at most the number of usable values; a method
    whose k means something else must teach check_range about it (this test then fails)."""
    rm = METHODS[method]
    data = "[[1.0, 2.0], [3.0, 5.0], [4.0, 1.0], [9.0, 8.0]]" if rm.kind == ROWS else "[1.0, 2.0, 3.0, 9.0]"
    extra = ", ".join(f"{p.name} := {p.default}" if p.default is not None else
                      {"epsilon": "epsilon := 1.0", "lb": "lb := 0", "ub": "ub := 10", "n": "n := 2", "r": "r := 0.9",
                       "p": "p := 0.05"}[p.name]
                      for p in rm.params if p.name != "k" and (p.default is None))
    call = f"SELECT {method}({data}, k := {{k}}{', ' + extra if extra else ''})"
    con.execute(call.format(k=4)).fetchall()  # k = n is allowed
    with pytest.raises(duckdb.Error, match=rf"{method}: k = 5 is larger than the number of"):
        con.execute(call.format(k=5)).fetchall()


def test_parse_values_refuses_more_points_than_a_sweep_takes():
    assert len(parse_values("k", f"1..{MAX_POINTS}")) == MAX_POINTS
    for text in ("1..9223372036854775807", f"1..{MAX_POINTS + 1}", ",".join(["3"] * (MAX_POINTS + 1))):
        with pytest.raises(SweepError, match=rf"values; a sweep masks and evaluates the data once per value, so it "
                                             rf"takes at most {MAX_POINTS}"):
            parse_values("k", text)
    with pytest.raises(SweepError, match="at most"):
        parse_values("epsilon", f"0.1..10:{MAX_POINTS + 1}")


def test_a_huge_range_in_a_real_process_is_one_line_not_a_traceback(folder):
    path = write_spec(folder, base_doc())
    done = subprocess.run([sys.executable, "-m", "duckdb_sdc", "tradeoff", str(path), "--k", "1..9223372036854775807"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert done.stderr.startswith("duckdb-sdc tradeoff: error: --k '1..9223372036854775807': ")
    assert done.stderr.count("\n") == 1


def test_the_figure_has_one_quantity_per_axis(folder):
    """No twin axes: the right side is two panels, information loss above disclosure risk, each axis
    with the values of one measure only (the old right panel put both on twin axes)."""
    spec = load_spec(write_spec(folder, base_doc()))
    data = sweep(spec, "k", [3, 5, 8, 12])
    pts = plot_module.points(data, "il1s", "record_linkage", ["income", "expenses"])
    fig = plot_module.figure(pts, param="k", il="il1s", dr="record_linkage", title="t")
    try:
        left, top, bottom = fig.axes
        boxes = [tuple(ax.get_position().bounds) for ax in fig.axes]
        assert len(set(boxes)) == 3  # a twin axis would share its host's box
        assert top.get_ylabel() == "information loss: il1s" and bottom.get_ylabel() == "disclosure risk: record_linkage"
        for curve in ("income", "expenses", ALL):
            c = pts[pts["curve"] == curve]
            lines = {ax: next(line for line in ax.get_lines() if line.get_label() == curve) for ax in fig.axes}
            assert list(lines[left].get_xdata()) == list(c["il1s"]) and list(lines[left].get_ydata()) == list(c["record_linkage"])
            assert list(lines[top].get_xdata()) == list(c["parameter_value"]) == list(lines[bottom].get_xdata())
            assert list(lines[top].get_ydata()) == list(c["il1s"])
            assert list(lines[bottom].get_ydata()) == list(c["record_linkage"])
            assert lines[top].get_color() == lines[bottom].get_color() == lines[left].get_color()
    finally:
        plot_module.require_matplotlib().close(fig)


def test_without_matplotlib_tradeoff_prints_its_table_and_how_to_get_the_plot(folder):
    """A real process in which matplotlib cannot be imported: the sweep runs, its table is printed,
    no file is written and the last line says how to install matplotlib (it used to exit 2 with the
    hint only)."""
    path = write_spec(folder, base_doc())
    script = ("import sys; sys.modules['matplotlib'] = None\n"
              "from duckdb_sdc.cli import main\n"
              f"sys.exit(main(['tradeoff', {str(path)!r}, '--k', '3..6', '--quiet', '--out', {str(folder / 'plots')!r}]))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["k", "il1s", "record_linkage", "k_anonymity", "(all)"]
    assert [line.split()[0] for line in lines[1:5]] == ["3", "4", "5", "6"]
    assert lines[-1] == ('no plot: plots need matplotlib: pip install matplotlib (or, in a clone of duckdb-sdc, '
                         'pip install ".[plot]")')
    assert not (folder / "plots").exists()
