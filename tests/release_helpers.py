"""Helpers for the release tests: source files with awkward names, and TOML written by hand."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: the same escapes as JSON
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def toml_dump(doc: dict) -> str:
    lines = []
    for section, body in doc.items():
        lines.append(f"[{section}]")
        lines += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in body.items()]
        lines.append("")
    return "\n".join(lines)


def people(n: int = 300, seed: int = 7) -> pd.DataFrame:
    """Records whose masked columns hold values with 4 random decimals, so that no group mean equals
    a raw value by chance (the leak scan relies on it)."""
    rng = np.random.default_rng(seed)
    income = np.round(rng.uniform(1_000, 90_000, n), 4)
    expenses = np.round(income * rng.uniform(0.3, 0.9, n), 4)
    df = pd.DataFrame({
        "id": np.arange(1, n + 1, dtype=np.int64),
        "region": rng.choice(["north", "south", "east"], n),
        "age": rng.integers(18, 90, n),
        "income": income,
        "expenses": expenses,
        "note": [f"person {i}" for i in range(n)],
    })
    df.loc[rng.random(n) < 0.05, "income"] = np.nan  # NULLs, kept in place
    return df


def write_db(path: Path, table: str, df: pd.DataFrame, extra_tables: tuple[str, ...] = ()) -> None:
    con = duckdb.connect(str(path))
    con.register("df_view", df)
    con.execute("CREATE TABLE " + '"' + table.replace('"', '""') + '"' + " AS SELECT * FROM df_view")
    for name in extra_tables:
        con.execute(f"CREATE TABLE {name} AS SELECT 1 AS still_here")
    con.close()


def base_doc(source_db: str = "src.duckdb", table: str = "people", out: str = "out/release.duckdb") -> dict:
    return {
        "source": {"database": source_db, "table": table, "key": "id"},
        "output": {"database": out, "table": "people", "view_without_key": "people_public"},
        "masking": {"strata": ["region"]},
        "columns": {
            "id": "keep",
            "region": "keep",
            "age": "keep",
            "note": "drop",
            "income": {"method": "mdav_round", "k": 5},
            "expenses": {"method": "oma_round", "k": 4, "representative": "median"},
        },
    }


def write_spec(folder: Path, doc: dict, name: str = "spec.toml") -> Path:
    path = folder / name
    path.write_text(toml_dump(doc), encoding="utf-8")
    return path


FILE_BYTES = ("<file>", "<bytes>")  # the key of scan_release's entry for the file's bytes


def raw_strings(value: float) -> set[str]:
    """How a raw value of `people` can be written as text."""
    return {repr(float(value)), f"{value:.4f}".rstrip("0").rstrip(".")}


def scan_release(path: Path, raw: set[float]) -> dict[tuple[str, str], set[float]]:
    """The raw values found in every column of every table and view of a release file, read by a
    plain connection (numbers compared as numbers, other types as text), and in the file's bytes
    as text (key FILE_BYTES): {(relation, column): raw values found}."""
    found = {}
    plain = duckdb.connect(str(path), read_only=True)
    relations = [r[0] for r in plain.execute("SELECT table_name FROM information_schema.tables").fetchall()]
    for name in relations:
        quoted = '"' + name.replace('"', '""') + '"'
        for col, type_ in [(r[0], r[1]) for r in plain.execute(f"DESCRIBE {quoted}").fetchall()]:
            qc = '"' + col.replace('"', '""') + '"'
            values = [v for (v,) in plain.execute(f"SELECT DISTINCT {qc} FROM {quoted}").fetchall() if v is not None]
            if type_ in ("DOUBLE", "BIGINT", "INTEGER"):
                found[(name, col)] = raw & {float(v) for v in values}
            else:
                text = " ".join(map(str, values))
                found[(name, col)] = {v for v in raw if any(s in text for s in raw_strings(v))}
    plain.close()
    blob = path.read_bytes()
    found[FILE_BYTES] = {v for v in raw if any(s.encode() in blob for s in raw_strings(v))}
    return found
