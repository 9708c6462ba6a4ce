"""Attribute disclosure in a k-anonymous release: the sensitivity rules for tabular cells, primary
and secondary suppression, and dynamic k (merging clusters until no cell is sensitive).

A cell is a (cluster, attribute) pair; its contributions c_1..c_t are the original values of that
attribute for the t records of the cluster, and the release shows their mean (so, with t, their total
T). Sorted, c_(1) >= c_(2) >= ... (Hundepool et al., Statistical Disclosure Control, 2012, ch. 4;
the rules of tau-ARGUS):

* (n, r) dominance rule: sensitive when the n largest contributions exceed the fraction r of the
  total, c_(1) + ... + c_(n) > r T (strict); a cell with t <= n contributors is sensitive.
* p% rule: sensitive when T - c_(1) - c_(2) < p c_(1) (p a fraction; c_(2) = 0 when t = 1): the
  second largest contributor could estimate the largest to within p of its value. With
  p = (1 - r) / r every p%-sensitive cell is (2, r)-sensitive, and the two rules agree on every cell
  with c_(1) >= r T.
* pq rule (prior-posterior): every contribution is known beforehand to within q of its value;
  sensitive when q (T - c_(1) - c_(2)) < p c_(1), 0 < p < q <= 1 (q = 1 is the p% rule).
* threshold (minimum frequency) rule: sensitive when the cell has fewer than n contributions
  (t >= 1).

Protection levels, secondary suppression and the audit of a suppression pattern are in
`duckdb_sdc.methods.protection`.

Choices where the rules are silent (the same in the SQL macros):

* Contributions must be >= 0 (the rules are stated for non-negative magnitudes); a negative one is
  an error unless absolute=True, which applies the rule to |c_i|.
* A cell whose total is 0 is not sensitive (unless t <= n for the dominance rule): nothing exceeds a
  zero share. A cell without contributions has no value (None / NULL).
* r, p and q are taken to 9 decimal places (r = 0.7 means exactly 7/10), and the comparisons are exact
  for the given totals: the products are compared as error-free double-double products, so a cell
  exactly at the boundary (c_(1) + c_(2) = 0.7 T) is never flagged by rounding. Totals are exact for
  integer contributions below 2^53. p is at most 1e6 (it is a fraction: 0.1 is the 10% rule).
* Scale: each cell's contributions are multiplied by the power of two 2^-e that brings its largest
  one into [1/2, 1) (exact; the SQL macros use 2^-600 or 2^600 beyond 2^900 and below 2^-900, the
  same decisions), so that the total of two contributions of 1e308 does not overflow and cells of
  subnormal contributions keep their bits. Every comparison is homogeneous in the contributions, so
  scaling changes no decision.
* A rule that cannot decide refuses: NaN and infinite contributions are errors, never "not sensitive".
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from .._validate import fail, finite_values, named
from ..params import FLAG, FRACTION, INTEGER_1, P_PERCENT, Number
from .multivariate import as_records, standardised

DECIMALS = 1e9


# ---------------------------------------------------------------------------------------------
# exact comparison of products


def _split(a):
    c = 134217729.0 * a  # 2^27 + 1 (Veltkamp)
    hi = c - (c - a)
    return hi, a - hi


def _product(a, b):
    """(p, e) with p = fl(a b) and a b = p + e exactly (Dekker's product)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def product_gt(x, y, u, v):
    """x * y > u * v, exactly, for finite doubles (no overflow): rounding is monotone, so unequal
    rounded products already decide; equal ones are decided by their exact rounding errors."""
    p1, e1 = _product(np.asarray(x, np.float64), np.asarray(y, np.float64))
    p2, e2 = _product(np.asarray(u, np.float64), np.asarray(v, np.float64))
    return (p1 > p2) | ((p1 == p2) & (e1 > e2))


# ---------------------------------------------------------------------------------------------
# rules


@dataclass(frozen=True)
class Rule:
    """A sensitivity rule: kind 'dominance' with (n, r), 'p%' with p, 'pq' with (p, q), or
    'threshold' with n (the minimum number of contributors) and safety (its protection level as a
    fraction of the cell's total); absolute applies it to |c|."""

    kind: str
    n: int = 0
    r: float = 0.0
    p: float = 0.0
    absolute: bool = False
    q: float = 1.0
    safety: float = 0.0

    @property
    def top(self) -> int:
        """How many of the largest contributions of a cell the rule looks at."""
        return {"dominance": self.n, "threshold": 1}.get(self.kind, 2)

    def flags(self, count, total, top):
        """Sensitivity of cells from their contributor counts, totals and largest contributions
        (top[..., i] = c_(i+1), 0 where absent), all arrays broadcasting together."""
        count = np.asarray(count)
        total = np.asarray(total, np.float64)
        top = np.asarray(top, np.float64)
        if self.kind == "dominance":
            a = np.round(self.r * DECIMALS)
            return (count <= self.n) | product_gt(top.sum(axis=-1), DECIMALS, a, total)
        if self.kind == "threshold":
            return (count > 0) & (count < self.n) & np.ones(np.broadcast_shapes(count.shape, total.shape), bool)
        a = np.round(self.p * DECIMALS)
        b = np.round(self.q * DECIMALS)  # 1e9 for the p% rule
        rest = total - top[..., 0] - top[..., 1]
        return product_gt(a, top[..., 0], rest, b)

    def describe(self) -> str:
        """The rule in words: 'the (2, 0.7) dominance rule', 'the p% rule with p = 0.2', ..."""
        if self.kind == "dominance":
            return f"the ({self.n}, {self.r:g}) dominance rule"
        if self.kind == "p%":
            return f"the p% rule with p = {self.p:g}"
        if self.kind == "pq":
            return f"the pq rule with p = {self.p:g} and q = {self.q:g}"
        return f"the threshold rule with n = {self.n} (safety range {self.safety:g})"


def dominance_rule(n, r, *, absolute: bool = False) -> Rule:
    """The (n, r) dominance rule: n an integer >= 1, 0 < r <= 1."""
    func = "dominance_rule"
    return Rule("dominance", n=INTEGER_1.check(n, func, "n"), r=FRACTION.check(r, func, "r"),
                absolute=FLAG.check(absolute, func, "absolute"))


MAX_P = P_PERCENT.upper


def p_percent_rule(p, *, absolute: bool = False) -> Rule:
    """The p% rule: 0 < p <= 1e6, a fraction (0.1 for the 10% rule)."""
    func = "p_percent_rule"
    return Rule("p%", p=P_PERCENT.check(p, func, "p"), absolute=FLAG.check(absolute, func, "absolute"))


PQ_P = Number(lower=0, upper=1, lower_open=True,
              doc="the pq rule's p: the precision an intruder must not reach, a fraction 0 < p < q (taken to 9 decimals)")
PQ_Q = Number(lower=0, upper=1, lower_open=True,
              doc="the pq rule's q: how precisely every contribution is known beforehand, a fraction p < q <= 1 "
                  "(q = 1: the p% rule)")
SAFETY = Number(lower=0, upper=1e6, lower_open=True,
                doc="the threshold rule's safety range: the protection level of a cell with too few contributors, "
                    "as a fraction of its total (taken to 9 decimals)")


def pq_rule(p, q, *, absolute: bool = False) -> Rule:
    """The pq rule (prior-posterior rule): everyone knows every contribution to within q of its
    value; a cell is sensitive when the second largest contributor could estimate the largest to
    within p of its value: q (T - c_(1) - c_(2)) < p c_(1). 0 < p < q <= 1; q = 1 is the p% rule."""
    func = "pq_rule"
    p = PQ_P.check(p, func, "p")
    q = PQ_Q.check(q, func, "q")
    if not np.round(p * DECIMALS) < np.round(q * DECIMALS):
        raise fail(func, f"p must be less than q, got p = {p:g} and q = {q:g}", "p")
    return Rule("pq", p=p, q=q, absolute=FLAG.check(absolute, func, "absolute"))


def threshold_rule(n, safety, *, absolute: bool = False) -> Rule:
    """The threshold (minimum frequency) rule: a cell with fewer than n contributors (but at least
    one) is sensitive; its protection level is `safety` times its total (tau-ARGUS's frequency
    safety range). n an integer >= 1 (n = 1 flags nothing)."""
    func = "threshold_rule"
    return Rule("threshold", n=INTEGER_1.check(n, func, "n"), safety=SAFETY.check(safety, func, "safety"),
                absolute=FLAG.check(absolute, func, "absolute"))


def checked_contributions(func: str, values, rule: Rule, param: str = "value") -> np.ndarray:
    v = finite_values(func, param, values)
    if rule.absolute:
        return np.abs(v)
    if v.size and v.min() < 0:
        raise fail(func, f"{param} contains {v.min():g}; the rule needs contributions >= 0 "
                         "(absolute := true applies it to absolute values)")
    return v


def _exponent(m):
    """e with m * 2^-e in [1/2, 1) (0 for m = 0): the exact scale of a cell whose largest contribution is m."""
    return np.frexp(np.asarray(m, np.float64))[1]


def cell_sensitive(values, rule: Rule):
    """Whether one cell with these contributions is sensitive under `rule`; None for no contribution."""
    c = checked_contributions("cell_sensitive", values, rule)
    if c.size == 0:
        return None
    c = np.ldexp(c, -_exponent(c.max()))  # exact: no total overflows
    top = np.zeros(min(rule.top, max(c.size, 2)))  # no more than the cell's contributions (n may be 2^62)
    largest = np.sort(c)[::-1][: rule.top]
    top[: largest.size] = largest
    return bool(rule.flags(c.size, c.sum(), top))


@named
def dominance_sensitive(values, n, r, *, absolute: bool = False):
    """(n, r) dominance rule on one cell's contributions (see the module docstring)."""
    return cell_sensitive(values, dominance_rule(n, r, absolute=absolute))


@named
def p_percent_sensitive(values, p, *, absolute: bool = False):
    """p% rule on one cell's contributions (see the module docstring)."""
    return cell_sensitive(values, p_percent_rule(p, absolute=absolute))


@named
def pq_sensitive(values, p, q, *, absolute: bool = False):
    """pq rule on one cell's contributions (see the module docstring)."""
    return cell_sensitive(values, pq_rule(p, q, absolute=absolute))


@named
def threshold_sensitive(values, n, *, absolute: bool = False):
    """Threshold rule on one cell's contributions: fewer than n of them (see the module docstring)."""
    return cell_sensitive(values, threshold_rule(n, 1.0, absolute=absolute))


@named
def dominance_to_p_percent(r) -> float:
    """p = (1 - r) / r: the p% rule that flags a subset of the (2, r) dominance rule's cells and agrees
    with it on every cell whose largest contribution is at least r T."""
    rule = dominance_rule(2, r)
    return (1.0 - rule.r) / rule.r


# ---------------------------------------------------------------------------------------------
# all cells of a partition


def compact_labels(func: str, labels, n: int) -> tuple[np.ndarray, np.ndarray]:
    lab = np.asarray(labels)
    if lab.shape != (n,):
        raise fail(func, f"clusters has {lab.size} entries but there are {n} records")
    if n and not np.issubdtype(lab.dtype, np.integer):
        if not np.all(np.isfinite(lab)) or not np.all(lab == np.round(lab)):
            raise fail(func, "clusters must be integers")
    ids, inv = np.unique(lab.astype(np.int64), return_inverse=True)
    return ids, inv.astype(np.int64)


def cell_summaries(C, labels, g: int, m: int):
    """Per cluster: record counts (g,), attribute totals (g, p), the m largest contributions of every
    cell (g, p, m) in decreasing order (0 where a cell has fewer) and the cells' exponents e (g, p):
    totals and largest contributions are those of the cell's contributions times 2^-e, which puts the
    largest in [1/2, 1) (exact, see the module docstring), so no total overflows. m >= 1."""
    n, p = C.shape
    m = min(m, max(n, 2))  # no cell has more than n contributions (a rule's n may be 2^62)
    count = np.bincount(labels, minlength=g)
    total = np.zeros((g, p))
    top = np.zeros((g, p, m))
    exponent = np.zeros((g, p), np.int64)
    if n == 0:
        return count, total, top, exponent
    for j in range(p):
        order = np.lexsort((-C[:, j], labels))
        lab_sorted = labels[order]
        first = np.searchsorted(lab_sorted, np.arange(g))
        rank = np.arange(n) - first[lab_sorted]
        keep = rank < m
        top[lab_sorted[keep], j, rank[keep]] = C[order[keep], j]
        exponent[:, j] = _exponent(top[:, j, 0])
        top[:, j] = np.ldexp(top[:, j], -exponent[:, j, None])
        total[:, j] = np.bincount(labels, weights=np.ldexp(C[:, j], -exponent[labels, j]), minlength=g)
    return count, total, top, exponent


def sensitive_cells(X, labels, rule: Rule) -> np.ndarray:
    """(g, p) boolean matrix: is cell (cluster, attribute) sensitive, for clusters 0..g-1."""
    func = "sensitive_cells"
    A = as_records(func, X)
    C = checked_contributions(func, A.ravel(), rule, "rows").reshape(A.shape)
    _, lab = compact_labels(func, labels, A.shape[0])
    g = int(lab.max()) + 1 if lab.size else 0
    count, total, top, _ = cell_summaries(C, lab, g, rule.top)
    return rule.flags(count[:, None], total, top)


# ---------------------------------------------------------------------------------------------
# dynamic k


@nb.njit(cache=True, nogil=True)
def _merge_top(a, b, out):
    """The len(out) largest of two decreasing lists, decreasing."""
    i = 0
    j = 0
    for t in range(out.shape[0]):
        if j >= b.shape[0] or (i < a.shape[0] and a[i] >= b[j]):
            out[t] = a[i]
            i += 1
        else:
            out[t] = b[j]
            j += 1


def merge_sensitive(X, labels, rule: Rule) -> np.ndarray:
    """Dynamic k: while some cluster has a sensitive cell, merge the sensitive cluster that comes
    first with its nearest cluster (centroids on the standardised attributes, ties: the cluster that
    comes first). Clusters only grow, so every record stays in a cluster of at least its original
    size. Returns labels 0..g'-1, numbered in increasing order of the smallest original cluster id each
    merged cluster contains.

    Each merge costs O(g p) (g clusters) for the nearest-cluster search. If one cluster of all the
    records is still sensitive, no merging can satisfy the rule and an error is raised."""
    func = "merge_sensitive"
    A = as_records(func, X)
    C = checked_contributions(func, A.ravel(), rule, "rows").reshape(A.shape)
    ids, lab = compact_labels(func, labels, A.shape[0])
    g = ids.size
    if g == 0:
        return lab
    m = rule.top
    count, total, top, exponent = cell_summaries(C, lab, g, m)
    Z = standardised(A)
    zsum = np.zeros((g, A.shape[1]))
    for j in range(A.shape[1]):
        zsum[:, j] = np.bincount(lab, weights=Z[:, j], minlength=g)
    root = np.arange(g)
    flags = rule.flags(count[:, None], total, top).any(axis=1)
    alive = np.ones(g, bool)
    merged = _merge_loop(count, total, top, exponent, zsum, flags, alive, root, rule)
    if merged is not None:
        raise fail(func, f"all {A.shape[0]} records in one cluster still leave a sensitive cell; no merging "
                         "of clusters can satisfy the rule")
    final = root.copy()
    for c in range(g):  # follow merge chains to the surviving cluster
        r = c
        while final[r] != r:
            r = final[r]
        final[c] = r
    survivors = np.unique(final)
    return np.searchsorted(survivors, final)[lab]


def _merge_loop(count, total, top, exponent, zsum, flags, alive, root, rule: Rule):
    """Merge in place until no live cluster is flagged; returns None, or the last cluster when it
    is still flagged with nothing left to merge it with. Totals and largest contributions are kept
    scaled by each cell's 2^-exponent (`cell_summaries`): merged cells take the larger exponent."""
    buf = np.empty(top.shape[2])
    while True:
        sensitive = np.flatnonzero(flags & alive)
        if sensitive.size == 0:
            return None
        a = sensitive[0]
        others = np.flatnonzero(alive)
        others = others[others != a]
        if others.size == 0:
            return a
        cen = zsum[others] / count[others, None]
        d = ((cen - zsum[a] / count[a]) ** 2).sum(axis=1)
        b = others[np.argmin(d)]  # first minimum: the cluster that comes first
        keep, gone = (a, b) if a < b else (b, a)
        e = np.maximum(exponent[keep], exponent[gone])
        shift_keep, shift_gone = exponent[keep] - e, exponent[gone] - e  # <= 0: exact unless far below
        count[keep] += count[gone]
        total[keep] = np.ldexp(total[keep], shift_keep) + np.ldexp(total[gone], shift_gone)
        exponent[keep] = e
        zsum[keep] += zsum[gone]
        for j in range(top.shape[1]):
            _merge_top(np.ldexp(top[keep, j], shift_keep[j]), np.ldexp(top[gone, j], shift_gone[j]), buf)
            top[keep, j] = buf
        alive[gone] = False
        root[gone] = keep
        flags[keep] = rule.flags(count[keep], total[keep], top[keep]).any()
