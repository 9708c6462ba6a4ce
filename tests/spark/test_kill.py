"""A Spark release killed at random moments (`duckdb-sdc release --engine spark` in a process of its
own, from a DuckDB table, with a policy gate): afterwards no raw value of a masked column (as its 8
bytes or as text) is anywhere under the working folder, the output folder or the system temporary
folder; the target holds the previous release or a complete new one, never a partial one; SIGINT
exits 130 and leaves no hidden folder (SIGTERM's handler is the same one: the CLI's signal handling is
tested for both in tests/release/test_edges.py); what SIGKILL leaves is removed by the next release to
the same target.

Trials: 2 (SIGKILL, SIGINT; 5 before, cut for CI's 30 minutes), each at a moment drawn uniformly from
the middle half of a whole run's measured duration (JVM start included), plus the run that measures it
and the one that cleans up after: 4 Spark processes (each starts a JVM).
The draws come from SEED, printed on failure, so a failing trial can be replayed."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from spark_helpers import raw_values_in, stop_group, tree

REPO = Path(__file__).resolve().parents[2]
ROWS = 30_000
SEED = int(os.environ.get("SDC_KILL_SEED", "2027"))
TRIALS = ("SIGKILL", "SIGINT")  # the watchdog's path and the handled one (CI's 30 minutes; SDC_KILL_SEED varies the moments)

SPEC = """
[source]
database = "{database}"
table = "people"
key = "id"

[output]
database = "out/release"
table = "people"

[masking]
strata = ["region"]

[columns]
id = "drop"
region = "keep"
note = "drop"
x = {{ method = "mdav_round", k = 5 }}
y = {{ method = "ranking_round", k = 5 }}

[policy]
max_record_linkage = 1.0
max_interval_disclosure = 1.0
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("kill")
    data, work, systmp = root / "data", root / "work", root / "systmp"
    for d in (data, work, systmp):
        d.mkdir()
    rng = np.random.default_rng(27)
    df = pd.DataFrame({"id": np.arange(ROWS, dtype=np.int64), "region": rng.choice(["n", "s", "e"], ROWS),
                       "x": rng.normal(1000, 250, ROWS), "y": rng.lognormal(3, 1, ROWS),
                       "note": rng.choice(["p", "q"], ROWS)})
    con = duckdb.connect(str(data / "people.duckdb"))
    con.register("frame", df)
    con.execute("CREATE TABLE people AS SELECT * FROM frame")
    con.close()
    (work / "spec.toml").write_text(SPEC.format(database=data / "people.duckdb"))
    env = dict(os.environ, TMPDIR=str(systmp), SPARK_LOCAL_DIRS=str(systmp),
               JAVA_TOOL_OPTIONS=f"-Djava.io.tmpdir={systmp}", PYTHONPATH=str(REPO))
    env.pop("PYSPARK_PYTHON", None)
    return root, data, work, systmp, env, df[["x", "y"]].to_numpy().ravel()


def _start(work: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "duckdb_sdc", "release", "spec.toml", "--engine", "spark",
                             "--quiet"], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _finish(proc: subprocess.Popen, timeout: float = 600) -> tuple[int, str]:
    """Wait for the command, then for the JVM and Python workers it started (they end by themselves
    when the driver is gone); anything still running after 60 s is killed."""
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(proc)
        raise
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        left = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True).stdout.split()
        if not left:
            break
        time.sleep(0.2)
    else:
        stop_group(proc)
    return proc.returncode, err


def _hidden(work: Path) -> list[str]:
    return sorted(p.name for p in (work / "out").iterdir() if p.name.startswith("."))


def _complete(work: Path) -> bool:
    con = duckdb.connect()
    try:
        rows = con.execute(f"SELECT count(*) FROM read_parquet('{work}/out/release/people/*.parquet')").fetchone()[0]
        manifest = con.execute(f"SELECT count(*) FROM read_parquet('{work}/out/release/release_manifest/*.parquet')"
                               ).fetchone()[0]
    finally:
        con.close()
    return rows == ROWS and manifest > 0


def test_a_killed_spark_release_leaves_no_raw_value_and_no_partial_release(setup):
    root, data, work, systmp, env, raw = setup
    start = time.monotonic()
    code, err = _finish(_start(work, env))
    duration = time.monotonic() - start
    assert code == 0 and _complete(work), err
    rng = random.Random(SEED)
    for trial, name in enumerate(TRIALS):
        previous = tree(work / "out" / "release")
        moment = rng.uniform(0.25, 0.75) * duration
        proc = _start(work, env)
        time.sleep(moment)
        proc.send_signal(getattr(signal, name))
        code, err = _finish(proc)
        where = f"trial {trial} (SDC_KILL_SEED={SEED}): {name} after {moment:.1f} s of {duration:.1f}: exit {code}"
        leaks = {}
        for folder in (work, systmp):
            leaks.update(raw_values_in(folder, raw, skip={data}))
        assert leaks == {}, where
        now = tree(work / "out" / "release")
        assert now == previous or _complete(work), where  # the previous release, or a whole new one
        if name != "SIGKILL":
            assert code in (0, 128 + getattr(signal, name)), where + "\n" + err
            assert "Traceback" not in err, where + "\n" + err
            assert _hidden(work) == [], where  # an interrupt cleans up after itself
            if code:
                assert now == previous, where
                assert err.strip().endswith({"SIGINT": "interrupted", "SIGTERM": "terminated"}[name]), err
    left = _hidden(work)
    code, err = _finish(_start(work, env))  # the next release removes what the killed ones left
    assert code == 0 and _complete(work), err
    assert _hidden(work) == [], f"left by the trials: {left}"
    assert raw_values_in(work, raw, skip={data}) == {} and raw_values_in(systmp, raw) == {}


PLAIN_SESSION = r'''
import json, os, sys
os.environ["PYSPARK_PYTHON"] = sys.executable  # the session's own choice of Python for its workers
from pyspark.sql import SparkSession
from duckdb_sdc.release import load_spec
from duckdb_sdc.spark import release

spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2").getOrCreate())
sc = spark.sparkContext
before = sc._encryption_enabled
result = release(load_spec(sys.argv[1]), spark, target=sys.argv[2])
print("RESULT " + json.dumps({"before": before, "after": sc._encryption_enabled, "rows": result.rows}), flush=True)
'''


def test_a_session_without_io_encryption_gets_a_warning_and_still_no_file(setup, tmp_path):
    """A user's own session without spark.io.encryption.enabled: the release prints the warning, and
    still sends the DuckDB table to the JVM over PySpark's socket (which PySpark otherwise uses only
    with that setting), so no raw record passes through a file; the session's own setting is left as
    it was."""
    root, data, work, systmp, env, raw = setup
    done = subprocess.run([sys.executable, "-c", PLAIN_SESSION, str(work / "spec.toml"), str(tmp_path / "plain")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    result = next((line for line in done.stdout.splitlines() if line.startswith("RESULT ")), None)
    assert done.returncode == 0 and result, done.stderr[-3000:]
    import json

    assert json.loads(result[len("RESULT "):]) == {"before": False, "after": False, "rows": ROWS}
    assert "warning: this session runs without spark.io.encryption.enabled" in done.stderr
    assert raw_values_in(systmp, raw) == {} and raw_values_in(tmp_path, raw) == {}
