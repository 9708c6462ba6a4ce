"""The smallest sets of attraction of a release, measured in the masking kernel (no Spark in here).

The release refuses a deterministic rule whose smallest set of records of a stratum sharing a released
value is below 2 (`release.safeguards.smallest_set_step`) and states that size as the measured k. The
Spark engine used to measure it by reading the masked table again; instead each bucket of the
masking stage reports a few numbers about the values it released (`whole_fact`, `piece_fact`, before
rounding, NULLs excluded), and the driver combines them per stratum (`smallest_per_stratum`):

* a bucket that holds a whole stratum sees every released value of the stratum: its smallest class
  (`class_sizes`: records sharing a value, a row of values for a group rule, a box id for a box rule)
  is exact;
* a piece of a split stratum (individual ranking, univariate MDAV) reports its smallest and largest
  released value with the number of records of each, and the smallest class strictly between them:
  exact within the piece whatever the order of its values. The driver walks a stratum's pieces in
  their order (global offset), adding up a class that runs over several pieces (the largest value of
  one piece, equal to the smallest of the next, possibly through pieces of that one value only).

The walk is exact when the pieces' value ranges are ordered like the pieces (the largest value of a
piece at most the smallest of the next: so it is when the released values are non-decreasing in the
bucket order, as ranking's and MDAV's means of consecutive groups of the sorted values are). Where a
piece starts below the end of the one before, a value could also sit inside a neighbour's range,
and the walk's figure is a lower bound of the true smallest set (each figure it takes is a sum of
counts of one value over some of the pieces that hold it, and every value's count in every piece is
below some figure): the result says it is not exact, and it never exceeds the truth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_NAN_BITS = np.float64(np.nan).view(np.int64)


def class_sizes(released: np.ndarray) -> np.ndarray:
    """The sizes of the classes of records sharing a released value (released: 1-D) or row of values
    (2-D: one row per record), in no particular order. Records whose (first) value is NaN (NULL) are
    not counted; as in Spark's GROUP BY, -0.0 equals 0.0, and in the other columns of a row NaN equals
    NaN."""
    x = np.asarray(released, np.float64)
    if x.ndim == 1:
        x = x[~np.isnan(x)]
        return np.unique(x, return_counts=True)[1] if x.shape[0] else np.zeros(0, np.int64)
    x = x[~np.isnan(x[:, 0])]
    if x.shape[0] == 0:
        return np.zeros(0, np.int64)
    bits = np.ascontiguousarray(x + 0.0).view(np.int64)  # + 0.0: -0.0 becomes 0.0
    bits = np.where(np.isnan(x), _NAN_BITS, bits)
    return np.unique(bits, axis=0, return_counts=True)[1]


@dataclass(frozen=True)
class WholeFact:
    """A whole stratum's smallest class (None: no released value)."""
    stratum: int
    smallest: int | None


@dataclass(frozen=True)
class PieceFact:
    """A piece of a split stratum, from global position `offset`: its smallest released value `first`
    shared by `first_n` of its records, its largest `last` by `last_n` (equal to first and first_n
    when it released one value), and its smallest class strictly between them (None: none). first is
    None when the piece released no value."""
    stratum: int
    offset: int
    first: float | None = None
    first_n: int = 0
    last: float | None = None
    last_n: int = 0
    inside: int | None = None


def whole_fact(stratum: int, released: np.ndarray) -> WholeFact:
    sizes = class_sizes(released)
    return WholeFact(stratum, int(sizes.min()) if sizes.shape[0] else None)


def piece_fact(stratum: int, offset: int, released: np.ndarray) -> PieceFact:
    """released: the piece's released values (1-D, NaN for NULL), in the bucket order. Non-decreasing
    values (the usual case) are counted by their runs; others are sorted first."""
    x = np.asarray(released, np.float64)
    x = x[~np.isnan(x)]
    if x.shape[0] == 0:
        return PieceFact(stratum, offset)
    if np.all(x[1:] >= x[:-1]):
        starts = np.concatenate(([0], np.flatnonzero(x[1:] != x[:-1]) + 1))
        values = x[starts]
        counts = np.diff(np.concatenate((starts, [x.shape[0]])))
    else:
        values, counts = np.unique(x, return_counts=True)
    inside = int(counts[1:-1].min()) if counts.shape[0] > 2 else None
    return PieceFact(stratum, offset, float(values[0]), int(counts[0]), float(values[-1]), int(counts[-1]), inside)


def merge_pieces(pieces: list[PieceFact]) -> tuple[int | None, bool]:
    """(smallest set of one split stratum, exact?) from its pieces: see the module docstring."""
    best: int | None = None
    exact = True
    open_value, open_n = None, 0
    previous_last = None

    def take(n):
        nonlocal best
        if n is not None and (best is None or n < best):
            best = n

    for p in sorted(pieces, key=lambda p: p.offset):
        if p.first is None:
            continue
        if previous_last is not None and p.first < previous_last:
            exact = False
        previous_last = p.last
        if open_value is not None and p.first == open_value:
            open_n += p.first_n
        else:
            take(open_n if open_value is not None else None)
            open_value, open_n = p.first, p.first_n
        if p.last != p.first:
            take(open_n)
            take(p.inside)
            open_value, open_n = p.last, p.last_n
    take(open_n if open_value is not None else None)
    return best, exact


def smallest_per_stratum(facts) -> dict[int, tuple[int | None, bool]]:
    """Per stratum index, (its smallest set, exact?), from the WholeFact / PieceFact of its buckets."""
    pieces: dict[int, list[PieceFact]] = {}
    out: dict[int, tuple[int | None, bool]] = {}
    for f in facts:
        if isinstance(f, WholeFact):
            out[f.stratum] = (f.smallest, True)
        else:
            pieces.setdefault(f.stratum, []).append(f)
    for s, ps in pieces.items():
        out[s] = merge_pieces(ps)
    return out


def smallest_set(facts) -> tuple[int | None, int | None, bool]:
    """(stratum index, smallest set, exact?) of the smallest set over the strata, the stratum of
    lowest index among those that share it (the persisted check's order: size, then stratum); (None,
    None, True) without a released value."""
    per = smallest_per_stratum(facts)
    exact = all(e for _, e in per.values())
    found = [(n, s) for s, (n, _) in per.items() if n is not None]
    if not found:
        return None, None, exact
    n, s = min(found)
    return s, n, exact


__all__ = ["PieceFact", "WholeFact", "class_sizes", "merge_pieces", "piece_fact", "smallest_per_stratum",
           "smallest_set", "whole_fact"]
