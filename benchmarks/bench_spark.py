"""The Spark release against Spark's own sort of the same data, on local[2].

    .venv/bin/python benchmarks/bench_spark.py [--rows 10000000 50000000] [--driver-memory 6g]
                                               [--event-log DIR] [--repeat N] [--kept N]

With --event-log, Spark writes its event log into DIR and `benchmarks/spark_stages.py DIR/<app>`
prints where the time went, job by job and stage by stage (docs/spark.md has the 10M profile).

Data: a Parquet file of (id BIGINT, region VARCHAR with 4 values, x DOUBLE lognormal, rounded to
cents so that ties occur), with --kept N also N DOUBLE columns c1..cN that the spec keeps as they are
(a wider table: every stage of a release moves whole records, as the sort does). For every size, in
the same Spark session:

* baseline: `spark.read.parquet(src).orderBy("x").write.parquet(out)`;
* the Spark release of a spec masking x with mdav_round (k = 5), with 4 strata (region) and with one
  stratum (the huge-stratum path: buckets of 1M records), written as Parquet plus the manifest;
* beside it, the DuckDB release of the same spec (a separate process).

Time is the wall clock of the call; ratio = time / the first baseline. The baseline runs again after
the releases of each size; the second ratio is to the faster of the two runs (the first one also pays
the JVM's warm-up: on a quiet machine 26.2 s against 10.1 s at 10M). If the two differ much on a
shared machine, its load changed under the measurement.
Peak memory: the JVM (driver and executor in local mode) and the largest Python worker, sampled from
/proc every 0.2 s while the call runs; the DuckDB release's peak RSS is its process's. The machine is
shared: run it when it is quiet, and only after the tests pass.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import duckdb

from duckdb_sdc.release import parse_spec
from duckdb_sdc.spark import Options, local_session
from duckdb_sdc.spark import release as spark_release


def make_source(path: Path, n: int, kept: int = 0) -> None:
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    extra = "".join(f", round(random() * 1000, 2) AS c{i + 1}" for i in range(kept))
    con.execute(f"""COPY (SELECT i AS id, ['north', 'south', 'east', 'west'][1 + (hash(i) % 4)::INT] AS region,
                         round(exp(9 + 1.2 * sqrt(-2 * ln(random())) * cos(2 * pi() * random())), 2) AS x{extra}
                  FROM range({n}) r(i)) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)""")
    con.close()


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    """Every descendant (a child is listed under the thread that started it)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = []
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    kids += [int(c) for c in f.read().split()]
        except OSError:
            pass
        out += kids
        todo += kids
    return out


class PeakMemory:
    """Samples the RSS of the JVM (a child of this process) and of its Python workers."""

    def __init__(self):
        self.jvm = self.worker = 0
        self._stop = threading.Event()

    def __enter__(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            for pid in _children(os.getpid()):
                cmd = _cmd(pid)
                if "java" in cmd.split(" ")[0]:
                    self.jvm = max(self.jvm, _rss(pid))
                elif "pyspark" in cmd or "python" in cmd.split(" ")[0]:
                    self.worker = max(self.worker, _rss(pid))
            time.sleep(0.2)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _cmd(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def measured(fn):
    with PeakMemory() as peak:
        start = time.perf_counter()
        fn()
        seconds = time.perf_counter() - start
    return seconds, peak.jvm, peak.worker


DUCKDB_RELEASE = """
import resource, sys, time
from duckdb_sdc.release import parse_spec, release
spec = parse_spec({doc!r}, base={base!r})
t = time.perf_counter(); release(spec); s = time.perf_counter() - t
print(s, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def spec_doc(out: str, strata: bool, kept: int = 0) -> dict:
    return {"source": {"files": "src.parquet", "key": "id"},
            "output": {"database": out, "table": "t"},
            "masking": {"strata": ["region"] if strata else []},
            "columns": {"id": "keep", "region": "keep", "x": {"method": "mdav_round", "k": 5},
                        **{f"c{i + 1}": "keep" for i in range(kept)}}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 50_000_000])
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--folder", default=None, help="where the data go (default: a temporary folder)")
    parser.add_argument("--event-log", default=None, help="write Spark's event log (uncompressed) here")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each Spark release this many times (the first release of a session also pays "
                             "the JVM's and Spark's warm-up, as the first baseline does)")
    parser.add_argument("--kept", type=int, default=0, help="DOUBLE columns the spec keeps as they are, besides x")
    args = parser.parse_args()
    config = {"spark.driver.memory": args.driver_memory, "spark.sql.shuffle.partitions": "16"}
    if args.event_log:
        Path(args.event_log).mkdir(parents=True, exist_ok=True)
        config.update({"spark.eventLog.enabled": "true", "spark.eventLog.dir": str(Path(args.event_log).resolve()),
                       "spark.eventLog.compress": "false"})
    spark = local_session("local[2]", config=config)
    print(f"Spark {spark.version} on local[2], driver memory {args.driver_memory}; "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {3 + args.kept} columns")
    print("| rows | what | seconds | ratio | ratio to the faster baseline | JVM peak GB | worker peak GB |\n"
          "|---:|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        folder = Path(tmp)
        for n in args.rows:
            src = folder / "src.parquet"
            make_source(src, n, args.kept)

            def baseline():
                spark.read.parquet(str(src)).orderBy("x").write.mode("overwrite").parquet(str(folder / "sorted"))

            base, jvm, worker = measured(baseline)
            rows = [("Spark orderBy(x).write.parquet (baseline)", base, jvm, worker)]
            for strata, label in ((True, "4 strata"), (False, "one stratum")):
                spec = parse_spec(spec_doc(f"spark_{label.replace(' ', '_')}", strata, args.kept), base=folder)
                for run in range(args.repeat):
                    t, jvm, worker = measured(lambda: spark_release(spec, spark, options=Options()))
                    again = f", run {run + 1}" if args.repeat > 1 else ""
                    rows.append((f"Spark release, mdav_round k=5, {label}{again}", t, jvm, worker))
                code = DUCKDB_RELEASE.format(doc=spec_doc(f"duck_{label.replace(' ', '_')}.duckdb", strata, args.kept),
                                             base=str(folder))
                out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
                seconds, rss = out.stdout.split()[-2:]
                rows.append((f"DuckDB release, same spec, {label}", float(seconds), int(rss), 0))
            # the baseline once more: on a shared machine a different figure means the load changed
            # during the size's runs, and the ratios above are not to be trusted
            again, jvm, worker = measured(baseline)
            rows.append((f"the baseline again (load {os.getloadavg()[0]:.1f})", again, jvm, worker))
            fastest = min(base, again)  # the first run also pays the JVM's warm-up
            for what, t, jvm, worker in rows:
                worker_gb = f"{worker / 1e9:.2f}" if worker else ""
                print(f"| {n / 1e6:g}M | {what} | {t:.1f} | {t / base:.2f} | {t / fastest:.2f} | {jvm / 1e9:.2f} | "
                      f"{worker_gb} |", flush=True)
    print(f"(DuckDB rows: the peak column is the DuckDB process's RSS) driver peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")


if __name__ == "__main__":
    main()
