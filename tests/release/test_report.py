"""The risk/utility report of a release (`duckdb-sdc evaluate`): its figures are the measures of
duckdb_sdc.measures called directly on the source and the release file, and its k-anonymity is the
brute-force count of equal released values."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandas as pd
import pytest
from release_helpers import base_doc, people, write_db, write_spec

from duckdb_sdc import measures
from duckdb_sdc.cli import main
from duckdb_sdc.release import SpecError, format_report, load_spec, release, report
from duckdb_sdc.release.report import K_ANONYMITY, LOSS, RISK, SCORE, section_of

MASKED = ["income", "expenses"]
RISK_COLUMNS = ["income", "expenses", "age"]  # disclosure risk: the masked and the numeric kept quasi-identifiers


@pytest.fixture
def source(tmp_path):
    df = people(240)
    write_db(tmp_path / "src.duckdb", "people", df)
    return tmp_path, df


def _released(folder, name="out/release.duckdb") -> pd.DataFrame:
    plain = duckdb.connect(str(folder / name), read_only=True)  # nothing registered
    out = plain.execute("SELECT * FROM people").df()
    plain.close()
    return out


def _aligned(df: pd.DataFrame, rel: pd.DataFrame, cols=MASKED) -> tuple[np.ndarray, np.ndarray]:
    """Original and released values of `cols`, record by record on the key, NaN where NULL."""
    joined = df.merge(rel, on="id", suffixes=("", "_m"))
    x = joined[cols].to_numpy(dtype=float, na_value=np.nan)
    xm = joined[[f"{c}_m" for c in cols]].to_numpy(dtype=float, na_value=np.nan)
    return x, xm


def _same(a, b) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return b is not None and a == pytest.approx(b, rel=1e-9, abs=1e-12)


def _rows(rep: pd.DataFrame, sections) -> list[tuple]:
    part = rep[rep["section"].isin(sections) & (rep["measure"] != "verdict")]
    return [(m, None if pd.isna(c) else c, None if pd.isna(v) else float(v))
            for m, c, v in zip(part["measure"], part["column"], part["value"])]


def _direct(df, rel):
    """{(measure, column): value}: information loss and the score of the masked columns, disclosure
    risk of the masked columns and the kept numeric quasi-identifier age, from measures.evaluate."""
    x, xm = _aligned(df, rel)
    xr, xmr = _aligned(df, rel, RISK_COLUMNS)
    loss = {(r.measure, r.column): r.value for r in measures.evaluate(x, xm, MASKED) if section_of(r.measure) != RISK}
    risk = {(r.measure, r.column): r.value for r in measures.evaluate(xr, xmr, RISK_COLUMNS) if section_of(r.measure) == RISK}
    return {**loss, **risk}


def test_the_reports_measures_equal_the_measures_called_directly(source):
    folder, df = source
    spec = load_spec(write_spec(folder, base_doc()))
    release(spec)
    rep = report(spec)
    x, xm = _aligned(df, _released(folder))
    got = _rows(rep, (LOSS, RISK, SCORE))
    expected = _direct(df, _released(folder))
    assert len(got) == len(expected) and {(m, c) for m, c, _ in got} == set(expected)
    for m, c, v in got:
        assert _same(v, expected[(m, c)]), (m, c, v, expected[(m, c)])
    # and the single functions on the complete pairs / complete records
    value = {(m, c): v for m, c, v in got}
    ok = ~np.isnan(x[:, 0]) & ~np.isnan(xm[:, 0])
    assert value[("il1s", "income")] == pytest.approx(measures.il1s(x[ok, 0], xm[ok, 0]), rel=1e-12)
    assert value[("mae", "expenses")] == pytest.approx(measures.mae(x[:, 1], xm[:, 1]), rel=1e-12)
    complete = ~np.isnan(x).any(axis=1)
    assert value[("il_dr_score", None)] == pytest.approx(measures.il_dr_score(x[complete], xm[complete]))
    fit = measures.regression_utility(x[complete], xm[complete])  # the masked fit beside its baseline
    assert (value[("regression_utility.r2", None)], value[("regression_utility.r2_original", None)]) == (
        pytest.approx(fit["r2"]), pytest.approx(fit["r2_original"]))
    assert value[("regression_utility.r2_original", None)] > value[("regression_utility.r2", None)]
    # the kept age takes part in disclosure risk as it is released: exactly
    xr, xmr = _aligned(df, _released(folder), RISK_COLUMNS)
    complete = ~np.isnan(xr).any(axis=1)
    assert value[("record_linkage", None)] == pytest.approx(measures.record_linkage(xr[complete], xmr[complete]))
    assert value[("interval_disclosure", "age")] == 1.0
    assert value[("interval_disclosure", "expenses")] == pytest.approx(
        measures.interval_disclosure(x[:, 1], xm[:, 1], 0.05))
    # sections: what each measure is
    assert {m for m, _, _ in _rows(rep, (RISK,))} == {"interval_disclosure", "sd_interval_disclosure",
                                                      "rank_interval_disclosure", "record_linkage",
                                                      "record_linkage_second", "global_linkage"}
    assert _rows(rep, (SCORE,)) == [("il_dr_score", None, value[("il_dr_score", None)])]


def _k_anonymity(rel: pd.DataFrame, by: list[str], present: list[str]) -> tuple[int, int, float]:
    """Brute force: smallest group, number of groups and share of records alone in their group, over
    the records where `present` is non-NULL (NULL, as NaN, is a value of its own in `by`)."""
    rows = rel.dropna(subset=present)
    sizes = {}
    for values in zip(*(rows[c] for c in by)):
        sizes[values] = sizes.get(values, 0) + 1
    alone = sum(1 for n in sizes.values() if n == 1)
    return min(sizes.values()), len(sizes), alone / len(rows)


def _k_rows(rep: pd.DataFrame) -> dict:
    part = rep[rep["section"] == K_ANONYMITY]
    return {(m, None if pd.isna(c) else c): v for m, c, v in zip(part["measure"], part["column"], part["value"])}


def test_k_anonymity_of_the_default_quasi_identifiers(source):
    folder, _ = source
    spec = load_spec(write_spec(folder, base_doc()))
    # default: every released numeric column (masked or kept, not the key) and the released strata
    types = {"id": "BIGINT", "region": "VARCHAR", "age": "BIGINT", "income": "DOUBLE", "expenses": "DOUBLE",
             "note": "VARCHAR"}
    assert spec.quasi_identifiers(types) == ("region", "age", "income", "expenses")
    release(spec)
    rep = report(spec)
    rel = _released(folder)
    got = _k_rows(rep)
    for col in ["age", *MASKED]:  # each column within the strata
        k, classes, alone = _k_anonymity(rel, ["region", col], [col])
        assert (got[("k_anonymity", col)], got[("classes", col)], got[("unique_share", col)]) == (
            k, classes, pytest.approx(alone))
    assert got[("k_anonymity", "income")] >= 5 and got[("k_anonymity", "expenses")] >= 4
    # all together: a NULL is a value (the policy's figure)
    k, classes, alone = _k_anonymity(rel.fillna({"income": -1.0}), ["region", "age", *MASKED], [])
    assert (got[("k_anonymity", None)], got[("classes", None)], got[("unique_share", None)]) == (
        k, classes, pytest.approx(alone))
    assert k == 1 and alone > 0.5  # the kept age makes most records unique: the report shows it
    notes = rep[rep["section"] == K_ANONYMITY]["note"].dropna().unique()
    missing = int(rel["income"].isna().sum())
    assert f"{missing} of 240 records with a NULL 'income' left out" in notes


def test_declared_quasi_identifiers_are_a_scenario_beside_the_gates(source):
    """[evaluation] quasi_identifiers changes nothing the gate counts (issue 27): the report adds the
    scenario's own rows (column 'evaluation.quasi_identifiers'), never judged."""
    folder, _ = source
    doc = base_doc()
    doc["evaluation"] = {"quasi_identifiers": ["age", "expenses"]}
    spec = load_spec(write_spec(folder, doc))
    assert spec.quasi_identifiers() == ("region", "age", "income", "expenses")  # the gate's, unchanged
    release(spec)
    rep = report(spec)
    got = _k_rows(rep)
    rel = _released(folder)
    assert got[("unique_share", "evaluation.quasi_identifiers")] == pytest.approx(
        _k_anonymity(rel, ["age", "expenses"], [])[2])
    assert got[("k_anonymity", "evaluation.quasi_identifiers")] == _k_anonymity(rel, ["age", "expenses"], [])[0]
    assert got[("k_anonymity", None)] == _k_anonymity(rel, ["region", "age", "income", "expenses"], [])[0]
    verdict = rep[(rep["section"] == K_ANONYMITY) & (rep["measure"] == "verdict")]["note"].iloc[0]
    assert f"k_anonymity = {int(got[('k_anonymity', None)])} " in verdict  # judged on the gate's set


@pytest.mark.parametrize("evaluation, message", [
    ({"quasi_identifiers": ["agee"]}, r"evaluation\.quasi_identifiers: 'agee' has no rule"),
    ({"quasi_identifiers": ["note"]}, r"'note' is dropped: only released columns"),
    ({"quasi_identifiers": []}, r"lists no column"),
    ({"quasi_identifiers": "age", "k": 3}, r"evaluation: unknown key 'k'"),
])
def test_quasi_identifier_mistakes(source, evaluation, message):
    folder, _ = source
    doc = base_doc()
    doc["evaluation"] = evaluation
    with pytest.raises(SpecError, match=message):
        load_spec(write_spec(folder, doc))


def test_a_release_is_needed_and_must_come_from_the_same_spec(source):
    folder, _ = source
    spec = load_spec(write_spec(folder, base_doc()))
    with pytest.raises(SpecError, match=r"no release file .* yet; write it first \(duckdb-sdc release spec\.toml\)"):
        report(spec)
    release(spec)
    doc = base_doc()
    doc["columns"]["income"]["k"] = 6
    with pytest.raises(SpecError, match="was written from a different spec; release it again"):
        report(load_spec(write_spec(folder, doc)))
    # the [evaluation] section changes no release
    doc = base_doc()
    doc["evaluation"] = {"quasi_identifiers": ["income"]}
    assert len(report(load_spec(write_spec(folder, doc)))) > 0


def test_without_the_key_records_are_matched_through_the_linkage_file_never_by_position(source):
    folder, _ = source
    with_key = load_spec(write_spec(folder, base_doc()))
    release(with_key)
    expected = report(with_key)
    doc = base_doc()
    doc["columns"]["id"] = "drop"
    del doc["output"]["view_without_key"]
    doc["output"]["database"] = "out/nokey.duckdb"
    no_link = load_spec(write_spec(folder, doc, "nokey.toml"))
    release(no_link)
    with pytest.raises(SpecError, match=r"nokey\.toml: the release table 'people' has no key column \(the key 'id' is "
                                        r"dropped\) and the spec writes no linkage file, .*never by their position"):
        report(no_link)
    doc["output"]["linkage"] = "private/link.duckdb"
    linked = load_spec(write_spec(folder, doc, "nokey.toml"))
    release(linked)
    got = report(linked)
    for (m, c, v), (m2, c2, v2) in zip(_rows(got, (LOSS, RISK, SCORE)), _rows(expected, (LOSS, RISK, SCORE))):
        assert (m, c) == (m2, c2) and _same(v, v2)
    # a linkage file of another release is refused, not used
    other = folder / "private" / "link.duckdb"
    kept = other.read_bytes()
    release(linked)
    newer = other.read_bytes()
    other.write_bytes(kept)
    with pytest.raises(SpecError, match=r"output\.linkage: .* belongs to another release"):
        report(linked)
    other.write_bytes(newer)
    assert len(report(linked)) == len(got)


def test_section_of_every_measure():
    for m in dict.fromkeys([*measures.PER_COLUMN, *measures.OVERALL]):
        expected = (RISK if "disclosure" in m or "linkage" in m else SCORE if m == "il_dr_score" else LOSS)
        assert section_of(m) == expected, m


def test_format_report_lays_out_sections_and_notes():
    df = pd.DataFrame([
        (LOSS, "mae", "a", 1.5, None, "lower", "units of the column"), (LOSS, "mae", "b", 2.0, None, "lower", "units of the column"),
        (LOSS, "mae", None, 1.75, None, "lower", "units of the column"),
        (LOSS, "il1s", "a", None, "il1s: column 0 of x is constant", "lower", "sd units / sqrt(2)"),
        (LOSS, "il_metrics", None, 0.123456, None, "lower", "percent"),
        (LOSS, "verdict", None, None, "not judged: no limit applies", "", ""),
        (K_ANONYMITY, "k_anonymity", "a", 5.0, "2 of 9 records with a NULL 'a' left out", "higher", "records"),
        (K_ANONYMITY, "verdict", None, 1.0, "pass against [policy]: k_anonymity = 5 meets min_k = 5 (>=)", "", ""),
    ], columns=["section", "measure", "column", "value", "note", "direction", "unit"])
    text = format_report(df)
    lines = text.splitlines()
    assert lines[0].split() == ["information", "loss", "a", "b", "all", "columns", "better", "unit"]
    assert lines[2].split() == ["mae", "1.5", "2", "1.75", "lower", "units", "of", "the", "column"]
    assert lines[3].split() == ["il1s", "n/a", "lower", "sd", "units", "/", "sqrt(2)"]
    assert lines[4].split() == ["il_metrics", "0.1235", "lower", "percent"]
    assert lines[5] == "verdict (information loss): not judged: no limit applies"
    assert "verdict (k-anonymity): pass against [policy]: k_anonymity = 5 meets min_k = 5 (>=)" in lines
    assert "note: information loss: il1s: column 0 of x is constant" in lines
    assert "note: k-anonymity: 2 of 9 records with a NULL 'a' left out" in lines


def test_evaluate_command(source, capsys):
    folder, _ = source
    path = write_spec(folder, base_doc())
    assert main(["evaluate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("duckdb-sdc evaluate: error: spec.toml: output.database: no release file")
    assert err.count("\n") == 1
    assert main(["release", str(path), "--quiet"]) == 0
    assert main(["evaluate", str(path)]) == 0
    out = capsys.readouterr().out
    for header in ("information loss", "disclosure risk", "IL-DR score", "k-anonymity"):
        assert any(line.startswith(header) for line in out.splitlines())
    assert main(["evaluate", str(path), "--csv"]) == 0
    import io

    csv = pd.read_csv(io.StringIO(capsys.readouterr().out))
    expected = report(load_spec(path))
    assert list(csv.columns) == ["section", "measure", "column", "value", "note", "direction", "unit"]
    assert len(csv) == len(expected)
    assert np.allclose(csv["value"].to_numpy(float), expected["value"].to_numpy(float), equal_nan=True, rtol=1e-12)


def test_a_release_from_csv_files_is_evaluated_against_them(tmp_path):
    df = people(120)
    con = duckdb.connect()
    con.register("df", df)
    (tmp_path / "data").mkdir()
    con.execute(f"COPY (SELECT * FROM df) TO '{tmp_path}/data/people.csv' (FORMAT csv)")
    con.close()
    doc = base_doc()
    doc["source"] = {"files": ["data/people.csv"], "key": "id"}
    spec = load_spec(write_spec(tmp_path, doc))
    release(spec)
    rep = report(spec)
    direct = _direct(df, _released(tmp_path))
    for m, c, v in _rows(rep, (LOSS, RISK, SCORE)):
        assert _same(v, direct[(m, c)]), (m, c)


def _cells_by_loop(df: pd.DataFrame, rel: pd.DataFrame, col: str, group: list[str], rule) -> tuple[int, int]:
    """Direct loop: cells = records of a region sharing the released values of `group`; the cell's
    contributions are the original values of `col`; (cells, sensitive cells) under `rule`."""
    from duckdb_sdc.methods.sensitivity import cell_sensitive

    joined = df.merge(rel, on="id", suffixes=("", "_m")).dropna(subset=[f"{g}_m" for g in group])
    cells = {}
    for _, row in joined.iterrows():
        key = (row["region"], *(row[f"{g}_m"] for g in group))
        cells.setdefault(key, []).append(row[col])
    sensitive = 0
    for values in cells.values():
        present = np.array([v for v in values if not pd.isna(v)], dtype=float)
        sensitive += bool(cell_sensitive(present, rule)) if len(present) else 0
    return len(cells), sensitive


@pytest.mark.parametrize("evaluation", [{}, {"dominance_n": 1, "dominance_r": 0.22, "p_percent": 2.5}])
def test_sensitive_cells_equal_the_rules_applied_cell_by_cell(source, evaluation):
    from duckdb_sdc.methods.sensitivity import dominance_rule, p_percent_rule
    from duckdb_sdc.release.report import SENSITIVE

    folder, df = source
    doc = base_doc()
    if evaluation:
        doc["evaluation"] = evaluation
    spec = load_spec(write_spec(folder, doc))
    release(spec)
    rep = report(spec)
    part = rep[rep["section"] == SENSITIVE]
    got = {(m, None if pd.isna(c) else c): v for m, c, v in zip(part["measure"], part["column"], part["value"])}
    n, r = evaluation.get("dominance_n", 2), evaluation.get("dominance_r", 0.7)
    p = evaluation.get("p_percent", (1 - r) / r)
    rel = _released(folder)
    totals = np.zeros(3)
    for col in MASKED:
        cells, dominant = _cells_by_loop(df, rel, col, [col], dominance_rule(n, r, absolute=True))
        _, p_cells = _cells_by_loop(df, rel, col, [col], p_percent_rule(p, absolute=True))
        assert (got[("cells", col)], got[("dominance_cells", col)], got[("p_percent_cells", col)]) == (
            cells, dominant, p_cells)
        assert got[("dominance_share", col)] == pytest.approx(dominant / cells)
        totals += (cells, dominant, p_cells)
    assert (got[("cells", None)], got[("dominance_cells", None)], got[("p_percent_cells", None)]) == tuple(totals)
    assert got[("p_percent_share", None)] == pytest.approx(totals[2] / totals[0])
    if evaluation:  # rules strict enough to flag some cells but not all: the comparison has teeth
        assert 0 < totals[1] < totals[0] and 0 < totals[2] < totals[0]


@pytest.mark.parametrize("evaluation, message", [
    ({"dominance_n": 0}, r"evaluation\.dominance_n: must be an integer >= 1, got 0"),
    ({"dominance_r": 1.5}, r"evaluation\.dominance_r: must be a number in \(0, 1\], got 1\.5"),
    ({"p_percent": -1}, r"evaluation\.p_percent: must be a finite number > 0 \(a fraction\), got -1"),
])
def test_sensitivity_rule_mistakes(source, evaluation, message):
    folder, _ = source
    doc = base_doc()
    doc["evaluation"] = evaluation
    with pytest.raises(SpecError, match=message):
        load_spec(write_spec(folder, doc))
