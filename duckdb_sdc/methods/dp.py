"""Differentially private releases of one numeric attribute, with and without microaggregation.

The seed paper: J. Soria-Comas, D. Sanchez, J. Domingo-Ferrer, S. Martinez, L. Del Vasto-Terrientes,
"Conciliating privacy and utility in data releases via individual differential privacy and
microaggregation", Transactions on Data Privacy 18(1):29-50, 2025 (arXiv:2312.13712). Each attribute
is released on its own: its values are clamped to the declared domain [lb, ub], grouped by
individual ranking microaggregation (sort, then clusters of k consecutive values; the last cluster
also takes the n mod k remaining values), and every member of a cluster receives the same noised
centroid; outputs are clamped to [lb, ub]. The noise is Laplace with scale sensitivity / epsilon,
one draw per cluster, sampled safely (`duckdb_sdc.methods.noise`: a grid point with exact discrete
Laplace noise from operating-system randomness, never a float Laplace sampler).

Neighbouring data sets differ in the value of one record (bounded neighbours, same n). What each
mechanism guarantees, per attribute and with budget epsilon:

* `dp_laplace` (the baseline; no microaggregation): each value + Laplace((ub - lb) / epsilon).
  epsilon-differential privacy (Dwork, McSherry, Nissim & Smith 2006).
* `dp_um`: centroid + Laplace(GS / epsilon) with GS = (ub - lb) / |C| (Sanchez, Domingo-Ferrer,
  Martinez & Soria-Comas, "Utility-preserving differentially private data releases via individual
  ranking microaggregation", Information Fusion 30, 2016). What is proved, and what is not:
  - The vector of noisy cluster means in rank order, released unlinked from records
    (`dp_um_centroids`), is epsilon-differentially private, also when a change moves values between
    clusters: the sorted column moves by at most ub - lb in L1 when one value changes, and the
    clusters are fixed ranges of ranks, so the centroids move by at most sum_C |change of C's sum| /
    |C|, which the per-cluster scales absorb.
  - Released one value per record (`dp_um`), it is epsilon-DP only for the fixed clustering: for
    neighbours whose change keeps every record in its cluster. Records that share a noisy value
    reveal the partition, which a neighbouring data set changes: for ids 1..6 with x = 1..6, k = 3,
    [lb, ub] = [0, 10], the event "ids 1, 2, 3 share one value and id 4 has another" has probability
    about 0.95 at epsilon = 1 (0.62 at epsilon = 0.1) and 0 when x1 = 10, so no epsilon bounds the
    per-record release. A release gives a DP-UM column epsilon-DP by writing its centroids unlinked.
* `idp_ls`: centroid + Laplace(LS / epsilon) with the local sensitivity of the centroid at the
  actual data, LS = max(ub - min(C), max(C) - lb) / |C|. epsilon-individual differential privacy
  (Soria-Comas, Domingo-Ferrer, Sanchez & Megias, "Individual differential privacy: a
  utility-preserving formulation of differential privacy guarantees", IEEE TIFS 12(6), 2017): the
  release from the actual data set D and the release that the same mechanism (same noise scales)
  would give on any neighbour D' are e^epsilon-indistinguishable. It is a guarantee for the
  individuals in D, not for every pair of data sets: the noise scale depends on D and is not
  itself protected. It holds for the fixed clustering of D (the changed record stays in its
  cluster), as in the paper.
* `idp_cbls`: before taking the mean, one smallest value of the cluster is replaced by the second
  smallest and one largest by the second largest. For sorted cluster values x(1) <= ... <= x(m),
  m >= 3, the local sensitivity of this mean (any single-record change to any real value) is
      max(2 x(m) + x(3) - 2 x(2) - x(m-1), 2 x(m-1) + x(2) - 2 x(1) - x(m-2)) / m,
  attained by moving x(1) to +infinity or x(m) to -infinity. It needs no domain; a domain, if
  given, still clamps inputs and outputs. epsilon-individual differential privacy for the fixed
  clustering, as for `idp_ls`. A cluster whose values are all equal has sensitivity 0 and is
  released exactly: no single-record change can move its pre-processed mean.

Several attributes: sequential composition, the release's epsilon is the sum of the attributes'
budgets (`split_epsilon`). Clusters within one attribute are disjoint, so every centroid of an
attribute uses that attribute's whole budget.

Choices where the papers are silent:
* Values outside [lb, ub] are clamped into it before anything else (clamping one record cannot move
  another, so the guarantee holds for the declared domain); outputs are clamped too.
* `dp_laplace`, `dp_um` and `idp_ls` require both bounds: their sensitivities are defined by the
  domain, and bounds taken from the data would void the guarantee. `idp_cbls` takes none, one or
  both bounds.
* k >= 1 for `dp_um` and `idp_ls` (k = 1 is plain Laplace noise with its own sensitivity);
  k >= 3 for `idp_cbls`, whose clusters need three values. Noise, not the group, protects, so the
  minimum group size 2 of deterministic masking does not apply.
* Scale: each mechanism runs on its values times a power of two 2^-e (exact) that puts the domain's
  largest magnitude (or, for `idp_cbls` without both bounds, the data's) in [1/2, 1), and the release
  is multiplied back by 2^e: sums cannot overflow at 1e308, and a sensitivity cannot underflow (at
  1e-318 the noise used to vanish and the raw values came back). For the DP mechanisms e depends on
  the public domain only, so the output grid does too. `idp_cbls` without a domain refuses a noisy
  value beyond the largest finite double (`scale_back`). The sampler refuses, rather than releasing raw
  values, any noise scale that would still not fit a normal double: after the scaling only idp_cbls can
  meet this, for a cluster of values about 2^-970 of the attribute's largest, and says so (`_sampling`).
* Seeded noise (reproducible, not private) is counter-based: the noise of cluster t, or of record t
  for `dp_laplace`, is a pure function of (seed, t) (`noise.discrete_laplace_keyed`).
* Floating point: the sensitivity handed to the sampler is the formula's value plus a bound on the
  rounding error of the computed centroid, (m + 1) 2^-51 times the largest magnitude the centroid
  can have on any neighbour (max(|lb|, |ub|), or the cluster's extreme values for `idp_cbls`, whose
  pre-processed values always lie between them). This adds at most about 1e-15 relative noise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from contextlib import contextmanager

import numba as nb
import numpy as np

from .._validate import SdcError, fail, finite_values, reporting, show
from ..params import (BOUND, CBLS_CLUSTER_SIZE, DP_CLUSTER_SIZE, EPSILON, MECHANISM, OPTIONAL_BOUND, SEED,
                      SPLIT, stratum_seed)
from ._order import sort_column, unsort
from .noise import NoiseUnderflow, laplace_mechanism

MECHANISMS = MECHANISM.options
_CBLS, _LS, _UM = 0, 1, 2
_KIND = {"idp_cbls": _CBLS, "idp_ls": _LS, "dp_um": _UM}


# ---------------------------------------------------------------------------------------------
# validation


def checked_domain(func: str, lb, ub, required: bool) -> tuple[float | None, float | None]:
    """The domain [lb, ub] checked (lb < ub; NULL refused when `required`), as floats or None."""
    kind = BOUND if required else OPTIONAL_BOUND  # BOUND refuses NULL, saying why
    lo, hi = kind.check(lb, func, "lb"), kind.check(ub, func, "ub")
    if lo is not None and hi is not None and not lo < hi:
        raise fail(func, f"lb = {show(lb)} must be smaller than ub = {show(ub)}")
    return lo, hi


def checked_cluster_size(func: str, k, n: int, mechanism: str) -> int:
    """The cluster size k checked for `mechanism` and n values."""
    # noise, not the group, protects: k >= 1 (k >= 3 for iDP-CBLS, which needs 3 values per cluster)
    return (CBLS_CLUSTER_SIZE if mechanism == "idp_cbls" else DP_CLUSTER_SIZE).check(k, func, "k", n=n)


def clamp_to_domain(x: np.ndarray, lo: float | None, hi: float | None) -> np.ndarray:
    """x clamped to [lo, hi] (unchanged without a domain)."""
    if lo is None and hi is None:
        return x
    return np.clip(x, lo, hi)


# ---------------------------------------------------------------------------------------------
# clusters of individual ranking, in sorted order


@nb.njit(cache=True, nogil=True)
def _cluster_stats(v, k, kind, lb, ub):
    """Centroid, sensitivity and magnitude bound of each cluster of sorted v (clusters of k
    consecutive values, the last one also takes the remainder). kind: 0 CBLS, 1 LS, 2 UM."""
    n = v.shape[0]
    g = n // k
    centre = np.empty(g, np.float64)
    sens = np.empty(g, np.float64)
    mag = np.empty(g, np.float64)
    bound = max(abs(lb), abs(ub))
    for t in range(g):
        s = t * k
        e = n if t == g - 1 else s + k
        m = e - s
        if kind == 0:
            # pre-processed: x(1) -> x(2), x(m) -> x(m-1); the raw extremes are never summed
            total = v[s + 1] + v[e - 2]
            for i in range(s + 1, e - 1):
                total += v[i]
            up = (v[e - 1] - v[e - 2]) + (v[e - 1] - v[s + 1]) + (v[s + 2] - v[s + 1])
            down = (v[e - 2] - v[s]) + (v[s + 1] - v[s]) + (v[e - 2] - v[e - 3])
            centre[t] = total / m
            sens[t] = max(up, down) / m
            mag[t] = max(abs(v[s]), abs(v[e - 1]))
        else:
            total = 0.0
            for i in range(s, e):
                total += v[i]
            centre[t] = total / m
            if kind == 1:
                sens[t] = max(ub - v[s], v[e - 1] - lb) / m
            else:
                sens[t] = (ub - lb) / m
            mag[t] = bound
    return centre, sens, mag


def cluster_sizes(n: int, k: int) -> np.ndarray:
    """The sizes of the n // k clusters of consecutive sorted values: k each, the last takes the rest."""
    g = n // k
    sizes = np.full(g, k, dtype=np.int64)
    sizes[-1] += n - g * k
    return sizes


def rounding_allowance(sizes, mag) -> np.ndarray:
    """Bound on the rounding error of a computed centroid (sum of m terms, then a division),
    counted twice (this data set and a neighbour): (m + 1) 2^-51 times the magnitude bound, plus
    (m + 1) 2^-1074 for operations whose result is subnormal (absolute error up to 2^-1075 each)."""
    return (sizes + 1) * (2.0**-51 * mag + 2.0**-1074)


def _prepare(func: str, mechanism: str, x, k, lb, ub):
    """The validated values clamped to the domain, k, and the domain."""
    x = finite_values(func, "x", x)
    lo, hi = checked_domain(func, lb, ub, required=mechanism != "idp_cbls")
    kk = None if mechanism == "dp_laplace" else checked_cluster_size(func, k, x.shape[0], mechanism)
    return clamp_to_domain(x, lo, hi), kk, lo, hi


def centroid_stats(mechanism, k, lo, hi, v):
    """Per cluster of the sorted (scaled) values v: its centroid, its sensitivity and a magnitude bound."""
    lb = 0.0 if lo is None else lo
    ub = 0.0 if hi is None else hi
    return _cluster_stats(v, k, _KIND[mechanism], lb, ub)


def scale_exponent(x: np.ndarray, lo: float | None, hi: float | None) -> int:
    """e such that the largest magnitude of the domain [lo, hi] (both bounds given), else of the
    clamped values x, times 2^-e lies in [1/2, 1); 0 when it is 0. With both bounds the exponent is a
    function of the public domain only, never of the data (so the output grid is too)."""
    if lo is not None and hi is not None:
        m = max(abs(lo), abs(hi))
    else:
        m = float(np.abs(x).max()) if x.shape[0] else 0.0
    return math.frexp(m)[1] if m > 0 else 0


def scale_down(x, lo, hi, e):
    """x, lo, hi times 2^-e (exact, but for values below 2^-1074 of the largest: a per-record change,
    which the guarantees allow)."""
    def down(b):
        return None if b is None else float(np.ldexp(b, -e))
    return np.ldexp(x, -e), down(lo), down(hi)


def scale_back(func: str, out: np.ndarray, e: int) -> np.ndarray:
    """Released values of the scaled problem in the data's units: times 2^e. A noisy value whose
    rescaled magnitude float64 cannot hold is refused, never clamped (clamping would release a value
    that is not the mechanism's); only idp_cbls without a domain can meet this, near 1e308. Refusing
    is a function of the noisy values alone (post-processing), so it costs no privacy."""
    if e > 0 and out.shape[0] and float(np.abs(out).max()) > np.ldexp(np.finfo(np.float64).max, -e):
        raise fail(func, "x has a noisy value beyond the largest double (about 1.8e308) in the data's unit; "
                         "give lb and ub (outputs are then clamped to the domain) or rescale the column", "x")
    return np.ldexp(out, e)


@contextmanager
def _sampling(func: str, mechanism: str, eps: float, x: np.ndarray, lo, hi, e: int):
    """Inside: the sampler, reporting under `func`. Its refusal of a noise scale below what a normal
    double can step by is said in the data's unit, naming its cause, x (`_too_wide`). Only idp_cbls can
    meet it: the problem is solved on the values times 2^-e (`scale_exponent`), which puts the domain's
    largest bound (idp_cbls without both bounds: the largest |x|) in [1/2, 1), and the sampler's grid
    step is at least about 2^-50 times the magnitude it is given: the domain bound for the other
    mechanisms, but for idp_cbls the cluster's own largest |value|."""
    with reporting(func):
        try:
            yield
        except NoiseUnderflow as err:
            if mechanism != "idp_cbls":
                raise
            raise _too_wide(func, eps, x, lo, hi, e, err) from None


def _too_wide(func: str, eps: float, x: np.ndarray, lo, hi, e: int, err: NoiseUnderflow) -> SdcError:
    """idp_cbls's refusal of a cluster whose noise scale underflows once the values (x: clamped, in the
    data's unit) are scaled by 2^-e: never the data's absolute size (that is what the scaling removes)
    but a cluster whose values are about 2^-970 or less of the attribute's largest magnitude."""
    domain = lo is not None and hi is not None
    top = max(abs(lo), abs(hi)) if domain else float(np.abs(x).max())
    magnitude = math.ldexp(err.magnitude, e)
    apart = math.frexp(top)[1] - math.frexp(magnitude)[1]
    return fail(func, f"x spans too wide a range for the noise: a cluster's values (up to {magnitude:g} in magnitude) "
                      f"are about 2^-{apart} of {'the domain bound' if domain else 'the largest |x|'} ({top:g}), and "
                      f"with epsilon = {show(eps)} their noise would need a grid step below the smallest normal "
                      "double; nothing is released (release values this far apart separately, e.g. in strata of "
                      "their own)", "x")


def _clusters(mechanism: str, v: np.ndarray, k: int, eps: float, lo, hi, seed):
    """(sizes, noisy centroids) of the sorted, clamped, scaled values v: one draw per cluster t,
    counter t for seeded noise."""
    centre, sens, mag = centroid_stats(mechanism, k, lo, hi, v)
    sizes = cluster_sizes(v.shape[0], k)
    allowed = np.where(sens > 0, sens * (1 + 2.0**-48) + rounding_allowance(sizes, mag), 0.0)
    counters = np.arange(sizes.shape[0], dtype=np.uint64)
    noisy = laplace_mechanism(centre, allowed, eps, mag, seed=seed, counters=counters)
    return sizes, clamp_to_domain(noisy, lo, hi)


# ---------------------------------------------------------------------------------------------
# public API


def release(x, mechanism: str, k, epsilon, lb=None, ub=None, seed=None) -> np.ndarray:
    """Release one attribute with `mechanism` (one of MECHANISMS; see the module docstring for what
    each guarantees). Returns the released values aligned with x. k is ignored by 'dp_laplace'.
    Errors name the mechanism's function (`idp_cbls`, ...).

    Scale: the problem is solved on the values times 2^-e (`scale_exponent`: the domain's largest
    magnitude, or the data's for idp_cbls without both bounds, brought into [1/2, 1)), exactly, and the
    release is multiplied back by 2^e; so data at 1e308 or 1e-300 get the rescaled answer of the same
    data in the normal range (with a seed: bit for bit, while the results are normal numbers), never
    an overflowed sum or noise that vanished with an underflowing sensitivity. Seeded noise: the draw
    of cluster t (of record t for dp_laplace, in the order of x) is a pure function of (seed, t).

    Cost: one sort of x (O(n log n)), then O(n) and one noise draw per cluster.
    """
    func = mechanism if mechanism in MECHANISMS else "release"
    mechanism = MECHANISM.check(mechanism, func, "mechanism")
    eps = EPSILON.check(epsilon, func, "epsilon")
    s = SEED.check(seed, func, "seed")
    x, kk, lo, hi = _prepare(func, mechanism, x, k, lb, ub)
    if x.shape[0] == 0:
        return x.copy()
    e = scale_exponent(x, lo, hi)
    sampling = _sampling(func, mechanism, eps, x, lo, hi, e)
    x, lo, hi = scale_down(x, lo, hi, e)
    if mechanism == "dp_laplace":
        # the value itself is released: no computation to round, only the width (hi - lo)
        sens = np.full(x.shape[0], (hi - lo) * (1 + 2.0**-48))
        counters = np.arange(x.shape[0], dtype=np.uint64)
        with sampling:
            out = laplace_mechanism(x, sens, eps, max(abs(lo), abs(hi)), seed=s, counters=counters)
        return scale_back(func, np.clip(out, lo, hi), e)
    order, v = sort_column(x)
    with sampling:
        sizes, noisy = _clusters(mechanism, v, kk, eps, lo, hi, s)
    return scale_back(func, unsort(order, np.repeat(noisy, sizes)), e)


def dp_um_centroids(x, k, epsilon, lb, ub, seed=None) -> tuple[np.ndarray, np.ndarray]:
    """DP-UM's noisy cluster means released on their own, unlinked from records: (sizes, means) of
    the clusters in rank order (cluster 1 holds the k smallest values; the last one also the n mod k
    remaining), with exactly the noise `dp_um` gives each cluster (the same seed draws the same
    noise: dp_um(x)[i] is the mean of record i's cluster).

    Guarantee: epsilon-differential privacy of the vector of means, for neighbouring data sets of the
    same size n that differ in one value (Sanchez, Domingo-Ferrer, Martinez & Soria-Comas 2016). Proof:
    the sizes are a function of n and k only; changing one value inside [lb, ub] moves the sorted
    column by at most ub - lb in L1 (it shifts the ranks between the old and the new position by at
    most the change in total), so the cluster sums move by at most ub - lb in L1 together, and cluster
    t's mean by |change of its sum| / |C_t|; Laplace noise of scale (ub - lb) / (|C_t| epsilon) per
    cluster therefore gives a privacy loss of at most sum_t epsilon |change of sum_t| / (ub - lb) <=
    epsilon. Released linked to records (`dp_um`), the same values also reveal which records share a
    cluster, which is not protected: see the module docstring."""
    func = "dp_um_centroids"
    eps = EPSILON.check(epsilon, func, "epsilon")
    s = SEED.check(seed, func, "seed")
    x, kk, lo, hi = _prepare(func, "dp_um", x, k, lb, ub)
    if x.shape[0] == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    e = scale_exponent(x, lo, hi)
    sampling = _sampling(func, "dp_um", eps, x, lo, hi, e)
    x, lo, hi = scale_down(x, lo, hi, e)
    with sampling:
        sizes, noisy = _clusters("dp_um", np.sort(x), kk, eps, lo, hi, s)
    return sizes, scale_back(func, noisy, e)


def idp_cbls(x, k, epsilon, lb=None, ub=None, seed=None) -> np.ndarray:
    """iDP-CBLS release of one attribute (Soria-Comas et al. 2025): individual ranking clusters of
    k >= 3 values, the mean after replacing one smallest value by the second smallest and one largest
    by the second largest, plus Laplace noise scaled to that mean's local sensitivity
    max(2 x(m) + x(3) - 2 x(2) - x(m-1), 2 x(m-1) + x(2) - 2 x(1) - x(m-2)) / m. Guarantee:
    epsilon-individual DP for the fixed clustering; no domain needed (lb and ub, if given, clamp
    inputs and outputs). seed: reproducible noise, which voids the guarantee."""
    return release(x, "idp_cbls", k, epsilon, lb, ub, seed)


def idp_ls(x, k, epsilon, lb, ub, seed=None) -> np.ndarray:
    """iDP-LS release: cluster mean + Laplace(LS / epsilon), LS = max(ub - min(C), max(C) - lb) / |C|,
    the local sensitivity at the actual data. epsilon-individual DP for the fixed clustering."""
    return release(x, "idp_ls", k, epsilon, lb, ub, seed)


def dp_um(x, k, epsilon, lb, ub, seed=None) -> np.ndarray:
    """DP-UM release, one value per record: cluster mean + Laplace(GS / epsilon), GS = (ub - lb) / |C|
    (individual ranking, Sanchez et al. 2016). epsilon-DP for the fixed clustering only: records that
    share a value reveal the partition (module docstring); `dp_um_centroids` releases the same means
    unlinked, which is epsilon-DP."""
    return release(x, "dp_um", k, epsilon, lb, ub, seed)


def dp_laplace(x, epsilon, lb, ub, seed=None) -> np.ndarray:
    """Plain Laplace DP: every value + Laplace((ub - lb) / epsilon), no microaggregation. epsilon-DP."""
    return release(x, "dp_laplace", None, epsilon, lb, ub, seed)


def idp_sensitivity(x, k, mechanism: str, lb=None, ub=None) -> np.ndarray:
    """For each value, the sensitivity of its cluster's released statistic under `mechanism`
    (the paper's formula, on the clamped values; the sampler adds only a rounding allowance of about
    1e-15 relative). The noise scale is this divided by the attribute's epsilon. A diagnostic: it is
    computed from the raw data (for iDP it reveals cluster extremes) and must not be released.
    Computed on the rescaled values as `release` does; a sensitivity beyond the largest double (a
    cluster spanning about 1e308) is refused."""
    func = "idp_sensitivity"
    mechanism = MECHANISM.check(mechanism, func, "mechanism")
    x, kk, lo, hi = _prepare(func, mechanism, x, k, lb, ub)
    if x.shape[0] == 0:
        return x.copy()
    e = scale_exponent(x, lo, hi)
    x, lo, hi = scale_down(x, lo, hi, e)
    if mechanism == "dp_laplace":
        out = np.full(x.shape[0], hi - lo)
    else:
        order, v = sort_column(x)
        _, sens, _ = centroid_stats(mechanism, kk, lo, hi, v)
        out = unsort(order, np.repeat(sens, cluster_sizes(v.shape[0], kk)))
    with np.errstate(over="ignore"):
        out = np.ldexp(out, e)
    if not np.isfinite(out).all():
        raise fail(func, "a sensitivity exceeds the largest double (a cluster spans about 1e308); "
                         "it cannot be represented")
    return out


def split_epsilon(epsilon, columns, split=None) -> dict[str, float]:
    """The per-attribute budgets of a release of several attributes (sequential composition: they
    sum to epsilon). split: None for equal shares, or one positive weight per column (a sequence
    aligned with columns or a mapping by column); budget_j = epsilon * w_j / sum(w)."""
    func = "split_epsilon"
    eps = EPSILON.check(epsilon, func, "epsilon")
    cols = list(columns)
    if not cols:
        raise fail(func, "columns must not be empty")
    if isinstance(split, Mapping):
        if set(split) != set(cols):
            raise fail(func, f"split must give one weight per column {cols}, got {dict(split)}")
        split = [split[c] for c in cols]
    weights = SPLIT.check(split, func, "split", n=len(cols))
    w = [1.0] * len(cols) if weights is None else weights
    # scaled by the power of two that puts the largest weight below 1/2 (exact): the sum of weights of
    # 1e308 cannot overflow nor subnormal weights lose their digits, and wherever the plain formula does
    # neither this is it bit for bit (a power of two commutes with rounding), as sql/40_dp.sql computes it
    e = -1 - math.frexp(max(w))[1]
    w = [math.ldexp(wi, e) for wi in w]
    total = sum(w)
    return {c: eps * wi / total for c, wi in zip(cols, w)}


def dp_release(columns: Mapping[str, np.ndarray], mechanism: str, k, epsilon, *, split=None,
               lb=None, ub=None, seed=None) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Release several attributes with one total epsilon: each column j with its budget from
    `split_epsilon` (returned as the second element, the report of the split). lb and ub: a number
    for all columns or a mapping by column. With a seed, column c draws with the seed
    `params.stratum_seed(seed, c, 0)`, as the table forms do without strata: reproducible, and the
    guarantee is void. Errors name the mechanism's function."""
    try:
        budgets = split_epsilon(epsilon, columns, split)
    except SdcError as err:
        raise err.renamed(mechanism) from None
    s = SEED.check(seed, mechanism, "seed")
    out = {}
    for name, values in columns.items():
        lo = lb.get(name) if isinstance(lb, Mapping) else lb
        hi = ub.get(name) if isinstance(ub, Mapping) else ub
        out[name] = release(values, mechanism, k, budgets[name], lo, hi, stratum_seed(s, name, 0))
    return out, budgets
