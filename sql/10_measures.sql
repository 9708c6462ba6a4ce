-- duckdb_sdc information-loss measures as pure-SQL aggregate macros over (original, masked) pairs:
--     SELECT il1s(income, income_m) FROM j;                 -- one column
--     SELECT region, il1s(income, income_m) FROM j GROUP BY region;   -- per stratum
-- A macro whose body is an aggregate expression is used like an aggregate. NULL on either side: the
-- pair is left out (pairwise exclusion), n counts the complete pairs; no complete pair gives NULL.
-- Where a measure is undefined for the data (a constant original column, one pair, every original
-- value 0) the result is NULL. NaN or infinity in the data is an error naming the function.
-- For several columns (1 / (n p)) sum_j sum_i ... is the mean of the per-column values when every
-- column has the same n: (il1s(a, a_m) + il1s(b, b_m)) / 2.

-- A value argument as DOUBLE, or a clear error naming the function (folded away at bind time).
CREATE OR REPLACE MACRO __sdc_value(v, fname) AS
    CASE
        WHEN __sdc_is_number(v) THEN v::DOUBLE
        ELSE error(fname || ': x and xm must be numbers, got ' || typeof(v))
    END;

-- An aggregate's result, or an error if NaN or infinity in the data made it NaN or infinite (any NaN
-- or infinite input reaches the sums, so checking the result once costs nothing per row).
CREATE OR REPLACE MACRO __sdc_finite(r, fname) AS
    CASE
        WHEN r IS NULL OR isfinite(r) THEN r
        ELSE error(fname || ': x or xm contains NaN or infinity (or values so large that the sums overflow); '
                   || 'use NULL for a missing value')
    END;

-- Mean absolute error: sum |x - xm| / n.
CREATE OR REPLACE MACRO mae(x, xm) AS
    __sdc_finite(avg(abs(__sdc_value(x, 'mae') - __sdc_value(xm, 'mae'))), 'mae');

-- Mean squared error: sum (x - xm)^2 / n (a product: DuckDB's ^ is pow(), several times slower).
CREATE OR REPLACE MACRO mse(x, xm) AS
    __sdc_finite(avg((__sdc_value(x, 'mse') - __sdc_value(xm, 'mse')) * (__sdc_value(x, 'mse') - __sdc_value(xm, 'mse'))),
                 'mse');

-- IL1, mean variation: mean of |x - xm| / |x| over the pairs with x <> 0 (x = 0 is left out).
CREATE OR REPLACE MACRO il1(x, xm) AS
    __sdc_finite(avg(CASE WHEN __sdc_value(x, 'il1') <> 0
                          THEN abs(__sdc_value(x, 'il1') - __sdc_value(xm, 'il1')) / abs(__sdc_value(x, 'il1'))
                     END), 'il1');

-- sum |x - xm| / (sqrt(2) S) over the complete pairs, S their original values' sample sd. regr_sxx
-- sees only the pairs where both values are present, like count(x - xm); it is Welford's stable sum
-- of squared deviations (exactly 0 for a constant column; the one-pass sum of squares would be
-- faster but loses every digit when the mean is large against the sd).
CREATE OR REPLACE MACRO __sdc_il1s_sum(x, xm, fname) AS
    CASE WHEN regr_sxx(__sdc_value(xm, fname), __sdc_value(x, fname)) > 0
         THEN sum(abs(__sdc_value(x, fname) - __sdc_value(xm, fname)))
              / sqrt(2 * regr_sxx(__sdc_value(xm, fname), __sdc_value(x, fname))
                     / (count(__sdc_value(x, fname) - __sdc_value(xm, fname)) - 1))
    END;

-- IL1s (Yancey, Winkler & Creecy 2002): sum |x - xm| / (sqrt(2) S) / n.
CREATE OR REPLACE MACRO il1s(x, xm) AS
    __sdc_finite(__sdc_il1s_sum(x, xm, 'il1s') / count(__sdc_value(x, 'il1s') - __sdc_value(xm, 'il1s')), 'il1s');

-- The un-normalised IL1s that sdcMicro's dUtility reports: sum |x - xm| / (sqrt(2) S).
CREATE OR REPLACE MACRO il1s_sum(x, xm) AS
    __sdc_finite(__sdc_il1s_sum(x, xm, 'il1s_sum'), 'il1s_sum');

-- 100 SSE / SST on the column standardised with the original's mean and sd: 100 sum (x - xm)^2 / sum (x - mean x)^2.
CREATE OR REPLACE MACRO sse_sst(x, xm) AS
    __sdc_finite(
        CASE WHEN regr_sxx(__sdc_value(xm, 'sse_sst'), __sdc_value(x, 'sse_sst')) > 0
             THEN 100 * sum((__sdc_value(x, 'sse_sst') - __sdc_value(xm, 'sse_sst'))
                            * (__sdc_value(x, 'sse_sst') - __sdc_value(xm, 'sse_sst')))
                  / regr_sxx(__sdc_value(xm, 'sse_sst'), __sdc_value(x, 'sse_sst'))
        END, 'sse_sst');

-- A list of strings as a SQL list literal of quoted strings.
CREATE OR REPLACE MACRO __sdc_ql_list(names) AS
    '[' || array_to_string(list_transform(names, lambda s: __sdc_ql(s)), ', ') || ']::VARCHAR[]';

-- SQL text selecting the value columns of a table: the named ones, or (columns NULL) every column but
-- the keys, in the table's order. `what` is 'values' (a DOUBLE[] row vector) or 'names' (a list).
CREATE OR REPLACE MACRO __sdc_value_columns(tbl, keys, columns, what) AS
    CASE
        WHEN columns IS NOT NULL AND what = 'names' THEN __sdc_ql_list(__sdc_names(columns))
        WHEN columns IS NOT NULL
            THEN '[' || array_to_string(list_transform(__sdc_names(columns), lambda c:
                     format('__sdc_check_value({0}, ''evaluate_masking'', {1})', __sdc_qi(c), __sdc_ql('column ' || c))), ', ')
                 || ']::DOUBLE[]'
        WHEN what = 'names'
            THEN format('(SELECT list_value(*COLUMNS(*)) FROM (SELECT alias(COLUMNS(lambda __sdc_c: __sdc_c NOT IN {0})) '
                        || 'FROM {1} LIMIT 1))', __sdc_ql_list(__sdc_names(keys)), __sdc_qt(tbl))
        ELSE format('__sdc_numeric_list(list_value(*COLUMNS(lambda __sdc_c: __sdc_c NOT IN {0})), ''evaluate_masking'', '
                    || '''the value columns (every column but the key) must be numeric'')', __sdc_ql_list(__sdc_names(keys)))
    END;

-- SQL text of evaluate_masking: join the original and the masked table on the key column(s), give
-- every record's values as one row vector per side and hand all records to the evaluation UDF, whose
-- list of (measure, column, value, note) structs is unnested into the tidy result. The UDF checks
-- that both sides name the same columns.
CREATE OR REPLACE MACRO __sdc_evaluate_checked_sql(original, masked, keys, columns, k, seed) AS
    format(
        'SELECT unnest(__sdc_evaluate_masking(''evaluate_masking'', list(struct_pack(x := __sdc_o.__sdc_x, xm := __sdc_m.__sdc_x)), '
        || '{3}, {4}, {5}, {6}), recursive := true) '
        || 'FROM (SELECT {2}, {7} AS __sdc_x FROM {0}) AS __sdc_o '
        || 'JOIN (SELECT {2}, {8} AS __sdc_x FROM {1}) AS __sdc_m USING ({2})',
        __sdc_qt(original),
        __sdc_qt(masked),
        __sdc_qi_list(keys),
        __sdc_value_columns(original, keys, columns, 'names'),
        __sdc_value_columns(masked, keys, columns, 'names'),
        __sdc_ql(k),
        __sdc_ql(seed),
        __sdc_value_columns(original, keys, columns, 'values'),
        __sdc_value_columns(masked, keys, columns, 'values'));

-- (the names checked first: a NULL name must fail, not fold the text into NULL)
CREATE OR REPLACE MACRO __sdc_evaluate_sql(original, masked, keys, columns, k, seed) AS
    list_transform([__sdc_table_name('evaluate_masking', 'original', original)], lambda __sdc_o:
    list_transform([__sdc_table_name('evaluate_masking', 'masked', masked)], lambda __sdc_m:
    list_transform([__sdc_column_names('evaluate_masking', 'key', keys)], lambda __sdc_k:
    list_transform([__sdc_column_names('evaluate_masking', 'columns', columns, optional := true)], lambda __sdc_c:
        __sdc_evaluate_checked_sql(__sdc_o, __sdc_m, __sdc_k, __sdc_c, k, seed))[1])[1])[1])[1];
