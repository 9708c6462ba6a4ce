"""Protection levels, secondary cell suppression and the audit of a suppression pattern, as
tau-ARGUS does them (Hundepool et al., Statistical Disclosure Control, 2012, ch. 4; de Wolf,
"tau-ARGUS", the libtauargus protection levels).

The table. A partition of records (one stratum) into clusters gives, for every attribute j, a
one-dimensional table: one cell per cluster, whose value is the total of the cluster's original
values of j (a release shows its mean; with the cluster's size, the total), and the table's total
(the stratum's total of j), which an intruder is assumed to know (published elsewhere, or derived).
A suppressed cell is withheld; the published cells and the total constrain the suppressed ones:

    sum over the suppressed cells c of j of y_c = T_j - sum over the published cells of j of y_c,

and every cell lies in its a-priori interval, which says what the intruder knows of the signs of
the contributions: [0, +inf) for a cell whose contributions are all >= 0 (and not all 0),
(-inf, 0] for one whose contributions are all <= 0, [0, 0] for a cell of zeros and (-inf, +inf)
for one with contributions of both signs. The attributes are separate tables (no constraint links
them). The feasible interval of a suppressed cell is the range of its value over all solutions:
the intruder's best bounds from the published table.

Protection levels (tau-ARGUS, computed on the contributions the rule sees, |c| with absolute,
c_(1) >= c_(2) >= ... of a cell with total X):

* p% rule: UPL = p c_(1) - (X - c_(1) - c_(2)): the second largest contributor, who knows her own
  value, must not be able to bound the largest from above by less than (1 + p) c_(1).
* pq rule: UPL = (p / q) c_(1) - (X - c_(1) - c_(2)).
* (n, r) dominance rule: UPL = (c_(1) + ... + c_(n)) / r - X: the feasible upper bound must reach
  the total at which the n largest would be a share r.
* threshold rule (fewer than n contributors): UPL = safety X (tau-ARGUS's frequency safety range).

The lower protection level equals the upper one (tau-ARGUS's convention), capped at the distance
from the cell's value to its a-priori bound: no pattern hides a value below what is known
beforehand (a cell of contributions >= 0 cannot be shown to be below 0). A level below 0 is 0.
A pattern protects a sensitive cell of value y when its feasible interval contains
[y - LPL, y + UPL].

The audit. For this table the linear programmes tau-ARGUS solves to audit a pattern (minimise and
maximise every sensitive cell subject to the published table) have a closed form: with S the
suppressed cells of the attribute and y_c their values,

    max y_a = y_a + min(u_a, sum over c in S, c != a of (y_c - lb_c)),
    min y_a = y_a - min(d_a, sum over c in S, c != a of (ub_c - y_c)),

u_a = ub_a - y_a and d_a = y_a - lb_a. `suppress` evaluates it in exact rational arithmetic (every
double is a rational; r, p, q and safety are taken to 9 decimals), so a pattern exactly at its
protection level is protected and one a hair below is not. `audit_suppression` solves the same
linear programmes with HiGHS (scipy.optimize.linprog), independently of the closed form; the tests
run it on every pattern they produce.

Secondary cells. The condition for all sensitive cells of an attribute at once: with P the
sensitive cells and S2 the secondary ones, every a in P needs sum over S2 of (y_c - lb_c) >=
UPL_a - sum over P - a (and the same downwards), so the secondary cells must cover one amount
upwards and one downwards, the largest of the sensitive cells' needs. The cost, `cost`:

* 'cells' (default): the fewest secondary cells. Largest first gives the least number of cells
  that covers an amount (exchange argument); of the sets with that number, the m - 1 largest and
  the smallest cell that completes the amount are taken (not necessarily the least value among
  them: that is a k-subset-sum problem). A cell of both signs, or one of the other sign than the
  sensitive cell, covers without bound in one direction: one such cell can be the whole pattern.
* 'value': the least total value suppressed (the sum of |c| over the secondary cells), as
  tau-ARGUS's default cost: a subset-sum problem, solved by HiGHS's branch and bound
  (scipy.optimize.milp, relative gap 0, at most MILP_NODES nodes: beyond, the best set found); the
  chosen cells are then checked exactly and, if the solver's tolerance left the amount a hair short,
  completed with the smallest cell that covers it.

Ties between cells of equal value go to the cluster that comes first. When even every cell of the
attribute suppressed cannot protect a sensitive cell (its stratum is itself dominated), all are
suppressed and the cell is reported as unprotected: a release refuses that stratum.

What this does not cover (stated with the guarantee): an intruder who knows more than the signs
(bounds on individual values), relations between attributes (accounting identities), coalitions of
contributors from different cells, and the structure of the masking method (univariate clusters are
intervals of the sorted values).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._validate import fail, named
from ..params import FLAG, choice
from .multivariate import as_records, centroids
from .sensitivity import DECIMALS, Rule, compact_labels, checked_contributions, sensitive_cells

COST = choice("cells", "value", doc="the cost of the secondary cells: 'cells' (the fewest) or 'value' (the least "
                                    "total value suppressed)")
INF = float("inf")
MILP_NODES = 10_000  # branch-and-bound nodes of cost 'value' (deterministic, unlike a time limit)
ZERO, POS, NEG, MIXED = 0, 1, 2, 3  # the sign classes of a cell's contributions
_DEC = int(DECIMALS)


@dataclass(frozen=True)
class Suppression:
    """A centroid release with suppressed cells as NaN, which cells each step suppressed, the
    protection levels of the sensitive cells and the feasible intervals of the suppressed ones."""

    release: np.ndarray  # (n, p): every record's cluster centroid, NaN in suppressed cells
    primary: np.ndarray  # (g, p) cells suppressed because they are sensitive
    secondary: np.ndarray  # (g, p) cells suppressed to protect a primary one
    upper: np.ndarray  # (g, p) upper protection level of every primary cell (0 elsewhere)
    lower: np.ndarray  # (g, p) lower protection level (capped at the a-priori bound; 0 elsewhere)
    low: np.ndarray  # (g, p) smallest feasible total of a suppressed cell (NaN for a published one)
    high: np.ndarray  # (g, p) largest feasible total of a suppressed cell (NaN for a published one)
    unprotected: np.ndarray  # (g, p) primary cells whose feasible interval misses a protection level

    @property
    def suppressed(self) -> np.ndarray:
        return self.primary | self.secondary


# ---------------------------------------------------------------------------------------------
# exact cell totals


def _exact_ints(v: np.ndarray) -> tuple[np.ndarray, int]:
    """(m, e) with v = m * 2^e exactly, m integers (int64 when every sum of them fits, else Python
    ints in an object array), for v >= 0 finite doubles."""
    mant, ex = np.frexp(v)
    m = np.ldexp(mant, 53).astype(np.int64)  # exact: a 53-bit integer
    e = ex.astype(np.int64) - 53
    nz = m != 0
    if not nz.any():
        return np.zeros(v.shape, np.int64), 0
    low = m & -m  # the lowest set bit: strip trailing zeros, so integers stay small
    tz = np.zeros_like(m)
    tz[nz] = np.frexp(low[nz].astype(np.float64))[1] - 1
    m = m >> tz
    e = e + tz
    base = int(e[nz].min())
    shift = np.where(nz, e - base, 0)
    bits = np.frexp(m.astype(np.float64))[1] + shift  # bit length of every m * 2^shift
    if int(bits.max()) + int(np.ceil(np.log2(v.size + 1))) < 62:
        return m << shift, base
    out = np.empty(v.shape, object)
    out[:] = [int(a) << int(s) for a, s in zip(m.tolist(), shift.tolist())]
    return out, base


@dataclass
class _Table:
    """One attribute of one partition: per cell (cluster) its contributions' count, sign class,
    exact total of |c| (A), exact largest |c| (top[:, i] = c_(i+1)) in units of 2^base, and the
    signed total y (a double, for the intervals shown)."""

    count: np.ndarray
    cls: np.ndarray
    A: list  # exact |total| of every cell, in units of 2^base / D
    top: dict  # per sensitive cell, the list of its largest |c| (as many as the rule looks at), units 2^base
    base: int
    D: int
    y: np.ndarray


def _table(v: np.ndarray, lab: np.ndarray, g: int, m: int, absolute: bool, cells, D: int) -> _Table:
    """The exact table of attribute values v (signed; the rule sees |v| with absolute, else v >= 0);
    the largest contributions only of `cells` (the sensitive ones: only their levels are needed)."""
    a = np.abs(v) if absolute else v
    m = min(m, max(v.size, 2))  # contributions beyond the records are zeros: a huge n needs no more
    ints, base = _exact_ints(a)
    order = np.lexsort((-a, lab))
    sl = lab[order]
    starts = np.searchsorted(sl, np.arange(g))
    count = np.bincount(lab, minlength=g)
    sorted_ints = ints[order]
    sums = np.add.reduceat(sorted_ints, starts) if v.size else np.zeros(0, np.int64)
    A = [int(x) * D for x in (sums.tolist() if sums.dtype != object else sums)]
    top = {}
    for c in cells:
        s = int(starts[c])
        have = min(m, int(count[c]))
        top[c] = [int(x) for x in sorted_ints[s:s + have]] + [0] * (m - have)
    mn = np.full(g, np.inf)
    mx = np.full(g, -np.inf)
    np.minimum.at(mn, lab, v)
    np.maximum.at(mx, lab, v)
    cls = np.where((mn >= 0) & (mx <= 0), ZERO, np.where(mn >= 0, POS, np.where(mx <= 0, NEG, MIXED)))
    y = np.bincount(lab, weights=v, minlength=g)
    return _Table(count, cls, A, top, base, D, y)


def _denominator(rule: Rule) -> int:
    """D: every protection level is an integer multiple of 2^base / D (r, q and safety are taken to 9
    decimals), so the tables' totals are kept in units of 2^base / D and all arithmetic is integer."""
    if rule.kind == "dominance":
        return round(rule.r * DECIMALS)
    if rule.kind == "threshold":
        return _DEC
    return round(rule.q * DECIMALS)


def _level(rule: Rule, table: _Table, c: int) -> int:
    """The protection level of cell c in units of 2^base / D, >= 0: the rule's formula (module
    docstring) times D, from the cell's exact |total| and largest contributions (units of 2^base)."""
    A, top = table.A[c] // table.D, table.top[c]
    if rule.kind == "threshold":
        pl = round(rule.safety * DECIMALS) * A
    elif rule.kind == "dominance":
        pl = _DEC * sum(top[: rule.n]) - round(rule.r * DECIMALS) * A
    else:
        pl = round(rule.p * DECIMALS) * top[0] - round(rule.q * DECIMALS) * (A - top[0] - top[1])
    return max(pl, 0)


# the slack a cell adds to another suppressed cell of its attribute, upwards (y - lb) and downwards
# (ub - y), and its own room (ub - y, y - lb), by sign class; None stands for A, the cell's |total|
_UP = {ZERO: 0, POS: None, NEG: INF, MIXED: INF}
_DOWN = {ZERO: 0, POS: INF, NEG: None, MIXED: INF}
_OWN_UP = {ZERO: 0, POS: INF, NEG: None, MIXED: INF}
_OWN_DOWN = {ZERO: 0, POS: None, NEG: INF, MIXED: INF}


def _slack(kind: dict, table: _Table, c: int):
    s = kind[int(table.cls[c])]
    return table.A[c] if s is None else s


# ---------------------------------------------------------------------------------------------
# choosing the secondary cells of one attribute


def _fewest(cands: list[tuple[int, int]], need) -> list[int] | None:
    """Fewest cells of cands ((value, cell), value > 0) whose values sum to >= need > 0: the m - 1
    largest and the smallest cell that completes the amount; None if all of them fall short."""
    by_size = sorted(cands, key=lambda t: (-t[0], t[1]))
    total, m = 0, 0
    for value, _ in by_size:
        total += value
        m += 1
        if total >= need:
            break
    else:
        return None
    head = by_size[: m - 1]
    have = sum(v for v, _ in head)
    last = min((t for t in by_size[m - 1:] if have + t[0] >= need), key=lambda t: (t[0], t[1]))
    return sorted([c for _, c in head] + [last[1]])


def _least_value(cands: list[tuple[int, int]], need) -> list[int] | None:
    """Cells of cands whose values sum to >= need > 0 with the least sum (HiGHS's branch and bound,
    then checked exactly); None if all of them fall short."""
    if sum(v for v, _ in cands) < need:
        return None
    singles = [t for t in cands if t[0] >= need]
    best = min(singles, key=lambda t: (t[0], t[1])) if singles else None
    pool = sorted((t for t in cands if best is None or t[0] < best[0]), key=lambda t: (t[1],))
    if not pool or sum(v for v, _ in pool) < need:
        return [best[1]]
    from scipy.optimize import Bounds, LinearConstraint, milp

    scale = max(v for v, _ in pool)
    w = np.array([float(Fraction(v, scale)) for v, _ in pool])
    target = float(Fraction(need) / scale)
    res = milp(w, constraints=LinearConstraint(w[None, :], lb=target), integrality=np.ones(len(pool)),
               bounds=Bounds(0, 1), options={"mip_rel_gap": 0.0, "presolve": True, "node_limit": MILP_NODES})
    chosen = [] if res.x is None else [pool[i] for i in np.flatnonzero(res.x > 0.5)]
    have = sum(v for v, _ in chosen)
    if have < need:  # the solver's tolerance: complete with the smallest cell that covers the rest
        rest = [t for t in pool if t not in chosen and have + t[0] >= need]
        if rest:
            chosen.append(min(rest, key=lambda t: (t[0], t[1])))
        else:
            chosen = [(v, c) for v, c in pool]
    if best is not None and best[0] <= sum(v for v, _ in chosen):
        return [best[1]]
    return sorted(c for _, c in chosen)


def _choose(table: _Table, P: list[int], candidates: list[int], need_up, need_dn, cost: str) -> list[int] | None:
    """Secondary cells among `candidates` covering (need_up, need_dn); None when none can."""
    if need_up <= 0 and need_dn <= 0:
        return []
    options = []  # (cost key, cells)

    def key(cells):
        value = sum(table.A[c] for c in cells)
        return (len(cells), value, cells) if cost == "cells" else (value, len(cells), cells)

    singles = [c for c in candidates if _slack(_UP, table, c) >= need_up and _slack(_DOWN, table, c) >= need_dn]
    if singles:
        options.append(min(([c] for c in singles), key=key))
    pos = [(table.A[c], c) for c in candidates if table.cls[c] == POS]
    neg = [(table.A[c], c) for c in candidates if table.cls[c] == NEG]
    pick = _fewest if cost == "cells" else _least_value
    # cells of one sign cover the other direction without bound: only their own direction counts
    if pos and need_up > 0:
        chosen = pick(pos, need_up)
        if chosen is not None:
            options.append(chosen)
    if neg and need_dn > 0:
        chosen = pick(neg, need_dn)
        if chosen is not None:
            options.append(chosen)
    if pos and neg:
        options.append(sorted([min(pos)[1], min(neg)[1]]))
    if not options:
        return None
    return min(options, key=key)


class _Sums:
    """Sums of the slacks of a set of suppressed cells, upwards or downwards, that leave one cell out
    in O(1): the finite part and the number of unbounded ones."""

    def __init__(self, kind: dict, table: _Table, cells: list[int]):
        self.kind, self.table = kind, table
        slacks = [_slack(kind, table, c) for c in cells]
        self.finite = sum(x for x in slacks if x != INF)
        self.unbounded = sum(1 for x in slacks if x == INF)

    def without(self, a: int):
        x = _slack(self.kind, self.table, a)
        if self.unbounded - (x == INF) > 0:
            return INF
        return self.finite - (0 if x == INF else x)


def _needs(table: _Table, P: list[int], levels: dict) -> tuple:
    """The amounts the secondary cells must cover, upwards and downwards (<= 0: nothing)."""
    up, dn = _Sums(_UP, table, P), _Sums(_DOWN, table, P)
    need_up = max(levels[a][0] - up.without(a) for a in P)
    need_dn = max(levels[a][1] - dn.without(a) for a in P)
    return need_up, need_dn


def _float(x, table: _Table) -> float:
    """An amount in the table's units (2^base / D) as the nearest double (inf beyond)."""
    if x == INF:
        return INF
    if abs(x) < 2**53:  # x / D rounds once; scaling by 2^base is exact unless it leaves the normal range
        try:
            r = math.ldexp(x / table.D, table.base)
        except OverflowError:
            r = INF
        if x == 0 or 2.0**-1022 <= abs(r) < INF:
            return r
    return _nearest(Fraction(x, table.D) * Fraction(2) ** table.base)


def _nearest(x: Fraction) -> float:
    """The double nearest to x (inf beyond the largest)."""
    try:
        return float(x)
    except OverflowError:
        return INF if x > 0 else -INF


def _interval(table: _Table, a: int, dn, up, values) -> tuple[float, float]:
    """Suppressed cell a's feasible interval [total - dn, total + up] as doubles: from the cell's
    double total, or, when that total overflows (a cell of values near 1.8e308), from the exact total
    of its contributions (`values()`), so that a bound float64 can hold is never NaN or lost."""
    y = table.y[a]
    if np.isfinite(y):
        return y - _float(dn, table), y + _float(up, table)
    values = values()
    exact = sum((Fraction(v) for v in values.tolist()), Fraction(0))
    unit = Fraction(2) ** table.base / table.D
    return (-INF if dn == INF else _nearest(exact - dn * unit)), (INF if up == INF else _nearest(exact + up * unit))


# ---------------------------------------------------------------------------------------------
# suppression


@named
def suppress(X, labels, rule: Rule, *, secondary: bool = True, cost: str = "cells") -> Suppression:
    """Release every record as its cluster's centroid with the sensitive cells suppressed (primary)
    and further cells suppressed so that every primary cell's feasible interval, from the published
    cells and the partition's total of its attribute, covers its protection levels (secondary), at
    the least cost (`cost`: 'cells' or 'value'). See the module docstring for the table, the
    protection levels, the closed-form audit and the choice of cells. With secondary=False only the
    primary cells are suppressed (their protection is still measured: `unprotected`).

    Cost: O(n log n) to summarise the cells, then per attribute with a sensitive cell O(g log g)
    (g clusters) in exact integer arithmetic ('value': plus a HiGHS branch and bound over the
    cells smaller than the smallest single cell that would do)."""
    func = "suppress"
    secondary = FLAG.check(secondary, func, "secondary")
    cost = COST.check(cost, func, "cost")
    A = as_records(func, X)
    _, lab = compact_labels(func, labels, A.shape[0])
    primary = sensitive_cells(A, lab, rule)
    g, p = primary.shape
    second = np.zeros_like(primary)
    upper = np.zeros((g, p))
    lower = np.zeros((g, p))
    low = np.full((g, p), np.nan)
    high = np.full((g, p), np.nan)
    unprotected = np.zeros_like(primary)
    for j in range(p):
        P = np.flatnonzero(primary[:, j]).tolist()
        if not P:
            continue
        table = _table(A[:, j], lab, g, max(rule.top, 2), rule.absolute, P, _denominator(rule))
        levels = {}
        for a in P:
            pl = _level(rule, table, a)
            levels[a] = (min(pl, _slack(_OWN_UP, table, a)), min(pl, _slack(_OWN_DOWN, table, a)))
            upper[a, j] = _float(pl, table)
            lower[a, j] = _float(levels[a][1], table)
        S = list(P)
        if secondary:
            need_up, need_dn = _needs(table, P, levels)
            candidates = [c for c in range(g) if not primary[c, j] and table.cls[c] != ZERO]
            chosen = _choose(table, P, candidates, need_up, need_dn, cost)
            if chosen is None:  # nothing can protect them: withhold every cell, report them
                chosen = [c for c in range(g) if not primary[c, j]]
            second[chosen, j] = True
            S += chosen
        ups, dns = _Sums(_UP, table, S), _Sums(_DOWN, table, S)
        for a in S:
            dn = min(_slack(_OWN_DOWN, table, a), dns.without(a))
            up = min(_slack(_OWN_UP, table, a), ups.without(a))
            low[a, j], high[a, j] = _interval(table, a, dn, up, lambda: A[lab == a, j])
            if primary[a, j]:
                unprotected[a, j] = up < levels[a][0] or dn < levels[a][1]
    release = centroids(A, lab)
    release[primary | second] = np.nan
    return Suppression(release[lab], primary, second, upper, lower, low, high, unprotected)


@named
def protection_levels(X, labels, rule: Rule) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) protection levels of every cell (cluster, attribute) that `rule` flags, 0
    elsewhere; the lower one capped at the cell's a-priori bound (module docstring)."""
    out = suppress(X, labels, rule, secondary=False)
    return out.upper, out.lower


# ---------------------------------------------------------------------------------------------
# the audit by linear programming


def _lp_extremes(lb: np.ndarray, ub: np.ndarray, y: np.ndarray, sign: float) -> np.ndarray:
    """The largest (sign -1) or least (sign 1) value of every variable over {sum of them = sum of y,
    lb <= them <= ub}: one linear programme for many variables at once, block-diagonal (a copy of the
    table per variable, its objective that variable's copy); a block's optimum does not depend on the
    others, so every block of an optimal solution is optimal. The variable of each block is capped
    at 2 (sum of |y|) + 1 from its value, beyond any bounded optimum: a cap reached means unbounded."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_array

    k = y.size
    rhs = float(y.sum())
    cap = 2.0 * float(np.abs(y).sum()) + 1.0
    out = np.empty(k)
    per = max(1, 40000 // k)
    for start in range(0, k, per):
        blocks = np.arange(start, min(k, start + per))
        b = blocks.size
        rows = np.repeat(np.arange(b), k)
        cols = np.arange(b * k)
        A_eq = coo_array((np.ones(b * k), (rows, cols)), shape=(b, b * k)).tocsr()
        lo = np.tile(lb, b)
        hi = np.tile(ub, b)
        own = np.arange(b) * k + blocks
        c = np.zeros(b * k)
        c[own] = sign
        if sign < 0:
            hi[own] = np.minimum(hi[own], y[blocks] + cap)
        else:
            lo[own] = np.maximum(lo[own], y[blocks] - cap)
        res = linprog(c, A_eq=A_eq, b_eq=np.full(b, rhs), bounds=np.column_stack([lo, hi]), method="highs")
        if res.status != 0:
            raise fail("audit_suppression", f"the linear programme failed: {res.message}")
        got = res.x[own]
        reached = np.abs(got - y[blocks]) >= cap * (1 - 1e-9)
        out[blocks] = np.where(reached, -sign * np.inf, got)
    return out


@named
def audit_suppression(X, labels, suppressed, *, absolute: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The feasible interval of every suppressed cell: (low, high), (g, p) arrays, NaN for published
    cells (+-inf when unbounded), computed as tau-ARGUS audits a pattern: for every suppressed cell,
    the minimum and the maximum of its value over all tables that agree with the published cells and
    the total of its attribute, within the a-priori intervals of the cells (module docstring), by
    linear programming (HiGHS through scipy.optimize.linprog). `suppressed` is a (g, p) boolean
    pattern over the clusters in increasing order of their ids; absolute as the rule's (negative
    contributions are refused without it). One programme per suppressed cell and direction, over
    the suppressed cells of its attribute (solved together, `_lp_extremes`), whose values are scaled by
    a power of two to a largest contribution of 1 (HiGHS's tolerances are absolute). Independent of
    `suppress`'s closed form."""
    func = "audit_suppression"
    absolute = FLAG.check(absolute, func, "absolute")
    A = as_records(func, X)
    checked_contributions(func, A.ravel(), Rule("p%", p=1.0, absolute=absolute), "rows")
    _, lab = compact_labels(func, labels, A.shape[0])
    g = int(lab.max()) + 1 if lab.size else 0
    mask = np.asarray(suppressed, bool)
    if mask.shape != (g, A.shape[1]):
        raise fail(func, f"suppressed must have shape ({g}, {A.shape[1]}), got {mask.shape}")
    low = np.full(mask.shape, np.nan)
    high = np.full(mask.shape, np.nan)
    for j in range(A.shape[1]):
        S = np.flatnonzero(mask[:, j])
        if S.size == 0:
            continue
        v = A[:, j]
        e = int(np.frexp(np.abs(v).max())[1])  # 2^-e v: a largest |contribution| in [1/2, 1), exactly
        y = np.bincount(lab, weights=np.ldexp(v, -e), minlength=g)
        mn = np.full(g, np.inf)
        mx = np.full(g, -np.inf)
        np.minimum.at(mn, lab, v)
        np.maximum.at(mx, lab, v)
        lb = np.where(mn >= 0, 0.0, -np.inf)[S]
        ub = np.where(mx <= 0, 0.0, np.inf)[S]
        low[S, j] = np.ldexp(_lp_extremes(lb, ub, y[S], 1.0), e)
        high[S, j] = np.ldexp(_lp_extremes(lb, ub, y[S], -1.0), e)
    return low, high
