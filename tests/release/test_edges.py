"""Issue 27, "nothing leaks at the edges": each case below was a reproduced failure of a release, and
is now a refusal with a clear error (nothing written, nothing left behind) or a visible opt-in that
the manifest records. The numbers of the sections are the issue's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from release_helpers import base_doc, people, write_db, write_spec

from duckdb_sdc.cli import main
from duckdb_sdc.release import PolicyBreach, SpecError, load_spec, release, report
from duckdb_sdc.release import run as release_run
from duckdb_sdc.workspace import Workspace, base_folder, recover

STRICT = {"min_k": 5, "max_unique_share": 0.0, "max_record_linkage": 0.25}


def _survey(n: int = 2000, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    income = np.round(rng.lognormal(10, 0.6, n), 2)
    return pd.DataFrame({
        "id": np.arange(1, n + 1),
        "region": rng.choice(["north", "south", "east", "west"], n),
        "income": income,
        "income_text": [f"{v:.2f}" for v in income],  # the raw value again, as text
        "interview_date": pd.Timestamp("2026-01-01") + pd.to_timedelta(rng.integers(0, 365, n), unit="D"),
        "born": (pd.Timestamp("1940-01-01") + pd.to_timedelta(rng.integers(0, 25_000, n), unit="D")).date,
        "employed": rng.random(n) < 0.6,
        "name": [f"person {i}" for i in range(n)],
    })


def _doc(**columns) -> dict:
    return {"source": {"database": "survey.duckdb", "table": "survey", "key": "id"},
            "output": {"database": "out/survey.duckdb", "table": "survey", "linkage": "private/link.duckdb"},
            "masking": {"strata": ["region"]},
            "columns": {"id": "drop", "region": "keep", "income": {"method": "mdav_round", "k": 5},
                        "income_text": "drop", "interview_date": "drop", "born": "drop", "employed": "drop",
                        "name": "drop", **columns},
            "policy": dict(STRICT)}


@pytest.fixture
def survey(tmp_path):
    df = _survey()
    write_db(tmp_path / "survey.duckdb", "survey", df)
    return tmp_path, df


def _nothing_written(folder: Path) -> None:
    for name in ("out", "private"):
        assert not (folder / name).exists() or not any((folder / name).iterdir()), name


# 1. every released column counts, whatever its type --------------------------------------------------


@pytest.mark.parametrize("column, kept", [
    ("income_text", "a text copy of the masked income"),
    ("name", "a text column unique per record"),
    ("born", "a date of birth"),
])
def test_1_a_kept_column_of_any_type_is_a_quasi_identifier(survey, column, kept):
    folder, _ = survey
    spec = load_spec(write_spec(folder, _doc(**{column: "keep"})))
    assert column in spec.quasi_identifiers()
    with pytest.raises(PolicyBreach, match=r"k_anonymity = 1 breaches min_k = 5") as info:
        release(spec)
    assert any(o.limit.key == "max_unique_share" and o.value > 0 for o in info.value.outcomes), kept
    _nothing_written(folder)


def test_1_a_kept_interview_date_makes_records_unique_and_evaluate_says_so(survey, capsys):
    folder, df = survey
    doc = _doc(interview_date="keep")
    doc["policy"] = {}
    path = write_spec(folder, doc)
    release(load_spec(path))
    rep = report(load_spec(path))
    overall = rep[(rep["section"] == "k-anonymity") & rep["column"].isna()]
    got = dict(zip(overall["measure"], overall["value"]))
    released = duckdb.connect(str(folder / "out" / "survey.duckdb"), read_only=True).execute(
        "SELECT region, income, interview_date FROM survey").df()
    sizes = released.fillna({"income": -1.0}).groupby(["region", "income", "interview_date"]).size()
    assert got["k_anonymity"] == sizes.min() == 1
    assert got["unique_share"] == pytest.approx((sizes == 1).sum() / len(released))
    assert got["unique_share"] > 0.5
    # the date takes part in the distance-based risk too, as seconds since 1970
    risk = rep[(rep["section"] == "disclosure risk") & (rep["measure"] == "record_linkage")]
    assert set(risk["column"].dropna()) == {"income", "interview_date"}
    doc["policy"] = {"min_k": 5}
    write_spec(folder, doc)
    assert main(["evaluate", "--check", "--quiet", str(path)]) == 3
    assert "k_anonymity = 1 breaches min_k = 5" in capsys.readouterr().err


def test_1_a_column_the_spec_exempts_is_left_out_and_the_manifest_and_cli_say_so(survey, capsys):
    folder, _ = survey
    doc = _doc(employed={"rule": "keep", "identifying": False})
    doc["policy"] = {"min_k": 5}
    path = write_spec(folder, doc)
    assert main(["release", "--quiet", str(path)]) == 0
    err = capsys.readouterr().err
    assert ("note: not counted as quasi-identifiers by the policy gate and the report: employed "
            "(columns.employed: identifying = false)") in err
    plain = duckdb.connect(str(folder / "out" / "survey.duckdb"), read_only=True)
    rows = dict(plain.execute("SELECT column_name, quasi_identifier FROM release_manifest "
                              "WHERE released_as IS NOT NULL").fetchall())
    notes = plain.execute("SELECT DISTINCT notes FROM release_manifest").fetchall()
    plain.close()
    assert rows == {"region": True, "income": True, "employed": False}
    assert notes == [(["not counted as quasi-identifiers by the policy gate and the report: employed "
                       "(columns.employed: identifying = false)"],)]
    # counted, the boolean splits the classes: the same release is refused
    doc["columns"]["employed"] = "keep"
    doc["output"]["database"] = "out/counted.duckdb"
    doc["output"]["linkage"] = "private/counted.duckdb"
    spec = load_spec(write_spec(folder, doc, "counted.toml"))
    with pytest.raises(PolicyBreach, match=r"k_anonymity = [1-4] breaches min_k = 5"):
        release(spec)


# 2. [evaluation] never changes what the gate measures ---------------------------------------------


def test_2_evaluation_quasi_identifiers_do_not_narrow_the_gate_and_policy_ones_do_visibly(survey, capsys):
    folder, _ = survey
    doc = _doc(born="keep")
    doc["evaluation"] = {"quasi_identifiers": ["income"]}
    with pytest.raises(PolicyBreach, match=r"k_anonymity = 1 breaches min_k = 5"):
        release(load_spec(write_spec(folder, doc)))
    del doc["evaluation"]
    doc["policy"] = {"min_k": 5, "quasi_identifiers": ["region", "income"]}
    path = write_spec(folder, doc)
    assert main(["release", "--quiet", str(path)]) == 0
    err = capsys.readouterr().err
    assert "note: quasi-identifiers narrowed by [policy] quasi_identifiers to region, income" in err
    assert "born (not in [policy] quasi_identifiers)" in err
    plain = duckdb.connect(str(folder / "out" / "survey.duckdb"), read_only=True)
    assert plain.execute("SELECT quasi_identifier FROM release_manifest WHERE column_name = 'born'").fetchall() == [(False,)]
    plain.close()


@pytest.mark.parametrize("value, message", [
    (["agee"], r"policy\.quasi_identifiers: 'agee' has no rule"),
    (["name"], r"policy\.quasi_identifiers: 'name' is not in the release table"),
    ([], r"policy\.quasi_identifiers: lists no column"),
])
def test_2_policy_quasi_identifier_mistakes(survey, value, message):
    folder, _ = survey
    doc = _doc()
    doc["policy"]["quasi_identifiers"] = value
    with pytest.raises(SpecError, match=message):
        load_spec(write_spec(folder, doc))


# 3. a kept key is identifying ------------------------------------------------------------------------


def test_3_a_kept_key_is_refused_unless_the_spec_says_it_identifies_no_one(survey, capsys):
    folder, _ = survey
    doc = _doc(id="keep")
    with pytest.raises(SpecError, match=r"columns\.id: the key 'id' links every released record to its source record.*"
                                        r"id = \{ rule = \"keep\", identifying = false \}"):
        load_spec(write_spec(folder, doc))
    doc["columns"]["id"] = {"rule": "keep", "identifying": False}
    doc["policy"] = {"min_k": 5}
    path = write_spec(folder, doc)
    assert main(["release", "--quiet", str(path)]) == 0
    err = capsys.readouterr().err
    assert "note: the key 'id' is released: it links every released record to its source record" in err
    # counted as a quasi-identifier (the spec above does not say identifying = false for the gate alone)
    doc["columns"]["id"] = {"rule": "keep"}
    with pytest.raises(SpecError, match=r"columns\.id: the key 'id' links every released record"):
        load_spec(write_spec(folder, doc))


def test_3_the_readme_quickstart_drops_the_key():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert 'person_id = "drop"' in readme and 'person_id = "keep"' not in readme
    assert "linkage = " in readme


# 4. a release never replaces what is not a release of the same table --------------------------------


def _csv_source(folder: Path) -> Path:
    people(120).to_csv(folder / "people.csv", index=False)
    return folder / "people.csv"


def _csv_doc(out: str) -> dict:
    return {"source": {"files": "people.csv", "key": "id"},
            "output": {"database": out, "table": "people"},
            "columns": {"id": "drop", "region": "keep", "age": "drop", "note": "drop",
                        "income": {"method": "mdav_round", "k": 5}, "expenses": "drop"}}


@pytest.mark.parametrize("target, why", [
    ("people.csv", r"is a file of the source: a release never replaces it"),
    ("spec.toml", r"is the spec file: a release never replaces it"),
    ("budget.xlsx", r"exists and is not a previous release of table 'people' \(it is not a DuckDB database file\)"),
    ("other.duckdb", r"exists and is not a previous release of table 'people' \(it has no release_manifest\)"),
])
def test_4_the_output_never_replaces_a_source_the_spec_or_a_file_that_is_not_a_release(tmp_path, target, why):
    source = _csv_source(tmp_path)
    (tmp_path / "budget.xlsx").write_bytes(b"PK\x03\x04 a spreadsheet")
    other = duckdb.connect(str(tmp_path / "other.duckdb"))
    other.execute("CREATE TABLE accounts AS SELECT 1 AS a")
    other.close()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    path = write_spec(tmp_path, _csv_doc(target))
    before["spec.toml"] = path.read_bytes()
    with pytest.raises(SpecError, match=f"output.database '.*{target}' " + why):
        release(load_spec(path))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
    assert source.read_bytes() == before["people.csv"]


def test_4_a_release_of_another_table_and_a_linkage_file_that_is_not_one_are_not_replaced(tmp_path):
    _csv_source(tmp_path)
    release(load_spec(write_spec(tmp_path, _csv_doc("out.duckdb"))))
    doc = _csv_doc("out.duckdb")
    doc["output"]["table"] = "persons"
    with pytest.raises(SpecError, match=r"exists and is not a previous release of table 'persons' \(it has a release "
                                        r"of another table\)"):
        release(load_spec(write_spec(tmp_path, doc)))
    doc = _csv_doc("out.duckdb")
    doc["output"]["linkage"] = "out.duckdb"
    with pytest.raises(SpecError, match=r"must be a separate file from output.database"):
        load_spec(write_spec(tmp_path, doc))
    doc["output"]["linkage"] = "notes.txt"
    (tmp_path / "notes.txt").write_text("my notes")
    with pytest.raises(SpecError, match=r"output.linkage '.*notes.txt' exists and is not a previous linkage file"):
        release(load_spec(write_spec(tmp_path, doc)))
    assert (tmp_path / "notes.txt").read_text() == "my notes"
    # a previous release of the same table is replaced
    assert release(load_spec(write_spec(tmp_path, _csv_doc("out.duckdb")))).rows == 120


# 5. raw values spill only into the private workspace, which no exit path leaves behind ---------------


def test_5_the_release_spills_into_its_private_workspace_and_removes_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    n = 400_000
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"id": np.arange(n), "region": rng.choice(["a", "b"], n), "x": rng.lognormal(10, 1, n)})
    write_db(tmp_path / "big.duckdb", "big", df)
    doc = {"source": {"database": "big.duckdb", "table": "big", "key": "id"},
           "output": {"database": "out/big.duckdb", "table": "big"},
           "masking": {"strata": ["region"]},
           "resources": {"memory_limit": "60MB", "threads": 1, "temp_directory": "tmp"},
           "columns": {"id": "drop", "region": "keep", "x": {"method": "mdav_round", "k": 5}}}
    spec = load_spec(write_spec(tmp_path, doc))
    seen = []
    real_run = release_run.run_step

    def watched(con, step, spec_):
        real_run(con, step, spec_)
        seen.append((con.execute("SELECT current_setting('temp_directory'), current_setting('memory_limit'), "
                                 "current_setting('threads')").fetchall()[0],
                     sorted(p.name for p in (tmp_path / "tmp").rglob("*") if p.is_file())))

    monkeypatch.setattr(release_run, "run_step", watched)
    release(spec)
    (spill, memory, threads), _ = seen[0]
    base = base_folder(tmp_path / "tmp")
    assert Path(spill).parent.parent == base and Path(spill).name == "spill"
    assert oct(os.stat(base).st_mode & 0o777) == "0o700"
    assert memory.replace(" ", "") in ("57.2MiB", "60.0MB", "57.2MB") and threads == 1
    assert any(files for _, files in seen)  # the workspace existed (state, lock, spill files)
    assert not any(p for p in (tmp_path / "tmp").rglob("*") if p.is_file())  # and is gone
    assert not (tmp_path / ".tmp").exists()  # DuckDB's default spill folder in the working folder


def test_5_resources_are_checked(tmp_path):
    doc = base_doc()
    for value, message in (({"memory_limit": "lots"}, r"resources\.memory_limit: must be an amount"),
                           ({"threads": 0}, r"resources\.threads: must be an integer in \[1, 4096\]"),
                           ({"cores": 2}, r"resources: unknown key 'cores'")):
        doc["resources"] = value
        with pytest.raises(SpecError, match=message):
            load_spec(write_spec(tmp_path, doc))


def test_5_a_private_base_folder_that_is_not_private_is_refused(tmp_path):
    base = tmp_path / f"duckdb-sdc-{os.getuid()}"
    base.mkdir(mode=0o755)
    os.chmod(base, 0o755)
    with pytest.raises(OSError, match=r"must be a folder owned by you with mode 0700.*mode 0755"):
        Workspace(tmp_path)


def test_5_residues_of_a_killed_release_are_removed_by_the_watchdog_and_else_by_the_next_release(tmp_path):
    script = tmp_path / "hold.py"
    script.write_text(
        "import sys, time\nfrom pathlib import Path\nfrom duckdb_sdc.workspace import Workspace\n"
        "ws = Workspace(sys.argv[1], watchdog=sys.argv[2] == 'yes')\n"
        "tmp = ws.temporary(Path(sys.argv[3]))\ntmp.write_text('half a release')\n"
        "(ws.spill / 'spill.tmp').write_bytes(b'raw values')\nprint(ws.path, flush=True)\ntime.sleep(60)\n")
    for watchdog in ("yes", "no"):
        target = tmp_path / f"out-{watchdog}.duckdb"
        proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "root"), watchdog, str(target)],
                                stdout=subprocess.PIPE, text=True)
        workspace = Path(proc.stdout.readline().strip())
        assert workspace.is_dir() and any(tmp_path.glob(f".out-{watchdog}.duckdb.*.tmp"))
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 10
        while watchdog == "yes" and workspace.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if watchdog == "no":  # no watchdog ran: the next workspace made there recovers it
            assert workspace.exists()
            assert [what for _, what in recover(base_folder(tmp_path / "root"))] == ["removed"]
        assert not workspace.exists() and not any(tmp_path.glob(f".out-{watchdog}.duckdb.*"))
        assert not target.exists()


def test_5_a_release_killed_while_it_commits_is_rolled_forward(tmp_path):
    """The renames recorded, the process killed before (or between) them: the watchdog completes them,
    so a release and its linkage file are in place together."""
    script = tmp_path / "commit.py"
    script.write_text(
        "import sys, time\nfrom pathlib import Path\nfrom duckdb_sdc.workspace import Workspace\n"
        "ws = Workspace(sys.argv[1])\nmoves = []\n"
        "for name in ('release.duckdb', 'link.duckdb'):\n"
        "    tmp = ws.temporary(Path(sys.argv[2]) / name)\n    tmp.write_text('new ' + name)\n"
        "    moves.append((tmp, Path(sys.argv[2]) / name))\n"
        "ws.state['moves'] = [(str(a), str(b)) for a, b in moves]\nws.state['status'] = 'committing'\nws._save()\n"
        "import os\nos.replace(*moves[0])\nprint('one renamed', flush=True)\ntime.sleep(60)\n")
    (tmp_path / "release.duckdb").write_text("old release.duckdb")
    (tmp_path / "link.duckdb").write_text("old link.duckdb")
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "root"), str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "one renamed"
    assert (tmp_path / "link.duckdb").read_text() == "old link.duckdb"  # the window the issue names
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    while (tmp_path / "link.duckdb").read_text() != "new link.duckdb" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "release.duckdb").read_text() == "new release.duckdb"
    assert (tmp_path / "link.duckdb").read_text() == "new link.duckdb"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["commit.py", "link.duckdb", "release.duckdb", "root"]


# 7. a source is read as one snapshot --------------------------------------------------------------------


def _parquet_source(folder: Path) -> pd.DataFrame:
    df = people(200)
    (folder / "data").mkdir()
    df.iloc[:100].to_parquet(folder / "data" / "part-0.parquet")
    df.iloc[100:].to_parquet(folder / "data" / "part-1.parquet")
    return df


def _parquet_doc() -> dict:
    return {"source": {"files": "data/*.parquet", "key": "id"},
            "output": {"database": "out.duckdb", "table": "people", "linkage": "link.duckdb"},
            "columns": {"id": "drop", "region": "keep", "age": "drop", "note": "drop",
                        "income": {"method": "mdav_round", "k": 5}, "expenses": {"method": "mdav_round", "k": 5}}}


def _during_masking(monkeypatch, action) -> None:
    real_run = release_run.run_step

    def run(con, step, spec):
        real_run(con, step, spec)
        if step.label.startswith("masking income"):
            action()

    monkeypatch.setattr(release_run, "run_step", run)


def test_7_a_file_added_to_the_source_folder_during_a_release_is_not_read(tmp_path, monkeypatch):
    df = _parquet_source(tmp_path)
    _during_masking(monkeypatch, lambda: df.iloc[:50].to_parquet(tmp_path / "data" / "part-2.parquet"))
    result = release(load_spec(write_spec(tmp_path, _parquet_doc())))
    assert result.rows == 200
    link = duckdb.connect(str(tmp_path / "link.duckdb"), read_only=True)
    assert link.execute("SELECT count(*), count(DISTINCT key) FROM release_linkage").fetchall() == [(200, 200)]
    link.close()


def test_7_a_source_file_changed_during_a_release_refuses_it_and_nothing_is_written(tmp_path, monkeypatch):
    df = _parquet_source(tmp_path)
    _during_masking(monkeypatch, lambda: df.iloc[100:190].to_parquet(tmp_path / "data" / "part-1.parquet"))
    with pytest.raises(SpecError, match=r"source\.files: '.*part-1\.parquet' changed \(its size, modification time "
                                        r"or inode\) while the release read it; nothing was written"):
        release(load_spec(write_spec(tmp_path, _parquet_doc())))
    assert not (tmp_path / "out.duckdb").exists() and not (tmp_path / "link.duckdb").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "spec.toml"]


# 8. the smaller items -----------------------------------------------------------------------------------


def _loading(pid: int, library: str) -> bool:
    try:
        return library in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_8_a_signal_in_the_first_moments_of_the_command_exits_with_its_code(tmp_path, sig, code):
    """The handlers come before any heavy import: a signal while the command still loads DuckDB and
    numpy (seen as DuckDB's library mapped into the process) ends it with 128 + the signal. (A signal
    in the interpreter's own start-up, before any code of ours runs, still kills it.)"""
    spec = write_spec(tmp_path, base_doc())
    write_db(tmp_path / "src.duckdb", "people", people())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    codes = []
    for delay in (0.0, 0.05, 0.2):
        proc = subprocess.Popen([sys.executable, "-m", "duckdb_sdc", "release", "--quiet", str(spec)],
                                stderr=subprocess.PIPE, env=env, cwd=tmp_path)
        deadline = time.monotonic() + 60
        while not _loading(proc.pid, "_duckdb") and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(delay)
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        codes.append(proc.returncode)
    assert codes == [code] * 3, codes
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_8_a_huge_bad_value_is_echoed_cut(tmp_path, capsys):
    doc = base_doc()
    doc["columns"]["income"] = {"method": "m" * 5_000_000, "k": 5}
    assert main(["release", str(write_spec(tmp_path, doc))]) == 2
    err = capsys.readouterr().err
    assert "unknown method 'mmmm" in err and "(5000002 characters)" in err and len(err) < 3000


def test_8_dry_run_into_a_closed_pipe_ends_quietly(tmp_path):
    write_db(tmp_path / "src.duckdb", "people", people())
    spec = write_spec(tmp_path, base_doc())
    done = subprocess.run(f"{sys.executable} -m duckdb_sdc release --dry-run {spec} | head -1", shell=True,
                          capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.stdout.startswith("-- duckdb-sdc release of spec.toml")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_8_without_a_key_duplicate_records_are_counted_and_said(tmp_path, capsys):
    df = people(100).drop(columns=["id", "note"])
    df = pd.concat([df, df.iloc[:7]], ignore_index=True)  # 7 records twice: 14 records repeat another
    write_db(tmp_path / "src.duckdb", "people", df)
    doc = {"source": {"database": "src.duckdb", "table": "people"},
           "output": {"database": "out.duckdb", "table": "people"},
           "columns": {"region": "keep", "age": "drop", "income": {"method": "mdav_round", "k": 5},
                       "expenses": "drop"}}
    assert main(["release", "--quiet", str(write_spec(tmp_path, doc))]) == 0
    note = ("14 records of the source repeat another record in every column (there is no source.key): they are "
            "released as separate records with the same values")
    assert f"note: {note}" in capsys.readouterr().err
    plain = duckdb.connect(str(tmp_path / "out.duckdb"), read_only=True)
    assert plain.execute("SELECT DISTINCT notes FROM release_manifest").fetchall() == [([note],)]
    plain.close()
