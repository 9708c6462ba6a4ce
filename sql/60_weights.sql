-- duckdb_sdc sampling weights (duckdb_sdc.methods.weights, duckdb_sdc.measures.weights): the SQL of the
-- weighted table forms and the estimated population frequencies.

-- A sampling weight of `fname`'s weight column `col` as DOUBLE, or an error naming the function and
-- the column: NULL, not numeric, NaN, infinite, or not > 0.
CREATE OR REPLACE MACRO __sdc_sampling_weight(v, fname, col) AS
    CASE
        WHEN v IS NULL THEN error(fname || ': weight column ' || col || ' has a NULL weight; every record needs a '
                                  || 'finite weight > 0')
        WHEN NOT __sdc_is_number(v) THEN error(fname || ': weight column ' || col || ' must be numeric, got ' || typeof(v))
        WHEN NOT isfinite(v::DOUBLE) OR NOT v::DOUBLE > 0
            THEN error(fname || ': weight column ' || col || ' must hold finite numbers > 0, got ' || v::DOUBLE)
        ELSE v::DOUBLE
    END;

-- SQL text of the argument that hands the weights of column `w` (checked) to a weighted list function:
-- the list of each record's weight in the stratum's order.
CREATE OR REPLACE MACRO __sdc_weights_arg_sql(fname, w) AS
    'list_transform(__sdc_l, lambda __sdc_s: ' || __sdc_value_of_sql(fname, w) || ')';

-- SQL text of the table form `<method>_table` of the weighted list function `method`
-- (`<name>_weighted`): column `col` of `tbl` masked in place with the weights of column `weight`
-- (kept as it is), optionally per stratum, as __sdc_mask_column_sql masks (small strata included);
-- the UDF takes (values, args..., [seed,] weights). The weight column is bound first, so that a
-- missing one is reported naming `weight`.
CREATE OR REPLACE MACRO __sdc_mask_weighted_sql(method, tbl, col, weight, args, strata, seeded := false, seed := NULL,
                                                small_strata := 'refuse', rest_stratum := NULL) AS
    list_transform([__sdc_table_name(method || '_table', 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_name(method || '_table', 'col', col)], lambda __sdc_c:
    list_transform([__sdc_column_name(method || '_table', 'weight', weight)], lambda __sdc_w:
    list_transform([__sdc_column_names(method || '_table', 'strata', strata, optional := true)], lambda __sdc_g:
        __sdc_mask_column_checked_sql(method || '_table', method, __sdc_t, __sdc_c, args, __sdc_g, seeded, seed,
            pool := __sdc_small_strata(method || '_table', method, args, [[__sdc_c]], small_strata, rest_stratum),
            more := [__sdc_weights_arg_sql(method || '_table', __sdc_w)],
            also := [__sdc_columns_exist_sql(method || '_table', 'weight', __sdc_t, [__sdc_w])])
    )[1])[1])[1])[1];

-- SQL text of the rows of `tbl` with sample_fk (records sharing the row's combination of `keys`),
-- population_fk (the sum of their weights, fsum: compensated, so the order of the rows hardly
-- matters) and __sdc_first (true for one row of each combination). A row with a NULL key takes no
-- part: its sample_fk and population_fk are NULL and its weight is not read.
CREATE OR REPLACE MACRO __sdc_frequencies_core_sql(fname, tbl, keys, weight) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_names(fname, 'keys', keys)], lambda __sdc_k:
    list_transform([__sdc_column_name(fname, 'weight', weight)], lambda __sdc_w:
        format('SELECT * EXCLUDE (__sdc_wt, __sdc_n, __sdc_in), '
               || 'CASE WHEN __sdc_in THEN count(*) OVER __sdc_win END AS sample_fk, '
               || 'CASE WHEN __sdc_in THEN __sdc_finite_fk(fsum(__sdc_wt) OVER __sdc_win, {3}) END AS population_fk, '
               || '__sdc_in AND row_number() OVER __sdc_win = 1 AS __sdc_first '
               || 'FROM {4}(SELECT *, CASE WHEN {6} THEN __sdc_sampling_weight({1}, {3}, {5}) END AS __sdc_wt, '
               || '{6} AS __sdc_in FROM {0}) '
               || 'WINDOW __sdc_win AS (PARTITION BY {2})',
               __sdc_qt(__sdc_t), __sdc_qi(__sdc_w), __sdc_qi_list(__sdc_k), __sdc_ql(fname),
               __sdc_checks_sql([__sdc_columns_exist_sql(fname, 'keys', __sdc_t, __sdc_k),
                                 __sdc_columns_exist_sql(fname, 'weight', __sdc_t, [__sdc_w]),
                                 __sdc_no_column_sql(fname, __sdc_t, ['sample_fk', 'population_fk'])]),
               __sdc_ql(__sdc_w),
               array_to_string(list_transform(__sdc_k, lambda __sdc_c: __sdc_qi(__sdc_c) || ' IS NOT NULL'), ' AND '))
    )[1])[1])[1];

-- An estimated population frequency, or an error when the sum of the weights overflowed.
CREATE OR REPLACE MACRO __sdc_finite_fk(v, fname) AS
    CASE WHEN v IS NULL OR isfinite(v) THEN v
         ELSE error(fname || ': the sum of the weights is larger than the largest float64 (about 1.8e308); '
                    || 'rescale the weights')
    END;

CREATE OR REPLACE MACRO __sdc_frequencies_sql(fname, tbl, keys, weight) AS
    'SELECT * EXCLUDE (__sdc_first) FROM (' || __sdc_frequencies_core_sql(fname, tbl, keys, weight) || ')';

CREATE OR REPLACE MACRO __sdc_risk_summary_sql(fname, tbl, keys, weight, threshold) AS
    'SELECT count(*) FILTER (WHERE sample_fk IS NOT NULL) AS records, count(*) FILTER (WHERE __sdc_first) AS combinations, '
    || 'count(*) FILTER (WHERE sample_fk = 1) AS sample_uniques, '
    || 'count(*) FILTER (WHERE population_fk < ' || threshold || ') AS at_risk, '
    || '(count(*) FILTER (WHERE population_fk < ' || threshold || '))::DOUBLE / nullif(count(sample_fk), 0) AS share_at_risk, '
    || '__sdc_finite_fk(fsum(1.0 / population_fk), ' || __sdc_ql(fname) || ') AS expected_reidentifications '
    || 'FROM (' || __sdc_frequencies_core_sql(fname, tbl, keys, weight) || ')';

-- SQL text of the table form `<method>_table` of the weighted records function `method`
-- (`mdav_multi_round_weighted`): the columns `cols` of `tbl` masked in place as __sdc_mask_columns_sql
-- masks them (a row with a NULL in any of them gets NULL in all), weighted by column `weight`,
-- optionally per stratum.
CREATE OR REPLACE MACRO __sdc_mask_columns_weighted_sql(method, tbl, cols, weight, args, strata,
                                                         small_strata := 'refuse', rest_stratum := NULL) AS
    list_transform([__sdc_table_name(method || '_table', 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_name(method || '_table', 'weight', weight)], lambda __sdc_w:
        __sdc_mask_columns_sql(method, __sdc_t, cols, args, strata, small_strata := small_strata,
                               rest_stratum := rest_stratum,
                               more := [__sdc_weights_arg_sql(method || '_table', __sdc_w)],
                               also := [__sdc_columns_exist_sql(method || '_table', 'weight', __sdc_t, [__sdc_w])])
    )[1])[1];
