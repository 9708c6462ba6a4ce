-- duckdb_sdc box anonymisation (Xiang et al., IFSA 2013): the table form of box_release, weighted
-- estimates and the bounds of a mean from boxes. The weighted aggregates read one list of (x, y, w)
-- structs per group (never two lists side by side, whose alignment DuckDB does not promise), scale
-- it by powers of two and pass over it twice, mean first, so neither the scale nor a large common
-- offset costs precision:
--     SELECT weighted_corr(income, savings, w) FROM weighted;
--     SELECT region, box_mean_bounds(income_lower, income_upper) FROM released GROUP BY region;

-- The cs argument of fuzzy_weights and crisp_weights as DOUBLE[], or a clear error.
CREATE OR REPLACE MACRO __sdc_cost_list(cs, fname) AS
    __sdc_numeric_list(cs, fname, expected := 'cs must be a list of numbers such as box_c gives');

-- Scale invariance (duckdb_sdc/_numerics.py): x, y and w are each scaled by the power of two that puts
-- their largest magnitude in [1/2, 1) before any sum, so nothing overflows at 1e308 or underflows
-- at 1e-300, and the results are scaled back exactly.

-- The binary exponent e of a magnitude m > 0, m * 2^-e in [1/2, 1) (0 for 0, NULL, NaN or infinity,
-- which the checks refuse anyway). Near a power of two log2's rounding may give e + 1, which only
-- halves the scaled values.
CREATE OR REPLACE MACRO __sdc_exponent(m) AS
    CASE WHEN m > 0 AND isfinite(m) THEN floor(log2(m))::INTEGER + 1 ELSE 0 END;

-- v * 2^e for |e| up to 3000, in three steps (exact while the result is a normal number).
CREATE OR REPLACE MACRO __sdc_ldexp(v, e) AS
    v * pow(2.0, e // 3) * pow(2.0, (e - e // 3) // 2) * pow(2.0, e - e // 3 - (e - e // 3) // 2);

-- r, or an error when it is infinite although the data (of parameter `pname`) are finite (a variance
-- of values near 1e308). list_value evaluates both, so the check is never skipped and r is computed once.
CREATE OR REPLACE MACRO __sdc_in_range(r, fname, what, pname) AS
    list_value(r, CASE WHEN NOT isfinite(r) THEN error(fname || ': ' || what || ' is larger than the largest '
                   || 'DOUBLE (about 1.8e308) for these values of ' || pname || '; rescale ' || pname
                   || ' and scale the result back') END)[1];

-- A weighted aggregate's result r, or a clear error: non-numeric arguments, NaN or infinity, negative
-- weights. The checks are aggregates over the rows with all three arguments, computed once, and go
-- beside r in a list_value: it evaluates both (a NULL r never skips them, as NULL + check would) and,
-- unlike a CASE around r, leaves DuckDB free to share the repeated list expressions of r.
CREATE OR REPLACE MACRO __sdc_wchecked(r, x, y, w, fname) AS
    list_value(r, CASE
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
    END)[1];

-- The group's complete (x, y, w) as one list of structs.
CREATE OR REPLACE MACRO __sdc_wtriples(x, y, w) AS
    list({'x': TRY_CAST(x AS DOUBLE), 'y': TRY_CAST(y AS DOUBLE), 'w': TRY_CAST(w AS DOUBLE)})
        FILTER (WHERE x IS NOT NULL AND y IS NOT NULL AND w IS NOT NULL);

-- The factor 2^-e that scales values whose largest magnitude m has the binary exponent e (see
-- __sdc_exponent), as one DOUBLE: e is taken at least -1020, so subnormal data are scaled up to
-- [2^-54, 1/4) rather than to [1/2, 1) (2^1074 is not a DOUBLE); 2^-1024 is a subnormal power of two,
-- and multiplying by it is exact while the product is a normal number.
CREATE OR REPLACE MACRO __sdc_scale_exponent(m) AS greatest(__sdc_exponent(m), -1020);

-- Plain aggregates over the rows of __sdc_wtriples (computed once, so lambdas may capture them; an
-- expression over a list that a lambda captures is evaluated again for every element): the exponents
-- of x, y and w.
CREATE OR REPLACE MACRO __sdc_wex(x, y, w) AS
    __sdc_scale_exponent(max(abs(TRY_CAST(x AS DOUBLE))) FILTER (WHERE y IS NOT NULL AND w IS NOT NULL));
CREATE OR REPLACE MACRO __sdc_wew(x, y, w) AS
    __sdc_scale_exponent(max(TRY_CAST(w AS DOUBLE)) FILTER (WHERE x IS NOT NULL AND y IS NOT NULL));

-- The smallest x with a positive weight, scaled by 2^-ex. The means are these smallest values plus
-- the weighted means of the excesses over them, so a column that is constant where the weights are
-- positive has exactly that value as its mean and exactly 0 as every deviation (its variance is
-- exactly 0 whatever order the sums run in).
CREATE OR REPLACE MACRO __sdc_wlow(x, y, w) AS
    min(TRY_CAST(x AS DOUBLE)) FILTER (WHERE y IS NOT NULL AND TRY_CAST(w AS DOUBLE) > 0)
    * pow(2.0, -__sdc_wex(x, y, w));

-- The triples of x, y and w scaled by powers of two (exact) and x, y shifted by their smallest values
-- (exact: scaled values in [-1, 1]).
CREATE OR REPLACE MACRO __sdc_wunit(x, y, w) AS
    list_transform(__sdc_wtriples(x, y, w), lambda r: {
        'x': r.x * pow(2.0, -__sdc_wex(x, y, w)) - __sdc_wlow(x, y, w),
        'y': r.y * pow(2.0, -__sdc_wex(y, x, w)) - __sdc_wlow(y, x, w),
        'w': r.w * pow(2.0, -__sdc_wew(x, y, w))});

-- sum of the scaled weights (NULL when none is positive) and weighted means of the shifted x and y.
CREATE OR REPLACE MACRO __sdc_wsum(u) AS nullif(list_sum(list_transform(u, lambda r: r.w)), 0);

CREATE OR REPLACE MACRO __sdc_wmean_x(u) AS list_sum(list_transform(u, lambda r: r.w * r.x)) / __sdc_wsum(u);

CREATE OR REPLACE MACRO __sdc_wmean_y(u) AS list_sum(list_transform(u, lambda r: r.w * r.y)) / __sdc_wsum(u);

-- The scaled triples centred on their means, {w, dx, dy}. The means reach the lambda inside the list
-- (zipped with lists of copies), not captured: captured, they were evaluated again for every element.
CREATE OR REPLACE MACRO __sdc_wcentred(u) AS
    list_transform(list_zip(u, list_resize([]::DOUBLE[], len(u), __sdc_wmean_x(u)),
                            list_resize([]::DOUBLE[], len(u), __sdc_wmean_y(u))),
                   lambda z: {'w': z[1].w, 'dx': z[1].x - z[2], 'dy': z[1].y - z[3]});

-- sum w dx dy, sum w dx^2, sum w dy^2 of centred triples.
CREATE OR REPLACE MACRO __sdc_wsxy(c) AS list_sum(list_transform(c, lambda r: r.w * r.dx * r.dy));
CREATE OR REPLACE MACRO __sdc_wsxx(c) AS list_sum(list_transform(c, lambda r: r.w * r.dx * r.dx));
CREATE OR REPLACE MACRO __sdc_wsyy(c) AS list_sum(list_transform(c, lambda r: r.w * r.dy * r.dy));

-- The weighted mean of x in the data's units.
CREATE OR REPLACE MACRO __sdc_wmean_of(x, y, w) AS
    __sdc_ldexp(__sdc_wlow(x, y, w) + __sdc_wmean_x(__sdc_wunit(x, y, w)), __sdc_wex(x, y, w));

-- sum w dx dy / sum w in the data's units (the scaled values times 2^ex and 2^ey).
CREATE OR REPLACE MACRO __sdc_wcov_of(x, y, w, fname, what, pname) AS
    __sdc_in_range(__sdc_ldexp(__sdc_wsxy(__sdc_wcentred(__sdc_wunit(x, y, w))) / __sdc_wsum(__sdc_wunit(x, y, w)),
                               __sdc_wex(x, y, w) + __sdc_wex(y, x, w)), fname, what, pname);

CREATE OR REPLACE MACRO __sdc_wcorr_of(c) AS
    __sdc_wsxy(c) / nullif(sqrt(__sdc_wsxx(c)) * sqrt(__sdc_wsyy(c)), 0);

-- sum w x / sum w.
CREATE OR REPLACE MACRO weighted_mean(x, w) AS
    __sdc_wchecked(__sdc_wmean_of(x, x, w), x, x, w, 'weighted_mean');

-- sum w (x - m)^2 / sum w (exactly 0 for a constant column).
CREATE OR REPLACE MACRO weighted_var(x, w) AS
    __sdc_wchecked(__sdc_wcov_of(x, x, w, 'weighted_var', 'the variance', 'x'), x, x, w, 'weighted_var');

-- sum w (x - mx)(y - my) / sum w.
CREATE OR REPLACE MACRO weighted_cov(x, y, w) AS
    __sdc_wchecked(__sdc_wcov_of(x, y, w, 'weighted_cov', 'the covariance', 'x and y'), x, y, w, 'weighted_cov');

-- weighted_cov / sqrt(weighted_var(x) weighted_var(y)); NULL when a variance is 0 (exactly so for a
-- column that is constant where the weights are positive).
CREATE OR REPLACE MACRO weighted_corr(x, y, w) AS
    __sdc_wchecked(__sdc_wcorr_of(__sdc_wcentred(__sdc_wunit(x, y, w))), x, y, w, 'weighted_corr');

-- A mean-bounds aggregate's result r, or a clear error: non-numeric arguments, NaN or infinity, a lower
-- bound above its upper bound, negative weights (over the rows with both bounds and the weight).
CREATE OR REPLACE MACRO __sdc_bounds_checked(r, lo, hi, w, fname) AS
    list_value(r, CASE
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
    END)[1];

-- avg(v) over the rows where `keep`, without overflow: values of 2^960 and more are averaged scaled
-- by 2^-128 (exact; the sum of n of them stays finite), the others as they are (their sum cannot
-- overflow); both sums are taken in the same pass and the right one is chosen.
CREATE OR REPLACE MACRO __sdc_avg_in_range(v, keep) AS
    CASE WHEN max(abs(TRY_CAST(v AS DOUBLE))) FILTER (WHERE keep) >= pow(2.0, 960)
         THEN avg(TRY_CAST(v AS DOUBLE) * pow(2.0, -128)) FILTER (WHERE keep) * pow(2.0, 128)
         ELSE avg(TRY_CAST(v AS DOUBLE)) FILTER (WHERE keep)
    END;

-- [avg(lower), avg(upper)] over the rows with both bounds.
CREATE OR REPLACE MACRO box_mean_bounds(lower, upper) AS
    __sdc_bounds_checked(
        {'lower': __sdc_avg_in_range(lower, upper IS NOT NULL), 'upper': __sdc_avg_in_range(upper, lower IS NOT NULL)},
        lower, upper, 1, 'box_mean_bounds');

-- [sum w lower / sum w, sum w upper / sum w] over the rows with both bounds and a weight (the weighted
-- means of the triples (lower, upper, w)).
CREATE OR REPLACE MACRO box_weighted_mean_bounds(lower, upper, w) AS
    __sdc_bounds_checked({'lower': __sdc_wmean_of(lower, upper, w), 'upper': __sdc_wmean_of(upper, lower, w)},
                         lower, upper, w, 'box_weighted_mean_bounds');

-- SQL of box_release_table: the other columns of tbl, then <col>_lower, <col>_upper per column, then
-- the box id; the records' attribute names reach box_release as JSON, so the characteristic can name them.
-- (__sdc_none keeps the COLUMNS filter from selecting no column, DuckDB's error, when tbl has no other
-- column.) __sdc_box_table_sql on checked names (a NULL name must fail, not fold the text into NULL).
CREATE OR REPLACE MACRO __sdc_box_table_checked_sql(tbl, cols, k, characteristic, l, eps, strata, box_col,
                                                    small_strata := 'refuse', rest_stratum := NULL) AS
    format('SELECT * EXCLUDE (__sdc_none) FROM (SELECT COLUMNS(lambda __sdc_c: __sdc_c NOT IN ({1})), {2} '
           || 'FROM (SELECT *, NULL AS __sdc_none FROM ({0})))',
           __sdc_rows_beside_sql('box_release_table', 'box_release', tbl, cols,
                                 [k::VARCHAR, characteristic::VARCHAR, l::VARCHAR, eps::VARCHAR, to_json(cols)::VARCHAR],
                                 strata, small_strata := small_strata, rest_stratum := rest_stratum),
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

CREATE OR REPLACE MACRO __sdc_box_table_sql(tbl, cols, k, characteristic, l, eps, strata, box_col,
                                            small_strata := 'refuse', rest_stratum := NULL) AS
    list_transform([__sdc_column_names('box_release_table', 'cols', cols)], lambda __sdc_cs:
    list_transform([__sdc_column_name('box_release_table', 'box_col', box_col)], lambda __sdc_bc:
        __sdc_box_table_checked_sql(tbl, __sdc_cs, k, characteristic, l, eps, strata, __sdc_bc,
                                    small_strata := small_strata, rest_stratum := rest_stratum))[1])[1];

CREATE OR REPLACE MACRO box_release_table(tbl, cols, k, characteristic, l := NULL, eps := NULL, strata := NULL,
                                          small_strata := 'refuse', rest_stratum := NULL, box_col := 'box') AS TABLE
    FROM query(__sdc_box_table_sql(tbl, cols, k, characteristic, l, eps, strata, box_col, small_strata := small_strata,
                                   rest_stratum := rest_stratum));
