"""Shared by the Spark test modules: one local[2] session for the whole test run (Spark starts in
about 10 s), failing (not skipping) when Java is missing."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from duckdb_sdc.spark.session import JAVA_HINT, java_available


@pytest.fixture(scope="session")
def spark():
    if not java_available():
        pytest.fail(f"the Spark tests need Java: {JAVA_HINT}", pytrace=False)
    from duckdb_sdc.spark import local_session

    return local_session("local[2]", config={"spark.sql.shuffle.partitions": "4",
                                              "spark.default.parallelism": "2"})


def write_parquet(df: pd.DataFrame, path: Path) -> None:
    con = duckdb.connect()
    con.register("frame", df)
    con.execute(f"COPY (SELECT * FROM frame) TO '{path}' (FORMAT parquet)")
    con.close()


def read_release(folder: Path, table: str) -> pd.DataFrame:
    """A Spark release's table, read by a plain DuckDB connection, ordered by id."""
    con = duckdb.connect()
    out = con.execute(f"SELECT * FROM read_parquet('{folder / table}/*.parquet') ORDER BY id").fetchdf()
    con.close()
    return out


def previous_release(folder: Path, table: str) -> dict[str, str]:
    """A stand-in for a previous Spark release of `table` at `folder` (its two folders, a marker file
    in each), which a release may replace; returns its files (`tree`), to compare with afterwards."""
    for sub in (table, "release_manifest"):
        (folder / sub).mkdir(parents=True)
        (folder / sub / "previous.txt").write_text(f"the previous release's {sub}")
    return tree(folder)


def tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` (relative path -> content as text, or its size for a binary file)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            try:
                out[str(p.relative_to(folder))] = data.decode()
            except UnicodeDecodeError:
                out[str(p.relative_to(folder))] = f"{len(data)} bytes"
    return out


def read_manifest(folder: Path) -> pd.DataFrame:
    con = duckdb.connect()
    out = con.execute(f"SELECT * FROM read_parquet('{folder}/release_manifest/*.parquet')").fetchdf()
    con.close()
    return out


# ---------------------------------------------------------------------------------------------
# a standalone cluster on this machine, and processes the tests start and must stop


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def stop_group(proc, timeout: float = 20.0) -> None:
    """Stop a process started with start_new_session=True and everything it started (SIGTERM to its
    process group, SIGKILL after `timeout`)."""
    import os
    import signal
    import subprocess

    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group's other members (a JVM's children), if any
    except ProcessLookupError:
        pass
    proc.wait()


class Cluster:
    """A Spark standalone cluster on 127.0.0.1: a master and `workers` workers started with
    spark-class, each worker with a folder of its own (work dir and local dirs), one core and the
    venv's Python for its executors. Stopped (every JVM and its children) by `stop`."""

    def __init__(self, folder: Path, workers: int = 2, memory: str = "1g"):
        import json
        import os
        import subprocess
        import sys
        import time
        import urllib.request

        self.folder = folder
        self.port, self.ui = _free_port(), _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs = []
        env = dict(os.environ, SPARK_HOME=str(spark_home()), PYSPARK_PYTHON=sys.executable,
                   SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1")
        env.pop("PYSPARK_DRIVER_PYTHON", None)
        spark_class = str(spark_home() / "bin" / "spark-class")
        try:
            self._start([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                         "--port", str(self.port), "--webui-port", str(self.ui)], env, "master")
            for i in range(workers):
                work = folder / f"worker{i}"
                (work / "local").mkdir(parents=True)
                self._start([spark_class, "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                             "--cores", "1", "--memory", memory, "--work-dir", str(work / "work"),
                             "--webui-port", str(_free_port())],
                            dict(env, SPARK_LOCAL_DIRS=str(work / "local")), f"worker{i}")
            deadline = time.monotonic() + 180
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json", timeout=5) as r:
                        state = json.load(r)
                    if sum(w["state"] == "ALIVE" for w in state.get("workers", [])) == workers:
                        break
                except OSError:
                    pass
                if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                    raise RuntimeError("the standalone cluster did not start: " + self.logs())
                time.sleep(0.5)
        except BaseException:
            self.stop()
            raise

    def _start(self, cmd, env, name):
        import subprocess

        log = open(self.folder / f"{name}.log", "w")
        self.procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=self.folder,
                                           start_new_session=True))

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.folder.glob("*.log")))

    def executors(self) -> list[int]:
        """Process ids of the executor JVMs running now."""
        import subprocess

        found = []
        for proc in self.procs[1:]:  # the workers: their executors are in their process groups
            out = subprocess.run(["pgrep", "-g", str(proc.pid), "-f", "CoarseGrainedExecutorBackend"],
                                 capture_output=True, text=True).stdout
            found += [int(x) for x in out.split()]
        return found

    def stop(self) -> None:
        for proc in reversed(self.procs):
            stop_group(proc)


def raw_values_in(folder: Path, raw, skip=()) -> dict[str, int]:
    """{file: number of raw values found in it} for the files under `folder` (not under the paths of
    `skip`) holding one of the doubles `raw` as its 8 bytes (little-endian, at any offset) or as text
    (any decimal notation that reads back as that double)."""
    import re

    import numpy as np

    raw = np.asarray(raw, np.float64)
    raw = raw[np.isfinite(raw)]
    bits = np.unique(raw.view(np.int64))
    token = re.compile(rb"-?\d+\.\d+(?:[eE][-+]?\d+)?")
    skip = [Path(s).resolve() for s in skip]
    found = {}
    for path in sorted(Path(folder).rglob("*")):
        resolved = path.resolve()
        if not path.is_file() or path.is_symlink() or any(resolved.is_relative_to(s) for s in skip):
            continue
        try:
            data = path.read_bytes()
        except OSError:  # removed while we looked
            continue
        hits = 0
        for offset in range(8):
            usable = (len(data) - offset) // 8 * 8
            if usable > 0:
                words = np.frombuffer(data, dtype="<i8", count=usable // 8, offset=offset)
                hits += int(np.isin(words, bits).sum())
        numbers = [float(t) for t in token.findall(data)]
        if numbers:
            hits += int(np.isin(np.array(numbers).view(np.int64), bits).sum())
        if hits:
            found[str(path)] = hits
    return found
