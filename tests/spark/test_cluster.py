"""Releases on a real Spark standalone cluster on this machine: a master and two workers started with
spark-class (127.0.0.1, each worker with its own work and local folders, one core, executors on the
venv's Python), the driver in a process of its own (`duckdb_sdc.spark.local_session` on the cluster's
URL, as `duckdb-sdc release --master spark://...` starts it), the files on `file://` URIs (a shared
mount, here the same disk). The test starts and stops every JVM itself, also when it fails.

* a release from Parquet and one from a DuckDB table, four strata, the position-based rules split into
  buckets across the executors: equal to the DuckDB release by key, column by column;
* the DuckDB table reaches the executors through Spark itself: its scan in the executed plan is an
  in-memory relation, no file; no file anywhere under the driver's or the cluster's folders holds a
  raw value of a masked column;
* an executor killed with SIGKILL while the masking stage runs: Spark starts another, the lost tasks
  run again, and the release is the same, value for value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from spark_helpers import Cluster, raw_values_in, write_parquet

from duckdb_sdc.release import parse_spec, release

ROWS = 40_000
BUCKET_ROWS = 4_000  # every stratum of the position-based rules is split into several buckets


def _distinct(x: np.ndarray) -> np.ndarray:
    """x with four or more digits before the point and away from integers: the suite's leak scan of a
    DuckDB release (tests/conftest.py) takes a raw value as written in the file when its 4-decimal form
    is, and a short one (1.5, 0.1, 7) is written in any DuckDB file."""
    return np.where(np.abs(x - np.round(x)) < 1e-3, x + 2e-3, x)


def _source(n: int = ROWS) -> pd.DataFrame:
    rng = np.random.default_rng(34)
    return pd.DataFrame({
        "id": rng.permutation(n).astype(np.int64),
        "region": rng.choice(["north", "south", "east", "west"], n),
        "x": np.round(rng.lognormal(8, 1, n), 2),  # cents: ties
        "y": np.round(rng.normal(50, 10, n), 1),
        "z": _distinct(rng.normal(1000, 1, n)),
        "u": _distinct(rng.normal(2000, 1, n)),
        "w": _distinct(rng.normal(3000, 3, n)),
        "note": rng.choice(["a", "b"], n),
    })


def _doc(source: dict, out: str) -> dict:
    return {"source": {**source, "key": "id"}, "output": {"database": out, "table": "people"},
            "masking": {"strata": ["region"]},
            "columns": {"id": {"rule": "keep", "identifying": False}, "region": "keep", "note": "drop",
                        "x": {"method": "mdav_round", "k": 5}, "y": {"method": "ranking_round", "k": 4},
                        "z": {"method": "efd_round", "c": 8}},
            "groups": [{"columns": ["u", "w"], "method": "mondrian_round", "k": 5}]}


DRIVER = r'''
import json, os, signal, subprocess, sys, threading, time
from duckdb_sdc.release import parse_spec
from duckdb_sdc.spark import Options, local_session, release

args = json.loads(sys.argv[1])
spark = local_session(args["master"], quiet=True, config={
    "spark.executor.memory": "640m", "spark.cores.max": "2", "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "2", "spark.task.maxFailures": "8", "spark.port.maxRetries": "64"})
sc = spark.sparkContext
out = {"executor_python": sorted({r[0] for r in spark.range(8).repartition(4).mapInPandas(
    lambda it: (df.assign(p=sys.executable)[["p"]] for df in it), "p string").collect()})}

def plans(runs):
    def check(spark, released, src):
        runs.append({"plan": src._jdf.queryExecution().executedPlan().toString(), "files": src.inputFiles()})
    return check

def _ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except OSError:
        return 0

def _children(pid):
    return [int(x) for x in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()]

def killer(found):
    """SIGKILL an executor of this application while its Python workers mask: the masking kernel is the
    only Python these releases run in the executors, so the CPU time of the workers that an executor's
    pyspark.daemon forked growing between two looks means a masking task runs there."""
    before = {}
    while not found.get("stop"):
        pids = subprocess.run(["pgrep", "-f", f"CoarseGrainedExecutorBackend.*{sc.applicationId}"],
                              capture_output=True, text=True).stdout.split()
        for executor in map(int, pids):
            ticks = sum(_ticks(w) for d in _children(executor) for w in _children(d))
            if executor in before and ticks - before[executor] >= 3:
                os.kill(executor, signal.SIGKILL)
                found.update(killed=executor, python_ticks=ticks)
                return
            before[executor] = ticks
        time.sleep(0.1)

for name, doc in args["releases"]:
    spec = parse_spec(doc, base=args["base"], name=name)
    runs, found = [], {}
    thread = threading.Thread(target=killer, args=(found,), daemon=True) if name == "killed" else None
    if thread:
        thread.start()
    release(spec, spark, options=Options(bucket_rows=args["bucket_rows"]), check=plans(runs))
    found["stop"] = True
    out[name] = {**runs[0], **{k: v for k, v in found.items() if k != "stop"}}
print("RESULT " + json.dumps(out), flush=True)
'''


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield c
    finally:
        c.stop()


def _read(path: Path) -> pd.DataFrame:
    con = duckdb.connect()
    try:
        return con.execute(f"SELECT * FROM read_parquet('{path}/people/*.parquet') ORDER BY id").fetchdf()
    finally:
        con.close()


def _duckdb_release(folder: Path, source: dict) -> pd.DataFrame:
    release(parse_spec(_doc(source, "duck.duckdb"), base=folder))
    con = duckdb.connect(str(folder / "duck.duckdb"), read_only=True)
    try:
        return con.execute("SELECT * FROM people ORDER BY id").fetchdf()
    finally:
        con.close()


def test_releases_on_a_standalone_cluster_equal_the_duckdb_release(cluster, tmp_path):
    df = _source()
    data = tmp_path / "data"
    data.mkdir()
    write_parquet(df, data / "people.parquet")
    con = duckdb.connect(str(data / "people.duckdb"))
    con.register("frame", df)
    con.execute("CREATE TABLE people AS SELECT * FROM frame")
    con.close()
    parquet = {"files": [f"file://{data}/people.parquet"]}
    table = {"database": str(data / "people.duckdb"), "table": "people"}
    shared = tmp_path / "shared"
    releases = [["parquet", _doc(parquet, f"file://{shared}/parquet")],
                ["duckdb", _doc(table, f"file://{shared}/duckdb")],
                ["killed", _doc(parquet, f"file://{shared}/killed")]]
    driver = tmp_path / "driver"
    driver.mkdir()
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", TMPDIR=str(driver), SPARK_LOCAL_DIRS=str(driver),
               PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                           os.environ.get("PYTHONPATH", "")]))
    env.pop("PYSPARK_PYTHON", None)
    arguments = json.dumps({"master": cluster.url, "base": str(tmp_path), "bucket_rows": BUCKET_ROWS,
                            "releases": releases})
    done = subprocess.run([sys.executable, "-c", DRIVER, arguments], cwd=driver, env=env, capture_output=True,
                          text=True, timeout=1500)
    result = next((line for line in done.stdout.splitlines() if line.startswith("RESULT ")), None)
    assert done.returncode == 0 and result, done.stdout[-3000:] + done.stderr[-6000:] + cluster.logs()
    out = json.loads(result[len("RESULT "):])
    assert out["executor_python"] == [sys.executable]

    duck = {"parquet": _duckdb_release(data, {"files": ["people.parquet"]})}
    for name in ("parquet", "duckdb", "killed"):
        ours = _read(shared / name)
        want = duck["parquet"]
        assert list(ours.columns) == list(want.columns)
        for c in want.columns:
            np.testing.assert_array_equal(ours[c].to_numpy(), want[c].to_numpy(), err_msg=f"{name}: {c}")

    # an executor was killed while its Python workers masked, and the workers started another one
    assert out["killed"].get("killed"), out["killed"]
    launched = sum(p.read_text().count("Asked to launch executor") for p in cluster.folder.glob("worker*.log"))
    assert launched >= 3, cluster.logs()  # two at the start, one after the kill

    # the Parquet source is read where it lies, on the shared mount; the DuckDB table is no file at all
    assert out["parquet"]["files"] == [f"file://{data}/people.parquet"] and "FileScan parquet" in out["parquet"]["plan"]
    plan = out["duckdb"]["plan"]
    assert out["duckdb"]["files"] == [] and "FileScan" not in plan, plan
    assert "Scan ExistingRDD" in plan or "InMemoryTableScan" in plan, plan
    masked = df[["z", "u", "w"]].to_numpy().ravel()  # full-precision doubles: none is a released value
    leaks = {}
    for folder in (driver, shared, cluster.folder):
        leaks.update(raw_values_in(folder, masked, skip={data}))
    assert leaks == {}
