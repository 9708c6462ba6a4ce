"""The Spark engine is a leaf of the package: no module outside duckdb_sdc/spark/ imports it, except the
command line, which dispatches `--engine spark` to it inside the command's function. The engine-free
numpy code the Spark engine shares with the out-of-core path lives in duckdb_sdc/kernels/, which
imports neither Spark nor DuckDB (read from the source, so that nothing is imported to check it)."""

from __future__ import annotations

import ast
from pathlib import Path

import duckdb_sdc

PACKAGE = Path(duckdb_sdc.__file__).parent
ENTRY_POINTS = {"cli.py"}  # `duckdb-sdc release/evaluate --engine spark`: imported inside the command


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(absolute module name, line, at module level?) of every import in the file."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno, id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" for a in node.names] if not node.module else [base]
            out += [(n, node.lineno, id(node) in top) for n in names]
    return out


def _modules(under: Path):
    return sorted(p for p in under.rglob("*.py"))


def test_no_module_outside_spark_imports_it():
    found = []
    for path in _modules(PACKAGE):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] == "spark":
            continue
        for name, line, top in _imports(path):
            if name == "duckdb_sdc.spark" or name.startswith("duckdb_sdc.spark."):
                if relative.as_posix() in ENTRY_POINTS and not top:
                    continue
                found.append(f"{relative}:{line} imports {name}")
    assert found == []


def test_the_kernels_import_neither_spark_nor_duckdb():
    found = [f"{path.name}:{line} imports {name}" for path in _modules(PACKAGE / "kernels")
             for name, line, _ in _imports(path)
             if name.split(".")[0] in ("pyspark", "duckdb") or name.startswith(("duckdb_sdc.spark", "duckdb_sdc.sql",
                                                                              "duckdb_sdc.release"))]
    assert found == []
