"""SQL rows for the recoding and suppression of categorical keys (duckdb_sdc.methods.recoding,
suppression, pram, generalisation; docs/methods/recoding.md).

The global recodings are pure SQL (sql/70_recoding.sql), value by value; `recode_bands_table` and
`generalise_table` check the whole column first and name up to five offending values. The table forms
of local suppression, PRAM and the generalisation search hand each stratum's rows to a Python UDF as
one list (ordered by the rows' content, so that a run repeats), local suppression and PRAM as the
dense ranks of the values (every type, in its own order: the same order the numpy layer sorts
categories in), the generalisation search as text (its hierarchies are text); the answer comes back
beside the rows, so that every column keeps its type (PRAM releases existing values of the column).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .._validate import fail, show
from ..methods import generalisation as gz
from ..methods import pram as pm
from ..methods import recoding as rc
from ..methods.recoding import BREAKS, LABELS, MAPPING, text_list as _text_list
from ..methods import suppression as sp
from ..params import KEYS, SEED_PARAM, STRATA, TBL_PARAM, Integer, Kind, Name, Param
from ._arrow import reported, reporting_name, single_array
from .function import Contract, SqlFunction, Udf
from ._rows import positional_signature

GROUP = "Recoding and suppression of categorical keys"
SOURCE = "sql/70_recoding.sql"


# ---------------------------------------------------------------------------------------------
# parameter kinds of this family


@dataclass(frozen=True, eq=False)
class Value(Kind):
    """One value of a column, of any type (the data of a value-by-value recoding). NULL stays NULL."""

    doc: str = ""
    sql_type: str = "ANY"
    valid: str = "5"
    invalid: tuple[str, ...] = ()

    def accepts(self, value) -> bool:
        return False  # data come from the table, never from a spec


@dataclass(frozen=True, eq=False)
class Importance(Kind):
    """sdcMicro's importance of the keys: NULL, or one integer in 1..p per key (1: suppressed last)."""

    doc: str = ("NULL (no preference: the fewest suppressions), or one integer per key in 1..p, sdcMicro's "
                "importance: 1 for the most important key (suppressed last); ties allowed")
    sql_type: str = "INTEGER[]"
    valid: str = "NULL"
    invalid: tuple[str, ...] = ("[0, 1]", "[1.5, 1]", "[NULL, 1]")

    def check(self, value, func, param, *, keys: int | None = None, **context):
        """`keys`: the number of keys, when known (else every entry is checked against 1..len)."""
        if value is None:
            return None
        values = _text_list(value)
        if keys is None:
            return sp.check_importance(values, len(values), func) if values else values
        return sp.check_importance(values, keys, func)

    def accepts(self, value) -> bool:
        return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


@dataclass(frozen=True, eq=False)
class Hierarchies(Kind):
    """The hierarchies of the keys: one table name or CSV file per key, in the order of the keys."""

    doc: str = ("one hierarchy per key, in the keys' order: a table or view whose columns are the value and its "
                "levels, or a CSV file (a name ending in .csv) as ARX writes hierarchies (';', no header)")
    sql_type: str = "VARCHAR[]"
    valid: str = "['h_any', 'h_any']"
    invalid: tuple[str, ...] = ("NULL", "['h_any']", "[NULL, 'h_any']")

    def check(self, value, func, param, *, keys: int | None = None, **context):
        """`keys`: the number of keys, when known."""
        values = _text_list(value)
        if values is None:
            raise fail(func, f"{param} must not be NULL", param)
        if any(v is None for v in values):
            raise fail(func, f"{param} must not contain NULL", param)
        if keys is not None and len(values) != keys:
            raise fail(func, f"{param} must give one hierarchy per key ({keys}), got {len(values)}", param)
        if keys is None and len(values) < 2:
            raise fail(func, f"{param} must give one hierarchy per key, got {len(values)}", param)
        return values

    def accepts(self, value) -> bool:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)


VALUE = Value(doc="the value (any type); NULL stays NULL")
NUMBER_VALUE = Value(doc="the value (numeric, finite); NULL stays NULL")
DATE_VALUE = Value(doc="the date or timestamp; NULL stays NULL", valid="DATE '2024-05-17'")
IMPORTANCE = Importance()
HIERARCHIES = Hierarchies()
HIERARCHY = Name(of="table or a CSV file", doc="the hierarchy: a table or view whose columns are the value and its levels, or "
                                      "a CSV file (a name ending in .csv) as ARX writes hierarchies (';', no header)")
LEVEL = Integer(0, doc="the level of the hierarchy, 0 (the value itself) to its height")


@dataclass(frozen=True, eq=False)
class Share(Kind):
    """A share of the records in [0, 1]."""

    doc: str = "the largest share of the records that may be suppressed, in [0, 1]"
    sql_type: str = "DOUBLE"
    valid: str = "0.05"
    invalid: tuple[str, ...] = ("-0.1", "1.5", "'many'", "NULL")

    def check(self, value, func, param, **context):
        if value is None:
            raise fail(func, f"{param} must not be NULL", param)
        return gz.check_share(value, func)

    def accepts(self, value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)


SUPPRESSED_SHARE = Share()

X = Param("x", NUMBER_VALUE, example="20")
BREAKS_PARAM = Param("breaks", BREAKS, example="[0, 18, 65, 120]")
TABLE_BREAKS_PARAM = Param("breaks", BREAKS)  # the kind's example covers the contract suite's data
LABELS_PARAM = Param("labels", LABELS, "NULL")
CLOSED_PARAM = Param("closed", rc.CLOSED, "'right'")
COL = Param("col", Name(doc="name of the column to recode"))
KEYS_PARAM = Param("keys", KEYS, doc="the key columns (quasi-identifiers), of any type")
K_PARAM = Param("k", sp.K_KIND)
STRATA_PARAM = Param("strata", STRATA, "NULL", doc="column(s) within whose strata the keys are protected")
VAR = Param("var", Name(doc="name of the categorical column to perturb (any type)"))
PD = Param("pd", pm.PROBABILITY, "0.8", doc="the least diagonal entry of P, in [0, 1] (sdcMicro's pd)")
ALPHA = Param("alpha", pm.PROBABILITY, "0.5", doc="the weight of the invariant matrix R against the identity, in "
                                                 "[0, 1] (sdcMicro's alpha)")
PRAM_SEED = Param("seed", SEED_PARAM.kind, "NULL",
                  doc="NULL: operating-system randomness; an integer 0 <= seed < 2^63: reproducible (no protection)")


# ---------------------------------------------------------------------------------------------
# the UDFs


def _scalar(arr):
    arr = single_array(arr)
    return arr[0].as_py() if len(arr) else None


def _rows_of(lists: pa.Array, r: int) -> pa.Array:
    return lists[r].values if lists[r].is_valid else None


def _codes_matrix(records: pa.Array, p: int | None = None) -> np.ndarray:
    """A stratum's key codes (the SQL side's dense ranks from 1, NULL for NULL) as an (n, p) int64
    matrix of codes from 0, -1 for NULL."""
    n = len(records)
    flat = records.flatten()  # every record has the same number of keys (flatten respects a slice's offsets)
    width = len(flat) // n if n else (p or 0)
    values = flat.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64) - 1
    return values.reshape(n, width)


_SUPPRESSION_TYPE = pa.struct([("mask", pa.list_(pa.list_(pa.bool_()))), ("records", pa.int64()),
                               ("unsafe", pa.int64()), ("suppressed_records", pa.int64()), ("suppressed", pa.int64()),
                               ("per_key", pa.list_(pa.int64())), ("optimal", pa.bool_()),
                               ("lower_bound", pa.int64()), ("algorithm", pa.string())])
SUPPRESSION_RETURNS = ("STRUCT(mask BOOLEAN[][], records BIGINT, unsafe BIGINT, suppressed_records BIGINT, "
                       "suppressed BIGINT, per_key BIGINT[], optimal BOOLEAN, lower_bound BIGINT, algorithm VARCHAR)")


def _local_suppression_udf(fname, records, k, importance, label):
    func = reporting_name(fname) or "local_suppression_table"
    lists, ks, imps, labels = single_array(records), single_array(k), single_array(importance), single_array(label)
    out = []
    with reported(func):
        for r in range(len(lists)):
            rows = lists[r].values
            codes = _codes_matrix(rows)
            n, p = codes.shape
            where = labels[r].as_py()
            kk = sp.K_KIND.check(ks[r].as_py(), func, "k")
            if kk > n:
                raise fail(func, f"k = {kk} is larger than the number of records ({n}) of {where}", "k")
            imp = IMPORTANCE.check(imps[r].as_py(), func, "importance", keys=p)
            mask, optimal, lower, algorithm, unsafe = sp.suppress_codes(codes, kk, imp)
            out.append({"mask": mask.tolist(), "records": n, "unsafe": unsafe,
                        "suppressed_records": int(mask.any(axis=1).sum()), "suppressed": int(mask.sum()),
                        "per_key": mask.sum(axis=0).astype(int).tolist(), "optimal": bool(optimal),
                        "lower_bound": lower, "algorithm": algorithm})
    return pa.array(out, type=_SUPPRESSION_TYPE)


positional_signature(_local_suppression_udf, 5)
_local_suppression_udf.__name__ = "sdc_local_suppression_table"


def _stratum_values(lists: pa.Array, r: int) -> pa.Array:
    """Row r's list of values (empty for a NULL list)."""
    return lists[r].values if lists[r].is_valid and lists[r].values is not None else pa.array([], pa.int64())


def _pram_stratum(func, values: pa.Array, pd, alpha, seed):
    """(each category's first position in the list, the released codes, the original codes, the
    positions of the non-NULL values, the matrix) of one stratum."""
    present = values.is_valid().to_numpy(zero_copy_only=False)
    ranks = values.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64) - 1
    codes = ranks[present]
    L = int(codes.max()) + 1 if codes.shape[0] else 0
    pd = pm.PROBABILITY.check(pd, func, "pd")
    alpha = pm.PROBABILITY.check(alpha, func, "alpha")
    seed = SEED_PARAM.kind.check(seed, func, "seed")
    released, matrix, _ = pm.pram_codes(codes, L, pd, alpha, seed)
    first = np.full(L, -1, np.int64)
    at = np.flatnonzero(present)
    first[codes[::-1]] = at[::-1]  # the first position of each category
    return first, released, codes, at, matrix


def _pram_udf(fname, values, pd, alpha, seed):
    func = reporting_name(fname) or "pram_table"
    lists, pds, alphas, seeds = single_array(values), single_array(pd), single_array(alpha), single_array(seed)
    out = []
    with reported(func):
        for r in range(len(lists)):
            vals = _stratum_values(lists, r)
            first, released, _, at, _ = _pram_stratum(func, vals, pds[r].as_py(), alphas[r].as_py(), seeds[r].as_py())
            pos = [None] * len(vals)
            for i, c in zip(at.tolist(), released.tolist()):
                pos[i] = int(first[c]) + 1
            out.append(pos)
    return pa.array(out, type=pa.list_(pa.int64()))


positional_signature(_pram_udf, 5)
_pram_udf.__name__ = "sdc_pram_table"

_TRANSITION = pa.struct([("from_at", pa.int64()), ("to_at", pa.int64()), ("probability", pa.float64()),
                         ("records", pa.int64()), ("epsilon", pa.float64())])
TRANSITIONS_RETURNS = "STRUCT(from_at BIGINT, to_at BIGINT, probability DOUBLE, records BIGINT, epsilon DOUBLE)[]"


def _pram_transitions_udf(fname, values, pd, alpha, seed):
    func = reporting_name(fname) or "pram_transitions_table"
    lists, pds, alphas, seeds = single_array(values), single_array(pd), single_array(alpha), single_array(seed)
    out = []
    with reported(func):
        for r in range(len(lists)):
            vals = _stratum_values(lists, r)
            first, released, codes, _, matrix = _pram_stratum(func, vals, pds[r].as_py(), alphas[r].as_py(),
                                                              seeds[r].as_py())
            L = matrix.shape[0]
            counts = np.zeros((L, L), np.int64)
            np.add.at(counts, (codes, released), 1)
            eps = pm.randomised_response_epsilon(matrix)
            out.append([{"from_at": int(first[i]) + 1, "to_at": int(first[j]) + 1, "probability": float(matrix[i, j]),
                         "records": int(counts[i, j]), "epsilon": eps} for i in range(L) for j in range(L)])
    return pa.array(out, type=pa.list_(_TRANSITION))


positional_signature(_pram_transitions_udf, 5)
_pram_transitions_udf.__name__ = "sdc_pram_transitions_table"


def _json_rows(func: str, texts, what: str) -> list[list]:
    if texts is None:
        raise fail(func, f"{what} has no rows", "hierarchy")
    rows = []
    for t in texts:
        row = list(json.loads(t).values())
        rows.append(row)
    return rows


_MAPPING = pa.list_(pa.struct([("value", pa.string()), ("generalised", pa.string())]))
MAPPING_RETURNS = "STRUCT(value VARCHAR, generalised VARCHAR)[]"


def _generalise_udf(fname, column, hierarchy, values, level):
    func = reporting_name(fname) or "generalise_table"
    col = _scalar(column)
    with reported(func):
        rows = _json_rows(func, _scalar(hierarchy), f"hierarchy of column {col}")
        lv = LEVEL.check(_scalar(level), func, "level")
        vals = _scalar(values) or []
        out = rc.generalise(np.array(vals, dtype=object), rows, lv, column=col) if vals else []
        mapping = [{"value": v, "generalised": g} for v, g in zip(vals, list(out))]
    return pa.array([mapping] * len(single_array(column)), type=_MAPPING)


positional_signature(_generalise_udf, 5)
_generalise_udf.__name__ = "sdc_generalise_table"

_LATTICE = pa.struct([("levels", pa.list_(pa.int32())), ("feasible", pa.bool_()), ("suppressed", pa.int64()),
                      ("loss", pa.float64()), ("chosen", pa.bool_())])
_SEARCH = pa.struct([("released", pa.list_(pa.list_(pa.string()))), ("lattice", pa.list_(_LATTICE))])
SEARCH_RETURNS = ("STRUCT(released VARCHAR[][], lattice STRUCT(levels INTEGER[], feasible BOOLEAN, suppressed BIGINT, "
                  "loss DOUBLE, chosen BOOLEAN)[])")


def _search_udf(fname, keys, records, strata, hierarchies, k, share, measure):
    func = reporting_name(fname) or "generalisation_search_table"
    with reported(func, {"max_suppressed": "max_suppressed"}):
        names = _scalar(keys)
        recs = _scalar(records) or []
        p = len(names)
        cols = [np.array([r[c] for r in recs], dtype=object) for c in range(p)]
        st = _scalar(strata)
        strata_cols = None if st is None else [np.array([r[c] for r in st], dtype=object) for c in range(len(st[0]))] \
            if st else None
        hs = [_json_rows(func, h, f"hierarchy of column {names[c]}") for c, h in enumerate(_scalar(hierarchies))]
        import pandas as pd

        frame = pd.DataFrame({name: col for name, col in zip(names, cols)})
        got = gz.generalisation_search(frame, hs, _scalar(k), _scalar(share), _scalar(measure), strata=strata_cols)
        released = [[None if v is None else str(v) for v in row] for row in zip(*got.released)]
        lattice = [{"levels": list(node.levels), "feasible": node.feasible, "suppressed": node.suppressed,
                    "loss": node.loss, "chosen": node.levels == got.levels} for node in got.lattice]
    out = {"released": released, "lattice": lattice}
    return pa.array([out] * len(single_array(fname)), type=_SEARCH)


positional_signature(_search_udf, 8)
_search_udf.__name__ = "sdc_generalisation_search_table"


# ---------------------------------------------------------------------------------------------
# the rows


_NULL_MATCH = ("A NULL key matches any value (sdcMicro's freqCalc with alpha = 1): pre-existing NULLs are kept and count "
               "as wildcards.")

FUNCTIONS: list[SqlFunction] = [
    SqlFunction(
        name="recode_bands", kind="scalar", params=(X, BREAKS_PARAM, LABELS_PARAM, CLOSED_PARAM), returns="VARCHAR",
        group=GROUP, source=SOURCE, scale=None,
        contract=Contract(),
        doc=("Numeric bands (sdcMicro's globalRecode with breaks): the label of the band holding x. closed := 'right' "
             "(default, as R's cut and sdcMicro): [b0, b1], (b1, b2], ..., the first band also holding b0; 'left': "
             "[b0, b1), ..., [bm-1, bm]. Default labels are the intervals as written ('(18, 65]'); labels gives one text "
             "per band. A value outside [b0, bm] is an error (use recode_bands_table to have up to five of them named); "
             "NULL stays NULL."),
        example="SELECT recode_bands(20, [0, 18, 65, 120])"),
    SqlFunction(
        name="recode_bands_table", kind="table",
        params=(TBL_PARAM, COL, TABLE_BREAKS_PARAM, LABELS_PARAM, CLOSED_PARAM), returns="table", group=GROUP,
        scale=None,  # the other columns scale with the data, the labels are text
        contract=Contract({"col": "original"}, result="rows"),
        doc=("Table form of recode_bands: the rows of tbl with column col replaced by its band labels (VARCHAR). The "
             "column is checked first: numeric, and every value within the breaks, else an error naming up to five "
             "values outside them. NULL stays NULL; rows come back in no particular order."),
        example="SELECT * FROM recode_bands_table('people', 'age', [0, 18, 65, 120])",
        body="FROM query(__sdc_bands_table_sql('recode_bands_table', tbl, col, breaks, labels, closed))",
        source=None),
    SqlFunction(
        name="top_code", kind="scalar", params=(X, Param("top", Value(doc="the threshold, a finite number"), example="10"),
                                                Param("replacement", Value(doc="the value given to those above top "
                                                                               "(default: top)"), "NULL")),
        returns="ANY", group=GROUP, source=SOURCE, scale=1,
        contract=Contract(),
        doc=("Top coding (sdcMicro's topBotCoding, kind 'top'): x when x <= top, else replacement (default top). "
             "NULL stays NULL; NaN and infinite values are refused."),
        example="SELECT top_code(120, 90)  -- 90"),
    SqlFunction(
        name="bottom_code", kind="scalar",
        params=(X, Param("bottom", Value(doc="the threshold, a finite number"), example="10"),
                Param("replacement", Value(doc="the value given to those below bottom (default: bottom)"), "NULL")),
        returns="ANY", group=GROUP, source=SOURCE, scale=1,
        contract=Contract(),
        doc=("Bottom coding (sdcMicro's topBotCoding, kind 'bottom'): x when x >= bottom, else replacement (default "
             "bottom). NULL stays NULL; NaN and infinite values are refused."),
        example="SELECT bottom_code(3, 16)  -- 16"),
    SqlFunction(
        name="merge_categories", kind="scalar", params=(Param("x", VALUE, example="2"), Param("mapping", MAPPING)),
        returns="VARCHAR", group=GROUP, source=SOURCE, scale=None,
        contract=Contract(),
        doc=("Merging categories (sdcMicro's groupAndRename, several groups at once): the image of x (as text) under "
             "mapping, or x itself as text when mapping does not name it. NULL stays NULL; mapping to NULL is refused."),
        example="SELECT merge_categories(9, MAP {'2': 'other', '9': 'other'})"),
    SqlFunction(
        name="truncate_date", kind="scalar", params=(Param("d", DATE_VALUE), Param("unit", rc.UNITS)),
        returns="DATE", group=GROUP, source=SOURCE, scale=None,
        contract=Contract(),
        doc=("A date or timestamp generalised to the first day of its 'month', 'quarter' or 'year' (a DATE; for a "
             "TIMESTAMP WITH TIME ZONE, in the session's time zone). NULL stays NULL."),
        example="SELECT truncate_date(DATE '2024-05-17', 'quarter')"),
    SqlFunction(
        name="age_in_years", kind="scalar",
        params=(Param("birth", DATE_VALUE, example="DATE '2000-02-29'"),
                Param("reference", DATE_VALUE, doc="the reference date (the interview's, the release's)",
                      example="DATE '2001-03-01'")),
        returns="INTEGER", group=GROUP, source=SOURCE, scale=None,
        contract=Contract(),
        doc=("Completed years from birth to reference: the difference of the years, less one when the reference's "
             "month and day come before the birth's (born on 29 February: a year completed on 1 March in a year without "
             "it). A birth after its reference is an error; NULL gives NULL."),
        example="SELECT age_in_years(DATE '2000-02-29', DATE '2001-03-01')  -- 1"),
    SqlFunction(
        name="generalise_table", kind="table",
        params=(TBL_PARAM, COL, Param("hierarchy", HIERARCHY, example="'h_any'"),
                Param("level", LEVEL, example="1")),
        returns="table", group=GROUP, scale=0,
        contract=Contract({"col": "categories"}, result="rows"),
        udf=Udf(_generalise_udf, ("VARCHAR", "VARCHAR[]", "VARCHAR[]", "VARCHAR"), MAPPING_RETURNS),
        doc=("Generalisation through a user hierarchy (ARX's hierarchies): the rows of tbl with column col replaced by "
             "each value's ancestor at level (0: the value itself) of hierarchy, a table or view whose columns are the "
             "value and its levels, or a CSV file as ARX writes them (';', no header). Values are matched as text. The "
             "hierarchy must be a tree (a value with two parents at a level is refused, naming both) and hold every "
             "value of the column (else up to five missing ones are named). NULL stays NULL; col becomes VARCHAR."),
        example="SELECT * FROM generalise_table('people', 'age', 'age_h', 1)",
        body="FROM query(__sdc_generalise_sql('generalise_table', tbl, col, hierarchy, level))"),
    SqlFunction(
        name="local_suppression_table", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, K_PARAM, Param("importance", IMPORTANCE, "NULL"), STRATA_PARAM),
        returns="table", group=GROUP, scale=1,
        contract=Contract({"keys": "keys"}, result="rows"),
        udf=Udf(_local_suppression_udf, ("BIGINT[][]", "VARCHAR", "VARCHAR", "VARCHAR"), SUPPRESSION_RETURNS),
        doc=("Local suppression to k-anonymity (sdcMicro's localSuppression): the rows of tbl with key values set to "
             "NULL so that every record's combination of keys is shared by at least k records of its stratum, a NULL "
             "matching any value. Records that already meet k are untouched; a suppressed record takes one of its "
             "fewest-cell protecting sets; the others are protected by the suppressed records that match them. Fewest "
             "suppressions under that rule: an exact integer program when small, else a greedy (see "
             "local_suppression_report for the counts, optimality and the lower bound). importance: sdcMicro's vector "
             "(1: suppressed last). " + _NULL_MATCH + " k larger than a stratum is an error naming it. Rows come back "
             "in no particular order."),
        example="SELECT * FROM local_suppression_table('people', ['region', 'age'], 3)",
        body="FROM query(__sdc_local_suppression_sql('local_suppression_table', tbl, keys, k, importance, strata))"),
    SqlFunction(
        name="local_suppression_report", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, K_PARAM, Param("importance", IMPORTANCE, "NULL"), STRATA_PARAM),
        returns="table", group=GROUP, scale=0,
        contract=Contract({"keys": "keys"}, result="report"),
        doc=("What local_suppression_table suppresses, one row per stratum: records, unsafe (records with fewer than k "
             "matches before), suppressed_records, suppressed (cells), per_key (a MAP of the suppressions per key), "
             "optimal (whether the count is proved the fewest under the rule), lower_bound (a proved lower bound; NULL "
             "when none was computed) and algorithm ('none', 'integer program' or 'greedy')."),
        example="SELECT * FROM local_suppression_report('people', ['region', 'age'], 3)",
        body="FROM query(__sdc_local_suppression_report_sql('local_suppression_report', tbl, keys, k, importance, strata))"),
    SqlFunction(
        name="pram_table", kind="table", params=(TBL_PARAM, VAR, PD, ALPHA, STRATA_PARAM, PRAM_SEED),
        returns="table", group=GROUP, scale=1,
        contract=Contract({"var": "categories"}, result="rows"),
        udf=Udf(_pram_udf, ("BIGINT[]", "VARCHAR", "VARCHAR", "VARCHAR"), "BIGINT[]", side_effects=True),
        doc=("Invariant PRAM (Gouweleeuw et al. 1998; sdcMicro's pram): every value of var is replaced by a category "
             "drawn from its row of the stratum's invariant transition matrix alpha R + (1 - alpha) I (R = P Q, P with "
             "diagonal uniform in [pd, 1]), which leaves the expected frequencies unchanged. Released values are the "
             "column's own (its type is kept); NULL stays NULL. The matrix: pram_transitions_table with the same seed. "
             "seed NULL: operating-system randomness."),
        example="SELECT * FROM pram_table('people', 'region', seed := 1)",
        body="FROM query(__sdc_pram_sql('pram_table', tbl, var, pd, alpha, strata, seed))"),
    SqlFunction(
        name="pram_transitions_table", kind="table", params=(TBL_PARAM, VAR, PD, ALPHA, STRATA_PARAM, PRAM_SEED),
        returns="table", group=GROUP, scale=None,  # from and to are the column's values, the probabilities are not
        contract=Contract({"var": "categories"}, result="report", expected_failures={
            "only-columns-read": ("the stratum's records are listed in the order of their whole row (ORDER BY "
                                  "__sdc_row) before the seeded draws, so the same column in a table with other "
                                  "columns beside it draws differently: the realised records of a transition differ "
                                  "(its probability does not)")}),
        udf=Udf(_pram_transitions_udf, ("BIGINT[]", "VARCHAR", "VARCHAR", "VARCHAR"), TRANSITIONS_RETURNS,
                side_effects=True),
        doc=("The transition matrix of pram_table, one row per stratum and pair of categories: from, to, probability "
             "(P(released to | original from), rows summing to 1), records (how many records of the stratum went from "
             "-> to in the run this seed gives) and epsilon (max over to of ln(max P / min P): the randomised-response "
             "bound for the fixed matrix). With the same seed it is the matrix pram_table used; with seed NULL each call "
             "draws anew."),
        example="SELECT * FROM pram_transitions_table('people', 'region', seed := 1)",
        body="FROM query(__sdc_pram_transitions_sql('pram_transitions_table', tbl, var, pd, alpha, strata, seed))"),
    SqlFunction(
        name="generalisation_search_table", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, Param("hierarchies", HIERARCHIES), K_PARAM,
                Param("max_suppressed", SUPPRESSED_SHARE, "0.0", example="0.5"), Param("measure", gz.MEASURE, "'discernibility'"),
                STRATA_PARAM),
        returns="table", group=GROUP, scale=0,
        contract=Contract({"keys": "keys"}, result="report"),
        udf=Udf(_search_udf, ("VARCHAR[]", "VARCHAR[][]", "VARCHAR[][]", "VARCHAR[][]", "VARCHAR", "VARCHAR", "VARCHAR"),
                SEARCH_RETURNS),
        doc=("ARX's optimal full-domain generalisation: every node of the lattice (one level per key), one row each "
             "with a column per key (its level), feasible (k-anonymous within each stratum after suppressing the "
             "records of classes smaller than k, at most max_suppressed of them), suppressed (records; NULL for a node "
             "known infeasible without evaluation), loss (the measure: 'discernibility', 'average_class_size' or "
             "'entropy') and chosen (the least loss; ties to the lower node). Exact: every feasible node is evaluated; "
             "infeasible ones are pruned by the generalisation property. NULL keys count as a value of their own."),
        example="SELECT * FROM generalisation_search_table('people', ['region', 'age'], ['region_h', 'age_h'], 5, 0.05)",
        body=("FROM query(__sdc_generalisation_sql('generalisation_search_table', tbl, keys, hierarchies, k, "
              "max_suppressed, measure, strata, false))")),
    SqlFunction(
        name="generalise_keys_table", kind="table",
        params=(TBL_PARAM, KEYS_PARAM, Param("hierarchies", HIERARCHIES), K_PARAM,
                Param("max_suppressed", SUPPRESSED_SHARE, "0.0", example="0.5"), Param("measure", gz.MEASURE, "'discernibility'"),
                STRATA_PARAM),
        returns="table", group=GROUP, scale=1,
        contract=Contract({"keys": "keys"}, result="rows"),
        doc=("The release of generalisation_search_table's chosen node: the rows of tbl with every key replaced by its "
             "level's value (VARCHAR) and the suppressed records' keys all NULL (ARX's '*'; their other columns kept). "
             "Every other combination of the keys is shared by at least k records of its stratum."),
        example="SELECT * FROM generalise_keys_table('people', ['region', 'age'], ['region_h', 'age_h'], 5, 0.05)",
        body=("FROM query(__sdc_generalisation_sql('generalise_keys_table', tbl, keys, hierarchies, k, max_suppressed, "
              "measure, strata, true))")),
]
