-- duckdb_sdc box anonymisation (Xiang et al., IFSA 2013): the table form of box_release, weighted
-- estimates and the bounds of a mean from boxes. The weighted aggregates read one list of (x, y, w)
-- structs per group (never two lists side by side, whose alignment DuckDB does not promise) and pass
-- over it twice, mean first, so a large common offset costs no precision:
--     SELECT weighted_corr(income, savings, w) FROM weighted;
--     SELECT region, box_mean_bounds(income_lower, income_upper) FROM released GROUP BY region;

-- The cs argument of fuzzy_weights and crisp_weights as DOUBLE[], or a clear error.
CREATE OR REPLACE MACRO __sdc_cost_list(cs, fname) AS
    CASE
        WHEN regexp_full_match(typeof(cs),
            '(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|"NULL")\[\]|"NULL"')
            THEN cs::DOUBLE[]
        ELSE error(fname || ': cs must be a list of numbers such as box_c gives, got ' || typeof(cs))
    END;

-- An argument of the weighted aggregates as a finite DOUBLE, or a clear error naming it.
CREATE OR REPLACE MACRO __sdc_wvalue(v, fname, pname) AS
    CASE
        WHEN NOT regexp_full_match(typeof(v),
            'TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|"NULL"')
            THEN error(fname || ': ' || pname || ' must be numbers, got ' || typeof(v))
        WHEN NOT isfinite(v::DOUBLE)
            THEN error(fname || ': ' || pname || ' contains ' || v::VARCHAR || '; NaN and infinite values are refused')
        ELSE v::DOUBLE
    END;

-- A weight: finite and >= 0.
CREATE OR REPLACE MACRO __sdc_wweight(w, fname) AS
    CASE WHEN __sdc_wvalue(w, fname, 'w') < 0 THEN error(fname || ': weights must be >= 0, got ' || w::VARCHAR)
         ELSE __sdc_wvalue(w, fname, 'w')
    END;

-- The group's complete (x, y, w) as one list of structs.
CREATE OR REPLACE MACRO __sdc_wtriples(x, y, w, fname) AS
    list({'x': __sdc_wvalue(x, fname, 'x'), 'y': __sdc_wvalue(y, fname, 'y'), 'w': __sdc_wweight(w, fname)})
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
    __sdc_wmean_x(__sdc_wtriples(x, x, w, 'weighted_mean'));

-- sum w (x - m)^2 / sum w.
CREATE OR REPLACE MACRO weighted_var(x, w) AS
    __sdc_wcov_of(__sdc_wtriples(x, x, w, 'weighted_var'));

-- sum w (x - mx)(y - my) / sum w.
CREATE OR REPLACE MACRO weighted_cov(x, y, w) AS
    __sdc_wcov_of(__sdc_wtriples(x, y, w, 'weighted_cov'));

-- weighted_cov / sqrt(weighted_var(x) weighted_var(y)); NULL when a variance is 0.
CREATE OR REPLACE MACRO weighted_corr(x, y, w) AS
    __sdc_wcorr_of(__sdc_wtriples(x, y, w, 'weighted_corr'));

-- A lower bound, checked against its upper bound.
CREATE OR REPLACE MACRO __sdc_box_lower(lo, hi, fname) AS
    CASE WHEN __sdc_wvalue(lo, fname, 'lower') > __sdc_wvalue(hi, fname, 'upper')
             THEN error(fname || ': lower bound ' || lo::VARCHAR || ' is above its upper bound ' || hi::VARCHAR)
         ELSE __sdc_wvalue(lo, fname, 'lower')
    END;

-- [avg(lower), avg(upper)] over the rows with both bounds.
CREATE OR REPLACE MACRO box_mean_bounds(lower, upper) AS
    {'lower': avg(CASE WHEN upper IS NOT NULL THEN __sdc_box_lower(lower, upper, 'box_mean_bounds') END),
     'upper': avg(CASE WHEN lower IS NOT NULL THEN __sdc_wvalue(upper, 'box_mean_bounds', 'upper') END)};

-- [sum w lower / sum w, sum w upper / sum w] over the rows with both bounds and a weight.
CREATE OR REPLACE MACRO box_weighted_mean_bounds(lower, upper, w) AS
    {'lower': sum(CASE WHEN upper IS NOT NULL
                       THEN __sdc_wweight(w, 'box_weighted_mean_bounds')
                            * __sdc_box_lower(lower, upper, 'box_weighted_mean_bounds') END)
              / nullif(sum(CASE WHEN lower IS NOT NULL AND upper IS NOT NULL
                                THEN __sdc_wweight(w, 'box_weighted_mean_bounds') END), 0),
     'upper': sum(CASE WHEN lower IS NOT NULL
                       THEN __sdc_wweight(w, 'box_weighted_mean_bounds')
                            * __sdc_wvalue(upper, 'box_weighted_mean_bounds', 'upper') END)
              / nullif(sum(CASE WHEN lower IS NOT NULL AND upper IS NOT NULL
                                THEN __sdc_wweight(w, 'box_weighted_mean_bounds') END), 0)};

-- SQL of box_release_table: the other columns of tbl, then <col>_lower, <col>_upper per column, then
-- the box id; the records' attribute names reach box_release as JSON, so the characteristic can name them.
CREATE OR REPLACE MACRO __sdc_box_table_sql(tbl, cols, k, characteristic, l, eps, strata, box_col) AS
    CASE WHEN cols IS NULL OR len(__sdc_names(cols)) = 0
             THEN error('box_release_table: cols must name at least one column')
         WHEN box_col IS NULL THEN error('box_release_table: box_col must not be NULL')
         ELSE format('SELECT COLUMNS(lambda __sdc_c: __sdc_c NOT IN ({1})), {2} FROM ({0})',
                     __sdc_rows_beside_sql('box_release', tbl, __sdc_names(cols),
                                           [k::VARCHAR, characteristic::VARCHAR, l::VARCHAR, eps::VARCHAR,
                                            to_json(__sdc_names(cols))::VARCHAR], strata),
                     array_to_string(list_transform(
                         ['__sdc_v', box_col] || __sdc_names(cols)
                         || list_transform(__sdc_names(cols), lambda c: c || '_lower')
                         || list_transform(__sdc_names(cols), lambda c: c || '_upper'),
                         lambda s: __sdc_ql(s)), ', '),
                     array_to_string(list_transform(__sdc_names(cols), lambda c, i:
                         format('struct_extract(__sdc_v, ''lower'')[{0}] AS {1}, '
                                || 'struct_extract(__sdc_v, ''upper'')[{0}] AS {2}',
                                i, __sdc_qi(c || '_lower'), __sdc_qi(c || '_upper'))), ', ')
                     || ', struct_extract(__sdc_v, ''box'') AS ' || __sdc_qi(box_col))
    END;

CREATE OR REPLACE MACRO box_release_table(tbl, cols, k, characteristic, l := NULL, eps := NULL, strata := NULL,
                                          box_col := 'box') AS TABLE
    FROM query(__sdc_box_table_sql(tbl, cols, k, characteristic, l, eps, strata, box_col));
