"""`evaluate`: the measures and k-anonymity of a Spark release (spark/report.py's rows), against its
source read as the engine reads it (`engine.read_source`, with the surrogate key of a spec without
one)."""

from __future__ import annotations

import pandas as pd
from pyspark.sql import DataFrame

from ..release.plan import ROW_KEY
from ..release.report import rows_frame
from ..release.spec import Spec
from .engine import duckdb_type, read_source, with_surrogate_key
from .preflight import locations
from .report import k_anonymity_rows, linked, measure_rows


def evaluate(spec: Spec, spark, *, released: DataFrame | None = None, original: DataFrame | None = None,
             k: float = 0.05) -> pd.DataFrame:
    """The measures and k-anonymity of a Spark release as a tidy frame (section, measure, column, value,
    note, direction, unit), like `release.report`. released: the release's table (default: read from
    the release folder, with each row's key from the private linkage file when the table has no key
    column, `linked`); original: the source (default: the spec's, with the surrogate key of a spec
    without one)."""
    where = locations(spec)
    if released is None:
        released = (spark.read.parquet(f"{where.output}/{spec.output.table}") if spec.key_released()
                    else linked(spark, spec, where))
    cached = []
    if original is None:
        original, source_columns = read_source(spark, spec, None, where.files)
        if spec.source.database is not None:  # a DuckDB table, held by Spark
            cached.append(original)
        types = dict(source_columns)
    else:
        source_columns = [(f.name, duckdb_type(f.dataType)) for f in original.schema.fields]
        types = dict(source_columns)
    if spec.source.key is None and ROW_KEY not in original.columns:
        original = with_surrogate_key(original, source_columns)
        cached.append(original)
    try:
        rows = measure_rows(spec, released, original, k) + k_anonymity_rows(spec, released, types)
    finally:
        for frame in cached:
            frame.unpersist()
    return rows_frame(rows)


__all__ = ["evaluate"]
