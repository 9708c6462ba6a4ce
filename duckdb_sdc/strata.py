"""Small strata: what a table form or a release does with a stratum that holds fewer records than a
masking method needs (docs/releases/small-strata.md).

`small_strata` is one of:

* 'refuse' (the default): the table form or release fails, naming the stratum, its size and what
  the method needs (k = 5, ...);
* 'nearest': every small stratum is pooled into its nearest stratum, until no pooled stratum is
  small (`pool_nearest`);
* 'rest': every small stratum is pooled into one rest stratum with a given label (`pool_rest`).

Definitions (the decision is a function of the strata's sizes in their order alone, so every engine
repeats it):

* The strata are taken in ascending order of their values, NULLS LAST (several strata columns: the
  lexicographic order of the tuple, each column NULLS LAST), the order that numbers them for the
  seeds (`params.stratum_seed`).
* A *need* is what one masking rule asks of a stratum: at least `minimum` usable records (non-NULL
  values of its column; for a group of columns, records without a NULL in them); `minimum_records`
  gives it for a method and its parameters. A stratum (or a pool of strata) is *small* when some
  need has 0 < usable < minimum. A stratum with no usable record for a rule is not small for it: the
  method releases nothing there (its values are NULL) and needs nothing.
* 'nearest': pools are runs of consecutive strata. While some pool is small and there are two or
  more pools, the small pool with the fewest records (all its records, NULLs included; ties: the
  first in order) is merged with its neighbour in the order; with two neighbours, the one with fewer
  records (ties: the preceding one). A pool takes the label (the strata values) of its member
  stratum with the most records (ties: the first in order). When one pool is left and it is still
  small, the data are too small for the method: refused.
* 'rest': the small strata, judged each on its own, are pooled with the stratum whose label is the
  rest label (when there is one) into the rest stratum, labelled with the rest label. If the rest
  stratum is still small it is refused, naming it (use 'nearest' then). Strata that are not small
  keep their label.

Pooled records are then masked as one stratum, and they carry the pool's label wherever the strata
column is released: the released strata are exactly the pools, so the k-anonymity of a masked column
within each released stratum holds as stated. No DuckDB here.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from . import masking
from ._validate import SdcError, fail
from .methods import rank_swap
from .params import AUTO, PERCENT, GroupSize

REFUSE, NEAREST, REST = "refuse", "nearest", "rest"
CHOICES = (REFUSE, NEAREST, REST)
REST_TARGET = -1  # a stratum pooled into a rest stratum that is none of the strata
_FLOOR = {m: 1 for m in ("dp_laplace", "dp_um", "idp_ls", "idp_cbls")}  # noise protects one record; others need 2


@dataclass(frozen=True)
class Need:
    """What one masking rule needs of every stratum: `minimum` usable records; `name` (the rule's
    column(s)), `reason` ('k = 5') and `unit` ('non-NULL values') make the messages."""

    name: str
    minimum: int
    method: str
    param: str | None = None  # the group-size parameter that sets the minimum (None: the method's floor)
    value: object = None  # its value as given ('auto' stays 'auto')
    unit: str = "non-NULL values"
    prefix: str = ""  # what a message starts with (a release: "columns.income: mdav_round: ")

    def short(self, count: int, where: str) -> str:
        """Why `count` usable records in `where` (a stratum) are too few."""
        if self.param == "p":  # rank swapping
            return (f"{self.prefix}p = {self.value} needs at least 100 / p = {self.minimum} {self.unit} of "
                    f"{self.name} to move a value by one rank, {where} has {count}")
        if self.param == "p, top_percent, bottom_percent":  # rank swapping after top and bottom coding
            return (f"{self.prefix}{self.param} = {self.value} need at least {self.minimum} {self.unit} of "
                    f"{self.name} to move a value by one rank among the values not coded, {where} has {count}")
        if self.param is not None:
            return (f"{self.prefix}{self.param} = {self.value} is larger than the number of {self.unit} ({count}) of "
                    f"{self.name} in {where}")
        return (f"{self.prefix}{self.method} needs at least {self.minimum} {self.unit} of {self.name}, {where} has "
                f"{count}")


def need(method: str, params: Mapping | Sequence, name: str, func: str | None = None) -> Need:
    """The need of method `method` with `params` (in order, or by name, as `masking.mask` takes them)
    on the rule of column(s) `name`: the largest of the group sizes it asks for (k, alpha; 'auto': the
    kind's minimum, since the rule resolves it within the stratum), for rank swapping 100 / p (so that
    a value can move by one rank), and at least 2 records, since a method cannot mask one record
    without releasing it as it is (noise addition and rank swapping refuse it; a discretisation
    interval of one value releases it), or 1 for the differentially private methods, whose noise
    protects one record."""
    m = masking.method(method)
    args = m.arguments(params)
    unit = "non-NULL values" if m.data == masking.COLUMN else "records without NULL attributes"
    best = Need(name, _FLOOR.get(m.name, 2), m.name, unit=unit)
    if m.name == "rank_swap":  # a swap distance floor(p m / 100) of at least 1 rank among the m uncoded values
        least = rank_swap.least_values(*args[:3], func=func or m.name)
        p = PERCENT.check(args[0], func or m.name, "p")
        coded = [a for a in args[1:3] if a]
        if least > best.minimum:
            best = Need(name, least, m.name, "p, top_percent, bottom_percent" if coded else "p",
                        f"{p}, {args[1]}, {args[2]}" if coded else p, unit)
    for p, value in zip(m.params, args):
        if not isinstance(p.kind, GroupSize):
            continue
        v = p.kind.check(value, func or m.name, p.name)
        size = p.kind.minimum if v == AUTO else v
        if size >= best.minimum:
            best = Need(name, size, m.name, p.name, AUTO if v == AUTO else v, unit)
    return best


def is_small(counts: Sequence[int], needs: Sequence[Need]) -> bool:
    return any(0 < c < nd.minimum for c, nd in zip(counts, needs))


def _first_short(counts, needs) -> tuple[Need, int]:
    return next((nd, c) for c, nd in zip(counts, needs) if 0 < c < nd.minimum)


def _refuse(func: str, text: str, hint: str) -> SdcError:
    """The error of a stratum too small for a method, which small_strata does not pool (or cannot)."""
    return fail(func, f"{text}; {hint}" if hint else text)


def pool(how: str, rows: Sequence[int], counts: Sequence[Sequence[int]], needs: Sequence[Need],
         labels: Sequence[str], *, rest_index: int | None = None, rest_label: str = "the rest stratum",
         func: str = "small_strata", hint: str = "") -> list[int]:
    """The pooling decision. The strata are given in their order: `rows[i]` records, `counts[i][r]`
    usable records of need r, `labels[i]` how messages name stratum i ("region = 'north'").
    Returns `target`: stratum i takes the label of stratum target[i] (itself when not pooled), or the
    rest label (REST_TARGET). `rest_index`: for 'rest', the stratum whose label is the rest label, if
    any. Raises SdcError (naming `func`) for 'refuse' with a small stratum, and when pooling
    cannot make every pool large enough; `hint` ends a 'refuse' message."""
    m = len(rows)
    if how == REFUSE or m == 0:
        for i in range(m):
            if is_small(counts[i], needs):
                nd, c = _first_short(counts[i], needs)
                raise _refuse(func, nd.short(c, f"stratum {labels[i]}"), hint)
        return list(range(m))
    if how == NEAREST:
        return pool_nearest(rows, counts, needs, func=func)
    if how == REST:
        return pool_rest(rows, counts, needs, labels, rest_index=rest_index, rest_label=rest_label, func=func)
    raise fail(func, f"small_strata must be one of {', '.join(map(repr, CHOICES))}, got {how!r}")


def pool_nearest(rows, counts, needs, *, func: str = "small_strata") -> list[int]:
    """'nearest' (see the module docstring), in O(m log m) for m strata: pools are a doubly linked
    list of runs, the small ones in a heap by (records, first stratum)."""
    m = len(rows)
    # a pool is keyed by its first stratum; last[i]: its last stratum
    last = list(range(m))
    size = [int(r) for r in rows]
    usable = [list(map(int, c)) for c in counts]
    best = list(range(m))  # the member with the most records
    prev = [i - 1 for i in range(m)]
    nxt = [i + 1 if i + 1 < m else -1 for i in range(m)]
    alive = [True] * m
    heap = [(size[i], i) for i in range(m) if is_small(usable[i], needs)]
    heapq.heapify(heap)
    pools = m
    while heap:
        s, a = heapq.heappop(heap)
        if not alive[a] or size[a] != s or not is_small(usable[a], needs):
            continue  # a stale entry
        if pools == 1:
            nd, c = _first_short(usable[a], needs)
            raise _refuse(func, nd.short(c, f"all {m} strata pooled together"),
                          "the data are too small for the method")
        p, q = prev[a], nxt[a]
        b = p if q == -1 or (p != -1 and size[p] <= size[q]) else q
        lo, hi = (b, a) if b < a else (a, b)  # merge pool hi into pool lo
        alive[hi] = False
        last[lo] = last[hi]
        nxt[lo] = nxt[hi]
        if nxt[hi] != -1:
            prev[nxt[hi]] = lo
        if rows[best[hi]] > rows[best[lo]]:
            best[lo] = best[hi]
        size[lo] += size[hi]
        usable[lo] = [x + y for x, y in zip(usable[lo], usable[hi])]
        pools -= 1
        if is_small(usable[lo], needs):
            heapq.heappush(heap, (size[lo], lo))
    target = [0] * m
    for i in range(m):
        if alive[i]:
            for j in range(i, last[i] + 1):
                target[j] = best[i]
    return target


def pool_rest(rows, counts, needs, labels, *, rest_index: int | None = None, rest_label: str = "the rest stratum",
              func: str = "small_strata") -> list[int]:
    """'rest' (see the module docstring)."""
    m = len(rows)
    small = [i for i in range(m) if is_small(counts[i], needs)]
    if not small:
        return list(range(m))
    members = sorted(set(small) | ({rest_index} if rest_index is not None else set()))
    total = [sum(int(counts[i][r]) for i in members) for r in range(len(needs))]
    if is_small(total, needs):
        nd, c = _first_short(total, needs)
        raise _refuse(func, nd.short(c, f"the rest stratum {rest_label} (strata "
                                            f"{', '.join(labels[i] for i in members)} pooled)"),
                      "use small_strata 'nearest' instead")
    to = REST_TARGET if rest_index is None else rest_index
    return [to if i in members else i for i in range(m)]


def pooled(target: Sequence[int]) -> list[tuple[int, int]]:
    """(stratum, its target) for the strata that take another label than their own."""
    return [(i, t) for i, t in enumerate(target) if t != i]


__all__ = ["CHOICES", "NEAREST", "REFUSE", "REST", "REST_TARGET", "Need", "is_small", "need",
           "pool", "pool_nearest", "pool_rest", "pooled"]
