-- duckdb_sdc sampling weights (duckdb_sdc.methods.weights, duckdb_sdc.measures.weights): the SQL of the
-- weighted table forms.

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

-- population_frequencies_table and weighted_risk_summary: sql/65_keys.sql (the key measures, one NULL
-- semantics for all).

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
