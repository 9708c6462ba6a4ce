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

-- An aggregate's result, or an error if NaN or infinity in the data made it NaN or infinite. `m` is the
-- largest magnitude of the complete pairs (__sdc_pair_max, an aggregate the measure computes anyway, so
-- checking it costs nothing per row): NaN or infinite when a pair holds NaN or infinity, which catches
-- what the result would not show (a NaN beside a constant original column, whose measure is NULL).
CREATE OR REPLACE MACRO __sdc_finite(r, fname, m) AS
    CASE
        WHEN m IS NOT NULL AND NOT isfinite(m)
            THEN error(fname || ': x or xm contains NaN or an infinity; NaN and infinite values are refused '
                       || '(use NULL for a missing value)')
        WHEN r IS NULL OR isfinite(r) THEN r
        ELSE error(fname || ': x or xm holds values so large that the sums overflow; rescale them')
    END;

-- Scale invariance (duckdb_sdc/_numerics.py). One pass cannot scale the data by a power of two
-- chosen from their largest magnitude, so the sums that could overflow or underflow are taken three
-- times in the same pass: as they are, and on the values scaled by 2^-600 and by 2^600 (exact), and
-- the right one is picked from the largest magnitude M of the pair: M >= 2^400 scaled down (to below
-- 2^424: no sum of squares overflows), M < 2^-400 scaled up (subnormal values become normal and
-- their squares do not underflow), else as they are. Each pick computes exactly the power-of-two
-- multiple of what the middle one would, so the result at 1e308 or 1e-310 is the one at 1.

-- The largest magnitude of the complete pairs (+ 0 * the other side: NULL when it is NULL, and
-- cheaper than a FILTER).
CREATE OR REPLACE MACRO __sdc_pair_max(x, xm, fname) AS
    greatest(max(abs(__sdc_value(x, fname)) + 0.0 * __sdc_value(xm, fname)),
             max(abs(__sdc_value(xm, fname)) + 0.0 * __sdc_value(x, fname)));

-- agg(v) and the same aggregate of v scaled by 2^-600 and 2^600, picked by the largest magnitude m
-- (see above); `big` and `small` bring a scaled result back (e.g. 2^600 for a sum of values). A NaN
-- or infinite m (NaN is larger than every number in DuckDB) picks the plain one, which __sdc_finite
-- refuses.
CREATE OR REPLACE MACRO __sdc_pick(m, plain, down, up) AS
    CASE WHEN NOT isfinite(m) THEN plain WHEN m >= pow(2.0, 400) THEN down WHEN m < pow(2.0, -400) THEN up
         ELSE plain END;

-- __sdc_pick for a measure (a DOUBLE): a NaN in the data makes m NaN (which DuckDB orders above every
-- number), and NaN is the result, so that __sdc_finite reports it (a scaled sum of squares can
-- underflow to 0 and make a measure NULL).
CREATE OR REPLACE MACRO __sdc_pick_measure(m, plain, down, up) AS
    CASE WHEN isnan(m) THEN m ELSE __sdc_pick(m, plain, down, up) END;

-- Mean absolute error: sum |x - xm| / n (for |x|, |xm| >= 2^400 the differences are taken scaled).
CREATE OR REPLACE MACRO mae(x, xm) AS
    __sdc_finite(__sdc_pick_measure(__sdc_pair_max(x, xm, 'mae'),
                            avg(abs(__sdc_value(x, 'mae') - __sdc_value(xm, 'mae'))),
                            avg(abs(__sdc_value(x, 'mae') * pow(2.0, -600) - __sdc_value(xm, 'mae') * pow(2.0, -600)))
                                * pow(2.0, 600),
                            avg(abs(__sdc_value(x, 'mae') - __sdc_value(xm, 'mae')))), 'mae',
                 __sdc_pair_max(x, xm, 'mae'));

-- Mean squared error: sum (x - xm)^2 / n (a product: DuckDB's ^ is pow(), several times slower). The
-- squares of differences of 2^400 and more are averaged scaled by 2^-1200, those of values below
-- 2^-400 scaled by 2^1200, and the mean is scaled back (in two steps: 2^1200 is not a DOUBLE).
CREATE OR REPLACE MACRO __sdc_sq_diff(x, xm, s) AS
    (__sdc_value(x, 'mse') * s - __sdc_value(xm, 'mse') * s) * (__sdc_value(x, 'mse') * s - __sdc_value(xm, 'mse') * s);

CREATE OR REPLACE MACRO mse(x, xm) AS
    __sdc_finite(__sdc_pick_measure(__sdc_pair_max(x, xm, 'mse'),
                            avg(__sdc_sq_diff(x, xm, 1.0)),
                            avg(__sdc_sq_diff(x, xm, pow(2.0, -600))) * pow(2.0, 600) * pow(2.0, 600),
                            avg(__sdc_sq_diff(x, xm, pow(2.0, 600))) * pow(2.0, -600) * pow(2.0, -600)), 'mse',
                 __sdc_pair_max(x, xm, 'mse'));

-- IL1, mean variation: mean of |x - xm| / |x| over the pairs with x <> 0 (x = 0 is left out, unless xm
-- beside it is NaN or infinite: the mean is then NaN, and refused); a pair with a magnitude of 2^1000 or
-- more is taken scaled by 1/16, so x - xm cannot overflow. NaN or an infinity anywhere makes the mean
-- NaN or infinite, which costs no check per row; so does a ratio that overflows (x nearly 0).
CREATE OR REPLACE MACRO il1(x, xm) AS
    list_transform([avg(CASE WHEN __sdc_value(x, 'il1') = 0
                             THEN CASE WHEN isfinite(__sdc_value(xm, 'il1')) THEN NULL
                                       ELSE __sdc_value(xm, 'il1') - __sdc_value(xm, 'il1') END
                             WHEN greatest(abs(__sdc_value(x, 'il1')), abs(__sdc_value(xm, 'il1'))) >= pow(2.0, 1000)
                                 THEN abs(__sdc_value(x, 'il1') * 0.0625 - __sdc_value(xm, 'il1') * 0.0625)
                                      / abs(__sdc_value(x, 'il1') * 0.0625)
                             ELSE abs(__sdc_value(x, 'il1') - __sdc_value(xm, 'il1')) / abs(__sdc_value(x, 'il1'))
                        END)], lambda __sdc_r:
        CASE WHEN __sdc_r IS NULL OR isfinite(__sdc_r) THEN __sdc_r
             ELSE error('il1: x or xm contains NaN or an infinity, or an |x - xm| / |x| overflows (x nearly 0 '
                        || 'beside a large xm); NaN and infinite values are refused (use NULL for a missing value)')
        END)[1];

-- sum |x - xm| / (sqrt(2) S) over the complete pairs, S their original values' sample sd, with both
-- sums on the values scaled by s (the ratio does not depend on s). regr_sxx sees only the pairs where
-- both values are present, like count(x - xm); it is Welford's stable sum of squared deviations
-- (exactly 0 for a constant column; the one-pass sum of squares would be faster but loses every digit
-- when the mean is large against the sd).
-- DuckDB 1.5 raises "VARPOP is out of range" where the sum of squared deviations overflows (2.0
-- returns infinity), and the three scalings are all computed in the one pass, so the original values
-- reach regr_sxx bounded by `lim` (__sdc_sxx_arg): larger magnitudes only occur in a scaling that is
-- not picked (1.0 is picked below 2^400, 2^600 below 2^-400), where the bound changes nothing that is
-- used, and keep the unpicked ones finite.
CREATE OR REPLACE MACRO __sdc_sxx_arg(v, lim, s) AS
    CASE WHEN abs(v) > lim THEN lim ELSE v END * s;

CREATE OR REPLACE MACRO __sdc_il1s_scaled(x, xm, fname, s, lim) AS
    CASE WHEN regr_sxx(__sdc_value(xm, fname) * s, __sdc_sxx_arg(__sdc_value(x, fname), lim, s)) > 0
         THEN sum(abs(__sdc_value(x, fname) * s - __sdc_value(xm, fname) * s))
              / sqrt(2 * regr_sxx(__sdc_value(xm, fname) * s, __sdc_sxx_arg(__sdc_value(x, fname), lim, s))
                     / (count(__sdc_value(x, fname) - __sdc_value(xm, fname)) - 1))
    END;

CREATE OR REPLACE MACRO __sdc_il1s_sum(x, xm, fname) AS
    __sdc_pick_measure(__sdc_pair_max(x, xm, fname), __sdc_il1s_scaled(x, xm, fname, 1.0, pow(2.0, 400)),
               __sdc_il1s_scaled(x, xm, fname, pow(2.0, -600), 1.7976931348623157e308),
               __sdc_il1s_scaled(x, xm, fname, pow(2.0, 600), pow(2.0, -400)));

-- IL1s (Yancey, Winkler & Creecy 2002): sum |x - xm| / (sqrt(2) S) / n.
CREATE OR REPLACE MACRO il1s(x, xm) AS
    __sdc_finite(__sdc_il1s_sum(x, xm, 'il1s') / count(__sdc_value(x, 'il1s') - __sdc_value(xm, 'il1s')), 'il1s',
                 __sdc_pair_max(x, xm, 'il1s'));

-- The un-normalised IL1s that sdcMicro's dUtility reports: sum |x - xm| / (sqrt(2) S).
CREATE OR REPLACE MACRO il1s_sum(x, xm) AS
    __sdc_finite(__sdc_il1s_sum(x, xm, 'il1s_sum'), 'il1s_sum', __sdc_pair_max(x, xm, 'il1s_sum'));

-- 100 SSE / SST on the column standardised with the original's mean and sd: 100 sum (x - xm)^2 /
-- sum (x - mean x)^2, both on the values scaled by s (regr_sxx's argument bounded by lim, as above).
CREATE OR REPLACE MACRO __sdc_sse_sst_scaled(x, xm, s, lim) AS
    CASE WHEN regr_sxx(__sdc_value(xm, 'sse_sst') * s, __sdc_sxx_arg(__sdc_value(x, 'sse_sst'), lim, s)) > 0
         THEN 100 * sum((__sdc_value(x, 'sse_sst') * s - __sdc_value(xm, 'sse_sst') * s)
                        * (__sdc_value(x, 'sse_sst') * s - __sdc_value(xm, 'sse_sst') * s))
              / regr_sxx(__sdc_value(xm, 'sse_sst') * s, __sdc_sxx_arg(__sdc_value(x, 'sse_sst'), lim, s))
    END;

CREATE OR REPLACE MACRO sse_sst(x, xm) AS
    __sdc_finite(__sdc_pick_measure(__sdc_pair_max(x, xm, 'sse_sst'), __sdc_sse_sst_scaled(x, xm, 1.0, pow(2.0, 400)),
                            __sdc_sse_sst_scaled(x, xm, pow(2.0, -600), 1.7976931348623157e308),
                            __sdc_sse_sst_scaled(x, xm, pow(2.0, 600), pow(2.0, -400))),
                 'sse_sst', __sdc_pair_max(x, xm, 'sse_sst'));

-- A list of strings as a SQL list literal of quoted strings.
CREATE OR REPLACE MACRO __sdc_ql_list(names) AS
    '[' || array_to_string(list_transform(names, lambda s: __sdc_ql(s)), ', ') || ']::VARCHAR[]';

-- SQL text selecting the value columns of a table: the named ones, or (columns NULL) every column but
-- the keys, in the table's order. `what` is 'values' (a DOUBLE[] row vector) or 'names' (a list). A last
-- column __sdc_none, dropped from the list, keeps DuckDB's COLUMNS filter from selecting nothing (its
-- error) when the table has no column but the keys.
CREATE OR REPLACE MACRO __sdc_value_columns(tbl, keys, columns, what) AS
    CASE
        WHEN columns IS NOT NULL AND what = 'names' THEN __sdc_ql_list(__sdc_names(columns))
        WHEN columns IS NOT NULL
            THEN '[' || array_to_string(list_transform(__sdc_names(columns), lambda c:
                     format('__sdc_check_value({0}, ''evaluate_masking'', {1})', __sdc_qi(c), __sdc_ql('column ' || c))), ', ')
                 || ']::DOUBLE[]'
        WHEN what = 'names'
            THEN format('(SELECT list_slice(list_value(*COLUMNS(*)), 1, -2) FROM (SELECT alias(COLUMNS(lambda __sdc_c: '
                        || '__sdc_c NOT IN {0})) FROM (SELECT *, NULL AS __sdc_none FROM {1}) LIMIT 1))',
                        __sdc_ql_list(__sdc_names(keys)), __sdc_qt(tbl))
        -- every column but the keys, from __sdc_value_source: DOUBLE, and __sdc_none to drop
        ELSE format('list_slice(list_value(*COLUMNS(lambda __sdc_c: __sdc_c NOT IN {0})), 1, -2)',
                    __sdc_ql_list(__sdc_names(keys)))
    END;

-- SQL text of the records of a table that __sdc_value_columns reads: the table, or (columns NULL) its
-- keys and every other column as DOUBLE, after a check that those are numbers (naming the first that is
-- not) and that there is one; with the last column __sdc_none (see __sdc_value_columns).
CREATE OR REPLACE MACRO __sdc_value_source(tbl, keys, columns, which) AS
    CASE
        WHEN columns IS NOT NULL THEN __sdc_qt(tbl)
        ELSE format('(SELECT {0}, TRY_CAST(COLUMNS(lambda __sdc_c: __sdc_c NOT IN {1}) AS DOUBLE) '
                    || 'FROM (SELECT *, 0.0 AS __sdc_none FROM {2}) WHERE (SELECT CASE WHEN count(*) = 0 THEN error({3}) '
                    || 'WHEN count(*) FILTER (NOT regexp_full_match(column_type, __sdc_number_types())) > 0 '
                    || 'THEN error({4} || first(column_name || '' is '' || column_type ORDER BY __sdc_i) '
                    || 'FILTER (NOT regexp_full_match(column_type, __sdc_number_types())) || {5}) END '
                    || 'FROM (SELECT *, row_number() OVER () AS __sdc_i FROM (DESCRIBE {2})) WHERE column_name NOT IN {1}) IS NULL)',
                    __sdc_qi_list(keys), __sdc_ql_list(__sdc_names(keys)), __sdc_qt(tbl),
                    __sdc_ql('evaluate_masking: columns is NULL, so every column but the key is compared, but the '
                             || which || ' table ' || tbl || ' has no column but the key'),
                    __sdc_ql('evaluate_masking: columns is NULL, so every column but the key is compared, but in the '
                             || which || ' table ' || tbl || ' column '),
                    __sdc_ql(', not a number; name the value columns with columns := [...]'))
    END;

-- SQL text of a check that the key columns identify the records of a table: an uncorrelated scalar
-- subquery (evaluated once) that is NULL, or raises an error naming the key, the table and a repeated
-- key value. Records whose key has a NULL join nothing and are not counted.
CREATE OR REPLACE MACRO __sdc_unique_key_sql(tbl, keys, which) AS
    format('(SELECT error({0} || __sdc_k::VARCHAR || '' occurs '' || __sdc_n::VARCHAR || '' times; every record '
           || 'needs its own key value, or the join pairs each original record with every masked record of its key'') '
           || 'FROM (SELECT {{{1}}} AS __sdc_k, count(*) AS __sdc_n FROM {2} WHERE {3} GROUP BY ALL HAVING count(*) > 1 '
           || 'ORDER BY __sdc_k LIMIT 1))',
           __sdc_ql('evaluate_masking: the key ' || array_to_string(__sdc_names(keys), ', ') || ' is not unique in the '
                    || which || ' table ' || tbl || ': the value '),
           array_to_string(list_transform(__sdc_names(keys), lambda k: __sdc_ql(k) || ': ' || __sdc_qi(k)), ', '),
           __sdc_qt(tbl),
           array_to_string(list_transform(__sdc_names(keys), lambda k: __sdc_qi(k) || ' IS NOT NULL'), ' AND '));

-- SQL text of evaluate_masking: join the original and the masked table on the key column(s), give
-- every record's values as one row vector per side and hand all records to the evaluation UDF, whose
-- list of (measure, column, value, note) structs is unnested into the tidy result. The UDF checks
-- that both sides name the same columns; the key must be unique on both sides (a repeated key would
-- pair every original record of it with every masked one and evaluate pairs that do not exist).
CREATE OR REPLACE MACRO __sdc_evaluate_checked_sql(original, masked, keys, columns, k, seed) AS
    format(
        'SELECT unnest(__sdc_evaluate_masking(''evaluate_masking'', list(struct_pack(x := __sdc_o.__sdc_x, xm := __sdc_m.__sdc_x)), '
        || '{3}, {4}, {5}, {6}), recursive := true) '
        || 'FROM {11}(SELECT {2}, {7} AS __sdc_x FROM {0} WHERE {9} IS NULL) AS __sdc_o '
        || 'JOIN (SELECT {2}, {8} AS __sdc_x FROM {1} WHERE {10} IS NULL) AS __sdc_m USING ({2})',
        __sdc_value_source(original, keys, columns, 'original'),
        __sdc_value_source(masked, keys, columns, 'masked'),
        __sdc_qi_list(keys),
        __sdc_value_columns(original, keys, columns, 'names'),
        __sdc_value_columns(masked, keys, columns, 'names'),
        __sdc_ql(k),
        __sdc_ql(seed),
        __sdc_value_columns(original, keys, columns, 'values'),
        __sdc_value_columns(masked, keys, columns, 'values'),
        __sdc_unique_key_sql(original, keys, 'original'),
        __sdc_unique_key_sql(masked, keys, 'masked'),
        -- the key and value columns bound on their own first: a missing one is named with its parameter
        __sdc_checks_sql([__sdc_columns_exist_sql('evaluate_masking', 'key', original, keys),
                          __sdc_columns_exist_sql('evaluate_masking', 'key', masked, keys),
                          __sdc_columns_exist_sql('evaluate_masking', 'columns', original, columns),
                          __sdc_columns_exist_sql('evaluate_masking', 'columns', masked, columns)]));

-- (the names checked first: a NULL name must fail, not fold the text into NULL)
CREATE OR REPLACE MACRO __sdc_evaluate_sql(original, masked, keys, columns, k, seed) AS
    list_transform([__sdc_table_name('evaluate_masking', 'original', original)], lambda __sdc_o:
    list_transform([__sdc_table_name('evaluate_masking', 'masked', masked)], lambda __sdc_m:
    list_transform([__sdc_column_names('evaluate_masking', 'key', keys)], lambda __sdc_k:
    list_transform([__sdc_column_names('evaluate_masking', 'columns', columns, optional := true)], lambda __sdc_c:
        __sdc_evaluate_checked_sql(__sdc_o, __sdc_m, __sdc_k, __sdc_c, k, seed))[1])[1])[1])[1];
