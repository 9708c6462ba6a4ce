"""The engine-free numpy code the Spark engine shares with the out-of-core path lives in
duckdb_sdc/kernels/, which imports neither Spark nor DuckDB (read from the source, so that nothing is
imported to check it). That no module outside duckdb_sdc/spark/ imports the Spark engine is checked
with the rest of the import graph (tests/declarations/test_import_graph.py)."""

from __future__ import annotations

from pathlib import Path

from declarations.test_import_graph import PACKAGE, imports, modules


def _modules(under: Path):
    return sorted(p for p in under.rglob("*.py"))


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(absolute module name, line, at module level?) of every import in the file (test_import_graph's
    reading of the sources)."""
    return [(imp.target, imp.line, imp.top) for imp in imports(path, frozenset(modules()))]


def test_the_kernels_import_neither_spark_nor_duckdb():
    found = [f"{path.name}:{line} imports {name}" for path in _modules(PACKAGE / "kernels")
             for name, line, _ in _imports(path)
             if name.split(".")[0] in ("pyspark", "duckdb") or name.startswith(("duckdb_sdc.spark", "duckdb_sdc.sql",
                                                                              "duckdb_sdc.release"))]
    assert found == []
