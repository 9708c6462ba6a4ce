"""SQL rows for the risk and utility of key combinations (duckdb_sdc.measures.keys,
docs/methods/key-risk.md): individual and global risk (pure SQL, sql/65_keys.sql), SUDA2 (numba,
through a UDF over each stratum's combinations), l-diversity and t-closeness (pure SQL) and the
utility measures of a release's categorical columns (pure SQL).

Every function takes the key columns (`keys`, any types), optional strata (counted apart) and
`nulls`: 'any' (a NULL key matches any value, as sdcMicro counts it; the default) or 'category'
(NULL is one more value). `population_frequencies_table` and `weighted_risk_summary` of the sampling
weights' family (duckdb_sdc.sql.weights) count with the same SQL.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..measures import keys as km
from ..measures.keys import DIS_FRACTION, NULLS, SUDA_SCORES
from ..params import KEYS, STRATA, TABLE, TBL_PARAM, Name, Param
from ._arrow import reported, reporting_name, single_array
from .function import Contract, SqlFunction, Udf
from ._rows import positional_signature

GROUP = "Risk of key combinations"

KEYS_PARAM = Param("keys", KEYS)
NULLS_PARAM = Param("nulls", NULLS, "'any'")
KEY_STRATA_PARAM = Param("strata", STRATA, "NULL", doc="column(s) whose strata are counted apart (records in "
                                                       "different strata never match; NULL is a stratum value)")
OPTIONAL_WEIGHT = Name(optional=True, doc="name of the sampling-weight column (finite, > 0 for every record), or "
                                          "NULL for none (then F_k = f_k)")
WEIGHT_OR_NULL = Param("weight", OPTIONAL_WEIGHT)
SENSITIVE_PARAM = Param("sensitive", Name(doc="name of the sensitive column (categorical, any type; not a key)"),
                        example="'x'")
_NULLS_NOTE = (" nulls := 'any' (default): a NULL key matches any value of its key, as sdcMicro's freqCalc counts a "
               "missing value; 'category': NULL is one more value. Strata are counted apart. Empty tables, missing "
               "columns and weights that are NULL, not finite or not > 0 are refused, naming up to five.")

_ARGS = "tbl, keys, weight, strata, nulls"

UTILITY = "Utility of released key columns"
ORIGINAL = Param("original", TABLE, doc="the original table (before masking)")
RELEASED = Param("released", TABLE, doc="the released table (the same records, masked)")
RECORD_KEY = Param("key", Name(doc="the record key both tables share (unique, not NULL), which pairs their records"),
                   example="'id'")
_PAIRED = (" Records that do not pair one to one (a key missing on one side, repeated or NULL) are refused, naming up "
           "to five keys; so is an empty table.")

_SUDA_OUT = "STRUCT(msus VARCHAR[][][], suda_score DOUBLE[], dis_suda_score DOUBLE[])"


def _suda2_udf(fname, combos, counts, names, nulls, dis_fraction, scores):
    """__sdc_suda2_table(reporting name, combinations VARCHAR[][] (one stratum per row: the distinct
    combinations of the keys as text, NULL for NULL), their numbers of records BIGINT[], the key names,
    nulls, dis_fraction, scores) -> per row the MSUs (lists of key names), SUDA and DIS-SUDA scores of
    every combination (`duckdb_sdc.measures.keys.suda2_combinations`)."""
    func = reporting_name(fname) or "suda2_table"
    with reported(func):
        combos, counts, names = single_array(combos), single_array(counts), single_array(names)
        nulls = NULLS.check(single_array(nulls)[0].as_py(), func, "nulls")
        dis = DIS_FRACTION.check(single_array(dis_fraction)[0].as_py(), func, "dis_fraction")
        scores = SUDA_SCORES.check(single_array(scores)[0].as_py(), func, "scores")
        out_msus, out_score, out_dis = [], [], []
        for r in range(len(combos)):
            rows = combos[r].as_py()
            key_names = names[r].as_py()
            m = len(key_names)
            cols = [[row[j] for row in rows] for j in range(m)]
            cb = km.combinations_of(func, cols, counts[r].as_py(), nulls)
            masks, score, dis_score = km.suda2_combinations(cb, dis, scores)
            out_msus.append([[[key_names[i] for i in range(m) if (T >> i) & 1] for T in mk] for mk in masks])
            out_score.append(score.tolist())
            out_dis.append(dis_score.tolist())
        return pa.StructArray.from_arrays(
            [pa.array(out_msus, type=pa.list_(pa.list_(pa.list_(pa.string())))),
             pa.array(out_score, type=pa.list_(pa.float64())), pa.array(out_dis, type=pa.list_(pa.float64()))],
            names=["msus", "suda_score", "dis_suda_score"])


_suda2_udf.__name__ = "sdc_suda2_table"
positional_signature(_suda2_udf, 7)

FUNCTIONS: list[SqlFunction] = [
    SqlFunction(
        name="individual_risk_table", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, WEIGHT_OR_NULL, KEY_STRATA_PARAM, NULLS_PARAM), returns="table", group=GROUP,
        doc=("The rows of tbl with sample_fk (f_k: the records matching the row's combination of keys), "
             "population_fk (F_k: the sum of their sampling weights) and individual_risk, the Benedetti-Franconi "
             "estimate of the probability of re-identification exactly as sdcMicro's indivRisk(method = 'approx') "
             "computes it from f_k and F_k (p = f_k / F_k: 1 / f_k when F_k = f_k; p / (1 - p) log(1 / p) for "
             "f_k = 1; p / (1 - p) - (p / (1 - p))^2 log(1 / p) for f_k = 2; p / (f_k - (1 - p)) above). Without a "
             "weight (NULL) the risk is 1 / f_k. Weights that make F_k < f_k (below 1) are refused." + _NULLS_NOTE),
        example="SELECT * FROM individual_risk_table('weighted_people', ['region', 'age'], 'w')",
        body=f"FROM query(__sdc_individual_risk_sql('individual_risk_table', {_ARGS}))",
        scale=None,  # the table's own columns scale with the data, the risks do not
        contract=Contract({"keys": "keys", "weight": "weights"}, result="rows")),
    SqlFunction(
        name="global_risk_summary", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, WEIGHT_OR_NULL, KEY_STRATA_PARAM, NULLS_PARAM), returns="table", group=GROUP,
        doc=("One row (one per stratum, strata first, with strata) of the global re-identification risk over the key "
             "combinations, as sdcMicro's measure_risk gives it: records, sample_uniques (records with f_k = 1), "
             "expected_reidentifications (the sum of the individual risks of individual_risk_table, sdcMicro's "
             "global_risk_ER) and global_risk (that sum over the records)." + _NULLS_NOTE),
        example="SELECT * FROM global_risk_summary('weighted_people', ['region', 'age'], 'w')",
        body=f"FROM query(__sdc_global_risk_sql('global_risk_summary', {_ARGS}))",
        scale=0,
        contract=Contract({"keys": "keys", "weight": "weights"}, result="report")),
    SqlFunction(
        name="suda2_table", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, KEY_STRATA_PARAM, NULLS_PARAM,
                Param("dis_fraction", DIS_FRACTION, "0.01"), Param("scores", SUDA_SCORES, "'elliot'")),
        returns="table", group=GROUP,
        doc=("The rows of tbl with msus, suda_score and dis_suda_score: SUDA2's special uniques (Manning, Haglin & "
             "Keane 2008) as sdcMicro's suda2 finds them. A minimal sample unique (MSU) of a record is a set of keys "
             "on which no other record matches it, while on every smaller set some other record does; msus lists "
             "them (each a list of key names, smallest first; none for a record whose whole combination is shared). "
             "suda_score sums a weight per MSU: (m - size)! for m keys with scores := 'elliot' (sdcMicro's default, "
             "Elliot et al. 2002), or (2^(m - size) - 1) size! (m - size)! / m! with 'suda2'. dis_suda_score is "
             "sdcMicro's DIS-SUDA estimate with sampling fraction dis_fraction: 1 / (1 + P (1 - f) / f / (score^Q "
             "sum score^-Q)), P the records with f_k = 2, Q = 1 + (8 - m) / 20 (0 for a score of 0)." + _NULLS_NOTE
             + " With nulls := 'any' a key where the record is NULL is never part of its MSUs."),
        example="SELECT * FROM suda2_table('people', ['region', 'age'])",
        udf=Udf(_suda2_udf, ("VARCHAR[][]", "BIGINT[]", "VARCHAR[]", "VARCHAR", "VARCHAR", "VARCHAR"), _SUDA_OUT),
        body="FROM query(__sdc_suda2_sql('suda2_table', tbl, keys, strata, nulls, dis_fraction, scores))",
        scale=None,
        contract=Contract({"keys": "keys"}, result="rows")),
    SqlFunction(
        name="l_diversity_table", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, SENSITIVE_PARAM, KEY_STRATA_PARAM, NULLS_PARAM), returns="table", group=GROUP,
        doc=("The rows of tbl with distinct_l_diversity and entropy_l_diversity (Machanavajjhala et al. 2007) of "
             "the records matching the row's keys (its equivalence class; with nulls := 'any' a NULL key matches "
             "any value): the number of distinct values of the sensitive column among them, and exp(-sum p ln p) "
             "over their shares p, the largest l for which the class is entropy l-diverse. NULL in the sensitive "
             "column is a value of its own; the sensitive column must not be a key. sdcMicro's ldiversity gives "
             "the same per record (Distinct_Ldiversity, Entropy_Ldiversity) with NULL keys counted as values "
             "(nulls := 'category')." + _NULLS_NOTE),
        example="SELECT * FROM l_diversity_table('people', ['region'], 'age')",
        body="FROM query(__sdc_l_diversity_sql('l_diversity_table', tbl, keys, sensitive, strata, nulls))",
        scale=None,
        contract=Contract({"keys": "keys", "sensitive": "sensitive"}, result="rows")),
    SqlFunction(
        name="t_closeness_table", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, SENSITIVE_PARAM, KEY_STRATA_PARAM, NULLS_PARAM), returns="table", group=GROUP,
        doc=("The rows of tbl with t_closeness (Li, Li & Venkatasubramanian 2007) for a categorical sensitive "
             "column: the Earth Mover's Distance between the distribution of its values among the records matching "
             "the row's keys (as l_diversity_table takes them) and their distribution in the table (in the row's "
             "stratum), with the equal ground distance (every two categories 1 apart; ARX's equal-distance "
             "t-closeness), which is the total variation distance 1/2 sum |p - q|, in [0, 1]. The table is t-close "
             "when max(t_closeness) <= t. NULL is a category of its own; the sensitive column must not be a key."
             + _NULLS_NOTE),
        example="SELECT * FROM t_closeness_table('people', ['region'], 'age')",
        body="FROM query(__sdc_t_closeness_sql('t_closeness_table', tbl, keys, sensitive, strata, nulls))",
        scale=None,
        contract=Contract({"keys": "keys", "sensitive": "sensitive"}, result="rows")),
    SqlFunction(
        name="suppression_table", kind="table", params=(ORIGINAL, RELEASED, RECORD_KEY, KEYS_PARAM), returns="table",
        group=UTILITY,
        doc=("One row per key column: column_name, records, values (its non-NULL values in the original), "
             "suppressed (the values the release set to NULL) and suppressed_share (suppressed / values; NULL "
             "without values). The records of original and released are paired by the record key." + _PAIRED),
        example="SELECT * FROM suppression_table('people', 'people_masked', 'id', ['region'])",
        body="FROM query(__sdc_suppression_sql('suppression_table', original, released, key, keys))",
        scale=0,
        contract=Contract({"key": "key", "keys": "keys"}, result="report")),
    SqlFunction(
        name="record_suppression_table", kind="table", params=(ORIGINAL, RELEASED, RECORD_KEY, KEYS_PARAM),
        returns="table", group=UTILITY,
        doc=("One row per record: its key, values (its non-NULL key values in the original), suppressed (those the "
             "release set to NULL) and suppressed_share (NULL for a record without values)." + _PAIRED),
        example="SELECT * FROM record_suppression_table('people', 'people_masked', 'id', ['region'])",
        body="FROM query(__sdc_record_suppression_sql('record_suppression_table', original, released, key, keys))",
        scale=0,
        contract=Contract({"key": "key", "keys": "keys"}, result="rows")),
    SqlFunction(
        name="class_loss_summary", kind="table", params=(RELEASED, KEYS_PARAM, KEY_STRATA_PARAM), returns="table",
        group=UTILITY,
        doc=("ARX's loss measures of the released keys over their equivalence classes (records with equal released "
             "values, NULL a value: a suppressed value is generalised to '*'); a record whose keys are all NULL is "
             "suppressed (ARX's outlier), each stratum apart: records, classes (of unsuppressed records), "
             "suppressed_records, discernibility (ARX's Discernibility: sum of |E|^2 over the classes, plus the "
             "stratum's number of records for every suppressed record) and average_class_size (ARX's Average "
             "equivalence class size: records / (classes + one per stratum with suppressed records)). An empty table "
             "is refused."),
        example="SELECT * FROM class_loss_summary('people', ['region'])",
        body="FROM query(__sdc_class_loss_sql('class_loss_summary', released, keys, strata))",
        scale=0,
        contract=Contract({"keys": "keys"}, result="report")),
    SqlFunction(
        name="non_uniform_entropy_table", kind="table",
        params=(ORIGINAL, RELEASED, RECORD_KEY, KEYS_PARAM, KEY_STRATA_PARAM), returns="table", group=UTILITY,
        doc=("One row per key column: column_name and non_uniform_entropy, in bits, the information the release "
             "lost about it (de Waal & Willenborg 1999; ARX's Non-uniform entropy): sum over the records of "
             "-log2(n(a, b) / n(b)), a the original value, b the released one, n(a, b) the records with both and "
             "n(b) those released as b (NULL a value on both sides), each stratum (of the original) apart. 0 for a "
             "column released unchanged; a suppressed value costs -log2 of its share among the suppressed ones. "
             "Sum the rows for the total." + _PAIRED),
        example="SELECT * FROM non_uniform_entropy_table('people', 'people_masked', 'id', ['region'])",
        body=("FROM query(__sdc_non_uniform_entropy_sql('non_uniform_entropy_table', original, released, key, keys, "
              "strata))"),
        scale=0,
        contract=Contract({"key": "key", "keys": "keys"}, result="report")),
]
