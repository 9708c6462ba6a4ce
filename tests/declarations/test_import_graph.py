"""The package's import graph, read from the sources with `ast` (nothing is imported to check it): every
import statement counts, at module level or inside a function, so that an import moved into a function
cannot hide a cycle. `from . import x` is an edge to the submodule x; `from .x import name` an edge to x.

* no cycle among the modules (a module imported inside a function included);
* no `from x import _name` across modules: a name another module imports is public in its module, or
  its module is private as a whole (a leading underscore on the module's name, public names inside);
  nor `x._name` on a module of the package imported as x (`from . import discretisation as disc`,
  then `disc._ewd_width(...)`), which the import statements alone would not show;
* the Spark engine is a leaf of the package: no module outside duckdb_sdc/spark/ imports it, except the
  command line, which dispatches `--engine spark` to it inside the command's function (ENTRY_POINTS).

tests/declarations/test_kernel_imports.py reads the same graph for what duckdb_sdc/kernels/ imports."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import duckdb_sdc

PACKAGE = Path(duckdb_sdc.__file__).parent
ENTRY_POINTS = {"cli.py"}  # `duckdb-sdc release/evaluate --engine spark`: imported inside the command


@dataclass(frozen=True)
class Import:
    target: str  # the absolute name of the module imported
    line: int
    top: bool  # at module level (not inside a function or a class)
    source: str | None = None  # `from source import name`: the module named after `from`
    name: str | None = None  # and the name imported from it (a submodule or a name in it)


def module_name(path: Path) -> str:
    name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return name.removesuffix(".__init__")


def modules() -> dict[str, Path]:
    """Every module of the package by its absolute name (a package by its own name)."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path, known: frozenset[str] = frozenset(), module: str | None = None) -> list[Import]:
    """Every import of the file (of the module `module`, by default the file's own). `from x import y`
    is an import of the module x.y when that module is in `known` (the package's modules), else of x."""
    module = module or module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    for node in tree.body:  # an import under a module-level if or try is still a module-level import
        if isinstance(node, (ast.If, ast.Try)):
            top |= {id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [Import(a.name, node.lineno, id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                target = sub if sub in known or not node.module else base
                out.append(Import(target, node.lineno, id(node) in top, base, a.name))
    return out


def graph() -> dict[str, dict[str, list[int]]]:
    """module -> {imported module of the package -> lines}, every import statement counted."""
    mods = modules()
    known = frozenset(mods)
    edges: dict[str, dict[str, list[int]]] = {}
    for name, path in mods.items():
        edges[name] = {}
        for imp in imports(path, known):
            if imp.target in known and imp.target != name:
                edges[name].setdefault(imp.target, []).append(imp.line)
    return edges


def cycles(edges: dict[str, dict[str, list[int]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle():
    edges = graph()
    found = []
    for component in cycles(edges):
        inside = set(component)
        found.append([f"{m}:{','.join(map(str, lines))} imports {t}" for m in component
                      for t, lines in sorted(edges[m].items()) if t in inside])
    assert found == []


def test_cycles_are_found():
    """The check finds a cycle through an import inside a function, and none in a chain."""
    assert cycles({"a": {"b": [1]}, "b": {"c": [2]}, "c": {"a": [9]}, "d": {"a": [1]}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b": [1]}, "b": {"c": [2]}, "c": {}}) == []


def test_no_private_name_is_imported_across_modules():
    """`from x import _y` (a name or a module) from another module; `from x._y import z` is allowed."""
    mods = modules()
    known = frozenset(mods)
    found = [f"{path.relative_to(PACKAGE.parent)}:{imp.line} imports {imp.name} from {imp.source}"
             for name, path in mods.items() for imp in imports(path, known)
             if imp.name is not None and imp.name.startswith("_") and not imp.name.startswith("__")
             and imp.source.startswith("duckdb_sdc") and imp.source != name]
    assert found == []


def private_attributes(path: Path, known: frozenset[str], module: str | None = None) -> list[str]:
    """`alias._name` in the file (of the package's module `module`, by default the file's own), where
    alias is another module of the package bound by an import statement of the file."""
    tree = ast.parse(path.read_text())
    module = module or module_name(path)
    by_line: dict[int, list[Import]] = {}
    for imp in imports(path, known, module):
        by_line.setdefault(imp.line, []).append(imp)
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for imp, a in zip(by_line.get(node.lineno, []), node.names):
                if imp.target in known and imp.target.rpartition(".")[2] == a.name:
                    aliases[a.asname or a.name] = imp.target
        elif isinstance(node, ast.Import):
            aliases.update({a.asname: a.name for a in node.names if a.asname and a.name in known})
    return [f"{module}:{node.lineno} {node.value.id}.{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
            and node.attr.startswith("_") and not node.attr.startswith("__") and aliases[node.value.id] != module]


def test_no_private_name_is_read_from_another_module():
    known = frozenset(modules())
    assert [hit for path in modules().values() for hit in private_attributes(path, known)] == []


def test_private_attributes_are_found(tmp_path):
    """The check sees `alias._name` through `from . import m as alias`, and not a public name."""
    path = tmp_path / "probe.py"
    path.write_text("from . import discretisation as disc\n\n\ndef f():\n    return disc._ewd_width, disc.ewd_width\n")
    assert private_attributes(path, frozenset(modules()), "duckdb_sdc.methods.probe") == [
        "duckdb_sdc.methods.probe:5 disc._ewd_width"]


def test_no_module_outside_spark_imports_it():
    found = []
    for path in modules().values():
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] == "spark":
            continue
        for imp in imports(path, frozenset(modules())):
            if imp.target == "duckdb_sdc.spark" or imp.target.startswith("duckdb_sdc.spark."):
                if relative.as_posix() in ENTRY_POINTS and not imp.top:
                    continue
                found.append(f"{relative}:{imp.line} imports {imp.target}")
    assert found == []
