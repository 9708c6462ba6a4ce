"""What runs in the Spark executors' Python workers: a scalar iterator Arrow UDF (`StageKernel.masked`)
over the records of one stage, repartitioned by bucket id and sorted by bucket id alone within each
partition (so that each bucket's records arrive together); each bucket is then put in its own order
here: key order for a whole stratum, (value, key) order (`positional.bucket_order`) for a piece of a
huge stratum.

Only the columns the masking reads cross to Python (`StageKernel.arguments`: the bucket id, the key,
the sort value, the rules' columns) and only the masked columns come back, as one struct per record,
aligned with the records as they came: Spark keeps the other columns of each record in the JVM and
joins the struct back to them (the contract of a scalar UDF: as many results as records, in order,
which an iterator UDF may deliver later, here a bucket at a time). On local[2] this costs 1.3 s per
10M records of (id, region, x) against 5.5 s for mapInArrow, which moves every column both ways.

A bucket is a whole stratum (masked by `stratum.mask_stratum`, the numpy layer, on its values in key
order) or a piece of a huge stratum (masked by its `positional` plan). Records whose value is NULL
carry a negative bucket id and pass through unchanged (NULL stays NULL in place). Only one bucket's
records are held in the Python worker at a time (the JVM holds the rest of their columns meanwhile,
spilling to disk when short of memory).

With an accumulator (`StageKernel.attraction`, see `Reports`), every bucket also reports, per rule whose
sets of attraction the release checks, the facts `attraction.whole_fact` / `piece_fact` of the values
it released, from which the driver finds the smallest set of attraction without reading the masked
table again.

With round keys (`StageKernel.cipher`, on the release's last masking stage when its key is an
integer), every record also gets the Speck64/128 cipher text of its key (`cipher.encrypt`), the
secret row order the release is written in (`engine.shuffled`): 0.03 s per million keys here, where
the md5 it replaces cost about 2.4 s per 10M records on local[2].

The box pass that only counts each stratum's boxes (`count_boxes`) runs as mapInArrow instead: it
returns one row per bucket, not one per record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyspark.accumulators import AccumulatorParam

from .._validate import SdcError
from ..kernels.attraction import piece_fact, whole_fact
from ..kernels.cipher import encrypt
from ..kernels.positional import Bucket, StratumPlan, bucket_order
from .ordering import B, HASH, V
from .stratum import Boxes, StratumCall, mask_stratum

WHOLE, SPLIT = "whole", "split"


@dataclass(frozen=True)
class BucketTask:
    mode: str  # WHOLE or SPLIT
    stratum: int
    plan: StratumPlan | None = None  # SPLIT
    bucket: Bucket | None = None  # SPLIT


@dataclass(frozen=True)
class Part:
    """One masking rule of a stage."""
    call: StratumCall
    columns: tuple[str, ...]  # the source columns the rule masks
    where: str  # the spec's rule, for messages (and the key of its facts)
    measured: bool = False  # report the facts of its sets of attraction (a rule the release checks)


CONFLICT = "conflict"


class Reports(AccumulatorParam):
    """A pyspark accumulator's merge of the buckets' reports: {(rule, bucket label): fact}. A task that
    runs again (a retry, a recomputed stage) reports the same facts under the same keys, so merging
    it twice changes nothing; two different facts for one key (a method that is not deterministic,
    run twice) become CONFLICT, which the driver refuses to decide on."""

    def zero(self, value):
        return {}

    def addInPlace(self, value1, value2):
        for key, fact in value2.items():
            value1[key] = fact if value1.get(key, fact) == fact else CONFLICT
        return value1


@dataclass(frozen=True)
class StageKernel:
    """Everything a worker needs for one stage (pickled into the task): one shuffle that masks one or
    more rules. Whole-stratum buckets mask every part; a split bucket (one part only) masks its piece.
    `arguments`: the names of the columns the UDF gets, in order (the bucket id B, the key, for a split
    stage `value` (V, or the rule's column itself), the parts' columns; each name once). `schema` is
    the Arrow schema of what a bucket returns: the parts' columns as DOUBLE (for a box rule, the only
    part: each column's lower and upper bound, then the box id); with `count_boxes`, (stratum, boxes)."""
    parts: tuple[Part, ...]
    key: str
    tasks: dict  # bucket label -> BucketTask
    schema: pa.Schema
    arguments: tuple[str, ...] = ()
    stratum_labels: tuple = ()  # per stratum index, how messages name it
    box_names: tuple[tuple[str, str], ...] = ()  # boxes: (lower, upper) column of each rule column
    box_column: str | None = None  # boxes: the box id column
    box_offsets: dict | None = None  # boxes: stratum index -> boxes in the strata before it
    count_boxes: bool = False  # emit (stratum, number of boxes) per bucket instead of records
    attraction: object = None  # a pyspark Accumulator (`Reports`) for the parts' facts, or None
    value: str = V  # the column with a split bucket's sort values (V, or the rule's DOUBLE column itself)
    cipher: tuple | None = None  # round keys of `cipher`: each record also gets its key's cipher text as field
    # HASH of `schema` (NULL for a NULL key)

    def masked(self, arrays: Iterator[Tuple[pa.Array, ...]]) -> Iterator[pa.Array]:
        """The scalar iterator Arrow UDF: per bucket, the masked columns of its records as a
        StructArray, in the order the records came."""
        names = list(self.arguments)
        batches = (pa.RecordBatch.from_arrays(list(a), names=names) for a in arrays)
        for bucket_id, batch in _buckets(batches):
            yield pa.StructArray.from_arrays(self._bucket(bucket_id, batch), fields=list(self.schema))

    def __call__(self, batches):
        """mapInArrow, for `count_boxes`: one row (stratum, boxes) per bucket."""
        if not self.count_boxes:
            raise RuntimeError("duckdb_sdc.spark: StageKernel as mapInArrow only counts boxes; masking is `masked`")
        for bucket_id, batch in _buckets(batches):
            yield pa.RecordBatch.from_arrays(self._bucket(bucket_id, batch), schema=self.schema)

    # -- one bucket -----------------------------------------------------------------------------

    def _bucket(self, bucket_id: int, batch: pa.RecordBatch) -> list[pa.Array]:
        """The bucket's results, one array per field of `schema`."""
        task = self.tasks.get(bucket_id)
        out = {}
        order = None
        if task is not None:
            if task.mode == SPLIT:
                order = bucket_order(batch.column(self.value).to_numpy(zero_copy_only=False),
                                     key_order(batch.column(self.key)), task.plan.tie_split)
            else:
                order = key_order(batch.column(self.key))
        for part in self.parts:
            try:
                masked = self._mask(part, task, batch, order)
            except SdcError as e:
                label = self.stratum_labels[task.stratum] if len(self.stratum_labels) > 1 else None
                raise SdcError(f"{part.where}: " + (f"stratum {label}: " if label else "") + str(e)) from None
            if self.attraction is not None and part.measured and task is not None:
                self.attraction.add({(part.where, bucket_id): _fact(task, masked)})
            if self.count_boxes:
                boxes = 0 if masked is None else int(np.unique(masked.box[masked.box >= 0]).shape[0])
                return [pa.array([-1 if task is None else task.stratum], pa.int64()), pa.array([boxes], pa.int64())]
            if self.box_column is not None:
                self._boxes(out, part, batch.num_rows, masked, order, None if task is None else task.stratum)
            else:
                self._values(out, part, batch, masked, order)
        if self.cipher is not None:
            keys = batch.column(self.key).cast(pa.int64())
            out[HASH] = pa.array(encrypt(keys.fill_null(0).to_numpy(zero_copy_only=False), self.cipher),
                                       pa.int64(), mask=keys.is_null().to_numpy(zero_copy_only=False))
        return [out[f.name] for f in self.schema]

    def _mask(self, part: Part, task: BucketTask | None, batch: pa.RecordBatch, order):
        """Masked values (or Boxes) of one part, in the bucket's order `order` (key order for a whole
        stratum, (value, key) order for a piece of a huge one)."""
        if task is None:  # NULL values: unchanged
            return None
        if task.mode == WHOLE:
            values = np.column_stack([_floats(batch.column(c)) for c in part.columns])[order]
            return mask_stratum(part.call, values if len(part.columns) > 1 else values[:, 0], task.stratum)
        v = batch.column(self.value).to_numpy(zero_copy_only=False)[order]
        keys = batch.column(self.key).to_numpy(zero_copy_only=False)[order]
        return task.plan.mask(task.bucket, v, keys, _floats(batch.column(part.columns[0]))[order])

    def _values(self, out: dict, part: Part, batch: pa.RecordBatch, masked, order) -> None:
        n = batch.num_rows
        if masked is None:  # NULL values stay NULL in place; a group's record is NULL when one value is
            matrix = np.column_stack([_floats(batch.column(c)) for c in part.columns]) if n else \
                np.empty((0, len(part.columns)))
            if len(part.columns) > 1:
                matrix[np.isnan(matrix).any(axis=1)] = np.nan
        else:
            matrix = masked if masked.ndim == 2 else masked[:, None]
            if order is not None:
                back = np.empty_like(matrix)
                back[order] = matrix
                matrix = back
        for j, c in enumerate(part.columns):
            col = np.ascontiguousarray(matrix[:, j])
            out[c] = pa.array(col, pa.float64(), mask=np.isnan(col))

    def _boxes(self, out: dict, part: Part, n: int, masked: Boxes | None, order, stratum) -> None:
        p = len(part.columns)
        box = np.full(n, -1, np.int64)
        lower = np.full((n, p), np.nan)
        upper = np.full((n, p), np.nan)
        if masked is not None:
            box[order] = masked.box
            lower[order] = masked.lower
            upper[order] = masked.upper
        for j, (lo_name, hi_name) in enumerate(self.box_names):
            out[lo_name] = pa.array(lower[:, j], pa.float64(), mask=np.isnan(lower[:, j]))
            out[hi_name] = pa.array(upper[:, j], pa.float64(), mask=np.isnan(upper[:, j]))
        # box ids as the DuckDB release numbers them: 1..G over the release, dense in the order
        # (stratum, the method's box id), i.e. the stratum's dense rank plus the boxes of the strata before
        has = box >= 0
        ids = np.zeros(n, np.int64)
        if has.any():
            _, dense = np.unique(box[has], return_inverse=True)
            ids[has] = dense + 1 + self.box_offsets.get(stratum, 0)
        out[self.box_column] = pa.array(ids, pa.int64(), mask=~has)


def _buckets(batches):
    """(bucket id, its records as one RecordBatch) for batches whose records come grouped by bucket id.
    A bucket whose records come in two pieces (the partition was not sorted by bucket id) is refused:
    masked piece by piece it would get groups of fewer than k records."""
    pending: list[pa.RecordBatch] = []
    current = None
    done: set[int] = set()
    for batch in batches:
        if batch.num_rows == 0:
            continue
        ids = batch.column(B).to_numpy(zero_copy_only=False)
        starts = np.concatenate(([0], np.flatnonzero(np.diff(ids)) + 1, [batch.num_rows]))
        for a, b in zip(starts[:-1], starts[1:]):
            bucket_id = int(ids[a])
            if current is not None and bucket_id != current:
                yield current, _one(pending)
                pending = []
                done.add(current)
                if bucket_id in done:
                    raise RuntimeError(f"duckdb_sdc.spark: the records of bucket {bucket_id} did not come together "
                                       "(the partition was not sorted by bucket id); nothing is released")
            current = bucket_id
            pending.append(batch.slice(int(a), int(b - a)))
    if pending:
        yield current, _one(pending)


def _one(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


def _fact(task: BucketTask, masked):
    """The bucket's facts about its released values (before rounding): masked in key order for a whole
    stratum (values, rows of a group, or Boxes: their ids within the stratum), in the bucket's order
    for a piece of a split one."""
    if isinstance(masked, Boxes):
        released = np.where(masked.box >= 0, masked.box, np.nan)
        return whole_fact(task.stratum, released)
    if task.mode == WHOLE:
        return whole_fact(task.stratum, masked)
    return piece_fact(task.stratum, task.bucket.offset, masked)


def key_order(keys: pa.Array) -> np.ndarray:
    """The permutation that sorts `keys` ascending: what `positional.bucket_order` takes to put records
    of equal value in key order. Integer keys without NULLs: numpy's stable sort (a timsort, which
    runs of ascending keys make cheap: 1M keys in 8 ascending runs, as records read in key order
    arrive from the shuffle, 0.02 s against Arrow's 0.05 s; in random order 0.16 s against 0.24 s);
    any other key type: Arrow's sort."""
    if pa.types.is_integer(keys.type) and keys.null_count == 0:
        return np.argsort(keys.to_numpy(), kind="stable")
    return pc.sort_indices(keys).to_numpy(zero_copy_only=False)


def _floats(arr) -> np.ndarray:
    arr = arr.cast(pa.float64())
    return np.asarray(arr.fill_null(np.nan).to_numpy(zero_copy_only=False), dtype=np.float64)


__all__ = ["BucketTask", "CONFLICT", "Part", "Reports", "SPLIT", "StageKernel", "WHOLE", "key_order"]
