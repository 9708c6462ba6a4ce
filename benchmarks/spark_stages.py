"""Where a Spark run's time went, from its event log: one line per job and per stage.

    python benchmarks/bench_spark.py --rows 10000000 --event-log /tmp/spark-events
    python benchmarks/spark_stages.py /tmp/spark-events/<application id>

Per job: when it started (seconds after the first job), its wall time and its call site (the line of
duckdb_sdc that ran the action, e.g. `collect at .../planner.py:...`). Per stage: wall time, tasks,
summed task run time and JVM CPU time (run time well above CPU time: waiting, for a Python worker or
for a busy machine), GC, bytes spilled to disk, shuffle bytes and records written and read, input and
output records. Gaps between jobs are the driver's own work. The log must be uncompressed
(`--event-log` sets spark.eventLog.compress = false).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path


def summary(path: Path) -> list[str]:
    files = sorted(path.glob("events_*")) if path.is_dir() else [path]
    jobs, stages, tasks = {}, {}, {}
    for file in files:
        with open(file) as f:
            for line in f:
                e = json.loads(line)
                kind = e["Event"]
                if kind == "SparkListenerJobStart":
                    infos = e["Stage Infos"]
                    jobs[e["Job ID"]] = {"start": e["Submission Time"], "stages": [s["Stage ID"] for s in infos],
                                         "name": infos[-1]["Stage Name"] if infos else ""}
                elif kind == "SparkListenerJobEnd":
                    jobs[e["Job ID"]]["end"] = e["Completion Time"]
                elif kind == "SparkListenerStageCompleted":
                    s = e["Stage Info"]
                    if "Submission Time" in s and "Completion Time" in s:
                        stages[s["Stage ID"]] = (s["Completion Time"] - s["Submission Time"], s["Number of Tasks"])
                elif kind == "SparkListenerTaskEnd":
                    m = e.get("Task Metrics") or {}
                    c = tasks.setdefault(e["Stage ID"], Counter())
                    write = m.get("Shuffle Write Metrics") or {}
                    read = m.get("Shuffle Read Metrics") or {}
                    c["run"] += m.get("Executor Run Time", 0) / 1e3
                    c["cpu"] += m.get("Executor CPU Time", 0) / 1e9
                    c["gc"] += m.get("JVM GC Time", 0) / 1e3
                    c["spill"] += m.get("Disk Bytes Spilled", 0)
                    c["shuffle_w"] += write.get("Shuffle Bytes Written", 0)
                    c["shuffle_w_rows"] += write.get("Shuffle Records Written", 0)
                    c["shuffle_r"] += read.get("Remote Bytes Read", 0) + read.get("Local Bytes Read", 0)
                    c["in"] += (m.get("Input Metrics") or {}).get("Records Read", 0)
                    c["out"] += (m.get("Output Metrics") or {}).get("Records Written", 0)
    if not jobs:
        return ["no jobs in the event log"]
    t0 = min(j["start"] for j in jobs.values())
    out = []
    for job_id, j in sorted(jobs.items()):
        wall = (j.get("end", j["start"]) - j["start"]) / 1e3
        out.append(f"job {job_id} at {(j['start'] - t0) / 1e3:.1f} s: {wall:.1f} s, {j['name']}")
        for s in j["stages"]:
            if s not in stages:
                continue  # skipped: its shuffle output was reused
            c = tasks.get(s, Counter())
            out.append(f"  stage {s}: {stages[s][0] / 1e3:.1f} s, {stages[s][1]} tasks, run {c['run']:.1f} s, "
                       f"CPU {c['cpu']:.1f} s, GC {c['gc']:.1f} s, spill {c['spill'] / 1e6:.0f} MB, "
                       f"shuffle write {c['shuffle_w'] / 1e6:.0f} MB ({c['shuffle_w_rows'] / 1e6:.1f}M rows), "
                       f"read {c['shuffle_r'] / 1e6:.0f} MB, in {c['in'] / 1e6:.1f}M, out {c['out'] / 1e6:.1f}M rows")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log", type=Path, help="an application's event log (a file, or its folder)")
    print("\n".join(summary(parser.parse_args().log)))


if __name__ == "__main__":
    main()
