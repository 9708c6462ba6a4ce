"""The duckdb-sdc command: release, sql, exit codes and messages."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

import duckdb
import pytest
from release_helpers import base_doc, people, write_db, write_spec

from duckdb_sdc.cli import main
from duckdb_sdc.release.plan import parse_back
from duckdb_sdc.release.progress import Progress


@pytest.fixture
def spec(tmp_path):
    write_db(tmp_path / "src.duckdb", "people", people(150))
    return write_spec(tmp_path, base_doc())


def _cli(*args, stdin=None, env=None):
    return subprocess.run([sys.executable, "-m", "duckdb_sdc", *args], capture_output=True, text=True,
                          input=stdin, timeout=300, env=env)


def test_release_command_writes_the_file_and_says_so(spec, capsys):
    assert main(["release", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "released 150 rows x 5 columns (2 masked: income, expenses)" in out
    assert (spec.parent / "out" / "release.duckdb").is_file()


def test_dry_run_prints_the_script_and_writes_nothing(spec, capsys):
    assert main(["release", str(spec), "--dry-run"]) == 0
    script = capsys.readouterr().out
    # 20 statements (with the strata counted: small strata) and 36 COMMENT ON: the table and its 5 columns, the
    # view and its 4, the manifest and its 24
    assert len(parse_back(script)) == 56
    assert not (spec.parent / "out").exists()


@pytest.mark.parametrize("change, message", [
    (lambda d: d["columns"].pop("age"), "source column without a rule in [columns] (declare each"),
    (lambda d: d["columns"].update(income={"method": "mdav_round", "k": 10**6}), "columns.income: mdav_round: k = 1000000"),
])
def test_user_errors_exit_2_with_one_line(spec, capsys, change, message):
    doc = base_doc()
    change(doc)
    write_spec(spec.parent, doc)
    assert main(["release", str(spec)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("duckdb-sdc release: error: spec.toml: ") and message in err
    assert err.count("\n") == 1


def test_no_traceback_for_bad_input_in_a_real_process(tmp_path):
    missing = _cli("release", str(tmp_path / "none.toml"))
    assert missing.returncode == 2 and "cannot read the spec" in missing.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[source]\ntable = 'x'\n")
    done = _cli("release", str(bad))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    # a key is optional; a missing path is named as missing (it said "got None")
    assert "bad.toml: source.database: is missing: give a file path" in done.stderr
    assert _cli("release").returncode == 2  # argparse: missing SPEC
    query = _cli("sql", "-c", "SELECT mdav_round([1, 2, 3], 5)")
    assert query.returncode == 2 and "Traceback" not in query.stderr
    assert query.stderr.strip() == ("duckdb-sdc sql: error: mdav_round: k = 5 is larger than the number of "
                                    "non-NULL values (3)")


def test_sql_command_runs_queries_with_every_function(spec, capsys, monkeypatch):
    assert main(["release", str(spec), "--quiet"]) == 0
    db = str(spec.parent / "out" / "release.duckdb")
    capsys.readouterr()
    assert main(["sql", db, "--read-only", "-c",
                 "SELECT column_name, rule FROM release_manifest WHERE rule = 'mask'; "
                 "SELECT mdav_round([1, 2, 3, 4], 2) AS m"]) == 0
    out = capsys.readouterr().out
    assert "│ income      │ mask    │" in out and "[1.5, 1.5, 3.5, 3.5]" in out
    script = spec.parent / "q.sql"
    script.write_text("CREATE TEMP TABLE t AS SELECT 41 AS x;\nSELECT x + 1 AS answer FROM t;\n")
    assert main(["sql", "-f", str(script)]) == 0
    assert "42" in capsys.readouterr().out
    assert main(["sql", "-c", "SELEC 1"]) == 2
    assert "Parser Error" in capsys.readouterr().err
    assert main(["sql", str(spec.parent / "nope.duckdb"), "--read-only", "-c", "SELECT 1"]) == 2
    capsys.readouterr()
    # SQL given where the database goes: refused, instead of creating a file named 'SELECT 1'
    monkeypatch.chdir(spec.parent)
    assert main(["sql", "SELECT 1"]) == 2
    assert "the database 'SELECT 1' is no file and looks like SQL" in capsys.readouterr().err
    assert not (spec.parent / "SELECT 1").exists()
    # nothing was written into the release file by registering the functions
    plain = duckdb.connect(db, read_only=True)
    assert plain.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = 'mdav_round'").fetchall() == [(0,)]
    plain.close()


def test_sql_reads_statements_from_a_pipe():
    done = _cli("sql", stdin="SELECT 6 * 7 AS answer;\nSELECT ranking_round([3, 1, 2, 4], 2) AS r;\n")
    assert done.returncode == 0, done.stderr
    assert "│     42 │" in done.stdout and "[3.5, 1.5, 1.5, 3.5]" in done.stdout


def _read_until(fd, needle: bytes, timeout: float = 60.0) -> bytes:
    seen, end = b"", time.time() + timeout
    while needle not in seen and time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_interactive_prompt_keeps_history_and_survives_errors(tmp_path):
    env = {**os.environ, "DUCKDB_SDC_HISTORY": str(tmp_path / "history")}
    pid, fd = pty.fork()
    if pid == 0:  # child: the prompt on a terminal
        os.execve(sys.executable, [sys.executable, "-m", "duckdb_sdc", "sql"], env)
    try:
        assert b"sdc> " in _read_until(fd, b"sdc> ")
        os.write(fd, b"SELECT mdav_round([1, 2, 3], 9);\n")
        assert b"k = 9 is larger" in _read_until(fd, b"sdc> ")
        os.write(fd, b"SELECT 40 +\n2 AS answer;\n")
        assert b"42" in _read_until(fd, b"sdc> ")
        os.write(fd, b".quit\n")
        _read_until(fd, b"\x00", timeout=20)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert "SELECT 40 +" in (tmp_path / "history").read_text()


def test_progress_bar_draws_only_when_asked(capsys):
    import io

    stream = io.StringIO()
    with Progress(stream=stream, enabled=True).task("release t", 2) as bar:
        bar.advance("masking income")
        bar.advance("writing")
    assert "release t [" in stream.getvalue() and "2/2" in stream.getvalue()
    quiet = io.StringIO()
    with Progress(stream=quiet).task("release t", 2) as bar:  # StringIO is not a terminal
        bar.advance("masking income")
    assert quiet.getvalue() == ""


def test_a_release_shows_progress_per_stratum(tmp_path):
    import io

    from release_helpers import base_doc, people, write_db, write_spec

    from duckdb_sdc.release import load_spec, release

    write_db(tmp_path / "src.duckdb", "people", people(120))
    stream = io.StringIO()
    release(load_spec(write_spec(tmp_path, base_doc())), progress=Progress(stream=stream, enabled=True))
    drawn = stream.getvalue()
    # three regions: the last tick of each masking step shows all three strata done
    assert "masking income (mdav_round) (stratum 3/3)" in drawn
    assert "masking expenses (oma_round) (stratum 3/3)" in drawn


def test_group_ticks_reach_only_watchers_while_they_watch():
    import duckdb_sdc
    from duckdb_sdc.sql.progress import watching

    con = duckdb_sdc.connect()
    con.execute("CREATE TABLE t AS SELECT i % 4 AS g, i * 1.0 AS x FROM range(100) r(i)")
    ticks = []
    with watching(lambda: ticks.append(1)):
        con.execute("SELECT g, mdav_round(list(x), 3) FROM t GROUP BY g").fetchall()
    con.execute("SELECT g, mdav_round(list(x), 3) FROM t GROUP BY g").fetchall()
    con.close()
    assert len(ticks) == 4


# ---------------------------------------------------------------------------------------------
# --version, files that are not UTF-8, signals

def _plain_stderr(text: str) -> str:
    """Standard error without DuckDB's Python client's reference-leak report at exit (nanobind), which
    is not ours to print or to silence."""
    return "\n".join(line for line in text.splitlines()
                     if not (line.startswith(("nanobind:", " - leaked", " - ... skipped")) or "refleaks" in line
                             or line.startswith("See https://nanobind"))) + ("\n" if text.endswith("\n") else "")


def test_version_prints_the_versions_and_exits_0():
    from importlib.metadata import version

    done = _cli("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"duckdb-sdc {version('duckdb-sdc')} (duckdb {duckdb.__version__}, "
                           f"Python {sys.version.split()[0]})\n")


LATIN1 = "caf\xe9".encode("latin-1")  # b'caf\xe9': not UTF-8


def test_a_spec_that_is_not_utf8_is_one_line_not_a_traceback(tmp_path):
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b"[source]\ntable = \"" + LATIN1 + b"\"\n")
    for command in ("release", "evaluate"):
        done = _cli(command, str(bad))
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert _plain_stderr(done.stderr) == (f"duckdb-sdc {command}: error: {bad}: cannot read the spec: not UTF-8 "
                                              "text (byte 0xe9 at offset 21); save it as UTF-8\n")


def test_a_sql_file_or_input_that_is_not_utf8_is_one_line_not_a_traceback(tmp_path):
    bad = tmp_path / "latin1.sql"
    bad.write_bytes(b"SELECT '" + LATIN1 + b"' AS word;\n")
    done = _cli("sql", "-f", str(bad))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert _plain_stderr(done.stderr) == (f"duckdb-sdc sql: error: cannot read {str(bad)!r}: not UTF-8 text "
                                          "(byte 0xe9 at offset 11); save it as UTF-8\n")
    piped = subprocess.run([sys.executable, "-m", "duckdb_sdc", "sql"], input=bad.read_bytes(), capture_output=True,
                           timeout=300)
    assert piped.returncode == 2
    assert _plain_stderr(piped.stderr.decode()) == ("duckdb-sdc sql: error: cannot read standard input: not UTF-8 "
                                                    "text (byte 0xe9 at offset 11); save it as UTF-8\n")
    # UTF-8 with a byte order mark (as some editors save it) is fine
    good = tmp_path / "bom.sql"
    good.write_bytes("\ufeffSELECT 'café' AS word;\n".encode("utf-8"))
    ok = _cli("sql", "-f", str(good))
    assert ok.returncode == 0 and "café" in ok.stdout


@pytest.fixture(scope="module")
def big_release(tmp_path_factory):
    """A spec whose release takes a few seconds: 2M records, three masked columns."""
    folder = tmp_path_factory.mktemp("signals")
    con = duckdb.connect(str(folder / "src.duckdb"))
    con.execute("CREATE TABLE people AS SELECT i AS id, (i % 7)::VARCHAR AS region, hash(i) % 100000 AS income, "
                "hash(i + 1) % 1000 AS expenses, hash(i + 2) % 777 AS savings FROM range(2000000) r(i)")
    con.close()
    (folder / "spec.toml").write_text(
        '[source]\ndatabase = "src.duckdb"\ntable = "people"\nkey = "id"\n'
        '[output]\ndatabase = "out/release.duckdb"\ntable = "people"\n'
        '[columns]\nid = { rule = "keep", identifying = false }\nregion = "keep"\nincome = { method = "ranking_round", k = 5 }\n'
        'expenses = { method = "ranking_round", k = 5 }\nsavings = { method = "ranking_round", k = 5 }\n')
    return folder


def _signal_while_writing(folder, signum):
    """Start `duckdb-sdc release`, wait until it writes the release file (the hidden .tmp beside the
    output exists: DuckDB is inside a statement), send `signum`; return the finished process and
    whether the .tmp file was seen."""
    import glob
    import shutil

    shutil.rmtree(folder / "out", ignore_errors=True)
    process = subprocess.Popen([sys.executable, "-m", "duckdb_sdc", "release", str(folder / "spec.toml"), "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen, end = False, time.time() + 240
    while process.poll() is None and time.time() < end:
        if glob.glob(str(folder / "out" / ".release.duckdb.*.tmp")):
            process.send_signal(signum)
            seen = True
            break
        time.sleep(0.002)
    out, err = process.communicate(timeout=240)
    return process.returncode, out, _plain_stderr(err), seen


@pytest.mark.parametrize("signum, code, word", [(signal.SIGINT, 130, "interrupted"),
                                                (signal.SIGTERM, 143, "terminated")])
def test_a_signal_during_release_cleans_up_and_exits_128_plus_its_number(big_release, signum, code, word):
    """SIGINT printed a traceback (RuntimeError: Query interrupted) and exited 1; SIGTERM killed the
    process and left the hidden .tmp file beside the output. Now both clean up and exit 130 / 143."""
    returncode, out, err, seen = _signal_while_writing(big_release, signum)
    assert seen, "the release finished before it could be interrupted"
    assert (returncode, out, err) == (code, "", f"{word}\n")
    assert sorted(p.name for p in (big_release / "out").iterdir()) == []  # no release, no .tmp, no .wal


def test_the_signal_handlers_are_restored_after_a_command(spec):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    assert main(["release", str(spec), "--quiet"]) == 0
    assert {s: signal.getsignal(s) for s in before} == before


def test_evaluate_and_tradeoff_show_progress_on_a_terminal(spec):
    import io

    from duckdb_sdc.release import load_spec, release, report, sweep

    loaded = load_spec(spec)
    release(loaded)
    stream = io.StringIO()
    report(loaded, progress=Progress(stream=stream, enabled=True))
    drawn = stream.getvalue()
    from duckdb_sdc.release.report import SECTIONS

    for n, section in enumerate(SECTIONS, start=1):
        label = section.__name__.removesuffix("_section").replace("_", " ")
        assert f"] {n}/{len(SECTIONS)} " in drawn and label in drawn
    assert drawn.startswith("\r\x1b[2Kevaluate spec.toml [") and "k anonymity" in drawn
    stream = io.StringIO()
    sweep(loaded, "k", [3, 4], progress=Progress(stream=stream, enabled=True))
    assert "tradeoff k [" in stream.getvalue() and "2/2" in stream.getvalue() and "at k = 4" in stream.getvalue()


def test_a_long_step_is_redrawn_so_the_time_moves():
    import io

    stream = io.StringIO()
    with Progress(stream=stream, enabled=True).task("evaluate x", 1) as bar:
        bar.advance("measures")
        time.sleep(1.3)
    draws = [d for d in stream.getvalue().split("\r\x1b[2K") if d]
    assert len(draws) >= 3 and all("measures" in d for d in draws)
    times = [float(re.search(r"1/1\s+([\d.]+)s", d).group(1)) for d in draws]
    assert times == sorted(times) and times[-1] >= 0.9


# ---------------------------------------------------------------------------------------------
# duckdb-sdc sql: DuckDB's dot commands and output modes (duckdb_sdc.shell)

MODE_QUERY = ("SELECT 1 AS a, 'x,\"y' AS \"b c\", NULL::INTEGER AS n, 2.5::DOUBLE AS d, 'long text' AS t "
              "UNION ALL SELECT 22, 'z', 3, 1e20, '' ORDER BY a;")


@pytest.mark.parametrize("mode", ["box", "table", "markdown", "csv", "tabs", "list", "line", "json", "jsonlines",
                                  "html"])
def test_each_output_mode_prints_what_duckdbs_own_shell_prints(mode):
    """The real DuckDB shell (the 1.x CLI of .venv-compat) is the reference, byte for byte."""
    from integration.test_compat import compat_venv

    script = f".mode {mode}\n{MODE_QUERY}\n"
    theirs = subprocess.run([str(compat_venv() / "bin" / "duckdb"), "-batch"], input=script.encode(),
                            capture_output=True, timeout=60)
    ours = subprocess.run([sys.executable, "-m", "duckdb_sdc", "sql", "-c", script], capture_output=True, timeout=60)
    assert ours.returncode == 0, ours.stderr
    assert theirs.returncode == 0, theirs.stderr
    assert ours.stdout == theirs.stdout


def test_mode_flags_headers_and_readonly_as_duckdb_spells_them(tmp_path):
    db = tmp_path / "t.duckdb"
    duckdb.connect(str(db)).execute("CREATE TABLE t AS SELECT 1 AS a, 'b' AS b").close()
    done = _cli("sql", str(db), "-readonly", "-csv", "-noheader", "-c", "SELECT * FROM t")
    assert (done.returncode, done.stdout) == (0, "1,b\n"), done.stderr  # \r\n read as text
    assert _cli("sql", str(db), "-json", "-c", "SELECT * FROM t").stdout == '[{"a":1,"b":"b"}]\n'
    refused = _cli("sql", str(db), "-readonly", "-c", "CREATE TABLE u (x INT)")
    assert refused.returncode == 2 and "read-only" in refused.stderr
    assert _cli("sql", str(db), "--read-only", "-line", "-c", "SELECT a FROM t").stdout == "    a = 1\n"


def test_tables_schema_databases_and_read(tmp_path):
    db = tmp_path / "t.duckdb"
    con = duckdb.connect(str(db))
    con.execute('CREATE TABLE people (id INTEGER PRIMARY KEY, "the name" VARCHAR); CREATE VIEW v AS SELECT id FROM '
                "people; CREATE TABLE alpha (x DOUBLE); CREATE SCHEMA s2; CREATE TABLE s2.other (y INTEGER)")
    con.close()
    script = tmp_path / "s.sql"
    script.write_text(".mode csv\nSELECT 'read' AS r;\n.mode duckbox\n")
    done = _cli("sql", str(db), "-c", f".tables\n.tables p%\n.schema people\n.read {script}\n.mode\n"
                                      "SELECT 1 AS one;\n.quit\nSELECT 'never' AS x;")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:5] == [
        "alpha     people    v         s2.other", "people",
        'CREATE TABLE people(id INTEGER PRIMARY KEY, "the name" VARCHAR);', "r", "read"]
    assert "current output mode: duckbox" in done.stdout and "│     1 │" in done.stdout and "never" not in done.stdout
    listed = _cli("sql", str(db), "-c", f"ATTACH '{tmp_path / 'other.duckdb'}' AS o;\n.databases")
    assert "│ o       │ " in listed.stdout and "other.duckdb" in listed.stdout, listed.stdout


@pytest.mark.parametrize("script, message", [
    (".mode nonsense", "unknown mode 'nonsense'; the modes: duckbox, box, table"),
    (".frobnicate", "unknown command '.frobnicate'; .help lists the commands"),
    (".headers maybe", ".headers takes on or off, got 'maybe'"),
    (".read", ".read needs a file name"),
    (".read /no/such/file.sql", "cannot read '/no/such/file.sql': No such file or directory"),
])
def test_a_bad_dot_command_in_a_script_is_one_line_and_exit_2(script, message):
    done = _cli("sql", "-c", f"SELECT 1;\n{script}\nSELECT 2;")
    assert done.returncode == 2
    assert done.stderr.startswith(f"duckdb-sdc sql: error: {message}") and done.stderr.count("\n") == 1


def test_a_table_functions_missing_table_names_the_function_and_the_parameter():
    """DuckDB's own error ('Table with name no_such does not exist! Did you mean "pg_tables"?') names
    neither; the shell has the statement, so it says which parameter of which call names the table."""
    done = _cli("sql", "-c", "CREATE TABLE t AS SELECT range::DOUBLE AS x FROM range(9);\n"
                             "SELECT * FROM t JOIN evaluate_masking('t', masked := 'no_such', key := 'x') USING (x);")
    assert done.returncode == 2
    assert done.stderr == ("duckdb-sdc sql: error: evaluate_masking: masked = 'no_such' names no table or view "
                           "(Catalog Error: Table with name no_such does not exist)\n")
    plain = _cli("sql", "-c", "SELECT * FROM no_such")  # no table function: DuckDB's message stands
    assert plain.returncode == 2 and "Table with name no_such does not exist!" in plain.stderr


def test_semicolons_in_strings_and_comments_do_not_end_a_statement():
    done = _cli("sql", "-list", stdin="SELECT 'a;b' AS s -- c;\n, 2 AS n;\n.tables\nSELECT /* ; */ 3 AS m\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "s|n\na;b|2\nm\n3\n"


def test_dot_commands_at_the_prompt_and_errors_that_do_not_end_it(tmp_path):
    env = {**os.environ, "DUCKDB_SDC_HISTORY": str(tmp_path / "history")}
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(sys.executable, [sys.executable, "-m", "duckdb_sdc", "sql"], env)
    try:
        assert b"sdc> " in _read_until(fd, b"sdc> ")
        os.write(fd, b".mode nonsense\n")
        assert b"Error: unknown mode 'nonsense'" in _read_until(fd, b"sdc> ")
        os.write(fd, b".mode csv\n")
        _read_until(fd, b"sdc> ")
        os.write(fd, b"SELECT 'a;b' AS s,\n 42 AS answer;\n")
        assert b"s,answer\r\na;b,42" in _read_until(fd, b"sdc> ").replace(b"\r\r\n", b"\r\n")
        os.write(fd, b".help\n")
        assert b".schema ?PATTERN?" in _read_until(fd, b"sdc> ")
        os.write(fd, b".exit\n")
        _read_until(fd, b"\x00", timeout=20)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
