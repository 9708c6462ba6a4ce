from __future__ import annotations

from pathlib import Path

import pytest

import duckdb_sdc

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def con():
    connection = duckdb_sdc.connect()
    yield connection
    connection.close()


@pytest.fixture
def shared_data() -> Path:
    """The reference microdata sets of ../shared/data; tests using them skip where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"reference data sets not found at {SHARED_DATA} (../shared/data next to the repo)")
    return SHARED_DATA
