"""Releases are byte-for-byte the same for the same seed, across refactorings of the code.

One release per release method (every name of `duckdb_sdc.release.METHODS`: a method without a case
below is released with its parameters' valid examples) is run on a fixed source with a fixed seed; each released table (read in key
order, every value by its exact bits) and each manifest row (without the release id, the time and
the versions) is hashed, and the hashes are compared with tests/golden/releases.json, written by the
code as it was before the refactoring. A deliberate change of a method's output updates that file
with `UPDATE_GOLDEN=1 pytest tests/release/test_golden.py` and says why in its commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from release_helpers import write_db, write_spec

from duckdb_sdc.params import literal_value
from duckdb_sdc.release import METHODS, load_spec, release

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "releases.json"
SEED = 20261202

# (the rule of each release method, the columns it masks); the values are test data
CASES = {
    "add_noise": ({"method": "add_noise", "level": 0.1, "seed": SEED, "reproducible_noise": True}, ["a"]),
    "add_noise_multi": ({"method": "add_noise_multi", "level": 0.1, "seed": SEED, "reproducible_noise": True},
                        ["a", "b"]),
    "base_round": ({"method": "base_round", "alpha": 3}, ["a"]),
    "box_release": ({"method": "box_release", "k": 4, "characteristic": "mean(a) + corr(a, b)"}, ["a", "b"]),
    "dp_laplace": ({"method": "dp_laplace", "epsilon": 1.0, "lb": 0, "ub": 1000, "seed": SEED,
                    "reproducible_noise": True}, ["a"]),
    "dp_um": ({"method": "dp_um", "k": 5, "epsilon": 1.0, "lb": 0, "ub": 1000, "seed": SEED,
               "reproducible_noise": True}, ["a"]),
    "efd_round": ({"method": "efd_round", "c": 6}, ["a"]),
    "ewd_round": ({"method": "ewd_round", "c": 6, "stochastic": True, "seed": SEED, "reproducible_noise": True}, ["a"]),
    "idp_cbls": ({"method": "idp_cbls", "k": 5, "epsilon": 1.0, "lb": 0, "ub": 1000, "seed": SEED,
                  "reproducible_noise": True}, ["a"]),
    "idp_ls": ({"method": "idp_ls", "k": 5, "epsilon": 1.0, "lb": 0, "ub": 1000, "seed": SEED,
                "reproducible_noise": True}, ["a"]),
    "kmd_round": ({"method": "kmd_round", "c": 5}, ["a"]),
    "mdav_dominance_round": ({"method": "mdav_dominance_round", "k": 3, "n": 2, "r": 0.8}, ["a", "b"]),
    "mdav_multi_round": ({"method": "mdav_multi_round", "k": 4}, ["a", "b", "c"]),
    "mdav_p_percent_round": ({"method": "mdav_p_percent_round", "k": 3, "p": 10}, ["a", "b"]),
    "mdav_round": ({"method": "mdav_round", "k": 5}, ["a"]),
    "mondrian_round": ({"method": "mondrian_round", "k": 4}, ["a", "b"]),
    "oma_round": ({"method": "oma_round", "k": 4, "representative": "median"}, ["a"]),
    "rank_swap": ({"method": "rank_swap", "p": 10, "seed": SEED, "reproducible_noise": True}, ["a"]),
    "ranking_round": ({"method": "ranking_round", "k": 5}, ["a"]),
    "rbd_round": ({"method": "rbd_round", "c": 5, "groups": 4, "seed": SEED, "reproducible_noise": True}, ["a"]),
    "vmdav_round": ({"method": "vmdav_round", "k": 4, "gamma": 0.5}, ["a"]),
}
MANIFEST = ("column_name", "source_column", "released_as", "position", "rule", "method", "parameters", "strata",
            "masked_with", "epsilon", "privacy_model", "guarantee", "source_type", "released_type",
            "quasi_identifier", "epsilon_total", "notes")


def _source(n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    a = np.round(rng.uniform(0, 1000, n), 3)
    df = pd.DataFrame({"id": np.arange(1, n + 1, dtype=np.int64), "region": rng.choice(["n", "s"], n),
                       "a": a, "b": np.round(a * rng.uniform(0.2, 0.9, n), 3), "c": np.round(rng.normal(50, 9, n), 3)})
    df.loc[[4, 17, 60], "a"] = np.nan
    return df


def _bits(value) -> str:
    if isinstance(value, float):
        return struct.pack(">d", value).hex()
    return repr(value)


def _digest(rows) -> str:
    h = hashlib.sha256()
    for row in rows:
        h.update(("|".join(_bits(v) for v in row) + "\n").encode())
    return h.hexdigest()


def _case(method: str) -> tuple[dict, list[str]]:
    """The method's case, or its required parameters' valid examples (a seed and its opt-in if seeded)."""
    if method in CASES:
        return CASES[method]
    rm = METHODS[method]
    rule = {"method": method, **{p.name: literal_value(p.valid) for p in rm.settable if p.default is None}}
    if rm.param("seed") is not None:
        rule.update(seed=SEED, reproducible_noise=True)
    return rule, (["a"] if rm.kind == "column" else ["a", "b"])


def _run(folder: Path, method: str) -> dict:
    rule, columns = _case(method)
    rule = dict(rule)
    reproducible = rule.pop("reproducible_noise", False)
    doc = {"source": {"database": "src.duckdb", "table": "people", "key": "id"},
           "output": {"database": f"out/{method}.duckdb", "table": "people"},
           "masking": {"strata": ["region"], **({"reproducible_noise": True} if reproducible else {})},
           "columns": {"id": {"rule": "keep", "identifying": False},
                       "region": {"rule": "keep", "identifying": False},
                       **{c: {"rule": "keep", "identifying": False} for c in ("a", "b", "c") if c not in columns}}}
    if len(columns) == 1:
        doc["columns"][columns[0]] = rule
    else:
        doc["groups"] = [{"columns": columns, **rule}]
    release(load_spec(write_spec(folder, doc, name=f"{method}.toml")))
    con = duckdb.connect(str(folder / "out" / f"{method}.duckdb"), read_only=True)
    try:
        table = con.execute("SELECT * FROM people ORDER BY id").fetchall()
        names = [d[0] for d in con.execute("SELECT * FROM people LIMIT 0").description]
        manifest = con.execute(f"SELECT {', '.join(MANIFEST)} FROM release_manifest ORDER BY release_table, "
                               "column_name, released_as").fetchall()
    finally:
        con.close()
    return {"columns": names, "table": _digest(table), "manifest": _digest(manifest)}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("golden")
    write_db(path / "src.duckdb", "people", _source())
    return path


def test_the_cases_are_release_methods():
    assert set(CASES) <= set(METHODS)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_a_release_is_the_same_as_before(folder, method):
    got = _run(folder, method)
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if os.environ.get("UPDATE_GOLDEN"):
        golden[method] = got
        GOLDEN.write_text(json.dumps(dict(sorted(golden.items())), indent=1) + "\n")
    assert method in golden, f"{method}: no release of it is recorded; UPDATE_GOLDEN=1 records it"
    assert got == golden[method]
