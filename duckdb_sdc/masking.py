"""The one per-stratum masking path: every masking method, and how one stratum of values is masked.

A *masking method* is a list function a release spec can name (`mdav_round`, `ewd_round`,
`idp_cbls`, `mdav_multi_round`, `box_release`, ...): `METHODS` holds each with its parameters
(after the data, in the order of its SQL list function) and the numpy function that runs it.
`mask(method, values, params)` masks one stratum; every path goes through it:

* the SQL list functions (`SELECT mdav_round(list(income), 5)`), whose UDFs call `mask`;
* the table forms (`mdav_round_table(...)`) and the releases (`duckdb-sdc release`), which call
  the list function once per stratum;
* other engines (the Spark engine) call `mask_stratum` directly.

Engine-independent contract, so that the same data, parameters and seed give the same release
whatever runs it:

1. A stratum's values are handed over in a defined order: in a release, ordered by the key; in a
   table form (which has no key), ordered by the whole row's content (rows with equal content are
   interchangeable).
2. The seed of a seeded method in stratum number i of column c is `stratum_seed(seed, c, i)`
   (computed in Python from SHA-256, see `params.stratum_seed`), i the stratum's position from 0 in
   the ascending order of the strata values, NULLS LAST (0 without strata); c is the masked column
   (for a group of columns, its first column). A list function called directly uses its seed as
   given.
3. Parameters are validated by the kinds of `duckdb_sdc.params`, in the numpy functions.

No DuckDB here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points

import numpy as np

from . import guarantees as g
from . import methods
from ._validate import fail
from .guarantees import Guarantee
from .methods import base_rounding, boxes, dominance, dp, multivariate, noise_addition, rank_swap, weights
from .methods import sensitivity
from .methods import discretisation as disc
from .params import (
    ATTRIBUTE_NAMES,
    BOUND,
    CBLS_CLUSTER_SIZE,
    CENTROID,
    CLUSTER_SIZE,
    COUNT,
    DISTANCE,
    DP_CLUSTER_SIZE,
    EPSILON,
    FLAG,
    GROUP_SIZE,
    GROUP_SIZE_AUTO,
    INTERVALS,
    MONDRIAN_MODE,
    NONNEGATIVE,
    OPTIONAL_BOUND,
    OPTIONAL_POSITIVE,
    PERCENT,
    POINT,
    POSITIVE,
    REMAINDER,
    REPRESENTATIVE_PARAM,
    SEED,
    SEED_PARAM,
    TAIL_PERCENT,
    TEXT,
    Param,
    stratum_seed,
)

COLUMN, RECORDS = "column", "records"  # what a method masks: one column's values, or records

# what an engine can do with a method beyond masking a whole stratum in memory (MaskingMethod.capabilities)
SPARK_BUCKETS = "spark buckets"  # Spark masks a stratum too large for one task in buckets of sorted positions
OUT_OF_CORE = "out of core"  # duckdb_sdc.outofcore masks a stratum larger than memory by exact order statistics
CAPABILITIES = (SPARK_BUCKETS, OUT_OF_CORE)


@dataclass(frozen=True)
class MaskingMethod:
    """A masking method, declared once: everything else (its SQL list and table functions, the release
    spec's vocabulary, the manifest's words, the engines' capability checks, the docs' table of methods)
    is derived from this record.

    * `name`: its SQL list function's name, which a release spec names;
    * `data`: what it masks (COLUMN: xs DOUBLE[]; RECORDS: rows DOUBLE[][], one vector per record);
    * `params`: its parameters after the data, as kinds (duckdb_sdc.params);
    * `run(values, *params)`: the numpy function;
    * `guarantee`: what it guarantees (a `duckdb_sdc.guarantees.Guarantee`; required: a method without
      one cannot be registered, so no release says "none stated");
    * `weighted(values, weights, *params)`: the run with sampling weights, or None;
    * `capabilities`: what engines can do beyond a whole stratum in memory (CAPABILITIES);
    * `paper`: where the method is defined;
    * `doc`, `example`: the words of its SQL list function, for a one-column method whose SQL rows
      are derived from the record (duckdb_sdc.sql.masking_rows.declared_rows: a plug-in, or a method
      no family module writes rows for); the families write their own rows and leave them empty;
    * `scale`: how its result follows the data's scale, for the contract suite's scale cases: 1 (the
      data times f give the result times f), 0 (unchanged) or None (not checked: say why in the doc);
    * `expected_failures`: the contract cases (tests/sql/test_contract.py) its SQL rows do not meet
      yet, each with its reason, keyed as the suite's test ids: `"<row>-<case>"`, the row being the
      list function (`foo_round`) or its table form (`foo_round_table`), for example
      `{"foo_round-scale-big": "the means overflow at 1e308"}`. A declared case must fail (strict), and
      one that names no case of the rows fails the suite's declaration test."""

    name: str
    data: str
    params: tuple[Param, ...]
    run: Callable
    guarantee: Guarantee | None = None
    weighted: Callable | None = None
    capabilities: frozenset[str] = frozenset()
    paper: str = ""
    doc: str = ""
    example: str = ""
    scale: int | None = 1
    expected_failures: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.guarantee, Guarantee):
            raise fail("masking.register", f"method {self.name!r} states no guarantee (guarantee = "
                                           f"{self.guarantee!r}): declare the duckdb_sdc.guarantees.Guarantee "
                                           "it meets, or guarantees.NOISE_ADDITION's kind of 'none' statement")
        if self.data not in (COLUMN, RECORDS):
            raise fail("masking.register", f"method {self.name!r}: data must be {COLUMN!r} or {RECORDS!r}, "
                                           f"got {self.data!r}")
        unknown = sorted(set(self.capabilities) - set(CAPABILITIES))
        if unknown:
            raise fail("masking.register", f"method {self.name!r}: capabilities {unknown} unknown; known: "
                                           f"{', '.join(CAPABILITIES)}")
        object.__setattr__(self, "capabilities", frozenset(self.capabilities))
        if self.scale not in (0, 1, None):
            raise fail("masking.register", f"method {self.name!r}: scale must be 1, 0 or None, got {self.scale!r}")
        rows = (f"{self.name}-", f"{self.name}_table-")
        for case, reason in dict(self.expected_failures).items():
            if not isinstance(case, str) or not case.startswith(rows):
                raise fail("masking.register", f"method {self.name!r}: expected failure {case!r} names no case of "
                                               f"its rows (keys are '{self.name}-<case>' or '{self.name}_table-<case>')")
            if not isinstance(reason, str) or not reason.strip():
                raise fail("masking.register", f"method {self.name!r}: expected failure {case!r} needs its reason")
        object.__setattr__(self, "expected_failures", dict(self.expected_failures))

    def expected_failures_of(self, row: str) -> dict[str, str]:
        """The expected failures of its SQL row named `row`, by case (the key without '<row>-')."""
        return {key[len(row) + 1:]: reason for key, reason in self.expected_failures.items()
                if key.startswith(f"{row}-")}

    @property
    def seeded(self) -> bool:
        return any(p.name == "seed" for p in self.params)

    def arguments(self, params: Mapping | Sequence) -> list:
        """The parameters in order: a sequence as it is (missing trailing ones take their defaults),
        or a mapping by name (missing ones take their defaults; an unknown name is an error)."""
        if isinstance(params, Mapping):
            unknown = [k for k in params if all(p.name != k for p in self.params)]
            if unknown:
                raise fail(self.name, f"{unknown[0]!r} is not a parameter; its parameters: "
                                      f"{', '.join(p.name for p in self.params)}")
            return [params[p.name] if p.name in params else p.default_value for p in self.params]
        given = list(params)
        if len(given) > len(self.params):
            raise fail(self.name, f"{len(given)} parameters given, it takes {len(self.params)} after the data")
        return given + [p.default_value for p in self.params[len(given):]]


# parameters of the masking families (the shared ones are in duckdb_sdc.params)
K = Param("k", GROUP_SIZE_AUTO)
GAMMA = Param("gamma", NONNEGATIVE, "0.2", doc="V-MDAV's extension factor, >= 0")
C = Param("c", INTERVALS)
POINT_PARAM = Param("representative", POINT, "'mean'")
STOCHASTIC = Param("stochastic", FLAG, "false",
                   doc="round to one of the two enclosing rounding points, unbiased for each value")
GROUPS = Param("groups", COUNT, "10", doc="number of quantile groups re-sampled separately")
CENTROID_PARAM = Param("centroid", CENTROID, "'mean'")
CLUSTER_K = Param("k", CLUSTER_SIZE)
REMAINDER_PARAM = Param("remainder", REMAINDER, "'group'")
STANDARDISE = Param("standardise", FLAG, "true", doc="MDAV on z-scores (population sd) of every attribute")
RULE_N = Param("n", sensitivity.INTEGER_1, doc="the dominance rule's number of largest contributions, >= 1")
RULE_R = Param("r", sensitivity.FRACTION, doc="the dominance threshold, 0 < r <= 1 (taken to 9 decimals)")
RULE_P = Param("p", sensitivity.P_PERCENT)
ABSOLUTE = Param("absolute", FLAG, "false", doc="apply the rule to absolute values instead of refusing negatives")
MODE = Param("mode", MONDRIAN_MODE, "'strict'")
DP_K = Param("k", DP_CLUSTER_SIZE)
CBLS_K = Param("k", CBLS_CLUSTER_SIZE)
DP_EPSILON = Param("epsilon", EPSILON, doc="privacy budget of this attribute, > 0")
LB = Param("lb", BOUND, doc="lower bound of the attribute's domain (public, not taken from the data)", example="0")
UB = Param("ub", BOUND, doc="upper bound of the attribute's domain, > lb", example="1000")
LB_OPT = Param("lb", OPTIONAL_BOUND, "NULL", doc="optional lower bound of the domain: clamps inputs and outputs")
UB_OPT = Param("ub", OPTIONAL_BOUND, "NULL", doc="optional upper bound of the domain: clamps inputs and outputs")
DP_SEED = Param("seed", SEED, "NULL", doc="NULL: operating-system randomness; an integer 0 <= seed < 2^63: "
                                          "reproducible noise, which voids the guarantee")
BOX_K = Param("k", CLUSTER_SIZE, doc="minimum number of records per box, 2 <= k <= number of records without NULL")
CHARACTERISTIC = Param(
    "characteristic", TEXT,
    doc="the statistic(s) to estimate accurately: terms '[p *] kind(attribute[, attribute]) [/ d0]' joined by '+', "
        "kind mean, var, sd (one attribute), cov or corr (two); attributes by 1-based position or name; p (usage "
        "probability) and d0 (wanted accuracy) default to 1, e.g. '0.7 * corr(1, 2) / 0.05 + 0.3 * mean(1) / 1000'")
DIVERSITY = Param("l", boxes.DIVERSITY, "NULL")
EPS = Param("eps", DISTANCE, "NULL", doc=DISTANCE.doc + "; required with l >= 2")
NAMES = Param("names", ATTRIBUTE_NAMES, "NULL")
LEVEL = Param("level", POSITIVE,
              doc="the noise's variance as a fraction of the column's sample variance, > 0 (Brand's alpha; 0.1: noise "
                  "sd = sqrt(0.1) = 0.32 sd)")
CORRELATED = Param("correlated", FLAG, "true",
                   doc="noise covariance level * the records' covariance matrix (true), or each column independently "
                       "with variance level * its variance (false)")
SWAP_P = Param("p", PERCENT, doc="the largest rank distance of a swap, in percent of the number of values, 0 < p <= 100 "
                                 "(it must allow a distance of at least 1 rank)", example="50")
TOP_PERCENT = Param("top_percent", TAIL_PERCENT, "0",
                    doc="top coding before swapping (sdcMicro's TopPercent): the floor(n top_percent / 100) largest "
                        "values are replaced by their mean and not swapped; 0 <= top_percent, top_percent + "
                        "bottom_percent <= 50")
BOTTOM_PERCENT = Param("bottom_percent", TAIL_PERCENT, "0",
                       doc="bottom coding before swapping (sdcMicro's BottomPercent): the floor(n bottom_percent / 100) "
                           "smallest values are replaced by their mean and not swapped")
UNIT = Param("unit", OPTIONAL_POSITIVE, "NULL",
             doc="the resolution of the base search: the smallest base is searched among the multiples of unit "
                 "(NULL: four significant digits at the lower bound, or the data's decimal resolution if coarser)")
BASE = Param("base", OPTIONAL_POSITIVE, "NULL",
             doc="a base to round to instead of the search (refused unless every set of attraction holds alpha "
                 "records); NULL: search the smallest")
ALPHA = Param("alpha", GROUP_SIZE, doc="the least number of records every set of attraction must hold, 2 <= alpha <= "
                                       "number of non-NULL values")


_MICRO_TITLES = {"mdav": "Domingo-Ferrer & Mateo-Sanz 2002", "vmdav": "Solanas & Martinez-Balleste 2006",
                 "oma": "Hansen & Mukherjee 2003", "ranking": "Defays & Nanopoulos 1993"}


def _microaggregation(method: str) -> MaskingMethod:
    buckets = frozenset({SPARK_BUCKETS, OUT_OF_CORE}) if method in ("mdav", "ranking") else frozenset()
    weighted = method in weights.MICRO_METHODS
    if method == "vmdav":
        return MaskingMethod("vmdav_round", COLUMN, (K, GAMMA, REPRESENTATIVE_PARAM),
                             lambda x, k, gamma, rep: methods.microaggregate(x, k, method, rep, gamma=gamma),
                             g.MICROAGGREGATION,
                             (lambda x, w, k, gamma, rep: weights.microaggregate_weighted(x, w, k, method, rep,
                                                                                          gamma=gamma))
                             if weighted else None, buckets, _MICRO_TITLES[method])
    return MaskingMethod(f"{method}_round", COLUMN, (K, REPRESENTATIVE_PARAM),
                         lambda x, k, rep: methods.microaggregate(x, k, method, rep), g.MICROAGGREGATION,
                         (lambda x, w, k, rep: weights.microaggregate_weighted(x, w, k, method, rep))
                         if weighted else None, buckets, _MICRO_TITLES[method])


def _discretisation(method: str) -> MaskingMethod:
    paper = "Senavirathne & Torra 2019"
    if method == "rbd":  # rbd's points are bootstrap centroids: weights have no defined place
        return MaskingMethod(
            "rbd_round", COLUMN, (C, POINT_PARAM, GROUPS, CENTROID_PARAM, STOCHASTIC, SEED_PARAM),
            lambda x, c, rep, groups, centroid, stochastic, seed: disc.discretise(
                x, c, "rbd", rep, stochastic=stochastic, seed=seed, groups=groups, centroid=centroid),
            g.DISCRETISATION, paper=paper)
    return MaskingMethod(
        f"{method}_round", COLUMN, (C, POINT_PARAM, STOCHASTIC, SEED_PARAM),
        lambda x, c, rep, stochastic, seed: disc.discretise(x, c, method, rep, stochastic=stochastic, seed=seed),
        g.DISCRETISATION,
        (lambda x, w, c, rep, stochastic, seed: weights.discretise_weighted(
            x, w, c, method, rep, stochastic=stochastic, seed=seed)) if method in weights.DISC_METHODS else None,
        frozenset({OUT_OF_CORE}) if method in ("ewd", "efd") else frozenset(), paper)


_DP_PAPERS = {"dp_laplace": "Dwork, McSherry, Nissim & Smith 2006", "dp_um": "Sanchez et al. 2016",
              "idp_ls": "Soria-Comas et al. 2017 (iDP); Soria-Comas et al. 2025", "idp_cbls": "Soria-Comas et al. 2025"}
_DP_GUARANTEES = {"dp_laplace": g.LAPLACE, "dp_um": g.DP_UM, "idp_ls": g.INDIVIDUAL_DP, "idp_cbls": g.INDIVIDUAL_DP}


def _dp(mechanism: str) -> MaskingMethod:
    buckets = frozenset({SPARK_BUCKETS})
    if mechanism == "dp_laplace":
        return MaskingMethod("dp_laplace", COLUMN, (DP_EPSILON, LB, UB, DP_SEED),
                             lambda x, eps, lb, ub, seed: dp.release(x, mechanism, None, eps, lb, ub, seed),
                             _DP_GUARANTEES[mechanism], capabilities=buckets, paper=_DP_PAPERS[mechanism])
    k, bounds = (CBLS_K, (LB_OPT, UB_OPT)) if mechanism == "idp_cbls" else (DP_K, (LB, UB))
    return MaskingMethod(mechanism, COLUMN, (k, DP_EPSILON, *bounds, DP_SEED),
                         lambda x, k, eps, lb, ub, seed: dp.release(x, mechanism, k, eps, lb, ub, seed),
                         _DP_GUARANTEES[mechanism], capabilities=buckets, paper=_DP_PAPERS[mechanism])


DECLARED: tuple[MaskingMethod, ...] = (
    *(_microaggregation(m) for m in methods.METHODS),
    *(_discretisation(m) for m in disc.METHODS),
    MaskingMethod("mdav_multi_round", RECORDS, (CLUSTER_K, REMAINDER_PARAM, STANDARDISE),
                  lambda X, k, remainder, standardise: multivariate.mdav_multi_round(
                      X, k, remainder=remainder, standardise=standardise), g.MULTIVARIATE,
                  lambda X, w, k, remainder, standardise: weights.mdav_multi_round_weighted(
                      X, w, k, remainder=remainder, standardise=standardise),
                  paper="Domingo-Ferrer & Torra 2005"),
    MaskingMethod("mondrian_round", RECORDS, (CLUSTER_K, MODE), multivariate.mondrian_round, g.MULTIVARIATE,
                  paper="LeFevre, DeWitt & Ramakrishnan 2006"),
    MaskingMethod("mdav_dominance_round", RECORDS, (CLUSTER_K, RULE_N, RULE_R, ABSOLUTE, STANDARDISE),
                  lambda X, k, n, r, absolute, standardise: dominance.mdav_dominance_round(
                      X, k, n, r, absolute=absolute, standardise=standardise), g.MULTIVARIATE_CELLS,
                  paper="Hundepool et al. 2012 (dominance rule); seed 002's dominance-constrained clusters"),
    MaskingMethod("mdav_p_percent_round", RECORDS, (CLUSTER_K, RULE_P, ABSOLUTE, STANDARDISE),
                  lambda X, k, p, absolute, standardise: dominance.mdav_p_percent_round(
                      X, k, p, absolute=absolute, standardise=standardise), g.MULTIVARIATE_CELLS,
                  paper="Hundepool et al. 2012 (p% rule); seed 002's dominance-constrained clusters"),
    *(_dp(m) for m in dp.MECHANISMS),
    MaskingMethod("box_release", RECORDS, (BOX_K, CHARACTERISTIC, DIVERSITY, EPS, NAMES),
                  lambda X, k, characteristic, l, eps, names: boxes.box_release(X, characteristic, k, l, eps, names),
                  g.BOX_RELEASE, paper="Xiang et al. 2013"),
    MaskingMethod("add_noise", COLUMN, (LEVEL, SEED_PARAM),
                  lambda x, level, seed: noise_addition.add_noise(x, level, seed=seed), g.NOISE_ADDITION,
                  paper="Brand 2002"),
    MaskingMethod("add_noise_multi", RECORDS, (LEVEL, CORRELATED, SEED_PARAM),
                  lambda X, level, correlated, seed: noise_addition.add_noise_multi(
                      X, level, correlated=correlated, seed=seed), g.NOISE_ADDITION, paper="Brand 2002"),
    MaskingMethod("rank_swap", COLUMN, (SWAP_P, TOP_PERCENT, BOTTOM_PERCENT, SEED_PARAM),
                  lambda x, p, top, bottom, seed: rank_swap.rank_swap(x, p, seed=seed, top_percent=top,
                                                                      bottom_percent=bottom),
                  g.RANK_SWAPPING, paper="Moore 1996"),
    MaskingMethod("base_round", COLUMN, (ALPHA, UNIT, BASE), base_rounding.base_round, g.BASE_ROUNDING,
                  paper="Senavirathne & Torra 2019 (introduction)"),
)

METHODS: dict[str, MaskingMethod] = {}  # every registered method by name, in the order of registration
ENTRY_POINTS = "duckdb_sdc.methods"  # the entry point group through which a package registers its methods


def register(m: MaskingMethod) -> MaskingMethod:
    """Register a masking method (its record checks that it states a guarantee): `mask` runs it, the
    release vocabulary takes it once its SQL rows exist (`duckdb_sdc.release.methods`), and its
    guarantee is stated for the manifest (`duckdb_sdc.guarantees.state`). A name already registered
    is refused."""
    if not isinstance(m, MaskingMethod):
        raise fail("masking.register", f"expects a MaskingMethod, got {m!r}")
    if m.name in METHODS:
        raise fail("masking.register", f"method {m.name!r} is already registered")
    METHODS[m.name] = m
    g.state(m.name, m.guarantee)
    return m


def unregister(name: str) -> None:
    """Remove a registered method (a test's temporary method)."""
    METHODS.pop(name, None)
    g.forget(name)


def load_entry_points() -> None:
    """Register the methods that installed packages declare in the entry point group ENTRY_POINTS
    (`[project.entry-points."duckdb_sdc.methods"] name = "package.module:OBJECT"`, OBJECT a
    MaskingMethod or a sequence of them), as sqlglot finds its dialects. A plug-in that cannot be
    loaded, or declares something else, is an error naming it."""
    for ep in entry_points(group=ENTRY_POINTS):
        try:
            declared = ep.load()
        except Exception as e:  # the plug-in's own import error, reported with its name
            raise fail("masking.load_entry_points", f"plug-in {ep.name!r} ({ep.value}) cannot be loaded: "
                                                    f"{type(e).__name__}: {e}") from e
        for m in declared if isinstance(declared, (list, tuple)) else (declared,):
            if not isinstance(m, MaskingMethod):
                raise fail("masking.load_entry_points", f"plug-in {ep.name!r} ({ep.value}) declares {m!r}, "
                                                        "not a MaskingMethod")
            register(m)


for _m in DECLARED:
    register(_m)
load_entry_points()


def capable(capability: str) -> tuple[str, ...]:
    """The registered methods with a capability (one of CAPABILITIES), in the order of registration."""
    if capability not in CAPABILITIES:
        raise fail("masking.capable", f"capability must be one of {', '.join(CAPABILITIES)}, got {capability!r}")
    return tuple(name for name, m in METHODS.items() if capability in m.capabilities)


def markdown() -> str:
    """The table of release methods on docs/methods/index.md, from the records (a test checks the page)."""
    lines = ["| method | masks | parameters | privacy model | sampling weights | engines beyond memory | paper |",
             "|---|---|---|---|---|---|---|"]
    for m in METHODS.values():
        params = ", ".join(f"`{p.name}`" for p in m.params if p.name != "names") or "none"
        masks = "one column" if m.data == COLUMN else "a group of columns"
        engines = ", ".join(c for c in CAPABILITIES if c in m.capabilities) or "none"
        lines.append(f"| `{m.name}` | {masks} | {params} | {m.guarantee.model} | {'yes' if m.weighted else 'no'} "
                     f"| {engines} | {m.paper} |")
    return "\n".join(lines) + "\n"


def method(name: str) -> MaskingMethod:
    if name not in METHODS:
        raise fail("mask", f"method must be one of {', '.join(METHODS)}, got {name!r}")
    return METHODS[name]


def mask(name: str, values, params: Mapping | Sequence = ()):
    """Mask one stratum's values (a 1-D array for a column method, an (m, p) matrix of complete
    records for a records method; no NaN) with method `name` and its parameters (in order, or by
    name; defaults fill the rest). Returns the masked values aligned with `values` (for box_release,
    a `boxes.BoxRelease`). Errors name the method."""
    m = method(name)
    return m.run(values, *m.arguments(params))


def mask_stratum(name: str, values, params: Mapping | Sequence = (), *, column: str, stratum: int = 0):
    """`mask` as a table form or a release applies it to stratum number `stratum` (from 0 in the
    ascending order of the strata values, NULLS LAST; 0 without strata) of column `column`: a seeded
    method draws with `stratum_seed(seed, column, stratum)`. `values` must come in the defined order
    (see the module docstring)."""
    m = method(name)
    args = m.arguments(params)
    for i, p in enumerate(m.params):
        if p.name == "seed":
            args[i] = stratum_seed(SEED.check(args[i], name, "seed"), column, stratum)
    return m.run(np.asarray(values, dtype=np.float64), *args)


# ---------------------------------------------------------------------------------------------
# sampling weights (duckdb_sdc.methods.weights): the methods whose representatives can be weighted.
# The partition is the unweighted one; a record's `weighted(values, weights, *params)` takes the
# method's parameters in the same order as its `run`.


def weighted_methods() -> tuple[str, ...]:
    """The registered methods that take sampling weights."""
    return tuple(name for name, m in METHODS.items() if m.weighted is not None)


def weighted_name(name: str) -> str:
    """The SQL list function of method `name` with weights: `<name>_weighted`."""
    return f"{name}_weighted"


def _weighted(name: str) -> tuple[MaskingMethod, Callable]:
    """The method `name` and its weighted run, or an error saying which methods take weights."""
    m = method(name)
    if m.weighted is None:
        raise fail(name, f"{name} does not take sampling weights; the methods that do: "
                         f"{', '.join(weighted_methods())}")
    return m, m.weighted


def mask_weighted(name: str, values, weights_, params: Mapping | Sequence = ()):
    """`mask` with sampling weights (one per value, or per record for a records method): the
    method's partition, with weighted representatives (duckdb_sdc.methods.weights)."""
    m, run = _weighted(name)
    return run(values, weights_, *m.arguments(params))


def mask_stratum_weighted(name: str, values, weights_, params: Mapping | Sequence = (), *, column: str,
                          stratum: int = 0):
    """`mask_stratum` with sampling weights (see `mask_weighted`): the same order and seeds."""
    m, run = _weighted(name)
    args = m.arguments(params)
    for i, p in enumerate(m.params):
        if p.name == "seed":
            args[i] = stratum_seed(SEED.check(args[i], name, "seed"), column, stratum)
    return run(np.asarray(values, dtype=np.float64), np.asarray(weights_, dtype=np.float64), *args)


__all__ = ["CAPABILITIES", "COLUMN", "DECLARED", "ENTRY_POINTS", "METHODS", "OUT_OF_CORE", "RECORDS", "SPARK_BUCKETS",
           "MaskingMethod", "capable", "load_entry_points", "markdown", "mask", "mask_stratum", "mask_stratum_weighted",
           "mask_weighted", "method", "register", "stratum_seed", "unregister", "weighted_methods", "weighted_name"]
