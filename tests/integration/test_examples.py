"""Every example script runs to completion (CI runs them through this test; the demo: integration/test_demo.py).

The longest example, attribute_disclosure.py (minutes of one core), runs from its own file,
integration/test_examples_long.py, so that the test runner gives it a core of its own beside the others."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LONG = ("attribute_disclosure.py",)
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if p.name not in LONG)


def run_example(script: Path) -> None:
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip()


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script):
    run_example(script)
