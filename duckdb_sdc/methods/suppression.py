"""Local suppression to k-anonymity over categorical keys, a NULL matching any value: sdcMicro's
`localSuppression` (Templ, Kowarik & Meindl 2015) and mu-ARGUS's local suppression, with fewer
suppressions.

The criterion (sdcMicro's, with its alpha = 1). Two records are *compatible* when they are equal on
every key where both are non-NULL; a record's fk is the number of records of its stratum compatible
with it (itself included), freqCalc's count. After suppression every record has fk >= k.

Why a discipline is needed. Under this criterion a record whose keys are all NULL is compatible with
every record, so suppressing every key of any k - 1 records makes every record "k-anonymous" with
p (k - 1) suppressions (14 for seven keys and k = 3), whatever the data, while every sample unique is
still published with all its values. That is not protection, and an algorithm that minimised the
number of suppressions without a rule would find exactly that. The rule here:

* a record that already has fk >= k in the input is never suppressed;
* a record that has fk < k is either left as it is, or suppressed in one of its *protecting sets*: a
  set of keys, as small as possible, whose suppression alone gives it fk >= k against the input (the
  fewest cells that would protect it if nothing else were suppressed; need(i) cells);
* every record left as it is must reach fk >= k through the suppressed records that become
  compatible with it.

So no record carries more suppressions than protecting it on its own would take, and the records
that are suppressed protect themselves. Among all suppressions that follow the rule, the algorithm
looks for one with the fewest suppressed cells.

The problem. Let U be the records with fk < k, grouped into patterns (equal key values); d_P = k -
fk(P). A record of pattern Q suppressed in protecting set C becomes compatible with every record of
U whose values agree with Q's outside C (the C-group of Q; for data with NULLs in the keys, the
records that agree outside C with NULL counting as a value and have NULLs on the same keys of C, a
subset of those compatible, so the counts never overstate fk). Choosing x_{Q,C} records of each Q
(integers), with u_Q = 1 when every record of Q is suppressed:

    minimise   sum |C| x_{Q,C}
    subject to sum_C x_{Q,C} <= m_Q,   sum_C x_{Q,C} >= m_Q u_Q,
               for every P in U:  sum_{C} (records suppressed in C within P's C-group, P's own
               excluded) + d_P u_P >= d_P,

a set multicover problem. It is solved exactly as an integer program (scipy's HiGHS, `milp`) when it
has at most EXACT_PATTERNS patterns of U; the returned `optimal` says whether HiGHS proved optimality
within NODE_LIMIT branch-and-bound nodes (a bound on the work, so the result does not depend on the
machine's speed). Otherwise, and always as a starting point, a greedy algorithm: suppress, one record
at a time, the (pattern, protecting set) that removes the most missing matches per suppressed cell
(the missing matches of a record: k - fk, counted while positive); the function it increases is
monotone and submodular, so gains only fall and the greedy is evaluated lazily (Minoux 1978); then
every suppressed record whose suppression has become unnecessary is restored, last suppressed first.
The greedy's result is at most H(g) times the optimum of the relaxation in which one record may take
several protecting sets (Wolsey 1982; g the largest first gain, H the harmonic number); `lower_bound`
states the bound this run proves (the integer program's, or the linear relaxation's when it is small
enough), so `total - lower_bound` is the most the result can be above the optimum under the rule.

Importance (which keys to suppress first or last). `importance` is sdcMicro's vector: one integer per
key in 1..p, 1 for the most important key (suppressed last), ties allowed. Given, a record is
suppressed only in a protecting set whose most important key is as unimportant as possible (compared
key by key, most important first): a key is suppressed in a record only when no protecting set of less
important keys exists for it. Then the fewest suppressions. Without it, every protecting set is
allowed and the fewest suppressions come first; among solutions with equally few, the integer program
prefers suppressions in the keys with more categories (sdcMicro's default importance: the key with
the most categories first; ties in key order), each suppression of the key in position r of that
order costing r. The greedy breaks ties the same way.

Which records of a pattern are suppressed: the first ones in the order given (records of one pattern
are interchangeable). Pre-existing NULLs are kept and count as wildcards. The result is checked
before it is returned: every record's fk (computed afresh, with the suppressions) is >= k.

Cost: O(n p) to encode and group, O((2^s) n) to find the protecting sets of size s (s = 1 for almost
every record), then the greedy in O(sum of group sizes touched) plus the integer program on the
patterns of U. No DuckDB here.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numba as nb
import numpy as np
import pandas as pd

from .._validate import as_integer, fail, show
from ..params import GroupSize
from ._categories import NULL, combine, encode, patterns, wildcard_counts

EXACT_CHOICES = 2_500  # the integer program is tried when it has at most this many (pattern, set) choices
NODE_LIMIT = 2_000  # branch-and-bound nodes HiGHS may explore
TIME_LIMIT = 20.0  # seconds HiGHS may take (the integer program, and the relaxation)
LP_CHOICES = 10_000  # the linear relaxation (a lower bound) is computed up to this many choices

K_KIND = GroupSize(2, what="records", why="every record shares its combination with itself",
                   doc="the least number of compatible records, 2 <= k <= records of the stratum")


@dataclass(frozen=True)
class Suppression:
    """The result of `local_suppression`: `suppressed[i, c]` is True where the value of key c of
    record i is suppressed (set to NULL); `keys` the key names; `k`; `optimal` whether the number of
    suppressions is proved the fewest under the rule (module docstring); `lower_bound` a proved lower
    bound on that number (None when not computed); `algorithm` 'none' (nothing to do), 'integer
    program' or 'greedy'; `unsafe` the number of records that had fk < k."""

    suppressed: np.ndarray
    keys: tuple[str, ...]
    k: int
    optimal: bool
    lower_bound: int | None
    algorithm: str
    unsafe: int

    @property
    def total(self) -> int:
        return int(self.suppressed.sum())

    @property
    def per_key(self) -> dict[str, int]:
        return {name: int(s) for name, s in zip(self.keys, self.suppressed.sum(axis=0))}

    @property
    def records(self) -> int:
        """The number of records with at least one suppressed value."""
        return int(self.suppressed.any(axis=1).sum())


def key_columns(keys) -> tuple[list, tuple[str, ...]]:
    """The key columns and their names from a DataFrame, a 2-D array (columns = keys) or a sequence
    of columns."""
    if hasattr(keys, "columns") and hasattr(keys, "__getitem__"):  # a DataFrame
        return [keys[c] for c in keys.columns], tuple(str(c) for c in keys.columns)
    if isinstance(keys, np.ndarray):
        if keys.ndim != 2:
            raise fail("local_suppression", f"keys must be a 2-D array (records x keys), got shape {keys.shape}",
                       "keys")
        return [keys[:, c] for c in range(keys.shape[1])], tuple(f"key{c + 1}" for c in range(keys.shape[1]))
    cols = list(keys)
    return cols, tuple(f"key{c + 1}" for c in range(len(cols)))


def check_importance(importance, p: int, func: str) -> np.ndarray | None:
    """sdcMicro's importance vector as an int array (one integer in 1..p per key), or None."""
    if importance is None:
        return None
    if isinstance(importance, str):
        text = importance.strip()
        if text.startswith("[") and text.endswith("]"):
            importance = [v for v in text[1:-1].split(",") if v.strip()] if text[1:-1].strip() else []
        else:
            importance = [text]
    values = list(importance)
    if len(values) != p:
        raise fail(func, f"importance must give one integer per key ({p}), got {len(values)}: {values}",
                   "importance")
    out = []
    for v in values:
        if v is None or (isinstance(v, str) and v.strip().upper() == "NULL"):
            raise fail(func, "importance must not contain NULL", "importance")
        i = as_integer(func, "importance", v)
        if not 1 <= i <= p:
            raise fail(func, f"importance must hold integers in 1..{p} (1: the most important key, suppressed "
                             f"last), got {i}", "importance")
        out.append(i)
    return np.array(out, np.int64)


def default_order(codes: np.ndarray) -> np.ndarray:
    """sdcMicro's default importance as a suppress-first order: the key with the most categories
    first, ties in key order."""
    cats = np.array([np.unique(codes[codes[:, c] >= 0, c]).shape[0] for c in range(codes.shape[1])])
    return np.lexsort((np.arange(codes.shape[1]), -cats))


def suppress_first_order(codes: np.ndarray, importance: np.ndarray | None) -> np.ndarray:
    """The keys in the order they are suppressed first: by importance, the largest number (the least
    important key) first, ties in key order; without importance sdcMicro's default (`default_order`)."""
    if importance is None:
        return default_order(codes)
    return np.lexsort((np.arange(codes.shape[1]), -importance))


# ---------------------------------------------------------------------------------------------
# the protecting sets


def _group_ids(codes: np.ndarray, C: tuple[int, ...]) -> np.ndarray:
    """Dense ids of the rows of `codes` by their values outside C (NULL counting as a value) and the
    positions of their NULLs inside C: rows with equal ids agree outside C and are NULL on the same keys
    of C (the C-groups of the module docstring)."""
    outside = [c for c in range(codes.shape[1]) if c not in C]
    key = np.column_stack([codes[:, outside], (codes[:, list(C)] < 0).astype(np.int64)])
    return combine(key)


def _protecting_sets(pcodes, pcounts, unsafe, k):
    """The protecting sets of the unsafe patterns: for each, the smallest key sets C (none containing a
    key that is already NULL in it) whose suppression gives it >= k compatible records among all
    records. Returns (pattern, set) pairs as two arrays (pattern: position in `unsafe`; set: index into
    the returned list of key sets), the sets, and for data without NULLs each set's C-group ids of the
    unsafe patterns (else None), which the model reuses."""
    p = pcodes.shape[1]
    u = unsafe.shape[0]
    ucodes = pcodes[unsafe]
    complete = bool((pcodes >= 0).all())
    done = np.zeros(u, bool)
    sets: list[tuple[int, ...]] = []
    pat, which, ids_of = [], [], {}
    for size in range(1, p + 1):
        todo = np.flatnonzero(~done)
        if todo.shape[0] == 0:
            break
        for C in itertools.combinations(range(p), size):
            if complete:  # the records compatible with Q starred on C are those agreeing with it outside C
                ids = _group_ids(pcodes, C)
                per_group = np.bincount(ids, weights=pcounts)
                hit = todo[per_group[ids[unsafe[todo]]] >= k]
            else:
                cols = list(C)
                usable = todo[(ucodes[todo][:, cols] >= 0).all(axis=1)]
                if usable.shape[0] == 0:
                    continue
                query = ucodes[usable].copy()
                query[:, cols] = NULL
                hit = usable[wildcard_counts(query, pcodes, pcounts) >= k]
            if hit.shape[0]:
                pat.append(hit)
                which.append(np.full(hit.shape[0], len(sets), np.int64))
                if complete:
                    ids_of[len(sets)] = ids[unsafe]
                sets.append(C)
                done[hit] = True
    return np.concatenate(pat), np.concatenate(which), sets, (ids_of if complete else None)


# ---------------------------------------------------------------------------------------------
# the model


@dataclass
class _Model:
    m: np.ndarray  # records of each unsafe pattern
    d: np.ndarray  # missing matches of each of its records, k - fk
    choice_pattern: np.ndarray  # per choice: the unsafe pattern (0..u-1)
    choice_cost: np.ndarray  # |C|
    choice_weight: np.ndarray  # the importance tie-break (sum of positions in the suppress-first order)
    choice_set: list  # the key set C of each choice
    choice_group: np.ndarray  # the group (of C's partition) the choice covers
    group_start: np.ndarray  # CSR of the groups: members of group g are group_members[start[g]:start[g+1]]
    group_members: np.ndarray
    pattern_groups: np.ndarray  # (u, partitions): the group of each pattern in each partition

    @property
    def u(self) -> int:
        return self.m.shape[0]

    def members(self, g: int) -> np.ndarray:
        return self.group_members[self.group_start[g]:self.group_start[g + 1]]


@nb.njit(cache=True, nogil=True)
def _csr(groups, count):
    """The members of each of `count` groups (groups[a, j]: the group of pattern a in partition j), as
    CSR (start, members), members of a group in increasing pattern order (a counting sort)."""
    u, parts = groups.shape
    start = np.zeros(count + 1, np.int64)
    for a in range(u):
        for j in range(parts):
            start[groups[a, j] + 1] += 1
    for g in range(count):
        start[g + 1] += start[g]
    fill = start[:-1].copy()
    members = np.empty(u * parts, np.int64)
    for a in range(u):
        for j in range(parts):
            g = groups[a, j]
            members[fill[g]] = a
            fill[g] += 1
    return start, members


def _model(pcodes, pcounts, d, unsafe, choices, order, importance) -> _Model:
    """The model of the unsafe patterns `unsafe` (missing matches d) with their protecting sets
    `choices` (from `_protecting_sets`), the key order `order` (suppress first) and the importance
    vector (None: every protecting set is allowed)."""
    cp, which, all_sets, known_ids = choices
    p = pcodes.shape[1]
    if importance is not None:  # keep the protecting sets whose keys are least important, key by key
        radix = p + 2
        code = np.array([sum(int(v) * radix ** (p - i) for i, v in enumerate(sorted(importance[list(C)])))
                         for C in all_sets], dtype=object)
        rank = np.unique(code, return_inverse=True)[1].astype(np.int64)  # equal codes, equal ranks
        choice_rank = rank[which]
        best = np.full(unsafe.shape[0], -1, np.int64)
        np.maximum.at(best, cp, choice_rank)
        keep = choice_rank == best[cp]
        cp, which = cp[keep], which[keep]
    used, which = np.unique(which, return_inverse=True)
    sets = [all_sets[j] for j in used]
    u = unsafe.shape[0]
    position = np.empty(p, np.int64)
    position[order] = np.arange(1, p + 1)
    ucodes = pcodes[unsafe]
    groups = np.zeros((u, len(sets)), np.int64)
    base = 0
    for j, C in enumerate(sets):
        if known_ids is not None:
            ids = np.asarray(pd.factorize(known_ids[int(used[j])])[0], dtype=np.int64)
        else:
            ids = _group_ids(ucodes, C)
        groups[:, j] = base + ids
        base += int(ids.max()) + 1
    start, members = _csr(groups, base)
    order_c = np.lexsort((which, cp))
    cp, which = cp[order_c], which[order_c]
    set_cost = np.array([len(C) for C in sets], np.int64)
    set_weight = np.array([int(position[list(C)].sum()) for C in sets], np.int64)
    return _Model(m=pcounts[unsafe].astype(np.int64), d=np.asarray(d, np.int64), choice_pattern=cp,
                  choice_cost=set_cost[which], choice_weight=set_weight[which], choice_set=[sets[j] for j in which],
                  choice_group=groups[cp, which], group_start=start, group_members=members, pattern_groups=groups)


# ---------------------------------------------------------------------------------------------
# the greedy


@nb.njit(cache=True, nogil=True)
def _greedy_kernel(m, d, pg, gstart, gmem, cp, cg, cost, weight):
    """The lazy greedy and the pruning (module docstring); returns the records suppressed per choice."""
    u, parts = pg.shape
    nc = cp.shape[0]
    unsel = m.copy()
    cov = np.zeros(u, np.int64)
    res = d.copy()
    G = np.zeros(gstart.shape[0] - 1, np.int64)
    missing = 0
    for a in range(u):
        missing += res[a] * unsel[a]
        for j in range(parts):
            G[pg[a, j]] += unsel[a]
    chosen = np.zeros(nc, np.int64)
    log = np.empty(m.sum(), np.int64)
    steps = 0
    heap = [(0.0, np.int64(0), np.int64(0))]
    heap.pop()
    for ch in range(nc):
        a = cp[ch]
        own = unsel[a] if res[a] > 0 else 0
        gain = res[a] + G[cg[ch]] - own
        if gain > 0:
            heap.append((-gain / cost[ch], weight[ch], np.int64(ch)))
    heapq.heapify(heap)
    while missing > 0 and len(heap) > 0:
        top = heapq.heappop(heap)
        ch = top[2]
        a = cp[ch]
        now = 0
        if unsel[a] > 0:
            own = unsel[a] if res[a] > 0 else 0
            now = res[a] + G[cg[ch]] - own
        if now <= 0:
            continue
        entry = (-now / cost[ch], top[1], ch)
        if len(heap) > 0 and entry > heap[0]:
            heapq.heappush(heap, entry)
            continue
        g = cg[ch]
        if res[a] > 0:
            for j in range(parts):
                G[pg[a, j]] -= 1
            missing -= res[a]
        unsel[a] -= 1
        chosen[ch] += 1
        log[steps] = ch
        steps += 1
        own = unsel[a] if res[a] > 0 else 0
        if G[g] - own <= 0:
            # no other member still misses matches: skip them (their cov stays a lower bound, which
            # only makes the pruning below more careful)
            if unsel[a] > 0 and res[a] > 0:
                heapq.heappush(heap, (-res[a] / cost[ch], top[1], ch))
            continue
        for t in range(gstart[g], gstart[g + 1]):
            b = gmem[t]
            if b == a:
                continue
            cov[b] += 1
            if res[b] > 0:
                res[b] -= 1
                missing -= unsel[b]
                if res[b] == 0:
                    for j in range(parts):
                        G[pg[b, j]] -= unsel[b]
        if unsel[a] > 0:
            own = unsel[a] if res[a] > 0 else 0
            after = res[a] + G[g] - own
            if after > 0:
                heapq.heappush(heap, (-after / cost[ch], top[1], ch))
    for s in range(steps - 1, -1, -1):  # restore what has become unnecessary, last suppressed first
        ch = log[s]
        a = cp[ch]
        if cov[a] < d[a]:
            continue
        g = cg[ch]
        ok = True
        for t in range(gstart[g], gstart[g + 1]):
            b = gmem[t]
            if b != a and unsel[b] > 0 and cov[b] - 1 < d[b]:
                ok = False
                break
        if not ok:
            continue
        chosen[ch] -= 1
        unsel[a] += 1
        for t in range(gstart[g], gstart[g + 1]):
            b = gmem[t]
            if b != a:
                cov[b] -= 1
    return chosen


def _greedy(M: _Model) -> np.ndarray:
    if M.choice_pattern.shape[0] == 0:
        return np.zeros(0, np.int64)
    return _greedy_kernel(M.m, M.d, M.pattern_groups, M.group_start, M.group_members, M.choice_pattern,
                          M.choice_group, M.choice_cost.astype(np.float64), M.choice_weight)


# ---------------------------------------------------------------------------------------------
# the integer program


def _program(M: _Model):
    """(objective, constraints, integrality, bounds, number of x) of the integer program."""
    from scipy.optimize import Bounds, LinearConstraint
    from scipy.sparse import coo_matrix

    nc, u = M.choice_pattern.shape[0], M.u
    used = np.unique(M.choice_group)
    y_of = {int(g): nc + u + i for i, g in enumerate(used)}
    nv = nc + u + used.shape[0]
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0
    by_group: dict[int, list[int]] = {}
    for ch, g in enumerate(M.choice_group):
        by_group.setdefault(int(g), []).append(ch)
    for g in used:  # y_g = sum of the x of the choices that cover group g
        chs = np.array(by_group[int(g)], np.int64)
        rows += [r] * (chs.shape[0] + 1)
        cols += [y_of[int(g)]] + chs.tolist()
        vals += [1.0] + [-1.0] * chs.shape[0]
        lo.append(0.0)
        hi.append(0.0)
        r += 1
    by_pattern = [[] for _ in range(u)]
    for ch, a in enumerate(M.choice_pattern):
        by_pattern[a].append(ch)
    for a in range(u):
        chs = by_pattern[a]
        if chs:  # m_a u_a <= sum_C x_{a,C} <= m_a
            rows += [r] * (len(chs) + 1)
            cols += chs + [nc + a]
            vals += [1.0] * len(chs) + [-float(M.m[a])]
            lo.append(0.0)
            hi.append(np.inf)
            r += 1
            rows += [r] * len(chs)
            cols += chs
            vals += [1.0] * len(chs)
            lo.append(-np.inf)
            hi.append(float(M.m[a]))
            r += 1
        entries: dict[int, float] = {nc + a: float(M.d[a])}
        for j in range(M.pattern_groups.shape[1]):
            g = int(M.pattern_groups[a, j])
            if g in y_of:
                entries[y_of[g]] = entries.get(y_of[g], 0.0) + 1.0
        for ch in chs:
            entries[ch] = entries.get(ch, 0.0) - 1.0
        rows += [r] * len(entries)
        cols += list(entries)
        vals += list(entries.values())
        lo.append(float(M.d[a]))
        hi.append(np.inf)
        r += 1
    A = coo_matrix((vals, (rows, cols)), shape=(r, nv)).tocsr()
    upper = np.concatenate([M.m[M.choice_pattern].astype(float), np.ones(u), np.full(used.shape[0], np.inf)])
    integrality = np.concatenate([np.ones(nc + u), np.zeros(used.shape[0])])
    return LinearConstraint(A, lo, hi), integrality, Bounds(np.zeros(nv), upper), nv


def _solve(M: _Model, greedy_cost: int):
    """(chosen per choice or None, optimal, lower bound) from the integer program: first the fewest
    suppressed cells, then, among those, the importance tie-break."""
    from scipy.optimize import LinearConstraint, milp

    constraints, integrality, bounds, nv = _program(M)
    nc = M.choice_pattern.shape[0]
    c1 = np.zeros(nv)
    c1[:nc] = M.choice_cost
    options = {"node_limit": NODE_LIMIT, "time_limit": TIME_LIMIT, "presolve": True}
    first = milp(c1, constraints=constraints, integrality=integrality, bounds=bounds, options=options)
    bound = getattr(first, "mip_dual_bound", None)
    lower = None if bound is None or not np.isfinite(bound) else int(math.ceil(bound - 1e-6))
    if first.x is None:
        return None, False, lower
    x = np.round(first.x[:nc]).astype(np.int64)
    best = int((x * M.choice_cost).sum())
    optimal = first.status == 0
    if optimal:
        lower = best
    if best > greedy_cost:
        return None, False, lower
    c2 = np.zeros(nv)
    c2[:nc] = M.choice_weight
    cap = LinearConstraint(c1.reshape(1, -1), -np.inf, best + 0.5)
    second = milp(c2, constraints=[constraints, cap], integrality=integrality, bounds=bounds, options=options)
    if second.x is not None:
        x2 = np.round(second.x[:nc]).astype(np.int64)
        if int((x2 * M.choice_cost).sum()) <= best:
            x = x2
    return x, optimal, lower


def _relaxation_bound(M: _Model) -> int | None:
    """The linear relaxation's optimum, rounded up: a lower bound on the fewest suppressions (HiGHS's
    interior-point method; None if it does not finish within TIME_LIMIT)."""
    from scipy.optimize import linprog

    constraints, _, bounds, nv = _program(M)
    A, lo, hi = constraints.A, np.asarray(constraints.lb), np.asarray(constraints.ub)
    eq = lo == hi
    below, above = np.isfinite(lo) & ~eq, np.isfinite(hi) & ~eq
    c1 = np.zeros(nv)
    c1[:M.choice_pattern.shape[0]] = M.choice_cost
    from scipy.sparse import vstack

    lp = linprog(c1, A_ub=vstack([-A[below], A[above]]), b_ub=np.concatenate([-lo[below], hi[above]]),
                 A_eq=A[eq], b_eq=lo[eq], bounds=np.column_stack([bounds.lb, bounds.ub]), method="highs-ipm",
                 options={"time_limit": TIME_LIMIT})
    if lp.status != 0:
        return None
    return int(math.ceil(lp.fun - 1e-6))


# ---------------------------------------------------------------------------------------------
# the function


def _feasible(M: _Model, chosen: np.ndarray) -> bool:
    """Whether suppressing `chosen` records per choice protects every record of U (by the model's
    counts)."""
    picked = np.bincount(M.choice_pattern, weights=chosen, minlength=M.u).astype(np.int64)
    if (picked > M.m).any():
        return False
    cov = np.zeros(M.u, np.int64)
    for ch in np.flatnonzero(chosen):
        mem = M.members(M.choice_group[ch])
        cov[mem] += chosen[ch]
        cov[M.choice_pattern[ch]] -= chosen[ch]
    return bool(((picked == M.m) | (cov >= M.d)).all())


def suppress_codes(codes: np.ndarray, k: int, importance: np.ndarray | None = None,
                   *, exact: bool = True) -> tuple[np.ndarray, bool, int | None, str, int]:
    """The suppression of the (n, p) integer codes (-1 NULL) with k (checked by the caller):
    (suppressed (n, p) bool, optimal, lower bound, algorithm, number of unsafe records)."""
    n, p = codes.shape
    none = np.zeros((n, p), bool)
    if n == 0:
        return none, True, 0, "none", 0
    ids, first, counts = patterns(codes)
    canonical = np.lexsort(codes[first].T[::-1])  # patterns in the order of their values, not of the rows
    rank = np.empty_like(canonical)
    rank[canonical] = np.arange(canonical.shape[0])
    ids, first, counts = rank[ids], first[canonical], counts[canonical]
    pcodes = codes[first]
    fk = wildcard_counts(pcodes, pcodes, counts).astype(np.int64)
    unsafe = np.flatnonzero(fk < k)
    if unsafe.shape[0] == 0:
        return none, True, 0, "none", 0
    n_unsafe = int(counts[unsafe].sum())
    choices = _protecting_sets(pcodes, counts, unsafe, k)
    order = suppress_first_order(codes, importance)
    M = _model(pcodes, counts, k - fk[unsafe], unsafe, choices, order, importance)
    chosen = _greedy(M)
    cost = int((chosen * M.choice_cost).sum())
    nc = M.choice_pattern.shape[0]
    lower = _relaxation_bound(M) if nc <= LP_CHOICES else None
    optimal, algorithm = lower is not None and lower >= cost, "greedy"
    if exact and not optimal and nc <= EXACT_CHOICES:
        x, proved, bound = _solve(M, cost)
        if bound is not None:
            lower = bound if lower is None else max(lower, bound)
        if x is not None and _feasible(M, x):
            chosen, algorithm, optimal = x, "integer program", proved
    cost = int((chosen * M.choice_cost).sum())
    optimal = optimal or (lower is not None and lower >= cost)
    out = np.zeros((n, p), bool)
    rows_of = np.argsort(ids, kind="stable")
    starts = np.searchsorted(ids[rows_of], np.arange(counts.shape[0] + 1))
    taken = np.zeros(M.u, np.int64)
    for ch in np.flatnonzero(chosen):
        a = M.choice_pattern[ch]
        q = unsafe[a]
        rows = rows_of[starts[q]:starts[q + 1]][taken[a]:taken[a] + chosen[ch]]
        taken[a] += chosen[ch]
        out[np.ix_(rows, list(M.choice_set[ch]))] = True
    released = codes.copy()
    released[out] = NULL
    # the records left as they are: counted afresh against the released data (a suppressed record has
    # >= k matches by its protecting set, counted against the input; more NULLs only add matches)
    check_rows = np.flatnonzero((fk[ids] < k) & ~out.any(axis=1))
    got = wildcard_counts(released[check_rows], released)
    if (got < k).any():  # never: the construction guarantees it; refuse rather than release
        raise RuntimeError("local_suppression: internal error, a record is left with fewer than k matches")
    return out, optimal, lower, algorithm, n_unsafe


def local_suppression(keys, k, importance=None, *, exact: bool = True) -> Suppression:
    """Suppress key values (set them to NULL) until every record is compatible with at least k
    records (a NULL matching any value), with the fewest suppressions under the rule of the module
    docstring.

    keys: a DataFrame of the key columns, a 2-D array (records x keys) or a sequence of key columns
    (any values: numbers, text, dates; None / NaN is NULL, kept, and matches any value); one stratum.
    k: 2 <= k <= the number of records. importance: sdcMicro's vector, one integer in 1..p per key (1:
    the most important key, suppressed last), or None. exact: try the integer program (when U has at
    most EXACT_PATTERNS patterns); False: the greedy alone.

    Returns a `Suppression` (the cells to suppress, counts per key, optimality and the lower bound)."""
    func = "local_suppression"
    cols, names = key_columns(keys)
    if not cols:
        raise fail(func, "keys must name at least one key column", "keys")
    try:
        codes, _ = encode(cols)
    except (TypeError, ValueError) as err:
        raise fail(func, f"keys must be columns of equal length, got {show(str(err))}", "keys") from None
    n = codes.shape[0]
    k = K_KIND.check(k, func, "k", n=n if n else None)
    imp = check_importance(importance, codes.shape[1], func)
    out, optimal, lower, algorithm, unsafe = suppress_codes(codes, k, imp, exact=exact)
    return Suppression(out, names, k, optimal, lower, algorithm, unsafe)


__all__ = ["EXACT_CHOICES", "K_KIND", "NODE_LIMIT", "Suppression", "check_importance", "default_order", "key_columns",
           "local_suppression", "suppress_codes", "suppress_first_order"]
