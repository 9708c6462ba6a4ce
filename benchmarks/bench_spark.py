"""The Spark release against Spark's own sort of the same data, on local[2].

    .venv/bin/python benchmarks/bench_spark.py [--rows 10000000 50000000] [--driver-memory 6g]
                                               [--rounds 4] [--no-cold] [--event-log DIR] [--kept N]

With --event-log, Spark writes the warm session's event log into DIR and
`benchmarks/spark_stages.py DIR/<app>` prints where the time went, job by job and stage by stage
(docs/spark.md has the 10M profile).

Data: a Parquet file of (id BIGINT, region VARCHAR with 4 values, x DOUBLE lognormal, rounded to
cents so that ties occur), with --kept N also N DOUBLE columns c1..cN that the spec keeps as they are
(a wider table: every stage of a release moves whole records, as the sort does). Three calls are
timed on it:

* sort: `spark.read.parquet(src).orderBy("x").write.parquet(out)`, the baseline;
* the Spark release of a spec masking x with mdav_round (k = 5), with 4 strata (region), written as
  Parquet plus the manifest;
* the same with one stratum (the huge-stratum path: buckets of 1M records).

Every release is compared with a sort run in the same state of the JVM, because a JVM's first
minutes cost more than the calls after them (HotSpot is still compiling Spark's and the JDK's own
code: a JFR recording of the second release of a session at 10M rows showed 10 s of compilation):

* cold: each call in a fresh JVM of its own (a new Python process), as a `spark-submit` job runs
  it; ratio = release / the cold sort;
* warm: in one session, rounds of (sort, release with 4 strata, release with one stratum); the
  first round warms the JVM and is shown but not counted; ratio = release / the sort of its round.
  The verdict line gives, per release, the median and the largest ratio of the counted rounds.

Beside them, the DuckDB release of the same spec (a separate process), against the warm rounds'
median sort. Peak memory: the JVM (driver and executor in local mode) and the largest Python
worker, sampled from /proc every 0.2 s while the call runs; the DuckDB release's peak RSS is its
process's. The machine is shared: run it when it is quiet, and only after the tests pass.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
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
            "columns": {"id": {"rule": "keep", "identifying": False}, "region": "keep", "x": {"method": "mdav_round", "k": 5},
                        **{f"c{i + 1}": "keep" for i in range(kept)}}}


CASES = ("sort", "4 strata", "one stratum")


def call(spark, case: str, folder: Path, kept: int):
    """The timed call of a case on folder/src.parquet, as a function of no arguments."""
    if case == "sort":
        return lambda: (spark.read.parquet(str(folder / "src.parquet")).orderBy("x").write.mode("overwrite")
                        .parquet(str(folder / "sorted")))
    spec = parse_spec(spec_doc(f"spark_{case.replace(' ', '_')}", case == "4 strata", kept), base=folder)
    return lambda: spark_release(spec, spark, options=Options())


def cold(case: str, folder: Path, kept: int, config: dict) -> tuple[float, int, int]:
    """One call in a fresh JVM: this script again, in a new Python process (`--cold-case`)."""
    args = [sys.executable, __file__, "--cold-case", case, "--folder", str(folder), "--kept", str(kept),
            "--driver-memory", config["spark.driver.memory"]]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"bench_spark: the cold run of {case!r} failed:\n{out.stderr[-3000:]}")
    seconds, jvm, worker = out.stdout.split()[-3:]
    return float(seconds), int(jvm), int(worker)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 50_000_000])
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--folder", default=None, help="where the data go (default: a temporary folder)")
    parser.add_argument("--event-log", default=None, help="write the warm session's event log (uncompressed) here")
    parser.add_argument("--rounds", type=int, default=4,
                        help="warm rounds of (sort, release with 4 strata, with one stratum); the first is the warm-up")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold calls (a fresh JVM each)")
    parser.add_argument("--kept", type=int, default=0, help="DOUBLE columns the spec keeps as they are, besides x")
    parser.add_argument("--cold-case", choices=CASES, help=argparse.SUPPRESS)  # one call in this fresh process
    args = parser.parse_args()
    config = {"spark.driver.memory": args.driver_memory, "spark.sql.shuffle.partitions": "16"}
    if args.cold_case:
        spark = local_session("local[2]", config=config)
        seconds, jvm, worker = measured(call(spark, args.cold_case, Path(args.folder), args.kept))
        print(seconds, jvm, worker)
        return
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 (the first round is the warm-up)")
    if args.event_log:
        Path(args.event_log).mkdir(parents=True, exist_ok=True)
        config.update({"spark.eventLog.enabled": "true", "spark.eventLog.dir": str(Path(args.event_log).resolve()),
                       "spark.eventLog.compress": "false"})
    spark = local_session("local[2]", config=config)
    print(f"Spark {spark.version} on local[2], driver memory {args.driver_memory}; "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {3 + args.kept} columns")
    print("| rows | state | what | seconds | ratio | JVM peak GB | worker peak GB |\n"
          "|---:|---|---|---:|---:|---:|---:|")

    def line(n, state, what, t, base, jvm, worker):
        # (a sort runs no Python: a worker left idle by an earlier release is not its peak)
        worker_gb = f"{worker / 1e9:.2f}" if worker and what != "sort" else ""
        print(f"| {n / 1e6:g}M | {state} | {what} | {t:.1f} | {t / base:.2f} | {jvm / 1e9:.2f} | {worker_gb} |",
              flush=True)

    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        folder = Path(tmp)
        for n in args.rows:
            make_source(folder / "src.parquet", n, args.kept)
            verdict = []
            if not args.no_cold:
                got = {case: cold(case, folder, args.kept, config) for case in CASES}
                for case in CASES:
                    line(n, "cold", case, got[case][0], got["sort"][0], *got[case][1:])
                verdict += [f"cold {case} {got[case][0] / got['sort'][0]:.2f}x" for case in CASES[1:]]
            ratios = {case: [] for case in CASES[1:]}
            sorts = []
            for r in range(1, args.rounds + 1):
                state = "warm-up" if r == 1 else f"round {r}"
                got = {case: measured(call(spark, case, folder, args.kept)) for case in CASES}
                for case in CASES:
                    line(n, state, case, got[case][0], got["sort"][0], *got[case][1:])
                if r > 1:
                    sorts.append(got["sort"][0])
                    for case in CASES[1:]:
                        ratios[case].append(got[case][0] / got["sort"][0])
            verdict += [f"warm {case} median {statistics.median(ratios[case]):.2f}x, largest {max(ratios[case]):.2f}x"
                        for case in CASES[1:]]
            base = statistics.median(sorts)
            for strata, label in ((True, "4 strata"), (False, "one stratum")):
                code = DUCKDB_RELEASE.format(doc=spec_doc(f"duck_{label.replace(' ', '_')}.duckdb", strata, args.kept),
                                             base=str(folder))
                out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
                seconds, rss = out.stdout.split()[-2:]
                line(n, "DuckDB", f"release, {label} (ratio to the median warm sort)", float(seconds), base, int(rss), 0)
            print(f"{n / 1e6:g}M rows: " + "; ".join(verdict) + f" (load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"(DuckDB rows: the peak column is the DuckDB process's RSS) driver peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")


if __name__ == "__main__":
    main()
