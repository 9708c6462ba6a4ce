"""The optimal full-domain generalisation as ARX searches it (Prasser, Kohlmayer & Kuhn, "ARX - a
comprehensive tool for anonymizing biomedical data", AMIA 2014; Kohlmayer, Prasser, Eckert, Kemper &
Kuhn, "Flash: efficient, stable and optimal k-anonymity", 2012; El Emam et al., "A globally optimal
k-anonymity method for the de-identification of health data" (OLA), JAMIA 2009): every key has a
hierarchy (value -> level 1 -> level 2 ...; `recoding.check_hierarchy`), a *node* of the lattice is one
level per key, and the release at a node recodes every key to its level's values and suppresses the
records of the classes (equal recoded keys, within a stratum) smaller than k. A node is feasible when
at most `max_suppressed` (a share of the records) are suppressed; among the feasible nodes the one
with the least information loss is returned.

Exact search, with the generalisation property as its only pruning. If node N is feasible then so is
every node M above it (M >= N on every key): classes at M are unions of classes at N, so a record in a
class of at least k records at N is in one at M, and the suppressed records of M are a subset of
N's. Hence if N is not feasible no node below it is. The nodes are visited from the top, in
decreasing order of the sum of their levels; a node one of whose direct successors (one key one level
up) is infeasible is infeasible without evaluation (some successor lies between it and any infeasible
node above it); every other node is evaluated. The measures below are not monotone under suppression
(a node above may lose less, because it suppresses fewer records), so every feasible node is
evaluated: the optimum is exact, over a lattice of at most `max_nodes` nodes (the product of the
heights + 1; a larger one is refused).

Measures (ARX's definitions, information loss: less is better):

* 'discernibility' (Bayardo & Agrawal 2005; ARX's non-monotonic DM): the sum over the classes kept of
  their size squared, plus n for every suppressed record;
* 'average_class_size' (LeFevre, DeWitt & Ramakrishnan 2006, C_AVG without the division by k; ARX's
  AECS): n / (the number of classes kept, plus one when some records are suppressed);
* 'entropy' (non-uniform entropy, Gionis & Tassa 2009; ARX's non-monotonic version): the sum over the
  keys and the records of -log2 (records with the record's original value / records with its
  recoded value), both counted over all records, plus for the suppressed records -log2 (suppressed
  records with its recoded value / suppressed records).

Ties between nodes of equal loss go to the lower node (the smaller sum of levels), then to the
lexicographically smallest levels. A NULL key is a value of its own (it generalises to NULL at every
level; it is not looked up in the hierarchy). Released: every key at its level's value; a suppressed
record has every key NULL (ARX's '*'), its other columns kept.

Cost: O(P p) per evaluated node, P the distinct (stratum, keys) combinations. No DuckDB here.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from .._validate import as_number, fail
from ..params import choice
from ._categories import combine, encode, encode_column
from .recoding import check_hierarchy, offending
from .suppression import K_KIND, key_columns

MEASURES = ("discernibility", "average_class_size", "entropy")
MEASURE = choice(*MEASURES, doc="the information loss to minimise: 'discernibility', 'average_class_size' or "
                                "'entropy' (non-uniform entropy)")
MAX_NODES = 100_000


@dataclass(frozen=True)
class Node:
    levels: tuple[int, ...]
    feasible: bool
    suppressed: int | None  # None: infeasible by the generalisation property, not evaluated
    loss: float | None


@dataclass(frozen=True)
class Generalisation:
    """The result of `generalisation_search`: the chosen `levels` (one per key), its `loss` (the
    `measure`), the `suppressed` records (a boolean per record), the `released` keys (one object array
    per key: the recoded values, None for a suppressed record and for a NULL), and every node of the
    `lattice` with what the search knows of it."""

    keys: tuple[str, ...]
    levels: tuple[int, ...]
    heights: tuple[int, ...]
    measure: str
    loss: float
    suppressed: np.ndarray
    released: list
    lattice: list = field(repr=False)

    @property
    def evaluated(self) -> int:
        return sum(1 for n in self.lattice if n.suppressed is not None)


def check_share(value, func: str) -> float:
    if value is None:
        raise fail(func, "max_suppressed must not be NULL", "max_suppressed")
    v = as_number(func, "max_suppressed", value)
    if not (math.isfinite(v) and 0 <= v <= 1):
        raise fail(func, f"max_suppressed must be a share in [0, 1], got {value!r}", "max_suppressed")
    return v


def _level_codes(func: str, categories: np.ndarray, rows, name: str) -> tuple[list[np.ndarray], list[dict]]:
    """Per level, the code of every category's ancestor (codes dense per level)."""
    levels = check_hierarchy(rows, func, name)
    cats = categories.tolist()
    absent = [c for c in cats if c not in levels[0]]
    if absent:
        raise fail(func, f"hierarchy of column {name} lacks {offending(absent)}", "hierarchies")
    out = []
    for table in levels:
        gen = np.array([table[c] for c in cats], dtype=object)
        codes, _ = encode_column(gen) if gen.shape[0] else (np.zeros(0, np.int64), None)
        out.append(codes)
    return out, levels


def _classes(gen: np.ndarray, strata: np.ndarray) -> np.ndarray:
    """Class ids of the patterns from their recoded codes (NULL as -1) and their strata."""
    return combine(np.column_stack([strata, gen]))


def generalisation_search(keys, hierarchies, k, max_suppressed=0.0, measure: str = "discernibility", *,
                          strata=None, max_nodes: int = MAX_NODES) -> Generalisation:
    """The least lossy full-domain generalisation of `keys` (a DataFrame or a sequence of columns; one
    hierarchy per key, each a sequence of rows value, level 1, ...) that is k-anonymous within each
    stratum after suppressing at most the share `max_suppressed` of the records (module docstring)."""
    func = "generalisation_search"
    cols, names = key_columns(keys)
    p = len(cols)
    if p == 0:
        raise fail(func, "keys must name at least one key column", "keys")
    hierarchies = list(hierarchies)
    if len(hierarchies) != p:
        raise fail(func, f"hierarchies must give one hierarchy per key ({p}), got {len(hierarchies)}", "hierarchies")
    measure = MEASURE.check(measure, func, "measure")
    share = check_share(max_suppressed, func)
    codes, categories = encode(cols)
    n = codes.shape[0]
    k = K_KIND.check(k, func, "k", n=n if n else None)
    per_level, tables = [], []
    for c in range(p):
        lv, table = _level_codes(func, categories[c], hierarchies[c], names[c])
        per_level.append(lv)
        tables.append(table)
    heights = tuple(len(lv) - 1 for lv in per_level)
    size = math.prod(h + 1 for h in heights)
    if size > max_nodes:
        raise fail(func, f"the lattice has {size} nodes (heights {list(heights)}), more than max_nodes = {max_nodes}; "
                         "shorten the hierarchies or search fewer keys")
    if strata is None:
        scodes = np.zeros(n, np.int64)
    else:
        scols, _ = key_columns(strata)
        scodes = combine(encode(scols)[0]) if scols else np.zeros(n, np.int64)
    # the distinct (stratum, keys) combinations and their counts
    both = np.column_stack([scodes, codes])
    ids = combine(both)
    P = int(ids.max()) + 1 if n else 0
    first = np.full(P, n, np.int64)
    np.minimum.at(first, ids, np.arange(n))
    counts = np.bincount(ids, minlength=P).astype(np.float64)
    pcodes, pstrata = codes[first], scodes[first]
    limit = math.floor(share * n + 1e-9)
    # entropy's counts over all records: of every original value, and of every recoded value per level
    orig_count = [np.bincount(pcodes[:, c][pcodes[:, c] >= 0], weights=counts[pcodes[:, c] >= 0],
                              minlength=categories[c].shape[0]) for c in range(p)]

    def recoded(c: int, level: int) -> np.ndarray:
        x = pcodes[:, c]
        if not per_level[c][level].size:  # a key of NULLs only: no value to look up
            return np.full_like(x, -1)
        return np.where(x >= 0, per_level[c][level][np.maximum(x, 0)], -1)

    def evaluate(levels):
        gen = np.column_stack([recoded(c, levels[c]) for c in range(p)]) if p else np.zeros((P, 0), np.int64)
        cls = _classes(gen, pstrata)
        sizes = np.bincount(cls, weights=counts)
        small = sizes[cls] < k
        suppressed = float(counts[small].sum())
        if suppressed > limit:
            return False, int(suppressed), None, small
        kept = sizes[sizes >= k]
        if measure == "discernibility":
            loss = float((kept ** 2).sum() + n * suppressed)
        elif measure == "average_class_size":
            groups = kept.shape[0] + (1 if suppressed > 0 else 0)
            loss = float(n / groups) if groups else 0.0
        else:
            loss = 0.0
            for c in range(p):
                x, g = pcodes[:, c], gen[:, c]
                valid = x >= 0
                gen_count = np.bincount(g[valid], weights=counts[valid])
                a = orig_count[c][x[valid]]
                b = gen_count[g[valid]]
                loss -= float((counts[valid] * np.log2(a / b)).sum())
                sv = valid & small
                if sv.any():
                    sup_count = np.bincount(g[sv], weights=counts[sv])
                    loss -= float((counts[sv] * np.log2(sup_count[g[sv]] / suppressed)).sum())
            loss = max(loss, 0.0) + 0.0
        return True, int(suppressed), loss, small

    nodes = sorted(itertools.product(*(range(h + 1) for h in heights)), key=lambda v: (-sum(v), v))
    status: dict = {}
    lattice = []
    best = None
    for levels in nodes:
        above = [tuple(levels[:c]) + (levels[c] + 1,) + tuple(levels[c + 1:]) for c in range(p)
                 if levels[c] < heights[c]]
        if any(status[s] is False for s in above):
            status[levels] = False
            lattice.append(Node(levels, False, None, None))
            continue
        feasible, suppressed, loss, small = evaluate(levels)
        status[levels] = feasible
        lattice.append(Node(levels, feasible, suppressed, loss))
        if feasible:
            key = (loss, sum(levels), levels)
            if best is None or key < best[0]:
                best = (key, levels, small)
    if best is None:  # the top node suppresses the fewest; even it suppresses too many
        top = tuple(heights)
        _, suppressed, _, _ = evaluate(top)
        raise fail(func, f"no generalisation is k-anonymous with at most {limit} suppressed records "
                         f"(max_suppressed = {share:g} of {n}): the most general one, levels {list(top)}, suppresses "
                         f"{suppressed}; raise max_suppressed or lower k", "max_suppressed")
    (loss, _, _), levels, small = best
    suppressed_records = small[ids]
    released = []
    for c in range(p):
        table = tables[c][levels[c]]
        out = np.full(n, None, dtype=object)
        keep = (codes[:, c] >= 0) & ~suppressed_records
        out[keep] = [table[v] for v in categories[c][codes[keep, c]].tolist()]
        released.append(out)
    lattice.sort(key=lambda node: node.levels)
    return Generalisation(names, levels, heights, measure, loss, suppressed_records, released, lattice)


__all__ = ["MAX_NODES", "MEASURE", "MEASURES", "Generalisation", "Node", "check_share", "generalisation_search"]
