"""The release policy ([policy]): a breach writes nothing and exits 3 (duckdb-sdc release), and
evaluate --check judges an existing release the same way; the gate's figures are the report's."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys

import pytest
from release_helpers import base_doc, people, toml_value, write_db, write_spec

from duckdb_sdc import datasets
from duckdb_sdc.cli import main
from duckdb_sdc.release import PolicyBreach, SpecError, load_spec, release, report
from duckdb_sdc.release.policy import LIMITS

TARRAGONA = ("FIXED.ASSETS,CURRENT.ASSETS,TREASURY,UNCOMMITTED.FUNDS,PAID.UP.CAPITAL,SHORT.TERM.DEBT,SALES,"
             "LABOR.COSTS,DEPRECIATION,OPERATING.PROFIT,FINANCIAL.OUTCOME,GROSS.PROFIT,NET.PROFIT").split(",")
POLICY = {"min_k": 5, "max_unique_share": 0.0, "max_record_linkage": 0.25, "max_interval_disclosure": 0.1}


@pytest.fixture
def tarragona(tmp_path):
    """A folder with Tarragona.csv, the data set bundled in the package."""
    shutil.copy(datasets.path("tarragona"), tmp_path / "Tarragona.csv")
    return tmp_path


def _tarragona_spec(folder, name: str, *, keep: str | None, policy: dict | None = POLICY):
    """Tarragona's 13 columns, no key (a surrogate matches records), multivariate MDAV (k = 5) over
    every column but `keep`, which is released as it is."""
    group = [c for c in TARRAGONA if c != keep]
    lines = ["[source]", 'files = ["Tarragona.csv"]', "", "[output]", f'database = "out/{name}.duckdb"',
             'table = "firms"', f'linkage = "private/{name}_link.duckdb"', ""]
    if keep is not None:
        lines += ["[columns]", f'"{keep}" = "keep"', ""]
    lines += ["[[groups]]", f"columns = {toml_value(group)}", 'method = "mdav_multi_round"', "k = 5", ""]
    if policy:
        lines += ["[policy]"] + [f"{k} = {toml_value(v)}" for k, v in policy.items()] + [""]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "duckdb_sdc", *args], capture_output=True, text=True, timeout=600)


def test_tarragona_a_kept_unique_column_fails_the_policy_and_writes_nothing_masked_it_passes(tarragona):
    kept = _tarragona_spec(tarragona, "kept", keep="SALES")  # 856 distinct sales for 834 firms
    done = _cli("release", str(kept))
    assert done.returncode == 3, done.stderr
    err = done.stderr.splitlines()
    assert err[0] == "duckdb-sdc release: kept.toml: the release breaches its policy; nothing was written"
    assert "  k_anonymity = 1 breaches min_k = 5 (>=)" in err
    assert any(line.startswith("  unique_share = 0.99") and line.endswith("breaches max_unique_share = 0 (<=)")
               for line in err)
    assert any(line.startswith("  record_linkage = 0.3") and "breaches max_record_linkage = 0.25" in line for line in err)
    assert not any("interval_disclosure" in line for line in err)  # it meets its limit: not listed
    assert not (tarragona / "out").exists() or not any((tarragona / "out").iterdir())
    assert not (tarragona / "private").exists() or not any((tarragona / "private").iterdir())
    masked = _tarragona_spec(tarragona, "masked", keep=None)
    done = _cli("release", str(masked), "--quiet")
    assert done.returncode == 0, done.stderr
    assert (tarragona / "out" / "masked.duckdb").is_file() and (tarragona / "private" / "masked_link.duckdb").is_file()
    check = _cli("evaluate", "--check", str(masked))
    assert check.returncode == 0, check.stderr
    assert "verdict (k-anonymity): pass against the [policy] of masked.toml" in check.stdout


def test_the_gate_measures_what_the_report_shows(tarragona):
    spec = load_spec(_tarragona_spec(tarragona, "open", keep="SALES", policy=None))
    release(spec)
    rows = report(spec)
    shown = {m: v for m, v in zip(rows[rows["column"].isna()]["measure"], rows[rows["column"].isna()]["value"])}
    strict = {"min_k": 2, "max_unique_share": 0.0, "max_record_linkage": 0.0, "max_interval_disclosure": 0.0,
              "max_sensitive_share": 0.0}
    gated = load_spec(_tarragona_spec(tarragona, "gated", keep="SALES", policy=strict))
    with pytest.raises(PolicyBreach) as info:
        release(gated)
    measured = {o.limit.measure: o.value for o in info.value.outcomes}
    assert set(measured) == {limit.measure for limit in LIMITS}  # every limit breached
    for measure, value in measured.items():
        assert value == pytest.approx(shown[measure], rel=1e-12), measure
    assert not (tarragona / "out" / "gated.duckdb").exists()


def test_evaluate_check_judges_an_existing_release(tarragona, capsys):
    spec = load_spec(_tarragona_spec(tarragona, "open", keep="SALES", policy=None))
    release(spec)
    assert main(["evaluate", "--check", str(tarragona / "open.toml")]) == 2
    assert "open.toml: --check applies the spec's [policy], and it has none" in capsys.readouterr().err
    # the same release, judged by a spec that adds a policy ([policy] changes no release)
    _tarragona_spec(tarragona, "open", keep="SALES")
    assert main(["evaluate", "--check", str(tarragona / "open.toml")]) == 3
    captured = capsys.readouterr()
    assert "verdict (k-anonymity): FAIL against the [policy] of open.toml" in captured.out
    assert captured.err.startswith("duckdb-sdc evaluate: open.toml: the release breaches its policy")
    assert "k_anonymity = 1 breaches min_k = 5" in captured.err


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_breach_leaves_the_previous_release_untouched(tmp_path):
    write_db(tmp_path / "src.duckdb", "people", people())
    doc = base_doc()
    doc["evaluation"] = {"quasi_identifiers": ["region", "income"]}
    release(load_spec(write_spec(tmp_path, doc)))
    out = tmp_path / "out" / "release.duckdb"
    digest = _digest(out)
    doc["policy"] = {"min_k": 50}
    with pytest.raises(PolicyBreach, match=r"k_anonymity = \d+ breaches min_k = 50 \(>=\)"):
        release(load_spec(write_spec(tmp_path, doc)))
    assert _digest(out) == digest and sorted(p.name for p in out.parent.iterdir()) == ["release.duckdb"]


def test_a_limit_that_cannot_be_measured_fails(tmp_path):
    write_db(tmp_path / "src.duckdb", "people", people())
    doc = base_doc()
    doc["columns"] = {"id": "drop", "region": "keep", "age": "drop", "note": "drop",
                      "income": "drop", "expenses": "drop"}
    doc["output"].pop("view_without_key")
    doc["evaluation"] = {"quasi_identifiers": ["region"]}
    doc["policy"] = {"max_record_linkage": 0.5}
    with pytest.raises(PolicyBreach, match=r"record_linkage could not be measured \(no quasi-identifier is released "
                                           r"as values that distances can compare \(numbers, dates, timestamps\)\); "
                                           r"max_record_linkage = 0.5 is not met"):
        release(load_spec(write_spec(tmp_path, doc)))


@pytest.mark.parametrize("policy, message", [
    ({"min_k": 1}, r"policy\.min_k: must be an integer >= 2"),
    ({"min_k": 2.5}, r"policy\.min_k: must be an integer >= 2"),
    ({"max_unique_share": 1.5}, r"policy\.max_unique_share: must be a share in \[0, 1\], got 1\.5"),
    ({"max_record_linkage": -0.1}, r"policy\.max_record_linkage: must be a share in \[0, 1\]"),
    ({"max_risk": 0.1}, r"policy: unknown key 'max_risk'; allowed: min_k, max_unique_share"),
])
def test_policy_mistakes(tmp_path, policy, message):
    doc = base_doc()
    doc["policy"] = policy
    with pytest.raises(SpecError, match=message):
        load_spec(write_spec(tmp_path, doc))
