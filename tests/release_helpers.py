"""Helpers for the release tests: source files with awkward names, and TOML written by hand."""

from __future__ import annotations

import json
import re
import struct
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
        if isinstance(body, list):  # an array of tables ([[groups]])
            for table in body:
                lines += [f"[[{section}]]", *(f"{json.dumps(k)} = {toml_value(v)}" for k, v in table.items()), ""]
            continue
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
            # the key is kept for the tests that compare records on it, and exempted from the
            # quasi-identifiers as a key that means nothing outside the release would be (a kept key
            # counts as one by default: tests/release/test_leaks.py)
            "id": {"rule": "keep", "identifying": False},
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


# ---------------------------------------------------------------------------------------------
# the leak scan every release of the test suite goes through (tests/conftest.py's hook)


def _digits(value: float) -> str:
    """The significant digits of a value's shortest text form ('1234.5678' -> '12345678')."""
    text = repr(float(value))
    if text.endswith(".0"):
        text = text[:-2]
    return "".join(ch for ch in text.split("e")[0] if ch.isdigit()).strip("0")


def _texts(value: float) -> list[str]:
    """How a raw value can be written as text: repr, and the integer or 4-decimal forms."""
    forms = {repr(float(value))}
    if float(value).is_integer() and abs(value) < 1e16:
        forms.add(str(int(value)))
    forms.add(f"{value:.4f}".rstrip("0").rstrip("."))
    return sorted(forms)


def _tokens(data: bytes) -> set[bytes]:
    """Every number written in `data` as text (maximal runs of digits with their decimal parts), and
    its integer part: a raw value's text form is in the set when it is written there (1234 also
    where 1234.5 is)."""
    found = set(re.findall(rb"\d+(?:\.\d+)*", data))
    return found | {t.split(b".")[0] for t in found}


def _written(value: float, tokens: set[bytes]) -> bool:
    return any(t.lstrip("-").encode() in tokens for t in _texts(value))


def _doubles(data: bytes) -> np.ndarray:
    """Every 8-byte window of `data` read as a little-endian double's bits."""
    windows = [np.frombuffer(data[o:o + (len(data) - o) // 8 * 8], dtype="<u8") for o in range(8)]
    return np.concatenate(windows) if windows else np.zeros(0, "<u8")


def _distinctive_bytes(value: float) -> bool:
    """A double whose 8 bytes have at least 5 non-zero ones: found in a file's bytes by chance with
    probability below 2^-40 per position, unlike 1.0 or 5.0."""
    return sum(b != 0 for b in struct.pack("<d", float(value))) >= 5


def _numbers(value) -> set[float]:
    """Every number in a parsed TOML value (the spec's parameters)."""
    if isinstance(value, bool):
        return set()
    if isinstance(value, (int, float)):
        return {float(value)}
    if isinstance(value, dict):
        return set().union(*(_numbers(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(_numbers(v) for v in value)) if value else set()
    return set()


def leak_scan(spec) -> list[str]:
    """Where a raw value of a masked column of `spec`'s source shows in its release file, beyond what
    the release declares; [] when nowhere. Read with plain DuckDB connections (nothing registered).

    A raw value v of a masked column (boxed, released in a centroids table or not) is explained, and
    may show, where it is: a value of a kept column of the release table, or of a masked column whose
    guarantee declares that it releases original values (rank swapping) (released by declaration), a number written in the spec (a bound, a parameter), or a released value of a
    masked column that at least 2 records share (a group's value, a box's bound). Anywhere else it is
    a leak: in any numeric column of any table or view (the manifest's position and epsilon columns
    are metadata and skipped), as text in any VARCHAR column of the manifest or of a table the
    release adds, or in the file's bytes as text or as the 8 bytes of a double (only distinctive
    forms: text of at least 5 significant digits, doubles with at least 5 non-zero bytes, so that no
    count or timestamp matches by chance). The linkage file may hold nothing but positions and keys."""
    from duckdb_sdc import guarantees
    from duckdb_sdc.release.plan import RAW
    from duckdb_sdc.release.source import open_source

    con = duckdb.connect()
    open_source(con, spec)
    raw: set[float] = set()
    masked = [c for r in spec.masked() for c in r.columns]
    for c in masked:
        q = '"' + c.replace('"', '""') + '"'
        raw |= {float(v) for (v,) in con.execute(f"SELECT DISTINCT {q}::DOUBLE FROM {RAW} WHERE {q} IS NOT NULL").fetchall()}
    con.close()
    explained = _numbers(spec.text)
    problems = []
    plain = duckdb.connect(str(spec.output.database), read_only=True)
    # released as original values by declaration: kept columns, and masked ones whose stated guarantee
    # says so (rank swapping moves every original value to another record)
    kept = [c for c, r in spec.rules.items() if r.action == "keep"
            or (r.action == "mask" and r.method is not None
                and getattr(guarantees.GUARANTEES.get(r.method.name), "discloses_values", False))]
    table = '"' + spec.output.table.replace('"', '""') + '"'
    columns = {r[0]: r[1] for r in plain.execute(f"DESCRIBE {table}").fetchall()}
    for c in kept:
        q = '"' + c.replace('"', '""') + '"'
        if columns.get(c, "") in ("DOUBLE", "BIGINT", "INTEGER", "FLOAT", "SMALLINT", "TINYINT", "HUGEINT", "UBIGINT"):
            explained |= {float(v) for (v,) in plain.execute(f"SELECT DISTINCT {q} FROM {table} WHERE {q} IS NOT NULL").fetchall()}
    relations = [r[0] for r in plain.execute("SELECT table_name FROM information_schema.tables").fetchall()]
    numeric, text = [], []
    for name in relations:
        rel = '"' + name.replace('"', '""') + '"'
        for col, type_ in [(r[0], r[1]) for r in plain.execute(f"DESCRIBE {rel}").fetchall()]:
            if name == spec.output.table and col in kept:
                continue
            q = '"' + col.replace('"', '""') + '"'
            if type_ in ("DOUBLE", "BIGINT", "INTEGER", "FLOAT", "HUGEINT", "UBIGINT") and name != "release_manifest":
                numeric.append((name, col, rel, q))
            elif type_ == "VARCHAR" and name != spec.output.table and (name, col) != ("release_manifest", "release_id"):
                text.append((name, col, rel, q))  # (the release id is random hex: its digits are chance)
    for name, col, rel, q in numeric:  # first pass: the values that at least 2 records share
        explained |= {float(v) for v, n in plain.execute(
            f"SELECT {q}, count(*) FROM {rel} WHERE {q} IS NOT NULL GROUP BY {q}").fetchall() if n >= 2}
    for name, col, rel, q in numeric:
        values = {float(v) for (v,) in plain.execute(f"SELECT DISTINCT {q} FROM {rel} WHERE {q} IS NOT NULL").fetchall()}
        found = (values & raw) - explained
        if found:
            problems.append(f"{name}.{col}: {len(found)} raw values, e.g. {sorted(found)[:3]}")
    for name, col, rel, q in text:
        tokens = _tokens(" ".join(str(v) for (v,) in plain.execute(f"SELECT DISTINCT {q} FROM {rel}").fetchall()
                                  if v).encode())
        found = {v for v in raw - explained if len(_digits(v)) >= 5 and _written(v, tokens)}
        if found:
            problems.append(f"{name}.{col} (text): {sorted(found)[:3]}")
    ids = [v for (v,) in plain.execute("SELECT DISTINCT release_id FROM release_manifest").fetchall() if v] \
        if "release_manifest" in relations else []
    plain.close()
    blob = spec.output.database.read_bytes()
    for release_id in ids:  # random hex, whose runs of digits may spell any number by chance
        blob = blob.replace(release_id.encode(), b" " * len(release_id))
    # timestamps written as text (the release's creation time) spell numbers by chance too
    blob = re.sub(rb"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d(:?\d\d)?)?",
                  lambda m: b" " * len(m.group()), blob)
    tokens = _tokens(blob)
    unexplained = sorted(raw - explained)
    problems += [f"file bytes (text): {v!r}" for v in unexplained if len(_digits(v)) >= 5 and _written(v, tokens)]
    distinctive = [v for v in unexplained if _distinctive_bytes(v)]
    bits = np.array([struct.unpack("<Q", struct.pack("<d", v))[0] for v in distinctive], dtype="<u8")
    problems += [f"file bytes (double): {v!r}" for v, hit in zip(distinctive, np.isin(bits, _doubles(blob))) if hit]
    if spec.output.linkage is not None and spec.output.linkage.is_file():
        try:
            link = duckdb.connect(str(spec.output.linkage), read_only=True)
        except duckdb.IOException:  # not a DuckDB file: a file a release refused to replace
            return problems
        cols = [r[0] for r in link.execute("DESCRIBE release_linkage").fetchall()]
        link.close()
        if cols != ["release_id", "release_table", "key_column", "position", "key"]:
            problems.append(f"linkage file columns {cols}")
    return problems
