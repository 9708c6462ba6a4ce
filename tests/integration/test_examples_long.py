"""The longest example script runs to completion (see integration/test_examples.py)."""

from __future__ import annotations

import pytest
from integration.test_examples import LONG, ROOT, run_example


@pytest.mark.parametrize("name", LONG)
def test_long_example_runs(name):
    run_example(ROOT / "examples" / name)
