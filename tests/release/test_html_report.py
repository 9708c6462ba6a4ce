"""The release report as an HTML page (duckdb_sdc.release.html) and what fails each limit
(duckdb_sdc.release.failures): a passing and a refused release opened in a real headless Chromium (no
console error, no request, charts drawn, screenshots under the test's folder), no original value of a
masked column anywhere in the page, and the failing records and classes against plain references."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from release_helpers import base_doc, people, write_db, write_spec

from duckdb_sdc import measures
from duckdb_sdc.cli import main
from duckdb_sdc.release.failures import interval_disclosure_flags, record_linkage_credits

ROOT = Path(__file__).resolve().parents[2]
N = 240


def _passing_doc():
    doc = base_doc()
    doc["source"] = {"database": "src.duckdb", "table": "people", "key": "id"}
    doc["output"] = {"database": "out/release.duckdb", "table": "people", "linkage": "private/link.duckdb"}
    doc["columns"].update(id="drop", age="drop", expenses="drop")
    doc["policy"] = {"min_k": 3, "max_record_linkage": 0.5}  # the NULL incomes of a region: a class of 4
    return doc


def _refused_doc():
    doc = base_doc(out="out/refused.duckdb")
    # means, not medians: a median representative releases original values itself (the page shows released ones)
    doc["columns"]["expenses"] = {"method": "oma_round", "k": 4}
    doc["policy"] = {"min_k": 5, "max_unique_share": 0.0, "max_record_linkage": 0.3}
    return doc


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """(folder, source frame, passing page, refused page)."""
    folder = tmp_path_factory.mktemp("html")
    df = people(N)
    write_db(folder / "src.duckdb", "people", df)
    ok = write_spec(folder, _passing_doc(), "ok.toml")
    assert main(["release", str(ok), "--quiet", "--report", str(folder / "ok.html")]) == 0
    refused = write_spec(folder, _refused_doc(), "refused.toml")
    assert main(["release", str(refused), "--quiet", "--report", str(folder / "refused.html")]) == 3
    return folder, df, folder / "ok.html", folder / "refused.html"


def _data(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    start = text.index('<script type="application/json" id="report-data">') + len(
        '<script type="application/json" id="report-data">')
    return json.loads(text[start:text.index("</script>", start)].replace("<\\/", "</"))


def test_a_refused_release_writes_only_the_page_of_the_would_be_release(pages):
    folder, _, _, refused = pages
    assert not (folder / "out" / "refused.duckdb").exists()
    data = _data(refused)
    assert data["refused"].startswith("the release breaches its policy: nothing was written")
    assert data["release_id"] and data["spec"] == "refused.toml"
    failed = {f["key"]: f for f in data["failures"]}
    assert not failed["min_k"]["passed"] and failed["min_k"]["count"] > 0
    assert failed["max_unique_share"]["columns"] == ["region", "age", "income", "expenses", "records"]


def test_the_page_equals_evaluate_on_the_same_release(pages, tmp_path, capsys):
    folder, _, ok, _ = pages
    page = tmp_path / "evaluated.html"
    assert main(["evaluate", str(folder / "ok.toml"), "--html", str(page)]) == 0
    assert f"wrote {page}" in capsys.readouterr().err
    a, b = _data(ok), _data(page)
    for volatile in ("written_at",):
        a.pop(volatile), b.pop(volatile)
    assert a == b
    assert [v["value"] for v in a["verdicts"] if v["section"] == "k-anonymity"] == [1]


def _raw_texts(df) -> set[str]:
    """Every original value of the masked columns as the page could print it."""
    out = set()
    for name in ("income", "expenses"):
        for v in df[name].dropna():
            out |= {repr(float(v)), f"{v:.4f}", f"{v:.10g}", json.dumps(float(v))}
    return out


def test_the_page_holds_no_original_value_of_a_masked_column(pages):
    _, df, ok, refused = pages
    raw = _raw_texts(df)
    assert len(raw) > 2 * 200
    for page in (ok, refused):
        text = page.read_text(encoding="utf-8")
        assert [r for r in raw if r in text] == [], page.name
    # the check can fail: the source's values, written into a page, are found
    assert any(r in f"<td>{df['income'].dropna().iloc[0]!r}</td>" for r in raw)


def _chromium() -> str:
    from integration.test_docs import _chromium as find

    return find()


@pytest.mark.parametrize("which", ["ok", "refused"])
def test_the_page_renders_in_chromium_with_its_charts(pages, which, tmp_path):
    from playwright.sync_api import sync_playwright

    folder, _, ok, refused = pages
    page_path = ok if which == "ok" else refused
    problems = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("request", lambda r: problems.append(f"request: {r.url}")
                    if r.url != page_path.as_uri() and not r.url.startswith("data:") else None)
            page.goto(page_path.as_uri(), wait_until="load")
            page.screenshot(path=str(tmp_path / f"{which}.png"), full_page=True)
            page.locator("#charts").scroll_into_view_if_needed()
            page.screenshot(path=str(tmp_path / f"{which}_charts.png"))
            status = page.locator(".status").inner_text()
            charts = page.locator("svg.chart")
            drawn = [charts.nth(i).locator("rect.bar").count() for i in range(charts.count())]
            boxes = [charts.nth(i).bounding_box() for i in range(charts.count())]
            bar = page.locator("svg.chart rect.bar").first.bounding_box()
            verdicts = page.locator(".verdicts .verdict").all_inner_texts()
            failing_rows = page.locator("#failures ~ h3 + p + details tbody tr").count()
        finally:
            browser.close()
    assert problems == []
    assert status.startswith("REFUSED" if which == "refused" else "Released")
    assert len(drawn) >= 5 and all(n > 0 for n in drawn), drawn
    assert all(b is not None and b["width"] > 300 and b["height"] > 60 for b in boxes)
    assert bar["width"] > 0 and bar["height"] > 0
    assert ("FAIL" in verdicts) == (which == "refused") and ("pass" in verdicts) == (which == "ok")
    assert (failing_rows > 0) == (which == "refused")
    assert (tmp_path / f"{which}.png").stat().st_size > 50_000


def test_a_tradeoff_page_is_included(pages, tmp_path):
    folder, _, _, _ = pages
    assert main(["tradeoff", str(folder / "ok.toml"), "--k", "3,8", "--quiet", "--out", str(tmp_path)]) == 0
    page = tmp_path / "report.html"
    assert main(["evaluate", str(folder / "ok.toml"), "--html", str(page), "--tradeoff",
                 str(tmp_path / "ok_tradeoff_k.html")]) == 0
    text = page.read_text(encoding="utf-8")
    assert '<div class="tradeoff"><svg' in text and "as k varies</h2>" in text
    other = write_spec(folder, _refused_doc(), "other.toml")
    assert main(["evaluate", str(other), "--html", str(page), "--tradeoff", str(tmp_path / "ok_tradeoff_k.html")]) == 2


@pytest.mark.parametrize("argv, message", [
    (["release", "{spec}", "--tradeoff", "x.html"], "--tradeoff adds a plot to the page of --report FILE"),
    (["release", "{spec}", "--report", "{folder}"], "is a folder"),
    (["evaluate", "{spec}", "--html", "{folder}/src.duckdb"], "is a file of the release itself"),
])
def test_bad_page_options_are_one_line_and_exit_2(pages, argv, message, capsys):
    folder = pages[0]
    argv = [a.format(spec=folder / "ok.toml", folder=folder) for a in argv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# failures: the records behind the measures, against the measures themselves

@settings(max_examples=60, deadline=None)
@given(st.integers(3, 40), st.integers(1, 3), st.integers(0, 2**31 - 1), st.sampled_from([0, 1, 3]))
def test_record_linkage_credits_average_to_the_measure(n, p, seed, levels):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, (n, p)).astype(float) if levels else rng.normal(size=(n, p))
    xm = np.round(x + rng.normal(scale=0.7, size=(n, p)), levels)
    credits = record_linkage_credits(x, xm)
    assert credits.shape == (n,) and ((credits == 0) | (credits > 0)).all()
    assert np.isclose(credits.mean(), measures.record_linkage(x, xm), rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 40), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_interval_disclosure_flags_average_to_the_measure(n, p, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, (n, p)).astype(float)
    xm = x + rng.integers(-1, 2, (n, p)) * rng.choice([0.0, 0.01, 1.0])
    assert interval_disclosure_flags(x, xm).mean() == measures.interval_disclosure(x, xm, 0.05)


def test_the_failing_classes_are_those_of_a_plain_group_by(pages):
    folder, df, _, refused = pages
    data = _data(refused)
    classes = {f["key"]: f for f in data["failures"]}
    # the would-be release is gone, so release the same spec without its policy and count by hand
    doc = _refused_doc()
    del doc["policy"]
    doc["output"]["database"] = "out/plain.duckdb"
    spec = write_spec(folder, doc, "plain.toml")
    assert main(["release", str(spec), "--quiet"]) == 0
    con = duckdb.connect(str(folder / "out" / "plain.duckdb"), read_only=True)
    sizes = con.execute("SELECT count(*) FROM people GROUP BY region, age, income, expenses").fetchall()
    con.close()
    small = [s for (s,) in sizes if s < 5]
    assert classes["min_k"]["count"] == len(small) and classes["min_k"]["records"] == sum(small)
    assert classes["max_unique_share"]["count"] == sum(s == 1 for s in small)
    assert len(classes["min_k"]["rows"]) == 20 and not classes["min_k"]["listed_all"]
    # the page's histogram counts every record once
    assert sum(s * c for s, c in data["charts"]["class_sizes"]) == N


def test_the_sensitive_cells_listed_are_those_the_report_counts(pages):
    """Every cell the report's dominance and p% rules flag, listed once with the rules that flag it."""
    from duckdb_sdc.release import load_spec, report
    from duckdb_sdc.release.failures import failures

    folder = pages[0]
    doc = _passing_doc()
    doc["policy"] = {"max_sensitive_share": 0.0}
    # the (2, 0.42) dominance rule flags some groups of 5 to 9 near-equal values and not others
    doc["evaluation"] = {"dominance_n": 2, "dominance_r": 0.42, "p_percent": 0.5}
    doc["output"]["database"] = "out/cells.duckdb"
    doc["output"]["linkage"] = "private/cells.duckdb"
    spec_path = write_spec(folder, doc, "cells.toml")
    unpoliced = write_spec(folder, {k: v for k, v in doc.items() if k != "policy"}, "cells_unpoliced.toml")
    assert main(["release", str(unpoliced), "--quiet"]) == 0
    spec = load_spec(spec_path)
    found = []
    df = report(spec, inspect=lambda ev, frame: found.extend(failures(ev, frame, limit=10**6)))
    cells = {m: v for m, v, c in zip(df["measure"], df["value"], df["column"]) if not isinstance(c, str)}
    (listed,) = found
    assert not listed.passed and listed.listed_all
    rules = [r[3] for r in listed.rows]
    assert sum("dominance" in r for r in rules) == cells["dominance_cells"] > 0
    assert 0 < listed.count < cells["cells"]
    assert sum("p%" in r for r in rules) == cells["p_percent_cells"]
    assert listed.count == len(rules) and listed.records == sum(r[-1] for r in listed.rows)
    assert all(r[0] == "income" and r[1] in ("north", "south", "east") for r in listed.rows)
