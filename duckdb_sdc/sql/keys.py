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

from ..params import KEYS, STRATA, TBL_PARAM, Name, Param
from ..measures.keys import NULLS
from .registry import SqlFunction

GROUP = "Risk of key combinations"

KEYS_PARAM = Param("keys", KEYS)
NULLS_PARAM = Param("nulls", NULLS, "'any'")
KEY_STRATA_PARAM = Param("strata", STRATA, "NULL", doc="column(s) whose strata are counted apart (records in "
                                                       "different strata never match; NULL is a stratum value)")
OPTIONAL_WEIGHT = Name(optional=True, doc="name of the sampling-weight column (finite, > 0 for every record), or "
                                          "NULL for none (then F_k = f_k)")
WEIGHT_OR_NULL = Param("weight", OPTIONAL_WEIGHT)
_NULLS_NOTE = (" nulls := 'any' (default): a NULL key matches any value of its key, as sdcMicro's freqCalc counts a "
               "missing value; 'category': NULL is one more value. Strata are counted apart. Empty tables, missing "
               "columns and weights that are NULL, not finite or not > 0 are refused, naming up to five.")

_ARGS = "tbl, keys, weight, strata, nulls"

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
        scale=None),  # the table's own columns scale with the data, the risks do not
    SqlFunction(
        name="global_risk_summary", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, WEIGHT_OR_NULL, KEY_STRATA_PARAM, NULLS_PARAM), returns="table", group=GROUP,
        doc=("One row (one per stratum, strata first, with strata) of the global re-identification risk over the key "
             "combinations, as sdcMicro's measure_risk gives it: records, sample_uniques (records with f_k = 1), "
             "expected_reidentifications (the sum of the individual risks of individual_risk_table, sdcMicro's "
             "global_risk_ER) and global_risk (that sum over the records)." + _NULLS_NOTE),
        example="SELECT * FROM global_risk_summary('weighted_people', ['region', 'age'], 'w')",
        body=f"FROM query(__sdc_global_risk_sql('global_risk_summary', {_ARGS}))",
        scale=0),
]
