"""Every example script and the demo run to completion (CI runs them through this test)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script):
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip()


def test_demo_runs_and_prints_the_summary(tmp_path):
    done = subprocess.run([sys.executable, "-m", "duckdb_sdc", "demo", "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "mdav_round(k = 5)" in done.stdout
    assert "smallest group of records sharing a masked income within a region: 5" in done.stdout
    # the demo is a release from an example spec: the spec and a release file any client can open
    assert (tmp_path / "demo_release.toml").is_file()
    import duckdb

    plain = duckdb.connect(str(tmp_path / "demo_release.duckdb"), read_only=True)
    rules = dict(plain.execute("SELECT column_name, rule FROM release_manifest").fetchall())
    assert plain.execute("SELECT count(*) FROM people_public").fetchall() == [(5000,)]
    plain.close()
    assert rules["income"] == rules["expenses"] == rules["savings"] == "mask"
