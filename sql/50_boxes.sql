-- duckdb_sdc box anonymisation (Xiang et al., IFSA 2013): the table form of box_release, weighted
-- estimates and the bounds of a mean from boxes. The weighted aggregates read one list of (x, y, w)
-- structs per group (never two lists side by side, whose alignment DuckDB does not promise) and pass
-- over it twice, mean first, so a large common offset costs no precision:
--     SELECT weighted_corr(income, savings, w) FROM weighted;
--     SELECT region, box_mean_bounds(income_lower, income_upper) FROM released GROUP BY region;

-- The cs argument of fuzzy_weights and crisp_weights as DOUBLE[], or a clear error.
CREATE OR REPLACE MACRO __sdc_cost_list(cs, fname) AS
    __sdc_numeric_list(cs, fname, expected := 'cs must be a list of numbers such as box_c gives');

-- A weighted aggregate's result r, or a clear error: non-numeric arguments, NaN or infinity, negative
-- weights. The checks are aggregates over the rows with all three arguments, computed once; they add
-- 0 to r rather than wrap it in a CASE, inside which DuckDB no longer shares the repeated list
-- expressions of r (five times slower).
CREATE OR REPLACE MACRO __sdc_wchecked(r, x, y, w, fname) AS
    r + CASE
        WHEN NOT __sdc_is_number(any_value(x)) THEN error(fname || ': x must be numbers, got ' || typeof(any_value(x)))
        WHEN NOT __sdc_is_number(any_value(y)) THEN error(fname || ': y must be numbers, got ' || typeof(any_value(y)))
        WHEN NOT __sdc_is_number(any_value(w)) THEN error(fname || ': w must be numbers, got ' || typeof(any_value(w)))
        WHEN bool_or(NOT isfinite(TRY_CAST(x AS DOUBLE))) FILTER (WHERE y IS NOT NULL AND w IS NOT NULL)
            THEN error(fname || ': x contains NaN or infinity; use NULL for a missing value')
        WHEN bool_or(NOT isfinite(TRY_CAST(y AS DOUBLE))) FILTER (WHERE x IS NOT NULL AND w IS NOT NULL)
            THEN error(fname || ': y contains NaN or infinity; use NULL for a missing value')
        WHEN bool_or(NOT isfinite(TRY_CAST(w AS DOUBLE))) FILTER (WHERE x IS NOT NULL AND y IS NOT NULL)
            THEN error(fname || ': w contains NaN or infinity; use NULL for a missing value')
        WHEN min(TRY_CAST(w AS DOUBLE)) FILTER (WHERE x IS NOT NULL AND y IS NOT NULL) < 0
            THEN error(fname || ': weights must be >= 0, got '
                       || (min(TRY_CAST(w AS DOUBLE)) FILTER (WHERE x IS NOT NULL AND y IS NOT NULL))::VARCHAR)
        ELSE 0.0
    END;

-- The group's complete (x, y, w) as one list of structs.
CREATE OR REPLACE MACRO __sdc_wtriples(x, y, w) AS
    list({'x': TRY_CAST(x AS DOUBLE), 'y': TRY_CAST(y AS DOUBLE), 'w': TRY_CAST(w AS DOUBLE)})
        FILTER (WHERE x IS NOT NULL AND y IS NOT NULL AND w IS NOT NULL);

-- sum of the weights (NULL when none is positive), weighted means of x and y.
CREATE OR REPLACE MACRO __sdc_wsum(t) AS
    nullif(list_sum(list_transform(t, lambda r: r.w)), 0);

CREATE OR REPLACE MACRO __sdc_wmean_x(t) AS
    list_sum(list_transform(t, lambda r: r.w * r.x)) / __sdc_wsum(t);

CREATE OR REPLACE MACRO __sdc_wmean_y(t) AS
    list_sum(list_transform(t, lambda r: r.w * r.y)) / __sdc_wsum(t);

-- The triples centred on the means, {w, dx, dy}. The means reach the lambda inside the list (zipped
-- with lists of copies): an expression a lambda captures is evaluated again for every element, which
-- made the second pass quadratic.
CREATE OR REPLACE MACRO __sdc_wcentred(t, mx, my) AS
    list_transform(list_zip(t, list_resize([mx], len(t), mx), list_resize([my], len(t), my)),
                   lambda z: {'w': z[1].w, 'dx': z[1].x - z[2], 'dy': z[1].y - z[3]});

-- sum w dx dy, sum w dx^2, sum w dy^2 of centred triples.
CREATE OR REPLACE MACRO __sdc_wsxy(c) AS list_sum(list_transform(c, lambda r: r.w * r.dx * r.dy));
CREATE OR REPLACE MACRO __sdc_wsxx(c) AS list_sum(list_transform(c, lambda r: r.w * r.dx * r.dx));
CREATE OR REPLACE MACRO __sdc_wsyy(c) AS list_sum(list_transform(c, lambda r: r.w * r.dy * r.dy));

CREATE OR REPLACE MACRO __sdc_wcov_of(t) AS
    __sdc_wsxy(__sdc_wcentred(t, __sdc_wmean_x(t), __sdc_wmean_y(t))) / __sdc_wsum(t);

CREATE OR REPLACE MACRO __sdc_wcorr_of(t) AS
    __sdc_wsxy(__sdc_wcentred(t, __sdc_wmean_x(t), __sdc_wmean_y(t)))
    / nullif(sqrt(__sdc_wsxx(__sdc_wcentred(t, __sdc_wmean_x(t), __sdc_wmean_y(t)))
                  * __sdc_wsyy(__sdc_wcentred(t, __sdc_wmean_x(t), __sdc_wmean_y(t)))), 0);

-- sum w x / sum w.
CREATE OR REPLACE MACRO weighted_mean(x, w) AS
    __sdc_wchecked(sum(TRY_CAST(x AS DOUBLE) * TRY_CAST(w AS DOUBLE))
                   / nullif(sum(TRY_CAST(w AS DOUBLE)) FILTER (WHERE x IS NOT NULL), 0),
                   x, x, w, 'weighted_mean');

-- sum w (x - m)^2 / sum w.
CREATE OR REPLACE MACRO weighted_var(x, w) AS
    __sdc_wchecked(__sdc_wcov_of(__sdc_wtriples(x, x, w)), x, x, w, 'weighted_var');

-- sum w (x - mx)(y - my) / sum w.
CREATE OR REPLACE MACRO weighted_cov(x, y, w) AS
    __sdc_wchecked(__sdc_wcov_of(__sdc_wtriples(x, y, w)), x, y, w, 'weighted_cov');

-- weighted_cov / sqrt(weighted_var(x) weighted_var(y)); NULL when a variance is 0.
CREATE OR REPLACE MACRO weighted_corr(x, y, w) AS
    __sdc_wchecked(__sdc_wcorr_of(__sdc_wtriples(x, y, w)), x, y, w, 'weighted_corr');

-- A mean-bounds aggregate's result r, or a clear error: non-numeric arguments, NaN or infinity, a lower
-- bound above its upper bound, negative weights (over the rows with both bounds and the weight).
CREATE OR REPLACE MACRO __sdc_bounds_checked(r, lo, hi, w, fname) AS
    CASE
        WHEN NOT __sdc_is_number(any_value(lo)) THEN error(fname || ': lower must be numbers, got ' || typeof(any_value(lo)))
        WHEN NOT __sdc_is_number(any_value(hi)) THEN error(fname || ': upper must be numbers, got ' || typeof(any_value(hi)))
        WHEN NOT __sdc_is_number(any_value(w)) THEN error(fname || ': w must be numbers, got ' || typeof(any_value(w)))
        WHEN bool_or(NOT (isfinite(TRY_CAST(lo AS DOUBLE)) AND isfinite(TRY_CAST(hi AS DOUBLE))
                          AND isfinite(TRY_CAST(w AS DOUBLE))))
                 FILTER (WHERE lo IS NOT NULL AND hi IS NOT NULL AND w IS NOT NULL)
            THEN error(fname || ': the bounds or weights contain NaN or infinity; use NULL for a missing value')
        WHEN bool_or(TRY_CAST(lo AS DOUBLE) > TRY_CAST(hi AS DOUBLE)) FILTER (WHERE w IS NOT NULL)
            THEN error(fname || ': lower bound '
                       || (first(lo::VARCHAR || ' is above its upper bound ' || hi::VARCHAR)
                               FILTER (WHERE TRY_CAST(lo AS DOUBLE) > TRY_CAST(hi AS DOUBLE) AND w IS NOT NULL)))
        WHEN min(TRY_CAST(w AS DOUBLE)) FILTER (WHERE lo IS NOT NULL AND hi IS NOT NULL) < 0
            THEN error(fname || ': weights must be >= 0, got '
                       || (min(TRY_CAST(w AS DOUBLE)) FILTER (WHERE lo IS NOT NULL AND hi IS NOT NULL))::VARCHAR)
        ELSE r
    END;

-- [avg(lower), avg(upper)] over the rows with both bounds.
CREATE OR REPLACE MACRO box_mean_bounds(lower, upper) AS
    __sdc_bounds_checked(
        {'lower': avg(TRY_CAST(lower AS DOUBLE)) FILTER (WHERE upper IS NOT NULL),
         'upper': avg(TRY_CAST(upper AS DOUBLE)) FILTER (WHERE lower IS NOT NULL)},
        lower, upper, 1, 'box_mean_bounds');

-- [sum w lower / sum w, sum w upper / sum w] over the rows with both bounds and a weight.
CREATE OR REPLACE MACRO box_weighted_mean_bounds(lower, upper, w) AS
    __sdc_bounds_checked(
        {'lower': sum(TRY_CAST(w AS DOUBLE) * TRY_CAST(lower AS DOUBLE)) FILTER (WHERE upper IS NOT NULL)
                  / nullif(sum(TRY_CAST(w AS DOUBLE)) FILTER (WHERE lower IS NOT NULL AND upper IS NOT NULL), 0),
         'upper': sum(TRY_CAST(w AS DOUBLE) * TRY_CAST(upper AS DOUBLE)) FILTER (WHERE lower IS NOT NULL)
                  / nullif(sum(TRY_CAST(w AS DOUBLE)) FILTER (WHERE lower IS NOT NULL AND upper IS NOT NULL), 0)},
        lower, upper, w, 'box_weighted_mean_bounds');

-- SQL of box_release_table: the other columns of tbl, then <col>_lower, <col>_upper per column, then
-- the box id; the records' attribute names reach box_release as JSON, so the characteristic can name them.
-- __sdc_box_table_sql on checked names (a NULL name must fail, not fold the text into NULL).
CREATE OR REPLACE MACRO __sdc_box_table_checked_sql(tbl, cols, k, characteristic, l, eps, strata, box_col) AS
    format('SELECT COLUMNS(lambda __sdc_c: __sdc_c NOT IN ({1})), {2} FROM ({0})',
           __sdc_rows_beside_sql('box_release_table', 'box_release', tbl, cols,
                                 [k::VARCHAR, characteristic::VARCHAR, l::VARCHAR, eps::VARCHAR, to_json(cols)::VARCHAR],
                                 strata),
           array_to_string(list_transform(
               ['__sdc_v', box_col] || cols
               || list_transform(cols, lambda c: c || '_lower')
               || list_transform(cols, lambda c: c || '_upper'),
               lambda s: __sdc_ql(s)), ', '),
           array_to_string(list_transform(cols, lambda c, i:
               format('struct_extract(__sdc_v, ''lower'')[{0}] AS {1}, '
                      || 'struct_extract(__sdc_v, ''upper'')[{0}] AS {2}',
                      i, __sdc_qi(c || '_lower'), __sdc_qi(c || '_upper'))), ', ')
           || ', struct_extract(__sdc_v, ''box'') AS ' || __sdc_qi(box_col));

CREATE OR REPLACE MACRO __sdc_box_table_sql(tbl, cols, k, characteristic, l, eps, strata, box_col) AS
    list_transform([__sdc_column_names('box_release_table', 'cols', cols)], lambda __sdc_cs:
    list_transform([__sdc_column_name('box_release_table', 'box_col', box_col)], lambda __sdc_bc:
        __sdc_box_table_checked_sql(tbl, __sdc_cs, k, characteristic, l, eps, strata, __sdc_bc))[1])[1];

CREATE OR REPLACE MACRO box_release_table(tbl, cols, k, characteristic, l := NULL, eps := NULL, strata := NULL,
                                          box_col := 'box') AS TABLE
    FROM query(__sdc_box_table_sql(tbl, cols, k, characteristic, l, eps, strata, box_col));
