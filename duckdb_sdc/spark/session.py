"""A local SparkSession for the command line and the tests (on a cluster, pass your own session).

pyspark is an optional dependency (`pip install duckdb-sdc[spark]`); Spark needs a Java runtime
(Java 17 or newer). Both are checked here with a message that says how to get them.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from contextlib import contextmanager

from .._validate import SdcError

JAVA_HINT = ("Spark needs a Java runtime (17 or newer): install it (Debian/Ubuntu: "
             "`apt-get install default-jre-headless`) or set JAVA_HOME")


class SparkUnavailable(SdcError):
    """pyspark or Java is missing, or the session's Spark is older than MIN_SPARK: the message says what
    to install."""


def require_pyspark():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkUnavailable("the Spark engine needs pyspark: pip install 'duckdb-sdc[spark]'") from None
    return pyspark


MIN_SPARK = (4, 1)  # the kernels are scalar iterator Arrow UDFs (`arrow_udf`, new in Spark 4.1)


def check_spark_version(version: str) -> None:
    """Refuse a Spark older than MIN_SPARK (`version`: the session's `spark.version`)."""
    found = re.match(r"(\d+)\.(\d+)", version or "")
    if found is None or tuple(int(g) for g in found.groups()) < MIN_SPARK:
        raise SparkUnavailable(f"duckdb_sdc.spark: a release needs Spark {MIN_SPARK[0]}.{MIN_SPARK[1]} or newer "
                               f"(its masking runs in Arrow UDFs, arrow_udf); this session runs Spark {version!r}")


def java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.isfile(os.path.join(home, "bin", "java")):
        return True
    return shutil.which("java") is not None


def local_session(master: str = "local[2]", *, app_name: str = "duckdb-sdc", config: dict | None = None,
                  quiet: bool = False):
    """A SparkSession on `master` with the Python workers running this interpreter, the web UI and the
    console progress bar off, Arrow batches of 100,000 rows, and spark.io.encryption.enabled: Spark
    encrypts what it writes to local disks while a release runs (shuffle files, spills, cached blocks,
    all of which hold raw source values) with a key that lives only in the application's memory.
    quiet: Spark logs nothing (the command line prints duckdb_sdc's one-line errors, not executors'
    stack traces). `config` entries override these."""
    require_pyspark()
    if not java_available():
        raise SparkUnavailable(JAVA_HINT)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.io.encryption.enabled", "true")  # shuffle, spill and cached blocks on disk
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
               .config("spark.sql.session.timeZone", "UTC"))
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("OFF" if quiet else "ERROR")
    return spark


HUGE_METHOD = "spark.sql.codegen.hugeMethodLimit"
JIT_METHOD_BYTES = 8000  # HotSpot does not compile a method of more bytecode (-XX:+DontCompileHugeMethods)


@contextmanager
def jit_sized_codegen(spark):
    """Spark's whole-stage code generation limited to methods the JVM compiles, while the block runs.

    Whole-stage code generation puts a stage's expressions in one Java method; past 8000 bytes of
    bytecode HotSpot runs it interpreted. Measured on local[2] when the planner's boundary comparisons
    were CASE trees (they are a binary search now, `ordering.Order.ranked`, whose code grows with the
    logarithm of the boundaries): the bucket shuffle of 50M records with 4 strata of 13 buckets spent
    429 s of CPU against 9 s for 10M records with 3 buckets each (7 times slower per record). Large
    expressions remain (equal frequency's lookup tree, the strata CASE, a key without literals compared
    through Column trees): with `spark.sql.codegen.hugeMethodLimit` at 8000 (the value Spark's
    documentation suggests on HotSpot) Spark falls back, for that part of the plan only, to code
    generated per expression, in methods it splits. The session's previous value is restored
    afterwards; a lower value is kept."""
    conf = spark.conf
    before = conf.get(HUGE_METHOD, None)
    if before is not None and int(before) <= JIT_METHOD_BYTES:
        yield
        return
    conf.set(HUGE_METHOD, str(JIT_METHOD_BYTES))
    try:
        yield
    finally:
        if before is None:
            conf.unset(HUGE_METHOD)
        else:
            conf.set(HUGE_METHOD, before)


__all__ = ["HUGE_METHOD", "JAVA_HINT", "JIT_METHOD_BYTES", "MIN_SPARK", "check_spark_version", "jit_sized_codegen", "SparkUnavailable", "java_available", "local_session", "require_pyspark"]
