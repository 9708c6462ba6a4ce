"""Issue 30: the release ledger. Every release records what it released from which source (a
fingerprint of the content); DP releases of a source compose (sequential composition: the epsilon
budget, a repeated DP release refused by default), and deterministic releases that can be linked are
gated on the union of their quasi-identifiers (the intersection attack of the issue). The ledger
holds a release if and only if the release is in place, also when the release is killed."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from release_helpers import toml_dump

from duckdb_sdc.cli import main
from duckdb_sdc.release import PolicyBreach, dry_run, load_spec, release
from duckdb_sdc.release.ledger import Ledger, LedgerRefusal, default_path, fingerprint
from sqlglot import exp

N = 2000


@pytest.fixture
def folder(tmp_path):
    """people(id, region, income) of 2,000 records as people.csv, the same records in another order as
    copy.csv and as people.parquet; the ledger in tmp_path/ledger."""
    rng = np.random.default_rng(30)
    df = pd.DataFrame({"id": np.arange(1, N + 1), "region": rng.choice(["north", "south", "east"], N),
                       "income": np.round(rng.lognormal(10, 1, N), 2)})
    con = duckdb.connect()
    con.register("df", df)
    con.execute("CREATE TABLE people AS SELECT * FROM df")
    con.execute(f"COPY people TO '{tmp_path / 'people.csv'}'")
    con.execute(f"COPY (SELECT * FROM people ORDER BY income DESC) TO '{tmp_path / 'copy.csv'}'")
    con.execute(f"COPY people TO '{tmp_path / 'people.parquet'}' (FORMAT parquet)")
    con.close()
    return tmp_path


def _spec(folder: Path, name: str, columns: dict, *, source="people.csv", policy=None, ledger=None, out=None):
    doc = {"source": {"files": source, "key": "id"},
           "output": {"database": f"out/{out or name}.duckdb", "table": "people"}, "columns": columns}
    if policy:
        doc["policy"] = policy
    doc["ledger"] = {"path": "ledger", **(ledger or {})}
    path = folder / f"{name}.toml"
    path.write_text(toml_dump(doc))
    return load_spec(path)


def _release_id(path: Path) -> str:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT any_value(release_id) FROM release_manifest").fetchall()[0][0]
    finally:
        con.close()


DP = {"id": "drop", "region": "keep", "income": {"method": "dp_laplace", "epsilon": 1.0, "lb": 0, "ub": 500000}}


# ---------------------------------------------------------------------------------------------
# the fingerprint


def _reference_fingerprint(df: pd.DataFrame, types: dict[str, str]) -> str:
    """The fingerprint written out in Python from its definition (release/ledger.py's docstring)."""
    def text(v, t):
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NaT:
            return None
        if t == "int":
            return str(int(v))
        if t == "real":
            v = float(v)
            if np.isfinite(v) and v == np.trunc(v) and abs(v) < 2 ** 53:
                return str(int(v))
            return repr(v)  # the shortest text that reads back as the double, as DuckDB writes it
        if t == "bool":
            return "true" if v else "false"
        if t == "date":
            return v.isoformat()
        return str(v)

    names = sorted(df.columns)
    lo = hi = 0
    for row in df.itertuples(index=False):
        rec = dict(zip(df.columns, row))
        fields = []
        for n in names:
            s = text(rec[n], types[n])
            fields.append("\x00" if s is None else f"{len(s)}:{s}")
        digest = hashlib.md5("|".join(fields).encode()).digest()
        lo += int.from_bytes(digest[8:], "little")  # DuckDB's md5_number_lower: the digest's last 8 bytes
        hi += int.from_bytes(digest[:8], "little")
    summary = {"version": 1, "rows": len(df), "columns": names, "sum": [lo % 2 ** 64, hi % 2 ** 64]}
    return hashlib.sha256(json.dumps(summary, sort_keys=True).encode()).hexdigest()[:32]


def _fp(con, relation: str) -> str:
    columns = [(r[0], r[1]) for r in con.execute(f"DESCRIBE {relation}").fetchall()]
    return fingerprint(con, exp.to_table(relation), columns)


def test_the_fingerprint_is_the_documented_one_on_values_of_every_kind():
    rng = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame({
        "k": np.arange(n, dtype=np.int64), "small": rng.integers(-5, 5, n).astype(np.int32),
        "x": rng.choice([0.1, 2.0, -3.5, 1e-300, 123456.789, 1e300], n),
        "s": rng.choice(["a", "b|c", "", "é", "1:2"], n), "b": rng.choice([True, False], n),
        "d": [date(2020, 1, 1 + i % 28) for i in range(n)]})
    df.loc[rng.random(n) < 0.1, "x"] = np.nan
    df["s"] = df["s"].astype(object)
    df.loc[rng.random(n) < 0.1, "s"] = None
    con = duckdb.connect()
    con.register("df", df)
    con.execute("CREATE TABLE t AS SELECT * FROM df")
    types = {"k": "int", "small": "int", "x": "real", "s": "text", "b": "bool", "d": "date"}
    assert _fp(con, "t") == _reference_fingerprint(df, types)
    # the column order and the record order do not matter; one changed value does
    con.execute("CREATE TABLE shuffled AS SELECT d, s, b, x, small, k FROM t ORDER BY random()")
    assert _fp(con, "shuffled") == _fp(con, "t")
    con.execute("UPDATE shuffled SET x = 0.2 WHERE k = 7")
    assert _fp(con, "shuffled") != _fp(con, "t")


def test_same_data_under_another_name_or_as_parquet_is_the_same_source_and_a_change_is_a_new_one(folder):
    con = duckdb.connect()
    prints = {name: _fp(con, f"'{folder / name}'") for name in ("people.csv", "copy.csv", "people.parquet")}
    assert len(set(prints.values())) == 1, prints
    # through releases: a DP release from the CSV, then the same column from the Parquet copy is refused
    release(_spec(folder, "a", DP))
    with pytest.raises(LedgerRefusal, match="released with differential privacy before"):
        release(_spec(folder, "b", DP, source="people.parquet"))
    changed = pd.read_csv(folder / "people.csv")
    changed.loc[0, "income"] += 0.01
    changed.to_csv(folder / "changed.csv", index=False)
    release(_spec(folder, "c", DP, source="changed.csv"))  # a new source: nothing to compose with
    entries = Ledger(folder / "ledger").entries()
    assert len(entries) == 2 and entries[0].data["fingerprint"] != entries[1].data["fingerprint"]


# ---------------------------------------------------------------------------------------------
# differential privacy: sequential composition


def test_four_dp_releases_at_epsilon_1_and_a_budget_of_3_the_fourth_is_refused(folder, capsys):
    ids = []
    for i in range(3):
        spec = _spec(folder, f"dp{i}", DP, policy={"epsilon_budget": 3.0}, out="dp")
        result = release(spec)
        ids.append(_release_id(folder / "out" / "dp.duckdb"))
        assert any(f"epsilon spent on source" in n and f"{i + 1:g} of the budget 3" in n for n in result.notes)
    spec = _spec(folder, "dp3", DP, policy={"epsilon_budget": 3.0}, out="dp")
    assert main(["release", "--quiet", str(folder / "dp3.toml")]) == 3
    err = capsys.readouterr().err
    assert "4 in all exceeds [policy] epsilon_budget = 3" in err and "nothing was written" in err
    assert all(i in err for i in ids), err  # the earlier releases are named
    assert _release_id(folder / "out" / "dp.duckdb") == ids[-1]  # the third release, untouched
    assert [e.id for e in Ledger(folder / "ledger").entries()] == ids
    # forgetting a release that was never published gives its epsilon back, and is recorded
    assert main(["ledger", "--ledger", str(folder / "ledger"), "forget", ids[1]]) == 0
    release(spec)
    assert main(["ledger", "--ledger", str(folder / "ledger"), "--all"]) == 0
    out = capsys.readouterr().out
    assert "3 releases, epsilon spent 3" in out and f"{ids[1]}" in out and "FORGOTTEN at" in out
    assert "income: dp_laplace, epsilon 1: epsilon-DP" in out
    fp = Ledger(folder / "ledger").entries()[0].data["fingerprint"]
    assert main(["ledger", "--ledger", str(folder / "ledger"), "--source", fp[:8]]) == 0
    assert capsys.readouterr().out.startswith(f"source {fp} (2000 records; csv files people.csv): 3 releases")
    assert main(["ledger", "--ledger", str(folder / "ledger"), "--source", "ffffffff"]) == 0
    assert capsys.readouterr().out.startswith("no release of source ffffffff in the ledger")
    assert main(["ledger", "--ledger", str(folder / "ledger"), "forget", ids[1]]) == 2
    assert "forgotten already" in capsys.readouterr().err
    assert main(["ledger", "--ledger", str(folder / "ledger"), "forget", "no-such-release"]) == 2


def test_without_a_budget_a_second_dp_release_of_a_column_is_refused_unless_the_spec_opts_in(folder):
    first = release(_spec(folder, "one", DP, out="dp"))
    assert first.notes == [] or not any("epsilon spent" in n for n in first.notes)
    with pytest.raises(PolicyBreach, match=r"income of source \w+ was released with differential privacy before"):
        release(_spec(folder, "two", DP, out="dp"))
    # the opt-in lets all four through, and says what they spent together
    for i in range(3):
        result = release(_spec(folder, f"again{i}", DP, ledger={"repeat_dp": True}, out="dp"))
    assert any(n.startswith("epsilon spent on source") and ": 4 in all (income 4)" in n for n in result.notes)
    book = Ledger(folder / "ledger")
    assert sum(e.data["epsilon_total"] for e in book.entries()) == 4.0


def test_dry_runs_and_refused_releases_never_enter_the_ledger(folder):
    spec = _spec(folder, "dry", DP)
    dry_run(spec)
    assert Ledger(folder / "ledger").entries() == []
    too_much = _spec(folder, "big", {**DP, "income": {**DP["income"], "epsilon": 2.0}}, policy={"epsilon_budget": 1})
    with pytest.raises(LedgerRefusal):
        release(too_much)
    assert Ledger(folder / "ledger").entries() == [] and not (folder / "out" / "big.duckdb").exists()


# ---------------------------------------------------------------------------------------------
# deterministic masking: the intersection attack


def _mdav(k: int) -> dict:
    return {"id": {"rule": "keep", "identifying": False}, "region": "drop", "income": {"method": "mdav_round", "k": k}}


def test_the_intersection_attack_k5_then_k6_with_the_key_is_refused(folder, capsys):
    release(_spec(folder, "k5", _mdav(5), policy={"min_k": 5}))
    first = _release_id(folder / "out" / "k5.duckdb")
    assert main(["release", "--quiet", str(_spec(folder, "k6", _mdav(6), policy={"min_k": 5}).path)]) == 3
    err = capsys.readouterr().err
    assert "breach min_k = 5 (the intersection attack)" in err and first in err and "both release the key 'id'" in err
    assert not (folder / "out" / "k6.duckdb").exists() and len(Ledger(folder / "ledger").entries()) == 1
    # the measured union is the brute-force one: join the two releases on the key
    con = duckdb.connect()
    con.execute(f"ATTACH '{folder / 'out' / 'k5.duckdb'}' AS a (READ_ONLY)")
    opted = _spec(folder, "k6", _mdav(6), policy={"min_k": 5}, ledger={"allow_linked": True})
    result = release(opted)
    con.execute(f"ATTACH '{folder / 'out' / 'k6.duckdb'}' AS b (READ_ONLY)")
    k, alone = con.execute("SELECT min(n), count(*) FILTER (n = 1) FROM (SELECT count(*) n FROM a.people "
                           "JOIN b.people USING (id) GROUP BY a.people.income, b.people.income)").fetchall()[0]
    assert k == 1 and alone > 0
    assert len(result.warnings) == 1 and first in result.warnings[0]
    assert f"k-anonymity 1, unique share {alone / N:.4g}" in result.warnings[0]
    assert "allow_linked = true released it anyway" in result.warnings[0]
    entry = Ledger(folder / "ledger").entries()[-1]
    assert entry.data["warnings"] == result.warnings and entry.data["linked"][0]["release_id"] == first


def test_the_same_masking_again_passes_and_unlinkable_releases_are_said_to_be(folder):
    release(_spec(folder, "k5", _mdav(5), policy={"min_k": 5}))
    again = release(_spec(folder, "k5b", _mdav(5), policy={"min_k": 5}))
    assert any(n.startswith("k-anonymity 5,") for n in again.notes), again.notes  # the same values: k unchanged
    # no key, but the same values of income: linked through them, and k = 5 still
    no_key = release(_spec(folder, "nokey", {**_mdav(5), "id": "drop"}, policy={"min_k": 5}))
    assert any(n.startswith("k-anonymity 5,") and n.count("both release the same values of income") == 2
               for n in no_key.notes), no_key.notes
    # a noisy income is no exact link: a DP release of income after them is not linkable with any
    dp = release(_spec(folder, "dp", {"id": "drop", "region": "drop", "income": DP["income"]}))
    assert sum("not linkable with the earlier release" in n for n in dp.notes) == 3, dp.notes
    # no key and no common released column: nothing to join on (the row order of each is secret)
    only_region = {"id": "drop", "region": "keep", "income": "drop"}
    result = release(_spec(folder, "region", only_region, policy={"min_k": 5}))
    assert sum("not linkable with the earlier release" in n for n in result.notes) == 4, result.notes


# ---------------------------------------------------------------------------------------------
# where the ledger is, concurrency, and kills


def test_the_default_ledger_is_private_under_xdg_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_path() == tmp_path / "data" / "duckdb-sdc" / "ledger"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_path() == Path.home() / ".local" / "share" / "duckdb-sdc" / "ledger"
    book = Ledger(tmp_path / "open").ensure()
    assert (os.stat(book.path).st_mode & 0o777) == 0o700
    os.chmod(book.path, 0o755)
    with pytest.raises(Exception, match="mode 0700"):
        Ledger(tmp_path / "open").ensure()
    assert main(["ledger", "--ledger", str(book.path)]) == 2  # a user error, exit 2, nothing listed


def _env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def test_two_releases_at_once_serialise_on_the_ledger(folder):
    for name in ("p", "q"):
        _spec(folder, name, DP)
    procs = [subprocess.Popen([sys.executable, "-m", "duckdb_sdc", "release", "--quiet", f"{name}.toml"],
                              cwd=folder, env=_env(), stderr=subprocess.PIPE, text=True) for name in ("p", "q")]
    codes = sorted(p.wait(timeout=120) for p in procs)
    assert codes == [0, 3], [p.stderr.read() for p in procs]
    assert len(Ledger(folder / "ledger").entries()) == 1


ROWS_KILLED = 200_000
TRIALS = 10


def test_a_release_killed_at_random_points_is_in_the_ledger_if_and_only_if_it_is_in_place(tmp_path):
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    con = duckdb.connect(str(tmp_path / "source.duckdb"))
    con.execute(f"CREATE TABLE people AS SELECT range + 1 AS id, ['a', 'b'][range % 2 + 1] AS region, "
                f"round(random() * 1e6, 3) AS x FROM range({ROWS_KILLED})")
    con.close()
    doc = {"source": {"database": "source.duckdb", "table": "people", "key": "id"},
           "output": {"database": "out/people.duckdb", "table": "people", "linkage": "private/link.duckdb"},
           "masking": {"strata": ["region"]}, "ledger": {"path": "ledger"},
           "columns": {"id": "drop", "region": "keep", "x": {"method": "mdav_round", "k": 5}}}
    (tmp_path / "people.toml").write_text(toml_dump(doc))
    book = Ledger(tmp_path / "ledger")

    def run(kill_after):
        start = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "duckdb_sdc", "release", "--quiet", "people.toml"],
                                cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if kill_after is not None:
            try:
                proc.wait(timeout=kill_after)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 20  # the watchdog finishes or undoes what the release left
        while time.monotonic() < deadline and (any(p.name.startswith(".") for d in ("entries", "values")
                                                   for p in (book.path / d).iterdir())
                                               or any(tmp_path.glob("out/.*"))):
            time.sleep(0.02)
        return proc.returncode, time.monotonic() - start

    # the shorter of two whole releases: the first of a process tree can be much slower (a cold cache, a
    # loaded machine), and kills drawn up to it would mostly come after the release ended
    (code, first), (code2, second) = run(None), run(None)
    assert code == code2 == 0
    full = min(first, second)
    outcomes = []
    for trial in range(TRIALS):
        before = [e.id for e in book.entries()]
        in_place = _release_id(tmp_path / "out" / "people.duckdb")
        code, _ = run(float(rng.uniform(0.3, full)))
        outcomes.append(code)
        after = [e.id for e in book.entries()]
        now = _release_id(tmp_path / "out" / "people.duckdb")
        if now == in_place:
            assert after == before, (trial, code)
        else:
            assert after == before + [now], (trial, code)
            assert book.values_path(now).is_file()
        assert not list((book.path / "values").glob(".*")) and not list((tmp_path / "out").glob(".*")), trial
        link = duckdb.connect(str(tmp_path / "private" / "link.duckdb"), read_only=True)
        assert link.execute("SELECT DISTINCT release_id FROM release_linkage").fetchall() == [(now,)], trial
        link.close()
    assert outcomes.count(-signal.SIGKILL) >= TRIALS // 2, outcomes
