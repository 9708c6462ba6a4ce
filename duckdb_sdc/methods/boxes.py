"""Box anonymisation for the most accurate statistics (Xiang, Ferson, Ginzburg, Longpre, Mayorga &
Kosheleva, IFSA 2013, and its companion paper on boxes of Xiang & Kreinovich, CIES 2013).

Each of N records with n numeric attributes is released as a box, an interval per attribute, holding
at least k records and, for l-diversity, at least l values of every attribute i that differ by at
least eps_i. A statistic C computed from boxes is an interval; to first order its half-width is

    Delta_C = sum over records x of sum_i |dC/dx_i| Delta_i(x) = (1/N) sum_x sum_i a_i(x) Delta_i(x),

with Delta_i(x) the half-width of x's box along attribute i, dC/dx_i = b_i(x) / N and a_i = |b_i|.
Population statistics (divisor N), E_i the mean, sigma_i the sd, z_i = (x_i - E_i) / sigma_i:

    mean E_i:        b_i = 1
    variance V_i:    b_i = 2 (x_i - E_i)
    sd sigma_i:      b_i = (x_i - E_i) / sigma_i
    covariance C_ij: b_i = x_j - E_j,                 b_j = x_i - E_i
    correlation r_ij: b_i = (z_j - r z_i) / sigma_i,  b_j = (z_i - r z_j) / sigma_j

(every other b is 0). Several characteristics C used with probabilities p_C and wanted to accuracies
D0_C combine as a_i(x) = sum_C p_C / D0_C a_i^C(x) (`sensitivities`); in text:
``'0.7 * corr(income, savings) / 0.05 + 0.3 * mean(income) / 1000'`` (`parse_characteristic`).

**The optimal local box.** With rho(x) the data density (records per unit volume), a box of
half-widths Delta_i around x holds about rho 2^n prod Delta_i records; k-anonymity asks for k. The
smallest cost sum_i a_i Delta_i under rho 2^n prod Delta_i = k is reached at Delta_i = c(x) / a_i(x),

    c(x) = (1/2) (k / rho(x))^(1/n) (prod_j a_j(x))^(1/n),

where every term a_i Delta_i equals c, so the cost is n c(x) and Delta_C = (n/N) sum_x c(x). With
l-diversity also 2 Delta_i >= l eps_i: the attributes held at their bound are those with the largest
a_i eps_i, so after sorting by a_i eps_i (descending) the first t are held at l eps_i / 2 and the rest
share the remaining volume as above (c_t from the product constraint); t = 0..n is tried and the
feasible candidate of smallest cost kept (a candidate's free half-widths are raised to their bounds
where they fall below, which keeps it feasible and never beats the optimum, which is one of the
candidates), O(n^2) per record. The problem is convex in log Delta, so this is the global optimum
(tested against brute force over all subsets of held attributes). We define c(x) in every case as the
record's cost divided by n, (sum_i a_i Delta_i) / n: without l-diversity it is the formula above, and
it is what the dismissal and the weights below need.

**Density**: rho(x) = m / (2 r_m(x))^n, r_m(x) the max-norm distance from x to its m-th nearest record
counting x itself (k-d tree of the distinct points with their counts, so repeated records cost what
one costs), so the cube of half-width r_m(x) around x holds m records. m defaults to
k (at least 2): with equal a_i the optimal box is then exactly that cube, the smallest around x
holding k records. Choices the paper leaves open:

* duplicates: when m records coincide with x, r_m = 0 and rho = inf: c(x) = 0 and the box is the
  point itself (it holds >= m records); with l-diversity the half-widths are their bounds l eps_i / 2.
* a_i(x) = 0 (a record at the mean, for a variance): the infimum of the cost is not attained. We
  return its limit as the zero a_i tend to 0 together: without l-diversity, half-width 0 for every
  attribute with a_i > 0 and +inf for those with a_i = 0 (c = 0); when every a_i is 0, the cube of
  the right volume. With l-diversity the attributes with a_i > 0 sit at their bounds and those with
  a_i = 0 share the remaining volume as attributes of equal weight would (finite).
* n = 1: the box is the interval of half-width max(k / (2 rho), l eps / 2) around x, whatever a: box
  anonymisation of one attribute is interval rounding.

**Scale** (`duckdb_sdc._numerics`): the records are scaled by one power of two 2^-e before anything is
computed, each characteristic's weight by 2^(degree e) (a mean scales like the data, a variance like
their square, a correlation not at all), and the results are scaled back exactly: the boxes of the
data times 2^k are the boxes at 1 times 2^k for a homogeneous characteristic. A density, c(x) or
half-width beyond float64's range is refused.

**Dismissing rare points** (`dismissal`): keep the records with c(x) <= c0 and estimate from them
only; c0 minimises (n / #S) sum_S c(x) + A / sqrt(#S), A / sqrt(#S) being the statistical error of an
estimate from #S records (A > 0, e.g. 2 sd for a mean). Thresholds run over the values of c (records
with equal c are kept or dismissed together); on a tie of the objective the larger set is kept.

**Fuzzy weights** (`fuzzy_weights`): a weighted estimate sum_x w(x) f(x) has box uncertainty
n sum w c and statistical error A sqrt(sum w^2); w minimises their sum over w >= 0, sum w = 1. The KKT
conditions give w(x) = K (lambda - n c(x)) where n c(x) < lambda, else 0, K = 1 / (N~ lambda - n sum c),
lambda the larger root of N~ lambda^2 - 2 lambda n sum c + n^2 sum c^2 - A^2 = 0 over the N~ kept
records, i.e. sum_kept (lambda - n c)^2 = A^2. Starting from "every record kept" (the paper's
iteration) the discriminant A^2 - sum_kept (n c - mean)^2 can be negative; instead the function
g(lambda) = sum_x max(lambda - n c(x), 0)^2 is increasing, so the kept set is the N~ smallest c with
g(n c_(N~)) < A^2 <= g(n c_(N~+1)), found exactly in one pass over the sorted c (Welford sums, so no
cancellation), and there the discriminant is positive. Crisp dismissal and equal weights are
feasible weight vectors of the same objective, so the fuzzy optimum is never worse than either.

**A release** (`box_release`): the optimal box is a local shape, not a partition. The
characteristic-aware Mondrian cuts a region at the (lower) median of the attribute with the largest
a_i * width_i (a_i averaged over the region's records, width_i its range): the largest term of
sum a_i Delta_i. Records <= the cut value go left; a cut is allowed only if both sides keep >= k
records and, with l-diversity, >= l values at least eps_i apart in every attribute; otherwise the next
attribute is tried (largest term first); an attribute whose term is 0 (a_i = 0 over the region or a
single value) is never cut: a cut there cannot lower the uncertainty and would spend records that
useful cuts need. A region with no allowed cut is a box. Every record is released as its box's tight
bounds (the smallest and largest value of each attribute among the box's records) and a box id
(numbered left to right, the lower side of every cut first), never as its values: a released bound
is an original value shared as a bound by every record of the box, so by >= k records. With a_i = 1
/ range_i for every record this is plain strict Mondrian (`multivariate.mondrian_partition`), the
baseline; with n = 1 both are the same interval rounding.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numba as nb
import numpy as np

from .._numerics import exponent, from_unit, to_unit
from .._validate import fail, finite_values, named, show
from ..params import ATTRIBUTE_NAMES, CLUSTER_SIZE, DISTANCE, INTEGER_1, POSITIVE, Integer
from ._order import distinct_rows
from .multivariate import as_records, mondrian_engine, spread_at_least

KINDS = ("mean", "var", "sd", "cov", "corr")
_TINY = 5e-324  # the smallest positive float64
_ARITY = {"mean": 1, "var": 1, "sd": 1, "cov": 2, "corr": 2}


# ---------------------------------------------------------------------------------------------
# characteristics and their derivatives


@dataclass(frozen=True)
class Characteristic:
    """One statistic: kind in KINDS, the 0-based attributes it reads, usage probability p and the
    wanted accuracy d0 (both > 0; only the ratios p / d0 between characteristics matter)."""

    kind: str
    attrs: tuple[int, ...]
    p: float = 1.0
    d0: float = 1.0


_NUM = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_HEAD = re.compile(rf"\s*(?:(?P<p>{_NUM})\s*\*\s*)?(?P<kind>[A-Za-z_]\w*)\s*\(")
_ARG = re.compile(r'\s*(?:"(?P<quoted>(?:[^"]|"")*)"|(?P<bare>[^,()"]*[^,()"\s]))\s*(?P<end>[,)])')
_TAIL = re.compile(rf"\s*(?:/\s*(?P<d0>{_NUM}))?\s*(?P<sep>\+|\Z)")


def _attribute(func: str, spec: str, arg: str, quoted: bool, n: int, names) -> int:
    if names is not None and arg in names:
        return names.index(arg)
    if not quoted and arg.isdigit() and 1 <= int(arg) <= n:
        return int(arg) - 1
    known = f"the attribute names {', '.join(repr(x) for x in names)} or " if names is not None else ""
    raise fail(func, f"characteristic {show(spec)}: unknown attribute {arg!r}; use {known}positions 1..{n}")


def parse_characteristic(func: str, spec, n: int, names=None) -> tuple[Characteristic, ...]:
    """The characteristics of a text such as ``'corr(1, 2)'`` or ``'0.7 * corr(income, savings) / 0.05
    + 0.3 * mean(income) / 1000'``: terms ``[p *] kind(attribute[, attribute]) [/ d0]`` joined by
    '+', kind one of mean, var, sd (one attribute), cov, corr (two different attributes); an attribute
    is a 1-based position or one of `names` (double-quote a name with commas or parentheses). p and d0
    default to 1. A sequence of `Characteristic` is returned as it is (after checks)."""
    if spec is None:
        raise fail(func, "characteristic must not be NULL")
    if not isinstance(spec, str):
        chars = tuple(spec)
        for ch in chars:
            _check_characteristic(func, ch, n)
        if not chars:
            raise fail(func, "characteristic must name at least one statistic")
        return chars
    names = list(names) if names is not None else None
    out = []
    pos = 0
    text = spec
    while True:
        head = _HEAD.match(text, pos)
        if head is None:
            raise fail(func, f"characteristic {show(spec)} is not of the form '[p *] kind(attribute[, attribute]) "
                             "[/ d0] + ...' with kind one of " + ", ".join(KINDS))
        kind = head["kind"].lower()
        if kind not in KINDS:
            raise fail(func, f"characteristic {show(spec)}: unknown statistic {head['kind']!r}; use one of "
                             + ", ".join(KINDS))
        pos = head.end()
        attrs = []
        while True:
            arg = _ARG.match(text, pos)
            if arg is None:
                raise fail(func, f"characteristic {show(spec)}: {kind}( needs attributes separated by commas "
                                 "and a closing parenthesis")
            quoted = arg["quoted"] is not None
            name = arg["quoted"].replace('""', '"') if quoted else arg["bare"]
            attrs.append(_attribute(func, spec, name, quoted, n, names))
            pos = arg.end()
            if arg["end"] == ")":
                break
        tail = _TAIL.match(text, pos)
        if tail is None:
            at = len(text) - len(text[pos:].lstrip()) + 1
            raise fail(func, f"characteristic {show(spec)}: unexpected text after {kind}(...) at position "
                             f"{at}; join terms with '+'")
        p = float(head["p"]) if head["p"] is not None else 1.0
        d0 = float(tail["d0"]) if tail["d0"] is not None else 1.0
        ch = Characteristic(kind, tuple(attrs), p, d0)
        _check_characteristic(func, ch, n, spec)
        out.append(ch)
        pos = tail.end()
        if tail["sep"] == "":
            return tuple(out)


def _check_characteristic(func: str, ch: Characteristic, n: int, spec=None) -> None:
    where = f"characteristic {show(spec)}: " if spec is not None else "characteristic: "
    if ch.kind not in KINDS:
        raise fail(func, f"{where}unknown statistic {ch.kind!r}; use one of {', '.join(KINDS)}")
    if len(ch.attrs) != _ARITY[ch.kind]:
        raise fail(func, f"{where}{ch.kind} needs {_ARITY[ch.kind]} attribute(s), got {len(ch.attrs)}")
    if any(not 0 <= a < n for a in ch.attrs):
        raise fail(func, f"{where}attribute positions must be in 1..{n}")
    if len(ch.attrs) == 2 and ch.attrs[0] == ch.attrs[1]:
        raise fail(func, f"{where}{ch.kind} needs two different attributes (for one, use var or sd)")
    for name, v in (("p", ch.p), ("d0", ch.d0)):
        if not (math.isfinite(v) and v > 0):
            raise fail(func, f"{where}{name} must be a finite number > 0, got {v}")


# The statistic's unit as a power of the data's: C(X * 2^e) = 2^(DEGREE * e) C(X) (a mean scales like
# the data, a variance like their square, a correlation not at all), so its derivative b_i scales
# by 2^((DEGREE - 1) e).
_DEGREE = {"mean": 1, "var": 2, "sd": 1, "cov": 2, "corr": 0}


def _derivative(func: str, A: np.ndarray, ch: Characteristic) -> np.ndarray:
    """b (N, n) of the population statistic C for the finite records A (see `derivative`)."""
    N, n = A.shape
    b = np.zeros((N, n))
    if N == 0:
        return b
    i = ch.attrs[0]
    if ch.kind == "mean":
        b[:, i] = 1.0
        return b
    d = A[:, list(ch.attrs)] - A[:, list(ch.attrs)].mean(axis=0)
    if ch.kind == "var":
        b[:, i] = 2.0 * d[:, 0]
        return b
    if ch.kind == "cov":
        b[:, i] = d[:, 1]
        b[:, ch.attrs[1]] = d[:, 0]
        return b
    sd = np.sqrt((d * d).mean(axis=0))
    for q, s in enumerate(sd):
        if not s > 0:
            col = np.abs(A[:, ch.attrs[q]])
            if np.ptp(A[:, ch.attrs[q]]) > 0:
                # the records are in one unit, their largest magnitude's: an attribute 2^500 times smaller
                # has squares that underflow, so its sd reads 0 although its values differ
                raise fail(func, f"rows holds attribute {ch.attrs[q] + 1} about 2^{-int(np.frexp(col.max())[1])} "
                                 f"times smaller than the records' largest value, too small beside it for the "
                                 f"{ch.kind} in their common unit; rescale the attributes to similar magnitudes",
                           "rows")
            raise fail(func, f"{ch.kind} of attribute {ch.attrs[q] + 1}: the attribute is constant (sd 0), so the "
                             "statistic has no derivative")
    if ch.kind == "sd":
        b[:, i] = d[:, 0] / sd[0]
        return b
    z = d / sd
    r = float((z[:, 0] * z[:, 1]).mean())
    b[:, i] = (z[:, 1] - r * z[:, 0]) / sd[0]
    b[:, ch.attrs[1]] = (z[:, 0] - r * z[:, 1]) / sd[1]
    return b


def derivative(X, ch: Characteristic) -> np.ndarray:
    """b (N, n): dC/dx_i at every record equals b_i(x) / N, for the population statistic C.

    Computed on the records scaled by one power of two 2^-e (`duckdb_sdc._numerics`) and scaled back
    by 2^((degree - 1) e), exact at any scale; a derivative beyond float64's range is refused."""
    func = "derivative"
    A = as_records(func, X)
    _check_characteristic(func, ch, A.shape[1])
    U, e = to_unit(A)
    return from_unit(func, f"the derivative of {ch.kind}", _derivative(func, U, ch), e, power=_DEGREE[ch.kind] - 1)


def _unit_sensitivities(func: str, U: np.ndarray, e: int, chars) -> tuple[np.ndarray, int]:
    """(a'', u) for the records U = X * 2^-e: a(X) = 2^(u - e) a'', where a'' sums p_C / d0_C |b^C(U)|
    times 2^(degree_C e - u), u the largest degree_C e. The factors are powers of two, so a'' is a(X)
    scaled exactly; a characteristic whose unit is 2^1000 times smaller than another's adds nothing
    (as it would add nothing to their sum)."""
    units = [_DEGREE[ch.kind] * e for ch in chars]
    u = max(units)
    a = np.zeros(U.shape)
    for ch, unit in zip(chars, units):
        a += np.ldexp(ch.p / ch.d0, unit - u) * np.abs(_derivative(func, U, ch))
    return a, u


def sensitivities(X, characteristic, names=None) -> np.ndarray:
    """a (N, n) = sum_C p_C / D0_C |b^C(x)|: the weight of each half-width in the uncertainty.
    Scale invariant as `derivative`; sensitivities beyond float64's range are refused."""
    func = "sensitivities"
    A = as_records(func, X)
    chars = parse_characteristic(func, characteristic, A.shape[1], ATTRIBUTE_NAMES.check(names, func, "names"))
    U, e = to_unit(A)
    a, u = _unit_sensitivities(func, U, e, chars)
    return from_unit(func, "a sensitivity", a, u - e)


# ---------------------------------------------------------------------------------------------
# density


NEIGHBOURS = Integer(2, doc="neighbours of the density estimate, 2 <= m <= records")
OPTIONAL_NEIGHBOURS = Integer(2, nullable=True, doc="neighbours of the density estimate, 2 <= m <= records "
                                                    "(NULL: max(k, 2))")


def _neighbours(func: str, m, N: int) -> int:
    m = NEIGHBOURS.check(m, func, "m")
    if m > N:
        raise fail(func, f"m = {m} is larger than the number of records ({N}); the density needs m records")
    return m


def _radius(A: np.ndarray, m: int) -> np.ndarray:
    """r_m of every record of the finite records A. The k-d tree holds each distinct point once with
    its number of records, and a point's radius is the distance at which the counts of the points
    nearest to it (itself first, at distance 0) reach m; the candidate list doubles until they do. So
    repeated points cost what one point costs, and distinct points what they did (one query of m)."""
    P, owner, count = distinct_rows(A)
    from scipy.spatial import cKDTree  # scipy is imported by the methods that use it, not at connect

    tree = cKDTree(P)
    radius = np.empty(P.shape[0])
    todo = np.arange(P.shape[0])
    kk = min(m, P.shape[0])
    while todo.size:
        dist, idx = tree.query(P[todo], k=kk, p=np.inf)
        dist = dist.reshape(todo.size, kk)
        reached = np.cumsum(count[idx.reshape(todo.size, kk)], axis=1) >= m
        done = reached.any(axis=1)
        radius[todo[done]] = dist[done, reached[done].argmax(axis=1)]
        todo = todo[~done]
        kk = min(2 * kk, P.shape[0])
    return radius[owner]


def neighbour_radius(X, m) -> np.ndarray:
    """r_m(x): max-norm distance from every record to its m-th nearest record, counting itself
    (m >= 2). Repeated records are one point of the k-d tree (`_radius`); the records are scaled by
    a power of two first (`duckdb_sdc._numerics`), so every scale gives the same neighbours."""
    func = "neighbour_radius"
    A = as_records(func, X)
    m = _neighbours(func, m, A.shape[0])
    U, e = to_unit(A)
    return from_unit(func, "a neighbour distance", _radius(U, m), e)


def _density_of_radius(func: str, r: np.ndarray, e: int, m: int, n: int) -> np.ndarray:
    """m / (2 r 2^e)^n for the radii r of records scaled by 2^-e; +inf where r = 0. Where the plain
    formula leaves the normal range, 2 r = f 2^E (f in [1/2, 1)) gives it as (m / f^n) 2^(-n (E + e)),
    correctly rounded; a density that is still 0 or infinite although r > 0 is refused."""
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        rho = np.ldexp(m / (2.0 * r) ** n, -n * e)
    odd = (r > 0) & ~((rho >= np.finfo(np.float64).tiny) & np.isfinite(rho))
    if odd.any():
        f, E = np.frexp(2.0 * r[odd])
        with np.errstate(over="ignore", under="ignore"):
            rho[odd] = np.ldexp(m / f ** n, -n * (E + e))
        if not ((rho[odd] > 0) & np.isfinite(rho[odd])).all():
            raise fail(func, f"the density m / (2 r)^n is beyond float64's range for these data (n = {n} attributes at "
                             f"this scale); rescale the data")
    return rho


def density(X, m) -> np.ndarray:
    """rho(x) = m / (2 r_m(x))^n records per unit volume; +inf where m records coincide with x. A
    density beyond float64's range (data at 1e308 in several attributes) is refused."""
    func = "density"
    A = as_records(func, X)
    m = _neighbours(func, m, A.shape[0])
    U, e = to_unit(A)
    return _density_of_radius(func, _radius(U, m), e, m, A.shape[1])


# ---------------------------------------------------------------------------------------------
# the optimal half-widths


@nb.njit(cache=True, nogil=True)
def _held(a, L, idx, log_v, delta):
    """Minimise sum a_i D_i over the attributes idx (a_i > 0, L_i > 0) subject to sum log D_i >= log_v
    and D_i >= L_i; writes D into delta and returns the cost. Candidates: the first t attributes in
    the order of decreasing a_i L_i held at L_i, t = 0..len(idx)."""
    m = idx.shape[0]
    key = np.empty(m)
    for q in range(m):
        key[q] = -a[idx[q]] * L[idx[q]]
    order = idx[np.argsort(key, kind="mergesort")]
    best = np.inf
    best_t = -1
    best_logc = 0.0
    sum_log_l = 0.0
    cost_l = 0.0
    sum_log_a_rest = 0.0
    for q in range(m):
        sum_log_a_rest += math.log(a[order[q]])
    for t in range(m + 1):
        if t > 0:
            i = order[t - 1]
            sum_log_l += math.log(L[i])
            cost_l += a[i] * L[i]
            sum_log_a_rest -= math.log(a[i])
        if t == m:
            if sum_log_l >= log_v and cost_l < best:
                best = cost_l
                best_t = t
            continue
        logc = (log_v - sum_log_l + sum_log_a_rest) / (m - t)
        cost = cost_l
        for q in range(t, m):
            i = order[q]
            cost += a[i] * max(math.exp(logc - math.log(a[i])), L[i])
        if cost < best:
            best = cost
            best_t = t
            best_logc = logc
    for q in range(m):
        i = order[q]
        if q < best_t:
            delta[i] = L[i]
        else:
            delta[i] = max(math.exp(best_logc - math.log(a[i])), L[i])
    return best


@nb.njit(cache=True, nogil=True)
def _optimal_boxes(a, log_s, L, has_l):
    """Per record: half-widths (N, n), cost sum a_i Delta_i, number of attributes at their bound.
    log_s[p] = log of the side of the cube of volume k / rho (-inf for rho = inf)."""
    N, n = a.shape
    delta = np.empty((N, n))
    cost = np.zeros(N)
    held = np.zeros(N, np.int64)
    ones = np.ones(n)
    for p in range(N):
        ap = a[p]
        pos = np.empty(n, np.int64)
        zero = np.empty(n, np.int64)
        n_pos = 0
        n_zero = 0
        for i in range(n):
            if ap[i] > 0.0:
                pos[n_pos] = i
                n_pos += 1
            else:
                zero[n_zero] = i
                n_zero += 1
        pos = pos[:n_pos]
        zero = zero[:n_zero]
        log_v = n * log_s[p]
        row = delta[p]
        if not has_l:
            if log_s[p] == -np.inf:
                row[:] = 0.0
            elif n_zero == 0:
                logc = log_s[p]
                for i in range(n):
                    logc += math.log(ap[i]) / n
                for i in range(n):
                    row[i] = math.exp(logc - math.log(ap[i]))
                    cost[p] += ap[i] * row[i]
            elif n_pos == 0:
                row[:] = math.exp(log_s[p])
            else:
                for i in pos:
                    row[i] = 0.0
                for i in zero:
                    row[i] = np.inf
            continue
        if n_zero == 0:
            cost[p] = _held(ap, L, pos, log_v, row)
        else:
            for i in pos:
                row[i] = L[i]
                cost[p] += ap[i] * L[i]
                log_v -= math.log(L[i])
            _held(ones, L, zero, log_v, row)
        for i in range(n):  # only reached with l-diversity
            if row[i] <= L[i]:
                held[p] += 1
    return delta, cost, held


@dataclass
class OptimalBoxes:
    """The optimal local box of every record: half_widths (N, n), c (N,) = (sum_i a_i Delta_i) / n,
    at_bound (N,) = number of attributes held at their l-diversity bound l eps_i / 2."""

    half_widths: np.ndarray
    c: np.ndarray
    at_bound: np.ndarray

    @property
    def uncertainty(self) -> float:
        """Delta = (n / N) sum_x c(x), the first-order half-width of the characteristic."""
        N, n = self.half_widths.shape
        return float(n * self.c.sum() / N) if N else float("nan")


DIVERSITY = Integer(1, nullable=True, doc="l-diversity: at least l values of every attribute eps_i apart per box "
                                         "(NULL: none); 1 <= l <= k")


def diversity(func: str, l, eps, n: int, k: int | None = None):
    """(l, eps as an (n,) array) validated; (1, None) when l is None. eps is one number for every
    attribute or one per attribute, each > 0; l <= k."""
    l = DIVERSITY.check(l, func, "l")
    if eps is not None:  # checked whenever given, also where l does not use it
        e = DISTANCE.check(eps, func, "eps", n=n)
    if l is None:
        return 1, None
    if k is not None and l > k:
        raise fail(func, f"l = {l} is larger than k = {k}: l values of an attribute need l records in a box, "
                         "so use k >= l")
    if l == 1 and eps is None:
        return 1, None
    if eps is None:
        raise fail(func, "eps must be given with l (the distance at which two values count as different)")
    return l, e


def optimal_half_widths(a, rho, k, l=None, eps=None) -> OptimalBoxes:
    """Optimal half-widths for given sensitivities a (N, n) >= 0 and densities rho (N,) > 0 (inf
    allowed): minimise sum_i a_i Delta_i subject to rho 2^n prod Delta_i >= k and, with l,
    2 Delta_i >= l eps_i. See the module docstring for the choices at a_i = 0 and rho = inf."""
    func = "optimal_half_widths"
    a = np.ascontiguousarray(a, dtype=np.float64)
    rho = np.ascontiguousarray(rho, dtype=np.float64)
    if a.ndim != 2 or rho.shape != (a.shape[0],):
        raise fail(func, f"a must be (N, n) and rho (N,), got {a.shape} and {rho.shape}")
    if not np.isfinite(a).all() or (a < 0).any():
        raise fail(func, "a must be finite and >= 0")
    if np.isnan(rho).any() or (rho <= 0).any():
        raise fail(func, "rho must be > 0")
    k = INTEGER_1.check(k, func, "k")
    n = a.shape[1]
    with np.errstate(divide="ignore"):
        log_s = (math.log(k) - np.log(rho)) / n - math.log(2.0)
    return _solve(func, a, log_s, k, l, eps)


def _solve(func, a, log_s, k, l, eps, scale: int = 0) -> OptimalBoxes:
    """The optimum for the sensitivities a and log side lengths log_s of records scaled by 2^-scale
    (eps is in the records' own units)."""
    n = a.shape[1]
    l, e = diversity(func, l, eps, n, k)
    has_l = e is not None and l > 1
    # bounds far below the records' scale stay positive (the smallest float64): they hold nothing back
    L = np.maximum(np.ldexp(l * e / 2.0, -scale), _TINY) if has_l else np.zeros(n)
    delta, cost, held = _optimal_boxes(a, np.ascontiguousarray(log_s), L, has_l)
    return OptimalBoxes(delta, cost / n, held)


def optimal_boxes(X, characteristic, k, l=None, eps=None, m=None, names=None) -> OptimalBoxes:
    """The optimal local box of every record of X for the characteristic (text or `Characteristic`s):
    density from the m nearest records (m defaults to max(k, 2)), then `optimal_half_widths`."""
    func = "optimal_boxes"
    A = as_records(func, X)
    N, n = A.shape
    k = CLUSTER_SIZE.check(k, func, "k", n=N)
    chars = parse_characteristic(func, characteristic, n, ATTRIBUTE_NAMES.check(names, func, "names"))
    m = _neighbours(func, max(k, 2) if m is None else m, N)
    # on the records scaled by 2^-e: the half-widths scale by 2^e, the costs a_i Delta_i by 2^u
    U, e = to_unit(A)
    a, u = _unit_sensitivities(func, U, e, chars)
    r = _radius(U, m)
    with np.errstate(divide="ignore"):
        log_s = np.log(r) + (math.log(k) - math.log(m)) / n
    boxes = _solve(func, a, log_s, k, l, eps, e)
    return OptimalBoxes(from_unit(func, "a half-width", boxes.half_widths, e),
                        from_unit(func, "c(x)", boxes.c, u), boxes.at_bound)


# ---------------------------------------------------------------------------------------------
# dismissal and fuzzy weights


def _costs(func: str, c, n, A):
    c = finite_values(func, "cs", c)
    if (c < 0).any():
        raise fail(func, f"cs must be >= 0 (c(x) is half a cost), got {float(c[c < 0][0])}")
    n = INTEGER_1.check(n, func, "n")
    A = POSITIVE.check(A, func, "A")
    return c, n, A


def weights_objective(w, c, n, A) -> float:
    """n sum w c + A sqrt(sum w^2): box uncertainty plus statistical error of the weighted estimate."""
    w = np.asarray(w, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    return float(n * np.dot(w, c) + A * np.sqrt(np.dot(w, w)))


def dismissal(c, n, A) -> np.ndarray:
    """Which records to keep (bool mask): those with c(x) <= c0, c0 minimising
    (n / #S) sum_S c + A / sqrt(#S) over the values of c; a tie keeps the larger set."""
    c, n, A = _costs("dismissal", c, n, A)
    if c.shape[0] == 0:
        return np.zeros(0, bool)
    v = np.sort(c, kind="stable")
    sizes = np.arange(1, v.shape[0] + 1)
    ends = np.flatnonzero(np.append(v[1:] != v[:-1], True))  # last position of each run of equal c
    s = sizes[ends]
    J = n * np.cumsum(v)[ends] / s + A / np.sqrt(s)
    best = np.flatnonzero(J == J.min())[-1]
    return c <= v[ends[best]]


@named
def crisp_weights(c, n, A) -> np.ndarray:
    """1 / #S on the records `dismissal` keeps, 0 elsewhere."""
    keep = dismissal(c, n, A)
    w = np.zeros(keep.shape[0])
    if keep.any():
        w[keep] = 1.0 / keep.sum()
    return w


@nb.njit(cache=True, nogil=True)
def _fuzzy_sorted(y, A2):
    """For y = n c sorted ascending: (kept count s, lambda - mean, mean) where the first s values
    satisfy s (y_s - mean_s)^2 + M2_s < A^2 (Welford mean and sum of squared deviations)."""
    mean = 0.0
    m2 = 0.0
    best_s = 0
    best_mean = 0.0
    best_m2 = 0.0
    for s in range(1, y.shape[0] + 1):
        v = y[s - 1]
        d = v - mean
        mean += d / s
        m2 += d * (v - mean)
        g = s * (v - mean) * (v - mean) + m2
        if g < A2:  # NaN (an infinite scaled y) ends the loop
            best_s = s
            best_mean = mean
            best_m2 = m2
        else:
            break
    return best_s, math.sqrt((A2 - best_m2) / best_s), best_mean


def fuzzy_weights(c, n, A) -> np.ndarray:
    """Weights w >= 0, sum 1, minimising n sum w c + A sqrt(sum w^2) (see the module docstring):
    w(x) = (lambda - n c(x)) / (N~ (lambda - mean)) on the N~ records of smallest c, 0 elsewhere."""
    c, n, A = _costs("fuzzy_weights", c, n, A)
    if c.shape[0] == 0:
        return np.zeros(0)
    order = np.argsort(c, kind="stable")
    # the weights depend on c and A only through their ratios: both are scaled by the power of two
    # that puts A in [1/2, 1), so A^2 neither overflows (A = 1e200) nor underflows; a scaled n c that
    # overflows is a record far beyond A, which no weight reaches
    e = exponent(A)
    with np.errstate(over="ignore"):
        y = n * np.ldexp(c[order], -e)
    s, gap, mean = _fuzzy_sorted(y, math.ldexp(A, -e) ** 2)
    w = np.zeros(c.shape[0])
    w[order[:s]] = (gap + (mean - y[:s])) / (s * gap)  # lambda - y with lambda = mean + gap, without rounding lambda
    return w


# ---------------------------------------------------------------------------------------------
# weighted estimates (population form, weights normalised by their sum)


def _weighted(func, w, *cols):
    """The normalised weights (scaled by a power of two first, so their sum cannot overflow) and,
    for each column, (its values scaled into [-1, 1] by a power of two, its exponent)."""
    w = finite_values(func, "w", w)
    xs = [finite_values(func, "x", x) for x in cols]
    if any(x.shape != w.shape for x in xs):
        raise fail(func, "the values and the weights must have the same length")
    if (w < 0).any():
        raise fail(func, f"weights must be >= 0, got {float(w[w < 0][0])}")
    w, _ = to_unit(w)
    total = w.sum()
    if not total > 0:
        raise fail(func, "the weights must have a positive sum")
    return w / total, [to_unit(x) for x in xs]


def _centred(w: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
    """(weighted mean, x - mean) of values x scaled into [-1, 1]. The mean is the smallest value with
    a positive weight plus the weighted mean of the excesses over it, so a column that is constant
    where the weights are positive has exactly that value as its mean and exactly 0 as every
    deviation (its variance is exactly 0 whatever the CPU's summation order)."""
    lo = float(x[w > 0].min())
    mean = lo + float(np.dot(w, x - lo))
    return mean, x - mean


def weighted_mean(x, w) -> float:
    """sum w x / sum w (computed on scaled values: exact at any scale)."""
    w, [(x, e)] = _weighted("weighted_mean", w, x)
    return math.ldexp(_centred(w, x)[0], e)


def _weighted_moments(func, x, y, w):
    """(sum w dx dy, sum w dx^2, sum w dy^2, exponent of x, exponent of y) with normalised w."""
    w, [(x, ex), (y, ey)] = _weighted(func, w, x, y)
    dx = _centred(w, x)[1]
    dy = _centred(w, y)[1]
    return float(np.dot(w, dx * dy)), float(np.dot(w, dx * dx)), float(np.dot(w, dy * dy)), ex, ey


def weighted_cov(x, y, w) -> float:
    """sum w (x - mean_w x)(y - mean_w y) / sum w; refused when it is beyond float64's range."""
    sxy, _, _, ex, ey = _weighted_moments("weighted_cov", x, y, w)
    return from_unit("weighted_cov", "the covariance", sxy, ex + ey, param="x and y")


def weighted_var(x, w) -> float:
    """sum w (x - mean_w x)^2 / sum w; exactly 0 for a constant column; refused beyond float64's range."""
    _, sxx, _, ex, _ = _weighted_moments("weighted_var", x, x, w)
    return from_unit("weighted_var", "the variance", sxx, 2 * ex, param="x")


def weighted_corr(x, y, w) -> float:
    """weighted_cov / sqrt(weighted_var x weighted_var y); NaN when a weighted variance is 0 (exactly
    so for a column that is constant where the weights are positive). Scale free."""
    sxy, sxx, syy, _, _ = _weighted_moments("weighted_corr", x, y, w)
    if not (sxx > 0 and syy > 0):
        return float("nan")
    return sxy / (math.sqrt(sxx) * math.sqrt(syy))  # sxx * syy could underflow


# ---------------------------------------------------------------------------------------------
# the characteristic-aware Mondrian release


def aware_mondrian_partition(X, a, k, l=None, eps=None) -> np.ndarray:
    """Box ids 0..g-1 of the characteristic-aware Mondrian for the sensitivities a (N, n) >= 0 (see
    the module docstring). Every box has >= k records and, with l, >= l values eps_i apart in every
    attribute. O(n N log^2 N) (l-diversity checks add a sort per attribute and side)."""
    func = "aware_mondrian_partition"
    A = as_records(func, X)
    N, n = A.shape
    k = CLUSTER_SIZE.check(k, func, "k", n=N)
    w = np.ascontiguousarray(a, dtype=np.float64)
    if w.shape != A.shape or not np.isfinite(w).all() or (w < 0).any():
        raise fail(func, f"a must be a finite (N, n) matrix >= 0 like X {A.shape}, got {w.shape}")
    l, e = diversity(func, l, eps, n, k)
    if e is None:
        e = np.zeros(n)
    if l > 1:
        _check_diverse(func, A, l, e)
    return mondrian_engine(A, k, False, np.ones(n), w, l, e)


def _check_diverse(func: str, A: np.ndarray, l: int, e: np.ndarray) -> None:
    for j in range(A.shape[1]):
        if not spread_at_least(np.sort(A[:, j]), e[j], l):
            raise fail(func, f"attribute {j + 1} does not have l = {l} values at least eps = {e[j]:g} apart "
                             "among all the records, so no box can be l-diverse")


def box_bounds(X, labels) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper), each (N, n): the smallest and largest value of every attribute in each
    record's box."""
    A = as_records("box_bounds", X)
    lab = np.asarray(labels, dtype=np.int64)
    if A.shape[0] == 0:
        return A.copy(), A.copy()
    order = np.argsort(lab, kind="stable")
    sl = lab[order]
    starts = np.flatnonzero(np.r_[True, sl[1:] != sl[:-1]])
    lo = np.minimum.reduceat(A[order], starts, axis=0)
    hi = np.maximum.reduceat(A[order], starts, axis=0)
    group = np.empty(A.shape[0], np.int64)
    group[order] = np.cumsum(np.r_[True, sl[1:] != sl[:-1]]) - 1
    return lo[group], hi[group]


@dataclass
class BoxRelease:
    """labels (N,) box ids; lower, upper (N, n): every record's box."""

    labels: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


@named
def box_release(X, characteristic, k, l=None, eps=None, names=None) -> BoxRelease:
    """Release every record of X as its box of the characteristic-aware Mondrian (`aware_mondrian_partition`
    with a = `sensitivities`)."""
    func = "box_release"
    A = as_records(func, X)
    N, n = A.shape
    k = CLUSTER_SIZE.check(k, func, "k", n=N)
    chars = parse_characteristic(func, characteristic, n, ATTRIBUTE_NAMES.check(names, func, "names"))
    l, e_l = diversity(func, l, eps, n, k)
    if l > 1:
        _check_diverse(func, A, l, e_l)
    # on the records scaled by 2^-e (same cuts: every attribute's term a_i width_i scales alike)
    U, e = to_unit(A)
    a, _ = _unit_sensitivities(func, U, e, chars)
    # eps below the records' scale (distinct values always differ by more) stays positive
    eps_u = None if e_l is None else np.maximum(np.ldexp(e_l, -e), _TINY)
    labels = aware_mondrian_partition(U, a, k, l, eps_u)
    lo, hi = box_bounds(A, labels)
    return BoxRelease(labels, lo, hi)


def box_uncertainty(a, lower, upper, weights=None) -> float:
    """sum_x w(x) sum_i a_i(x) (upper_i - lower_i) / 2 (w = 1/N by default): the first-order half-width
    of the characteristic whose sensitivities are a, estimated from the boxes."""
    a = np.asarray(a, dtype=np.float64)
    h = (np.asarray(upper, dtype=np.float64) - np.asarray(lower, dtype=np.float64)) / 2.0
    per_record = (a * h).sum(axis=1)
    if weights is None:
        return float(per_record.mean()) if per_record.size else float("nan")
    return float(np.dot(np.asarray(weights, dtype=np.float64), per_record))
