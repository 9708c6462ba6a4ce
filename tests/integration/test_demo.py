"""The README's demo runs to completion and prints what the README says (its own file, so that the
test runner can run it beside the examples on another core)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_runs_and_prints_the_summary(tmp_path):
    done = subprocess.run([sys.executable, "-m", "duckdb_sdc", "demo", "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "mdav_multi_round(k = 5) per region, gated by a policy" in done.stdout
    # the report of the release: k-anonymity of each masked column within its region, then all together
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("k-anonymity "))
    assert lines[header].split() == ["k-anonymity", "age", "household_size", "income", "expenses", "savings", "all",
                                     "columns", "better", "unit"]
    assert lines[header + 2].split()[:7] == ["k_anonymity", "5", "5", "5", "5", "5", "5"]
    for section in ("information loss", "disclosure risk", "IL-DR score", "sensitive cells"):
        assert any(line.startswith(section + " ") for line in lines)
    assert any(line.startswith("verdict (k-anonymity): pass against the [policy] of demo_release.toml") for line in lines)
    # the policy refuses the per-column alternative, which writes nothing
    assert "demo_release_per_column.toml: the release breaches its policy; nothing was written" in done.stdout
    assert not (tmp_path / "demo_release_per_column.duckdb").exists()
    k_row = next(line for line in lines if line.startswith("k_anonymity (k-anonymity)"))
    assert k_row.split()[-2:] == ["5", "1"]
    # the trade-off plot of k (matplotlib is the plot extra, which tasks.py installs)
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        assert "no trade-off plot: plots need matplotlib" in done.stdout
    else:
        png = tmp_path / "demo_release_tradeoff_k.png"
        assert png.stat().st_size > 30_000 and (tmp_path / "demo_release_tradeoff_k.html").stat().st_size > 30_000
    # the demo is a release from an example spec: the spec and a release file any client can open
    assert (tmp_path / "demo_release.toml").is_file()
    import duckdb

    plain = duckdb.connect(str(tmp_path / "demo_release.duckdb"), read_only=True)
    rules = dict(plain.execute("SELECT column_name, rule FROM release_manifest").fetchall())
    assert plain.execute("SELECT count(*) FROM people").fetchall() == [(5000,)]
    plain.close()
    assert rules["income"] == rules["expenses"] == rules["savings"] == "mask" and rules["person_id"] == "key"
    # and its policy holds for the release as written
    check = subprocess.run([sys.executable, "-m", "duckdb_sdc", "evaluate", "--check", str(tmp_path / "demo_release.toml")],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert check.returncode == 0, check.stderr[-3000:]
