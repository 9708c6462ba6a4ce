"""The documentation site: generated pages are up to date, every example on every page prints what the
page shows, `mkdocs build --strict` passes, and the built site renders in a real headless Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

import docs_examples
from duckdb_sdc.sql import REGISTRY
from duckdb_sdc.sql.docs import PAGE, render

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_PAGES = [p for p in docs_examples.pages() if docs_examples.has_examples(p)]


def test_function_reference_is_generated_from_the_registry():
    assert PAGE.read_text(encoding="utf-8") == render(), "run: python -m duckdb_sdc.sql.docs"


def test_every_registry_row_has_an_entry_and_an_executed_example():
    blocks = docs_examples.parse(PAGE)
    sql = {b.text for b in blocks if b.executed and b.lang == "sql"}
    for row in REGISTRY:
        assert f"{{ #{row.name} }}" in PAGE.read_text(encoding="utf-8"), row.name
        assert not row.example or row.example in sql, row.name


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=[str(p.relative_to(ROOT / "docs")) for p in EXAMPLE_PAGES])
def test_examples_print_what_the_page_shows(page, tmp_path):
    results = docs_examples.run_page(page, tmp_path)
    assert results, f"{page}: no example was run"
    failures = docs_examples.report(results)
    assert not failures, f"{failures}\n(python tests/docs_examples.py --update {page.relative_to(ROOT)} rewrites outputs)"
