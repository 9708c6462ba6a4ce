-- duckdb_sdc: the privacy budget of a release of several attributes, and the SQL text of the table
-- forms of idp_cbls, idp_ls, dp_um and dp_laplace. Pure SQL; the mechanisms themselves are the
-- list functions that duckdb_sdc.register(con) installs.

-- Weights scaled by the power of two that puts the largest below 1/2 (exact; in two steps, since subnormal
-- weights need a factor beyond the largest DOUBLE). epsilon w_j / sum w computed on them neither
-- overflows (two weights of 1e308 sum to infinity) nor loses the digits of subnormal weights, and is bit
-- for bit the plain formula wherever that does neither (a power of two commutes with rounding).
CREATE OR REPLACE MACRO __sdc_dp_unit(ws) AS
    list_transform([-2 - floor(log2(list_max(ws)))::INTEGER], lambda __sdc_e:
        list_transform(ws, lambda __sdc_w: __sdc_w * pow(2.0, __sdc_e // 2) * pow(2.0, __sdc_e - __sdc_e // 2)))[1];

-- Per-column budgets: epsilon split equally over n columns, or in proportion to the positive
-- weights `split` (one per column). Sequential composition: they add up to epsilon.
CREATE OR REPLACE MACRO __sdc_dp_split(fname, n, epsilon, split) AS
    list_transform([__sdc_check_number(epsilon, fname, 'epsilon', 0, NULL)], lambda __sdc_eps:
    CASE
        WHEN split IS NULL
            THEN list_transform(range(n), lambda __sdc_i: __sdc_eps / n)
        WHEN len(split) != n OR list_count(split) != n
            THEN error(fname || ': split must have one weight per column (' || n || ' columns), got '
                       || split::VARCHAR)
        WHEN NOT list_bool_and(list_transform(split, lambda __sdc_w: isfinite(__sdc_w::DOUBLE) AND __sdc_w::DOUBLE > 0))
            THEN error(fname || ': split weight must be a finite number > 0, got '
                       || list_filter(split::DOUBLE[], lambda __sdc_w: NOT (isfinite(__sdc_w) AND __sdc_w > 0))[1])
        ELSE list_transform([__sdc_dp_unit(split::DOUBLE[])], lambda __sdc_u:
                 list_transform(__sdc_u, lambda __sdc_w: __sdc_eps * __sdc_w / list_sum(__sdc_u)))[1]
    END)[1];

-- A bound for each of n columns: NULL for none, one number for all, or a list with one per column.
CREATE OR REPLACE MACRO __sdc_dp_bounds(fname, pname, b, n) AS
    CASE
        WHEN b IS NULL THEN list_transform(range(n), lambda __sdc_i: NULL::VARCHAR)
        WHEN NOT ends_with(typeof(b), '[]') THEN list_transform(range(n), lambda __sdc_i: b::VARCHAR)
        WHEN len(b::VARCHAR[]) != n
            THEN error(fname || ': ' || pname || ' must be one number or one per attribute (' || n || '), got '
                       || len(b::VARCHAR[]))
        ELSE b::VARCHAR[]
    END;

-- The report of a release's budget: one row per column with its epsilon.
CREATE OR REPLACE MACRO dp_budget(cols, epsilon, split := NULL) AS TABLE
    SELECT unnest(__sdc_column_names('dp_budget', 'cols', cols)) AS column_name,
           unnest(__sdc_dp_split('dp_budget', len(__sdc_column_names('dp_budget', 'cols', cols)), epsilon, split)) AS epsilon;

-- SQL text of a table form: the rows of `tbl` with every column of `names` replaced by the list
-- function `fname` applied to it, column j called with the literal arguments `fixed` (e.g. [k]),
-- then eps[j], lbs[j], ubs[j] and its seed, per stratum, beside the rows (see __sdc_beside_sql in
-- 00_internal.sql). With a seed, column c of stratum i uses the seed derived by __sdc_stratum_seed
-- (duckdb_sdc.params.stratum_seed(seed, c, i)), and each stratum's rows are listed in the order of
-- their whole content, so the release repeats exactly whatever the table's physical order.
CREATE OR REPLACE MACRO __sdc_dp_table_sql(fname, tbl, names, fixed, eps, lbs, ubs, seed, strata,
                                           small_strata := 'refuse', rest_stratum := NULL) AS
    list_transform([__sdc_table_name(fname || '_table', 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_names(fname || '_table', 'strata', strata, optional := true)], lambda __sdc_g:
    format(
        'SELECT * EXCLUDE ({0}) REPLACE ({1}) FROM ({2})',
        array_to_string(list_transform(names, lambda __sdc_c, __sdc_j: '__sdc_v' || __sdc_j), ', '),
        array_to_string(list_transform(names, lambda __sdc_c, __sdc_j: '__sdc_v' || __sdc_j || ' AS ' || __sdc_qi(__sdc_c)), ', '),
        __sdc_beside_sql(fname || '_table', __sdc_t, 'cols', names,
            array_to_string(list_transform(names, lambda __sdc_c, __sdc_j:
                __sdc_call_sql(fname || '_table', fname, __sdc_value_of_sql(fname || '_table', __sdc_c),
                    fixed::VARCHAR[] || [eps[__sdc_j]::VARCHAR, lbs[__sdc_j], ubs[__sdc_j]],
                    [__sdc_seed_sql(fname || '_table', seed, __sdc_c)],
                    '__sdc_v' || __sdc_j)), ', '),
            __sdc_g, pool := __sdc_small_strata(fname || '_table', fname, fixed::VARCHAR[],
                                                list_transform(names, lambda __sdc_c: [__sdc_c]),
                                                small_strata, rest_stratum))))[1])[1];
