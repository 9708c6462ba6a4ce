-- Sensitivity rules for the cells of a k-anonymous release (Hundepool et al. 2012, ch. 4; tau-ARGUS).
-- A cell is a (cluster, attribute) pair; its contributions are the original values of that attribute
-- for the records of the cluster. The rules are aggregate macros: GROUP BY the cluster.

-- x * y > u * v exactly for DOUBLE operands: the rounded products decide unless they are equal, and
-- then their exact rounding errors (Dekker's product, Veltkamp split with 2^27 + 1) do.
CREATE OR REPLACE MACRO __sdc_split_hi(a) AS (134217729.0::DOUBLE * a) - ((134217729.0::DOUBLE * a) - a);
CREATE OR REPLACE MACRO __sdc_product_err(a, b) AS
    ((__sdc_split_hi(a) * __sdc_split_hi(b) - a * b)
        + __sdc_split_hi(a) * (b - __sdc_split_hi(b))
        + (a - __sdc_split_hi(a)) * __sdc_split_hi(b))
    + (a - __sdc_split_hi(a)) * (b - __sdc_split_hi(b));
CREATE OR REPLACE MACRO __sdc_product_gt(x, y, u, v) AS
    x * y > u * v OR (x * y = u * v AND __sdc_product_err(x, y) > __sdc_product_err(u, v));

-- The contribution the rules see: the value, or its absolute value.
CREATE OR REPLACE MACRO __sdc_contribution(value, absolute) AS
    (CASE WHEN absolute THEN abs(value) ELSE value END)::DOUBLE;

-- Refuses what no rule can decide (NaN or an infinite contribution), and a negative contribution
-- unless absolute := true.
CREATE OR REPLACE MACRO __sdc_contributions_ok(value, absolute, fname) AS
    CASE WHEN absolute IS NULL THEN error(fname || ': absolute must not be NULL')
         WHEN bool_or(NOT isfinite(value::DOUBLE))
             THEN error(fname || ': value contains ' || first(value::DOUBLE) FILTER (NOT isfinite(value::DOUBLE))
                        || '; a rule cannot decide on NaN or an infinite contribution (use NULL for a missing one)')
         WHEN NOT absolute AND min(value) < 0
             THEN error(fname || ': value contains ' || min(value)
                        || '; the rule needs contributions >= 0 (absolute := true applies it to absolute values)')
         ELSE true
    END;

-- The cell's scale: 2^-600 when its largest contribution m exceeds 2^900, 2^600 when 0 < m < 2^-900,
-- else 1. Multiplying by a power of two is exact, both sides of every comparison scale alike, and
-- the scaled totals and products can neither overflow (two contributions of 1e308 add up to 2e308)
-- nor lose their low bits to underflow.
CREATE OR REPLACE MACRO __sdc_cell_scale(m) AS
    CASE WHEN m > power(2::DOUBLE, 900) THEN power(2::DOUBLE, -600)
         WHEN m > 0 AND m < power(2::DOUBLE, -900) THEN power(2::DOUBLE, 600)
         ELSE 1::DOUBLE
    END;

-- The aggregates of a cell that both rules read, computed once: m the largest contribution c, top its
-- n largest, and the total of the contributions in three scalings (sum of c, of c 2^-600, of c 2^600;
-- __sdc_cell_total picks the one of __sdc_cell_scale(m)). A macro's argument is copied wherever it is
-- used, so the rules bind this struct once to a lambda variable instead of repeating the aggregates:
-- written inline, the rules' expressions grew to tens of thousands of nodes and took DuckDB 0.6 s to
-- plan per query, whatever the number of rows.
CREATE OR REPLACE MACRO __sdc_cell(c, n) AS
    struct_pack(m := max(c), top := max(c, n), total := sum(c),
                total_down := sum(c * power(2::DOUBLE, -600)), total_up := sum(c * power(2::DOUBLE, 600)));

-- The total of a cell's contributions (a __sdc_cell) times __sdc_cell_scale of its largest: the scaled
-- contributions are summed, so the total of large ones does not overflow.
CREATE OR REPLACE MACRO __sdc_cell_total(cell) AS
    CASE WHEN cell.m > power(2::DOUBLE, 900) THEN cell.total_down
         WHEN cell.m > 0 AND cell.m < power(2::DOUBLE, -900) THEN cell.total_up
         ELSE cell.total
    END;

-- The list of a cell's largest contributions (a __sdc_cell), scaled as __sdc_cell_total.
CREATE OR REPLACE MACRO __sdc_cell_top(cell) AS
    list_transform(cell.top, lambda __sdc_y: __sdc_y * __sdc_cell_scale(cell.m));

-- (n, r) dominance rule: true when the n largest contributions exceed the fraction r of the cell total
-- (strictly), or when the cell has n or fewer contributions; NULL for a cell without contributions;
-- a zero total is not sensitive. r is taken to 9 decimals (0.7 means 7/10) and compared exactly.
-- NaN and infinite contributions are refused: a rule that cannot decide never answers "not sensitive".
CREATE OR REPLACE MACRO __sdc_dominance_sensitive(value, n, r, absolute) AS
    CASE
        WHEN n IS NULL OR NOT isfinite(n::DOUBLE) OR n::DOUBLE < 1 OR n::DOUBLE != floor(n::DOUBLE)
            THEN error('dominance_sensitive: n must be an integer >= 1, got ' || coalesce(n::VARCHAR, 'NULL'))
        WHEN r IS NULL OR NOT isfinite(r::DOUBLE) OR NOT (r::DOUBLE > 0 AND r::DOUBLE <= 1)
            THEN error('dominance_sensitive: r must be in (0, 1], got ' || coalesce(r::VARCHAR, 'NULL'))
        WHEN NOT __sdc_contributions_ok(value, absolute, 'dominance_sensitive') THEN NULL
        WHEN count(value) = 0 THEN NULL
        WHEN count(value) <= n::DOUBLE THEN true
        WHEN n::DOUBLE >= 1000000
            THEN error('dominance_sensitive: n = ' || n::BIGINT || ' with more than n contributions in a cell: the n '
                       || 'largest are taken by DuckDB''s max(x, n), which needs n < 1000000')
        -- (max(x, n) is computed for every cell, so n is capped where the two branches above decide)
        ELSE list_transform([__sdc_cell(__sdc_contribution(value, absolute), least(n::BIGINT, 999999))],
                            lambda __sdc_cell_of:
                 list_transform([[list_sum(__sdc_cell_top(__sdc_cell_of)), __sdc_cell_total(__sdc_cell_of)]],
                                lambda __sdc_z: __sdc_product_gt(__sdc_z[1], 1e9::DOUBLE, round(r::DOUBLE * 1e9),
                                                                 __sdc_z[2]))[1])[1]
    END;

-- p% rule: true when T - c(1) - c(2) < p c(1), c(1) >= c(2) the two largest contributions (c(2) = 0 for a
-- single one) and T their total: the second largest contributor could estimate the largest to within
-- p of its value. NULL for a cell without contributions; p is taken to 9 decimals, 0 < p <= 1e6 (a
-- fraction: 0.1 is the 10% rule). NaN and infinite contributions are refused.
CREATE OR REPLACE MACRO __sdc_p_percent_sensitive(value, p, absolute) AS
    CASE
        WHEN p IS NULL OR NOT isfinite(p::DOUBLE) OR NOT (p::DOUBLE > 0)
            THEN error('p_percent_sensitive: p must be a finite number > 0, got ' || coalesce(p::VARCHAR, 'NULL'))
        WHEN NOT __sdc_contributions_ok(value, absolute, 'p_percent_sensitive') THEN NULL
        WHEN count(value) = 0 THEN NULL
        ELSE list_transform([__sdc_cell(__sdc_contribution(value, absolute), 2)], lambda __sdc_cell_of:
                 list_transform([__sdc_cell_top(__sdc_cell_of) || [0::DOUBLE, __sdc_cell_total(__sdc_cell_of)]],
                                lambda __sdc_z: __sdc_product_gt(round(p::DOUBLE * 1e9), __sdc_z[1],
                                                                 __sdc_z[-1] - __sdc_z[1] - __sdc_z[2],
                                                                 1e9::DOUBLE))[1])[1]
    END;

-- The p of the p% rule comparable with the (2, r) dominance rule: p = (1 - r) / r.
CREATE OR REPLACE MACRO __sdc_dominance_to_p_percent(r) AS
    CASE WHEN r IS NULL OR NOT (r::DOUBLE > 0 AND r::DOUBLE <= 1)
             THEN error('dominance_to_p_percent: r must be in (0, 1], got ' || coalesce(r::VARCHAR, 'NULL'))
         ELSE (1 - r::DOUBLE) / r::DOUBLE
    END;

-- The public rules: the arguments checked as the parameter kinds say (00_internal.sql), so that a
-- wrong type or a bad value is an error naming the function and the parameter, then the rule.
CREATE OR REPLACE MACRO dominance_sensitive(value, n, r, absolute := false) AS
    __sdc_dominance_sensitive(__sdc_check_value(value, 'dominance_sensitive', 'value'),
                              __sdc_check_integer(n, 'dominance_sensitive', 'n', 1),
                              __sdc_check_number(r, 'dominance_sensitive', 'r', 0, 1),
                              __sdc_check_flag(absolute, 'dominance_sensitive', 'absolute'));

CREATE OR REPLACE MACRO p_percent_sensitive(value, p, absolute := false) AS
    __sdc_p_percent_sensitive(__sdc_check_value(value, 'p_percent_sensitive', 'value'),
                              __sdc_check_number(p, 'p_percent_sensitive', 'p', 0, 1e6),
                              __sdc_check_flag(absolute, 'p_percent_sensitive', 'absolute'));

CREATE OR REPLACE MACRO dominance_to_p_percent(r) AS
    __sdc_dominance_to_p_percent(__sdc_check_number(r, 'dominance_to_p_percent', 'r', 0, 1));

-- SQL of sensitivity_report: one cell per (cluster, attribute), both rules, counted per attribute and
-- overall. Records whose cluster is NULL take no part; NULL values are no contribution.
-- The names and parameters are checked first, by __sdc_sensitivity_report_sql.
CREATE OR REPLACE MACRO __sdc_sensitivity_report_checked_sql(tbl, cols, clusters, n, r, p, absolute) AS
    format(
        'WITH __sdc_cells AS ('
        || 'SELECT __sdc_attribute, '
        || '__sdc_dominance_sensitive(__sdc_value, {3}, {4}, {6}) AS __sdc_d, '
        || '__sdc_p_percent_sensitive(__sdc_value, {5}, {6}) AS __sdc_p '
        || 'FROM {10}(UNPIVOT (SELECT {2}, {7} FROM {0} WHERE {8}) ON {1} INTO NAME __sdc_attribute VALUE __sdc_value) '
        || 'GROUP BY {2}, __sdc_attribute) '
        || 'SELECT coalesce(__sdc_attribute, ''(all)'') AS attribute, count(*) AS cells, '
        || 'count_if(__sdc_d) AS dominance_cells, count_if(__sdc_d) / count(*) AS dominance_share, '
        || 'count_if(__sdc_p) AS p_percent_cells, count_if(__sdc_p) / count(*) AS p_percent_share '
        || 'FROM __sdc_cells GROUP BY GROUPING SETS ((__sdc_attribute), ()) '
        || 'ORDER BY grouping(__sdc_attribute), list_position({9}, __sdc_attribute)',
        __sdc_qt(tbl),
        __sdc_qi_list(cols),
        __sdc_qi_list(clusters),
        __sdc_ql(n), __sdc_ql(r), __sdc_ql(p), __sdc_ql(absolute) || '::BOOLEAN',
        -- a negative contribution without absolute is refused here, under this function's name
        array_to_string(list_transform(cols, lambda c: format(
            '__sdc_check_value(CASE WHEN NOT {2} AND {0} < 0 THEN error(''sensitivity_report: '' || {1} || '' contains '' '
            || '|| {0} || ''; the rule needs contributions >= 0 (absolute := true applies it to absolute values)'') '
            || 'ELSE {0} END, ''sensitivity_report'', {1})::DOUBLE AS {0}',
            __sdc_qi(c), __sdc_ql('column ' || c), __sdc_ql(absolute) || '::BOOLEAN')), ', '),
        array_to_string(list_transform(clusters, lambda c: __sdc_qi(c) || ' IS NOT NULL'), ' AND '),
        '[' || array_to_string(list_transform(cols, lambda c: __sdc_ql(c)), ', ') || ']',
        -- the columns bound on their own first: a missing one is named with its parameter
        __sdc_checks_sql([__sdc_columns_exist_sql('sensitivity_report', 'cols', tbl, cols),
                          __sdc_columns_exist_sql('sensitivity_report', 'clusters', tbl, clusters)]));

CREATE OR REPLACE MACRO __sdc_sensitivity_report_sql(tbl, cols, clusters, n, r, p, absolute) AS
    list_transform([__sdc_table_name('sensitivity_report', 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_names('sensitivity_report', 'cols', cols)], lambda __sdc_cs:
    list_transform([__sdc_column_names('sensitivity_report', 'clusters', clusters)], lambda __sdc_k:
        __sdc_sensitivity_report_checked_sql(__sdc_t, __sdc_cs, __sdc_k,
                                             __sdc_check_integer(n, 'sensitivity_report', 'n', 1),
                                             __sdc_check_number(r, 'sensitivity_report', 'r', 0, 1),
                                             __sdc_check_number(p, 'sensitivity_report', 'p', 0, 1e6),
                                             __sdc_check_flag(absolute, 'sensitivity_report', 'absolute'))
    )[1])[1])[1];

-- Number and share of sensitive cells per attribute and overall ('(all)') of a clustered table.
CREATE OR REPLACE MACRO sensitivity_report(tbl, cols, clusters, n, r, p, absolute := false) AS TABLE
    FROM query(__sdc_sensitivity_report_sql(tbl, cols, clusters, n, r, p, absolute));

-- pq rule: true when q (T - c(1) - c(2)) < p c(1), c(1) >= c(2) the two largest contributions and T their
-- total: with every contribution known beforehand to within q, the second largest contributor could
-- estimate the largest to within p. 0 < p < q <= 1 (q = 1: the p% rule), both taken to 9 decimals.
CREATE OR REPLACE MACRO __sdc_pq_sensitive(value, p, q, absolute) AS
    CASE
        WHEN NOT (round(p::DOUBLE * 1e9) < round(q::DOUBLE * 1e9))
            THEN error('pq_sensitive: p must be less than q, got p = ' || p || ' and q = ' || q)
        WHEN NOT __sdc_contributions_ok(value, absolute, 'pq_sensitive') THEN NULL
        WHEN count(value) = 0 THEN NULL
        ELSE list_transform([__sdc_cell(__sdc_contribution(value, absolute), 2)], lambda __sdc_cell_of:
                 list_transform([__sdc_cell_top(__sdc_cell_of) || [0::DOUBLE, __sdc_cell_total(__sdc_cell_of)]],
                                lambda __sdc_z: __sdc_product_gt(round(p::DOUBLE * 1e9), __sdc_z[1],
                                                                 __sdc_z[-1] - __sdc_z[1] - __sdc_z[2],
                                                                 round(q::DOUBLE * 1e9)))[1])[1]
    END;

CREATE OR REPLACE MACRO pq_sensitive(value, p, q, absolute := false) AS
    __sdc_pq_sensitive(__sdc_check_value(value, 'pq_sensitive', 'value'),
                       __sdc_check_number(p, 'pq_sensitive', 'p', 0, 1),
                       __sdc_check_number(q, 'pq_sensitive', 'q', 0, 1),
                       __sdc_check_flag(absolute, 'pq_sensitive', 'absolute'));

-- Threshold (minimum frequency) rule: true when the cell has fewer than n contributions; NULL without any.
CREATE OR REPLACE MACRO threshold_sensitive(value, n) AS
    CASE WHEN count(__sdc_check_value(value, 'threshold_sensitive', 'value')) = 0 THEN NULL
         ELSE count(value) < __sdc_check_integer(n, 'threshold_sensitive', 'n', 1)
    END;
