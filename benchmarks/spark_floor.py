"""What a Spark release costs besides the masking: the same release with the Python kernel replaced by
a no-op in the JVM, against the real release and Spark's own sort, in one session on local[2].

    .venv/bin/python benchmarks/spark_floor.py [--rows 50000000] [--repeat 2] [--folder DIR]

The no-op release does everything else a release does: the strata and planning passes, the bucket
shuffle and Spark's sort by bucket id, the secret-order shuffle and sort, the key check and the
Parquet write. Its kernel returns each masked column unchanged (plus 0 * rand(), so that Spark's
optimizer treats it as nondeterministic as it treats the real UDF, and keeps the sort by bucket id),
and for an integer key the key's xxhash64 in place of its cipher text (the real kernel's
Speck64/128); the check of the sets of attraction, which needs the kernel's reports, is skipped.
Its output is not a release and is deleted. The ratio of the no-op release to the sort is what the
release's structure (two shuffles and the planning passes against the sort's one shuffle) costs
before any record is masked. Data and spec as in `bench_spark.py`; ratio = time / the faster of the
two baseline runs (one before, one after the releases of a size).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_spark import make_source, measured, spec_doc  # noqa: E402

from duckdb_sdc.release import parse_spec  # noqa: E402
from duckdb_sdc.spark import Options, local_session  # noqa: E402
from duckdb_sdc.spark import engine  # noqa: E402


class _NoKernel:
    """pyspark.sql.functions as `engine` sees it, with arrow_udf giving a no-op in the JVM."""

    def __getattr__(self, name):
        return getattr(F, name)

    @staticmethod
    def arrow_udf(_kernel, struct):
        class Udf:
            def asNondeterministic(self):
                return self

            def __call__(self, *arguments):  # (bucket id, key, ...): the key's xxhash64 stands in for its cipher text
                return F.struct(*[(F.xxhash64(arguments[1]) if f.name == engine.HASH else F.col(f.name) + F.rand() * 0)
                                  .cast(f.dataType).alias(f.name) for f in struct.fields])

        return Udf()


@contextmanager
def no_kernel():
    saved = engine.F, engine.measured_sets
    engine.F, engine.measured_sets = _NoKernel(), lambda *args, **kwargs: None
    try:
        yield
    finally:
        engine.F, engine.measured_sets = saved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[50_000_000])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--folder", default=".", help="where the data go (a folder spark_floor/ in it)")
    args = parser.parse_args()
    spark = local_session("local[2]", config={"spark.driver.memory": "6g", "spark.sql.shuffle.partitions": "16"})
    folder = Path(args.folder) / "spark_floor"
    folder.mkdir(parents=True, exist_ok=True)
    print(f"Spark {spark.version} on local[2]; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print("| rows | what | seconds | ratio to the faster baseline | JVM peak GB |\n|---:|---|---:|---:|---:|")
    try:
        for n in args.rows:
            src = folder / "src.parquet"
            make_source(src, n)

            def timed(fn) -> tuple[float, int]:
                """(seconds, the JVM's peak RSS) of fn (`bench_spark.measured`); its output deleted after."""
                seconds, jvm, _ = measured(fn)
                shutil.rmtree(folder / "out", ignore_errors=True)
                return seconds, jvm

            def baseline():
                spark.read.parquet(str(src)).orderBy("x").write.parquet(str(folder / "out"))

            rows = [("Spark orderBy(x).write.parquet", *timed(baseline))]
            for strata, label in ((True, "4 strata"), (False, "one stratum")):
                spec = parse_spec(spec_doc("out", strata), base=folder)
                for run in range(args.repeat):
                    with no_kernel():
                        rows.append((f"release with a no-op kernel, {label}, run {run + 1}",
                                     *timed(lambda: engine.release(spec, spark, options=Options()))))
                    rows.append((f"release, {label}, run {run + 1}",
                                 *timed(lambda: engine.release(spec, spark, options=Options()))))
            rows.append((f"Spark orderBy(x).write.parquet, again (load {os.getloadavg()[0]:.1f})", *timed(baseline)))
            fastest = min(rows[0][1], rows[-1][1])
            for what, t, jvm in rows:
                print(f"| {n / 1e6:g}M | {what} | {t:.1f} | {t / fastest:.2f} | {jvm / 1e9:.2f} |", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
