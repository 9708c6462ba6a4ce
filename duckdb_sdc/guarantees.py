"""What each masking method guarantees, as data: the privacy model it meets, the condition under
which it holds, and the words a data steward can quote. This module is the one source of those
words: the release manifest's `guarantee` and `privacy_model` columns, the SQL docstrings of the
differentially private functions (duckdb_sdc.sql.dp) and docs/releases/guarantees.md (checked by a
test against `markdown()`) all read them from here. Which method meets which guarantee is declared
on the method's record (`duckdb_sdc.masking.MaskingMethod.guarantee`, required): registering the
method states it here (`state`), so a method without a guarantee cannot be released.

Every statement is exactly as strong as what is proved for the method, and no stronger:

* k-anonymity is a statement about the released values of the columns named, within a stratum: each
  released value (or combination, or box) is shared by at least k records. It says nothing about
  columns outside the set, or about attribute disclosure inside a group (the report's sensitive
  cells measure that).
* epsilon-differential privacy (Dwork, McSherry, Nissim & Smith 2006) is stated for bounded
  neighbours: data sets with the same records that differ in one record's value of the column,
  within the declared domain [lb, ub]. Columns compose sequentially: the release spends the sum of
  its columns' epsilons (the manifest's epsilon_total).
* "for the fixed clustering": the statement holds between neighbours whose change keeps every
  record in its cluster; it does not bound what the clustering itself reveals.
* epsilon-individual differential privacy (Soria-Comas, Domingo-Ferrer, Sanchez & Megias 2017)
  protects the individuals of this data set against changes of their own record; the noise scale,
  computed from the data, is not itself protected.

Post-processing never weakens these statements: rounding released values to `decimals` (equal
values stay equal; a DP output rounded is still DP), suppressing cells, or clamping.
"""

from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass

K_ANONYMITY = "k-anonymity"
K_ANONYMITY_NULL_MATCHES = "k-anonymity, a NULL matching any value"
DP = "epsilon-DP"
DP_FIXED_CLUSTERING = "epsilon-DP for the fixed clustering"
IDP = "epsilon-iDP for the fixed clustering"
NONE = "none"

MODELS = (K_ANONYMITY, K_ANONYMITY_NULL_MATCHES, DP, DP_FIXED_CLUSTERING, IDP, NONE)
DP_MODELS = (DP, DP_FIXED_CLUSTERING, IDP)  # the differential privacy statements

# what the manifest says of the columns that no masking rule protects
KEEP, KEY, REPRODUCIBLE, CENTROIDS, BOX_ID = "keep", "key", "reproducible noise", "dp_um centroids", "box id"
POOLED_STRATA = "pooled strata"  # a kept strata column whose small strata were pooled (duckdb_sdc.strata)


@dataclass(frozen=True)
class Guarantee:
    subject: str  # a method's SQL name, or one of KEEP, KEY, REPRODUCIBLE, CENTROIDS, BOX_ID
    model: str  # one of MODELS
    statement: str  # the general words (docs, SQL docstrings), without this release's numbers
    sentence: str  # the manifest's words for one column: str.format(**facts) (see `sentence`)
    source: str = ""  # where it is proved
    discloses_values: bool = False  # the released values are original values, by design (keep, rank swapping)
    # a differential privacy statement's neighbouring data sets, and what the release publishes exactly
    # (unprotected by the noise); required for the DP_MODELS
    neighbours: str = ""
    exact: str = ""

    def __post_init__(self):
        if self.model in DP_MODELS and not (self.neighbours and self.exact):
            raise ValueError(f"duckdb_sdc.guarantees: the {self.model} guarantee of {self.subject!r} must state its "
                             "neighbouring data sets (neighbours) and what is released exactly (exact)")


# What a released value's differential privacy leaves exact in every DP method here: the number of
# records of each stratum and which of them are NULL (NULLs stay NULL in place), and each record's
# stratum. None of them is noised; a steward who needs a record's presence protected (add/remove
# neighbours) cannot get it from these methods.
_EXACT_EVERYWHERE = ("the number of records of each stratum, which of them are NULL in the column (NULLs stay in "
                     "place) and each record's stratum")

# Why no DP method masks a group of columns together ([[groups]]): every proof here is one-dimensional.
MULTIVARIATE_DP = (
    "differential privacy here is proved for one attribute at a time (the sensitivities of dp_um, idp_ls and "
    "idp_cbls follow from the order of one column's values; no published bound covers clusters formed over "
    "several attributes, where one changed record can move others between clusters); release each column "
    "in [columns], where the columns' epsilons compose sequentially")


MICROAGGREGATION = Guarantee(
    "univariate microaggregation", K_ANONYMITY,
    "Every released value of the column is shared by at least k records of its stratum (k >= 2; 'auto' "
    "resolves k per stratum, never below 2): k-anonymity of this column alone. It says nothing about "
    "combinations with other released columns.",
    "{k}-anonymity of {columns} within {strata}: every released value is shared by at least {k} records",
    "the method's groups have at least k records (Domingo-Ferrer & Mateo-Sanz 2002; Hansen & Mukherjee 2003)")

DISCRETISATION = Guarantee(
    "rounding by discretisation", K_ANONYMITY,
    "The method bounds no group size: an interval may hold one value. A release measures, per stratum, "
    "the smallest set of records sharing a released value (a set of attraction), refuses one below 2, "
    "and states the measured size as k: k-anonymity of this column alone, as measured on the release.",
    "{k}-anonymity of {columns} within {strata}, as measured on this release: every released value is "
    "shared by at least {k} records",
    "measured by the release (the set-of-attraction check)")

BASE_ROUNDING = Guarantee(
    "base rounding", K_ANONYMITY,
    "Every released value is a multiple of the base b (the smallest multiple of the unit, or the given "
    "base) whose every set of attraction holds at least alpha records of the stratum (alpha >= 2): "
    "k-anonymity of this column alone. The release measures the smallest set of records sharing a "
    "released value and states it as k (at least alpha).",
    "{k}-anonymity of {columns} within {strata}, as measured on this release: every released value is "
    "shared by at least {k} records",
    "the base is chosen so that every set of attraction holds alpha records (seed 000); measured by the release")

NOISE_ADDITION = Guarantee(
    "noise addition", NONE,
    "none: random noise with a variance proportional to the column's (Brand 2002) is added to every "
    "value; no formal guarantee holds (a value may stay close to the original). Its protection is "
    "measured, not stated: record linkage and interval disclosure in the report, gated by a [policy].",
    "none: {method} adds random noise to {columns}; no formal guarantee, the report measures the risk")

RANK_SWAPPING = Guarantee(
    "rank swapping", NONE,
    "none: every original value is released unchanged, moved to another record whose rank differs by at "
    "most p percent of the records (Moore 1996). The column's values are disclosed exactly (only their "
    "link to records is perturbed), and a record's own value lies in a known window of ranks. Its "
    "protection is measured, not stated: record linkage and interval disclosure in the report, gated "
    "by a [policy].",
    "none: {method} releases every original value of {columns} unchanged, swapped between records "
    "within {strata}; the values themselves are disclosed",
    discloses_values=True)

MULTIVARIATE = Guarantee(
    "multivariate microaggregation", K_ANONYMITY,
    "Every released combination of the group's values is shared by at least k records of its stratum "
    "(k >= 2): k-anonymity over the group's columns together.",
    "{k}-anonymity of {columns} together within {strata}: every released combination is shared by at "
    "least {k} records",
    "the method's groups have at least k records (Domingo-Ferrer & Mateo-Sanz 2002; LeFevre et al. 2006)")

MULTIVARIATE_CELLS = Guarantee(
    "multivariate microaggregation under a sensitivity rule", K_ANONYMITY,
    "Every released combination of the group's values is shared by at least k records of its stratum "
    "(k >= 2), and no released cell (the records sharing a combination, one column) is sensitive under the "
    "method's rule (its parameters in the manifest): k-anonymity over the group's columns together, and no "
    "cell whose released mean lets a contributor estimate another's value more precisely than the rule allows.",
    "{k}-anonymity of {columns} together within {strata}: every released combination is shared by at least "
    "{k} records, and no released cell is sensitive under {method}'s rule",
    "duckdb_sdc.methods.dominance.mdav_cells_partition (groups grown until no cell is sensitive)")

BOX_RELEASE = Guarantee(
    "box_release", K_ANONYMITY,
    "Every released box (the lower and upper bounds of the group's columns) is shared by at least k "
    "records of its stratum (k >= 2), and with l at least l values eps apart in every attribute: "
    "k-anonymity of the boxes.",
    "{k}-anonymity of the boxes of {columns} within {strata}: every released box is shared by at least "
    "{k} records",
    "the characteristic-aware Mondrian's boxes have at least k records")

LAPLACE = Guarantee(
    "dp_laplace", DP,
    "epsilon-differential privacy of the column: data sets that differ in one record's value of the "
    "column (within [lb, ub]) give releases whose probabilities differ by at most a factor e^epsilon "
    "(Dwork, McSherry, Nissim & Smith 2006).",
    "{epsilon:g}-differential privacy of {columns} (values in [{lb:g}, {ub:g}]){within}",
    "the Laplace mechanism with the domain's sensitivity ub - lb",
    neighbours=("bounded: the same records, one record's value of the column changed to any value in [lb, ub] "
                "(a record added or removed is not covered)"),
    exact=_EXACT_EVERYWHERE + ".")

DP_UM = Guarantee(
    "dp_um", DP_FIXED_CLUSTERING,
    "epsilon-differential privacy only for the fixed clustering: between data sets whose change keeps "
    "every record in its cluster. Records that share a noisy value reveal the partition into clusters, "
    "which one changed value can change (with ids 1..6 and x = 1..6, k = 3, the event 'ids 1, 2, 3 share "
    "a value and id 4 has another' has probability 0.95 at epsilon = 1 and 0 when x1 = 10), so no "
    "epsilon bounds the per-record release. The noisy cluster means released unlinked from records are "
    "epsilon-DP (a release's centroids_table).",
    "{epsilon:g}-differential privacy of {columns} only for the fixed clustering (values in [{lb:g}, "
    "{ub:g}]){within}: records sharing a released value reveal their cluster, which is not protected",
    "Sanchez, Domingo-Ferrer, Martinez & Soria-Comas 2016, for the means; the partition is not covered",
    neighbours=("bounded, within [lb, ub], and only between data sets whose change keeps every record in its "
                "cluster"),
    exact=(_EXACT_EVERYWHERE + "; the partition into clusters (the records sharing a released value), whose sizes "
           "are k, the last k to 2k - 1, from the number of non-NULL values and k."))

_DP_UM_CENTROIDS = Guarantee(
    CENTROIDS, DP,
    "epsilon-differential privacy of the vector of DP-UM cluster means in rank order, released "
    "unlinked from records: the sizes are a function of n and k only, one changed value moves the "
    "sorted column by at most ub - lb in L1, and the noise of cluster C has scale (ub - lb) / "
    "(size of C times epsilon) (Sanchez, Domingo-Ferrer, Martinez & Soria-Comas 2016).",
    "{epsilon:g}-differential privacy of the cluster means of {columns} (values in [{lb:g}, {ub:g}]){within}, "
    "released in table {table} unlinked from records",
    "duckdb_sdc.methods.dp.dp_um_centroids states the proof",
    neighbours=("bounded: the same records, one record's value of the column changed to any value in [lb, ub]; "
                "the clusters may change (the proof covers it)"),
    exact=("the number of clusters and their sizes, functions of the stratum's number of non-NULL values and k, "
           "and so that number; the strata."))

INDIVIDUAL_DP = Guarantee(
    "individual ranking with local sensitivity", IDP,
    "epsilon-individual differential privacy (Soria-Comas, Domingo-Ferrer, Sanchez & Megias 2017) for "
    "the fixed clustering: for the individuals of this data set, against a change of their own record "
    "that keeps every record in its cluster. The noise scale is computed from the data and is not "
    "itself protected; it is not differential privacy for every pair of data sets.",
    "{epsilon:g}-individual differential privacy of {columns} for the fixed clustering{within}: the noise "
    "scale comes from the data and is not protected",
    "Soria-Comas et al. 2017; Soria-Comas, Sanchez, Domingo-Ferrer, Martinez & Del Vasto-Terrientes 2025",
    neighbours=("individual: this data set against every data set in which one of its records has another value "
                "(in [lb, ub] for idp_ls; any value for idp_cbls), the record staying in its cluster"),
    exact=(_EXACT_EVERYWHERE + "; the partition into clusters (the records sharing a released value) and their "
           "sizes; the noise scales come from the data and are not protected."))

_LOCAL_SUPPRESSION = Guarantee(
    "local_suppression", K_ANONYMITY_NULL_MATCHES,
    "Every record's combination of the key columns is compatible with at least k records of its stratum, two "
    "records being compatible when they are equal wherever both are non-NULL (sdcMicro's fk with alpha = 1: a NULL "
    "may stand for any value). Weaker than k-anonymity of the released combinations: a record may be released with "
    "all its key values and be the only one with exactly those values, the other records matching it through their "
    "NULLs, and an intruder who knows the target's values, or how the suppressions were chosen, may rule some of them "
    "out. Records that met k in the source are released unchanged; a suppressed record is compatible with at least "
    "k records through its own suppressions.",
    "{k}-anonymity of {columns} together within {strata}, a NULL matching any value: every record is compatible "
    "with at least {k} records (not every released combination is shared exactly)",
    "checked before release by counting every left-unsuppressed record's matches (duckdb_sdc.methods.suppression)")

_GENERALISATION = Guarantee(
    "generalise_keys", K_ANONYMITY,
    "Every released combination of the key columns, at the chosen levels of their hierarchies, is shared by at "
    "least k records of its stratum (NULL counting as a value), except the suppressed records (at most "
    "max_suppressed of the records), whose keys are all NULL: k-anonymity of the keys together. It says nothing "
    "about the other columns.",
    "{k}-anonymity of {columns} together within {strata}: every released combination is shared by at least {k} "
    "records, the {suppressed} suppressed records having every key NULL",
    "the search releases only a node whose classes smaller than k are suppressed (duckdb_sdc.methods.generalisation)")

_PRAM = Guarantee(
    "pram", NONE,
    "none: every value of the column is replaced by a draw from its row of the published transition matrix (PRAM, "
    "Gouweleeuw et al. 1998; invariant PRAM as sdcMicro builds it). For the fixed matrix a released category's "
    "likelihood ratio between two original ones is at most e^epsilon (randomised response; epsilon in the "
    "transitions), but the matrix is computed from the stratum's frequencies, so no formal guarantee holds, and most "
    "values are released unchanged (the diagonal is at least pd). Its protection is measured, not stated.",
    "none: {method} replaces the values of {columns} by draws from a published transition matrix within {strata}; "
    "most values are released unchanged",
    discloses_values=True)

_RECODING = Guarantee(
    "global recoding", NONE,
    "none by itself: every value of the column is replaced by a coarser one by one rule for the whole column "
    "(bands, a hierarchy's level, a month, quarter or year, completed years). How many records share a "
    "combination is measured, not stated: the release's k-anonymity gate over the released columns.",
    "none: {method} recodes {columns} by one rule for the whole column; the k-anonymity of the released "
    "combinations is measured by the release")

_CODING = Guarantee(
    "top, bottom coding and merging", NONE,
    "none by itself: the values beyond a threshold (top or bottom coding), or the categories a mapping names, are "
    "replaced; every other value is released unchanged. How many records share a combination is measured, not "
    "stated.",
    "none: {method} replaces some values of {columns} and releases the others unchanged",
    discloses_values=True)

RECODING, CODING = _RECODING, _CODING  # declared on the release recodings' records (duckdb_sdc.recodings)

_KEEP = Guarantee(KEEP, NONE, "Released as in the source: no protection.",
                  "none: released as in the source", discloses_values=True)
_KEY = Guarantee(KEY, NONE, "The row key, released as in the source: it links every released record to "
                            "the source record.", "none: the row key, released as in the source",
                  discloses_values=True)
_BOX_ID = Guarantee(BOX_ID, K_ANONYMITY, "The id of a record's box, numbered over the release: shared by the "
                                         "box's records.", "{k}-anonymity: shared by the {k} or more records of a box")
_POOLED_STRATA = Guarantee(
    POOLED_STRATA, NONE,
    "A strata column released after its small strata were pooled ([masking] small_strata 'nearest' or "
    "'rest'): every record carries the values of its pool (the values of an existing stratum, or the "
    "rest stratum's label), the strata within which the masked columns were masked, so their "
    "guarantees hold within each released stratum; otherwise as in the source: no protection.",
    "none: released as in the source, except {pooled} small strata whose records carry their pool's values "
    "(small_strata = '{how}'; see the masked columns' parameters.small_strata)",
    "duckdb_sdc.strata: the pools are the strata the masking ran in", discloses_values=True)
_REPRODUCIBLE = Guarantee(
    REPRODUCIBLE, NONE,
    "none: reproducible noise. A seed regenerates the noise, so whoever holds it can subtract it; the "
    "column is not private, whatever epsilon says. Released only when the spec opts in "
    "(reproducible_noise = true).",
    "none: reproducible noise ({method} with a seed): whoever holds the seed can remove the noise; not private")

# the guarantees of the SQL functions of the categorical families (duckdb_sdc.sql.keys, sql.recoding); a release
# method's guarantee is declared on its record (duckdb_sdc.masking), a release recoding's on its record
# (duckdb_sdc.recodings), which names RECODING or CODING: the same statements as its SQL function's here
FUNCTIONS: dict[str, Guarantee] = {
    "local_suppression": _LOCAL_SUPPRESSION,
    "generalise_keys": _GENERALISATION,
    "pram": _PRAM,
    **{m: _RECODING for m in ("recode_bands", "generalise", "truncate_date", "age_in_years")},
    **{m: _CODING for m in ("top_code", "bottom_code", "merge_categories")},
}

# what the manifest says of the released columns that no method masks
SUBJECTS: dict[str, Guarantee] = {
    CENTROIDS: _DP_UM_CENTROIDS,
    KEEP: _KEEP,
    KEY: _KEY,
    BOX_ID: _BOX_ID,
    REPRODUCIBLE: _REPRODUCIBLE,
    POOLED_STRATA: _POOLED_STRATA,
}

_METHODS: dict[str, Guarantee] = {}  # each registered masking method's, in the order of registration


def state(method: str, guarantee: Guarantee) -> None:
    """Record the guarantee a masking method declares (`duckdb_sdc.masking.register` calls it): the
    manifest, the SQL docstrings and docs/releases/guarantees.md then find it by the method's name."""
    if not isinstance(guarantee, Guarantee):
        raise TypeError(f"duckdb_sdc.guarantees.state: the guarantee of {method!r} must be a Guarantee, "
                        f"got {guarantee!r}")
    if method in SUBJECTS or method in FUNCTIONS:
        raise ValueError(f"duckdb_sdc.guarantees.state: {method!r} is not a method's name but a subject of "
                         "this module")
    _METHODS[method] = guarantee


def forget(method: str) -> None:
    """Remove a method's guarantee (`duckdb_sdc.masking.unregister`)."""
    _METHODS.pop(method, None)


# every guarantee by subject: the methods' (as registered), the SQL functions' and the other subjects'
GUARANTEES = ChainMap(_METHODS, FUNCTIONS, SUBJECTS)


# ---------------------------------------------------------------------------------------------
# cell protection (a rule's `cells` setting): what it adds to the method's guarantee


@dataclass(frozen=True)
class CellGuarantee:
    action: str  # the `cells` setting's action
    statement: str  # the general words (docs)
    sentence: str  # the manifest's words: str.format(rule=..., levels=..., and the release's counts)
    source: str = ""


_LEVELS = {
    "dominance": "(c(1) + ... + c(n)) / r - T",
    "p_percent": "p c(1) - (T - c(1) - c(2))",
    "pq": "(p / q) c(1) - (T - c(1) - c(2))",
    "threshold": "safety T",
}  # the protection levels of a cell with contributions c(1) >= c(2) >= ... and total T (tau-ARGUS)

_NOT_COVERED = ("It does not cover an intruder who knows more than the signs of the contributions (bounds on "
                "individual values), relations between attributes (accounting identities), coalitions of "
                "contributors from different cells, or the structure of the masking method (univariate clusters "
                "are intervals of the sorted values).")

CELLS: dict[str, CellGuarantee] = {
    "suppress": CellGuarantee(
        "suppress",
        "No released cell is sensitive under the rule named. A cell is the set of records of a stratum sharing a "
        "released value (or combination), for one attribute; its contributions are their original values. Every "
        "sensitive cell is released as NULL, and further cells of its attribute are, so that from the published "
        "cells and the stratum's total of the attribute, knowing the sign of every contribution, no suppressed "
        "sensitive cell's total can be estimated more precisely than its protection level, upwards and downwards "
        "(tau-ARGUS's levels: p% rule p c(1) - (T - c(1) - c(2)), pq rule (p / q) c(1) - (T - c(1) - c(2)), "
        "(n, r) dominance rule (c(1) + ... + c(n)) / r - T, threshold rule safety T; downwards at most down to "
        "what the signs already tell). Audited exactly: the minimum and maximum of every suppressed sensitive "
        "cell over the tables that agree with the release, in rational arithmetic; a stratum where no pattern "
        "can protect a cell is refused. " + _NOT_COVERED,
        "no released cell is sensitive under {rule}: {primary} sensitive cells are suppressed with {secondary} "
        "further cells, and from the published cells and each stratum's total, knowing the signs of the "
        "contributions, none can be estimated more precisely than its protection level ({levels}, upwards and "
        "downwards)",
        "duckdb_sdc.methods.protection (the audit's closed form; audit_suppression solves its linear programmes)"),
    "merge": CellGuarantee(
        "merge",
        "No released cell is sensitive under the rule named: a cluster with a sensitive cell is merged with its "
        "nearest cluster until none is (dynamic k), and a merged cluster is released as the mean of its original "
        "values; clusters only grow, so the method's k still holds. The stratum's total of an attribute is the "
        "sum of published cells, none of them sensitive.",
        "no released cell is sensitive under {rule}: {merged} clusters were merged with their nearest cluster",
        "duckdb_sdc.methods.sensitivity.merge_sensitive"),
    "remove": CellGuarantee(
        "remove",
        "No released cell is sensitive under the rule named: the records that make a cell sensitive (the largest "
        "contributor of a cell sensitive by dominance) are removed from their clusters and released without their "
        "values of the rule's columns; a cell sensitive for its few contributors, and a cluster left smaller than "
        "the stratum's smallest one, is merged with its nearest cluster (so the method's k still holds), and a "
        "changed cluster is released as the mean of its records' original values. The removed records of a "
        "stratum are a cell whose total follows from the stratum's total: when it is sensitive, it is protected "
        "as `suppress` protects a cell (its protection levels met, audited exactly); a stratum where that is "
        "impossible is refused. " + _NOT_COVERED,
        "no released cell is sensitive under {rule}: {removed} records that made a cell sensitive are released "
        "without their values, and the removed records of each stratum, whose total follows from the stratum's "
        "total, cannot be estimated more precisely than their protection level ({levels}; {secondary} further "
        "cells suppressed)",
        "duckdb_sdc.methods.dominance.remove_sensitive"),
}


def cells_sentence(action: str, **facts) -> str:
    """The manifest's words for a rule's cell protection (facts: rule, levels, counts)."""
    if "levels" not in facts and "kind" in facts:
        facts["levels"] = _LEVELS[facts["kind"]]
    return CELLS[action].sentence.format(**facts)


def cells_markdown() -> str:
    """The table of the cells setting on docs/releases/guarantees.md."""
    lines = ["| cells action | what it adds |", "|---|---|"]
    lines += [f"| `{g.action}` | {g.statement} |" for g in CELLS.values()]
    return "\n".join(lines) + "\n"


def of(subject: str) -> Guarantee:
    """The guarantee of a registered masking method (its SQL name), of a categorical SQL function, or of
    KEEP, KEY, REPRODUCIBLE, CENTROIDS, BOX_ID, POOLED_STRATA. Every registered method has one (a method
    cannot be registered without it); anything else is an error, never "safe"."""
    try:
        return GUARANTEES[subject]
    except KeyError:
        raise KeyError(f"no guarantee is stated for {subject!r}: a masking method declares its guarantee on its "
                       "record (duckdb_sdc.masking.register)") from None


def sentence(subject: str, **facts) -> str:
    """The manifest's words for one column: the subject's sentence with this release's numbers
    (k, epsilon, lb, ub, columns, strata, table, method). `strata` and `within` are filled in from
    `strata` (a list of column names) when not given."""
    strata = facts.get("strata")
    if not isinstance(strata, str):
        names = list(strata or [])
        facts["strata"] = "each stratum of " + ", ".join(names) if names else "the whole table"
        facts.setdefault("within", f", within each stratum of {', '.join(names)}" if names else "")
    facts.setdefault("within", "")
    columns = facts.get("columns")
    if not isinstance(columns, str):
        facts["columns"] = ", ".join(columns or [])
    return of(subject).sentence.format(**facts)


_LABELS = {KEEP: "a kept column (`keep`)", KEY: "the row key, kept", BOX_ID: "a box id column",
           CENTROIDS: "`dp_um` with `centroids_table`", REPRODUCIBLE: "any noise with a seed (`reproducible_noise = true`)",
           POOLED_STRATA: "a kept strata column with pooled small strata (`small_strata`)"}


def markdown() -> str:
    """The table of docs/releases/guarantees.md: one row per guarantee, what it covers, its model and
    its statement."""
    rows = {}
    for name, g in [*_METHODS.items(), *FUNCTIONS.items(), *SUBJECTS.items()]:
        rows.setdefault(id(g), (g, []))[1].append(name)
    lines = ["| released as | privacy model | what holds |", "|---|---|---|"]
    private = ["", "The differentially private statements' neighbouring data sets, and what each release "
               "publishes exactly (no noise protects it):", "",
               "| released as | neighbouring data sets | released exactly |", "|---|---|---|"]
    for g, names in rows.values():
        shown = ", ".join(_LABELS.get(n, f"`{n}`") for n in names)
        lines.append(f"| {shown} | {g.model} | {g.statement} |")
        if g.neighbours:
            private.append(f"| {shown} | {g.neighbours} | {g.exact} |")
    return "\n".join(lines + private) + "\n"
