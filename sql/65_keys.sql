-- duckdb_sdc risk of key combinations (duckdb_sdc.measures.keys, docs/methods/key-risk.md): the
-- frequencies f_k and F_k of the records' combinations of key values with the NULL semantics of
-- sdcMicro (a NULL key matches any value, nulls := 'any') or NULL as a value of its own
-- (nulls := 'category'), within strata; the Benedetti-Franconi individual risk and the global risk.
--
-- How f_k is counted with nulls := 'any'. The distinct combinations C of (strata, keys) are counted
-- once (a GROUP BY, NULL grouped with NULL), each with its NULL pattern (which keys are NULL). A
-- combination a of pattern P and b of pattern Q match when they are equal outside P | Q, that is
-- when b with the keys of P set to NULL equals a with the keys of Q set to NULL. So the combinations b
-- are grouped by (P, Q_b, b masked by P) for every pattern P, and every a of pattern P looks up
-- (P, Q, a masked by Q) for every pattern Q: each b is found once, by its own pattern. Both sides have
-- C x (number of patterns) rows, joined on integers (__sdc_key_frequencies_sql codes them); without
-- NULLs there is one pattern. The records are then joined back to their combination: a GROUP BY and
-- a join back, as DuckDB would count them itself.

-- nulls := ... of function `fname` (kind duckdb_sdc.measures.keys.NULLS), in lower case.
CREATE OR REPLACE MACRO __sdc_nulls_choice(v, fname) AS
    CASE WHEN v IS NULL THEN error(fname || ': nulls must not be NULL')
         WHEN lower(trim(v::VARCHAR)) IN ('any', 'category') THEN lower(trim(v::VARCHAR))
         ELSE error(fname || ': nulls must be one of ''any'', ''category'', got ' || __sdc_shown(v))
    END;

-- A sampling weight as DOUBLE, or an error when the weight column `col` is not numeric (the values
-- are checked by __sdc_weights_check_sql, which names up to five offending ones).
CREATE OR REPLACE MACRO __sdc_weight_value(v, fname, col) AS
    CASE WHEN NOT __sdc_is_number(v) THEN error(fname || ': weight column ' || col || ' must be numeric, got ' || typeof(v))
         ELSE v::DOUBLE
    END;

-- SQL text of a check (for __sdc_checks_sql) that refuses weights of column `w` of `tbl` that are NULL,
-- not finite or not > 0, naming how many and up to five of them (smallest first, NULL first).
CREATE OR REPLACE MACRO __sdc_weights_check_sql(fname, tbl, w) AS
    CASE WHEN w IS NULL THEN NULL ELSE
    format('SELECT CASE WHEN __sdc_b > 0 THEN error({0} || __sdc_b || '' are not: '' || __sdc_shown_v '
           || '|| CASE WHEN __sdc_b > 5 THEN '', ...'' ELSE '''' END) ELSE 1 END '
           || 'FROM (SELECT count(*) AS __sdc_b FROM ({1})), '
           || '(SELECT string_agg(coalesce(__sdc_v::VARCHAR, ''NULL''), '', '' ORDER BY __sdc_v NULLS FIRST) AS __sdc_shown_v '
           || 'FROM (SELECT __sdc_v FROM ({1}) ORDER BY __sdc_v NULLS FIRST LIMIT 5))',
           __sdc_ql(fname || ': weight column ' || w || ' must hold finite numbers > 0 (NULL is refused: every '
                    || 'record takes part); '),
           format('SELECT __sdc_weight_value({0}, {1}, {2}) AS __sdc_v FROM {3} '
                  || 'WHERE __sdc_weight_value({0}, {1}, {2}) IS NULL OR NOT (__sdc_weight_value({0}, {1}, {2}) > 0 '
                  || 'AND isfinite(__sdc_weight_value({0}, {1}, {2})))',
                  __sdc_qi(w), __sdc_ql(fname), __sdc_ql(w), __sdc_qt(tbl)))
    END;

-- SQL text of a check that refuses a table without records.
CREATE OR REPLACE MACRO __sdc_not_empty_sql(fname, tbl) AS
    format('SELECT CASE WHEN count(*) = 0 THEN error({0}) ELSE 1 END FROM {1}',
           __sdc_ql(fname || ': table ' || tbl || ' has no records; the measures need at least one record'),
           __sdc_qt(tbl));

-- SQL text of `alias`.col IS NOT DISTINCT FROM `other`.col for every column of `names`, joined by AND
-- (TRUE for no names).
CREATE OR REPLACE MACRO __sdc_same_sql(names, alias, other) AS
    coalesce(nullif(array_to_string(list_transform(coalesce(names, []::VARCHAR[]), lambda __sdc_c:
        alias || '.' || __sdc_qi(__sdc_c) || ' IS NOT DISTINCT FROM ' || other || '.' || __sdc_qi(__sdc_c)), ' AND '), ''),
        'TRUE');

-- The columns `names` qualified by `alias`, each followed by a comma ('' for none).
CREATE OR REPLACE MACRO __sdc_cols_sql(names, alias) AS
    array_to_string(list_transform(coalesce(names, []::VARCHAR[]), lambda __sdc_c:
        CASE WHEN alias = '' THEN '' ELSE alias || '.' END || __sdc_qi(__sdc_c) || ', '), '');

-- SQL text of a query with one row per distinct combination of (strata `g`, keys `k`) of table `tbl`:
-- the strata and keys under their own names, __sdc_fk (the number of records matching the
-- combination as `nulls` says), __sdc_popk (the sum of their weights, column `w`; f_k when w is
-- NULL), and __sdc_own (the number of records of the combination itself). `extra`: SQL text of one more
-- column of the records (the sensitive column of l-diversity) to count within each combination (NULL:
-- none): then a row per combination and value __sdc_x of it among the matching records, __sdc_fk and
-- __sdc_popk counting the matching records with that value, and no __sdc_own.
--
-- With nulls := 'any', every combination is coded as one HUGEINT: key i's values by their dense rank
-- among the combinations (NULL = 0), mixed radix, the stratum on top; its NULL pattern is a BIGINT
-- bitmask (so at most 62 keys). Masking keys is then a subtraction, and the pattern joins are joins
-- on three integers. Codes that would not fit 126 bits are refused.
CREATE OR REPLACE MACRO __sdc_key_frequencies_sql(fname, tbl, k, w, g, nulls, extra := NULL) AS
    list_transform([coalesce(g, []::VARCHAR[]) || k], lambda __sdc_gk:
    format('(WITH __sdc_c0 AS MATERIALIZED (SELECT {0}{1}count(*) AS __sdc_n, fsum({2}) AS __sdc_ws FROM {3} GROUP BY ALL)',
           __sdc_cols_sql(__sdc_gk, ''),
           CASE WHEN extra IS NULL THEN '' ELSE extra || ' AS __sdc_x, ' END,
           CASE WHEN w IS NULL THEN '1.0' ELSE format('__sdc_weight_value({0}, {1}, {2})', __sdc_qi(w), __sdc_ql(fname), __sdc_ql(w)) END,
           __sdc_qt(tbl))
    || CASE WHEN nulls = 'category'
         THEN format(' SELECT {0}{1}__sdc_n AS __sdc_fk, __sdc_ws AS __sdc_popk FROM __sdc_c0)',
                     __sdc_cols_sql(__sdc_gk, ''),
                     CASE WHEN extra IS NULL THEN '__sdc_n AS __sdc_own, ' ELSE '__sdc_x, ' END)
         WHEN len(k) > 62 THEN error(fname || ': keys names ' || len(k) || ' columns; at most 62 keys can be counted '
                                     || 'with nulls := ''any''')
         ELSE format(', __sdc_c1 AS (SELECT *, {0}, {1} AS __sdc_s, ({2})::BIGINT AS __sdc_m FROM __sdc_c0), '
                     || '__sdc_r AS (SELECT {3} FROM (SELECT {4}, max(__sdc_s) + 1 AS __sdc_rs FROM __sdc_c1)), '
                     || '__sdc_c AS (SELECT __sdc_c1.*, {5} FROM __sdc_c1, __sdc_r), '
                     || '__sdc_c2 AS MATERIALIZED (SELECT *, {6} AS __sdc_code FROM __sdc_c), '
                     || '__sdc_p AS (SELECT DISTINCT __sdc_m AS __sdc_q FROM __sdc_c2), '
                     || '__sdc_t AS (SELECT __sdc_p.__sdc_q AS __sdc_pa, __sdc_c2.__sdc_m AS __sdc_qb, {7} AS __sdc_key, '
                     || '{8}sum(__sdc_n) AS __sdc_n, fsum(__sdc_ws) AS __sdc_ws FROM __sdc_c2 CROSS JOIN __sdc_p GROUP BY ALL), '
                     || '__sdc_a AS (SELECT __sdc_d.*, __sdc_p.__sdc_q, {9} AS __sdc_key FROM {10} AS __sdc_d CROSS JOIN __sdc_p) '
                     || 'SELECT {11}{12}sum(__sdc_t.__sdc_n) AS __sdc_fk, fsum(__sdc_t.__sdc_ws) AS __sdc_popk '
                     || 'FROM __sdc_a JOIN __sdc_t ON __sdc_t.__sdc_pa = __sdc_a.__sdc_m AND __sdc_t.__sdc_qb = __sdc_a.__sdc_q '
                     || 'AND __sdc_t.__sdc_key = __sdc_a.__sdc_key GROUP BY ALL)',
                     -- 0: dense codes of the keys, NULL = 0
                     array_to_string(list_transform(k, lambda __sdc_c, __sdc_i:
                         format('CASE WHEN {0} IS NULL THEN 0 ELSE dense_rank() OVER (PARTITION BY {0} IS NULL ORDER BY {0}) '
                                || 'END::HUGEINT AS __sdc_k{1}', __sdc_qi(__sdc_c), __sdc_i)), ', '),
                     -- 1: the stratum's number from 0
                     CASE WHEN g IS NULL THEN '0::HUGEINT'
                          ELSE '(dense_rank() OVER (ORDER BY ' || __sdc_qi_list(g) || ') - 1)::HUGEINT' END,
                     -- 2: the NULL pattern as a bitmask
                     array_to_string(list_transform(k, lambda __sdc_c, __sdc_i:
                         format('CASE WHEN {0} IS NULL THEN {1} ELSE 0 END', __sdc_qi(__sdc_c), (2::BIGINT ** (__sdc_i - 1))::BIGINT)),
                                     ' + '),
                     -- 3: the radices R_i (the product of the ranges of the keys before i) and R_s, or an error
                     format('CASE WHEN {0} >= 126 THEN error({1}) ELSE 1 END AS __sdc_ok, ', 
                            array_to_string(list_transform(k, lambda __sdc_c, __sdc_i: format('log2(__sdc_r{0}::DOUBLE)', __sdc_i)), ' + ')
                            || ' + log2(__sdc_rs::DOUBLE)',
                            __sdc_ql(fname || ': the keys have too many distinct values to be counted together exactly (the '
                                     || 'product of their numbers of values exceeds 2^126)'))
                     || array_to_string(list_transform(k, lambda __sdc_c, __sdc_i:
                            format('{0}::HUGEINT AS __sdc_radix{1}', coalesce(nullif(array_to_string(list_transform(
                                range(1, __sdc_i), lambda __sdc_j: format('__sdc_r{0}', __sdc_j)), ' * '), ''), '1'), __sdc_i)), ', ')
                     || ', ' || array_to_string(list_transform(k, lambda __sdc_c, __sdc_i: format('__sdc_r{0}', __sdc_i)), ' * ')
                     || ' * 1::HUGEINT AS __sdc_radixs',
                     -- 4: the ranges of the codes
                     array_to_string(list_transform(k, lambda __sdc_c, __sdc_i: format('max(__sdc_k{0}) + 1 AS __sdc_r{0}', __sdc_i)), ', '),
                     -- 5: every key's part of the code, v_i = code_i R_i (0 for NULL)
                     array_to_string(list_transform(k, lambda __sdc_c, __sdc_i:
                         format('CASE WHEN __sdc_ok = 1 THEN __sdc_k{0} * __sdc_radix{0} END AS __sdc_v{0}', __sdc_i)), ', ')
                     || ', __sdc_s * __sdc_radixs AS __sdc_vs',
                     -- 6: the code of the combination
                     array_to_string(list_transform(k, lambda __sdc_c, __sdc_i: format('__sdc_v{0}', __sdc_i)), ' + ') || ' + __sdc_vs',
                     -- 7: the code of a combination of __sdc_c2 masked by the pattern __sdc_p.__sdc_q
                     __sdc_masked_code_sql(k, '__sdc_c2', '__sdc_p.__sdc_q'),
                     -- 8: the extra column
                     CASE WHEN extra IS NULL THEN '' ELSE '__sdc_c2.__sdc_x, ' END,
                     -- 9: the code of a distinct combination masked by each pattern
                     __sdc_masked_code_sql(k, '__sdc_d', '__sdc_p.__sdc_q'),
                     -- 10: the distinct combinations (one row per combination and extra value with extra)
                     CASE WHEN extra IS NULL THEN '__sdc_c2'
                          ELSE '(SELECT DISTINCT ' || __sdc_cols_sql(__sdc_gk, '') || '__sdc_m, __sdc_code, '
                               || array_to_string(list_transform(k, lambda __sdc_c, __sdc_i: format('__sdc_v{0}', __sdc_i)), ', ')
                               || ' FROM __sdc_c2)' END,
                     -- 11, 12: the output columns
                     __sdc_cols_sql(__sdc_gk, '__sdc_a'),
                     CASE WHEN extra IS NULL THEN '__sdc_a.__sdc_n AS __sdc_own, ' ELSE '__sdc_t.__sdc_x, ' END)
       END)[1];

-- SQL text of the code __sdc_code of `alias` with the keys of the bitmask `pattern` set to NULL (their
-- parts __sdc_v<i> taken away).
CREATE OR REPLACE MACRO __sdc_masked_code_sql(k, alias, pattern) AS
    format('({0}.__sdc_code - ({1}))', alias,
           array_to_string(list_transform(k, lambda __sdc_c, __sdc_i:
               format('CASE WHEN ({0} >> {1}) & 1 = 1 THEN {2}.__sdc_v{3} ELSE 0 END', pattern, __sdc_i - 1, alias, __sdc_i)),
               ' + '));

-- SQL text of the checks every key measure of `fname` runs before anything else, as one FROM item
-- (__sdc_checks_sql): the keys, the weight and the strata exist, none of the names `adds` (the
-- columns the function adds) is taken, the table has records, the weights are valid; `also`: more
-- checks. (The table's other columns may have any names: the generated SQL reads them only qualified.)
CREATE OR REPLACE MACRO __sdc_key_checks_sql(fname, tbl, k, w, g, adds, also := NULL) AS
    __sdc_checks_sql(coalesce(also, []::VARCHAR[]) || [
        __sdc_columns_exist_sql(fname, 'keys', tbl, k),
        __sdc_columns_exist_sql(fname, 'weight', tbl, CASE WHEN w IS NULL THEN NULL ELSE [w] END),
        __sdc_columns_exist_sql(fname, 'strata', tbl, g),
        CASE WHEN adds IS NULL THEN NULL ELSE __sdc_no_column_sql(fname, tbl, adds) END,
        __sdc_not_empty_sql(fname, tbl),
        __sdc_weights_check_sql(fname, tbl, w)]);

-- SQL text of the rows of `tbl` beside the per-combination query `freq` (__sdc_key_frequencies_sql),
-- with the select items `items` over __sdc_f (and the checks `checks` first).
CREATE OR REPLACE MACRO __sdc_beside_frequencies_sql(tbl, k, g, freq, items, checks) AS
    format('SELECT __sdc_r.*, {0} FROM {1}{2} AS __sdc_r JOIN {3} AS __sdc_f ON {4} AND {5}',
           items, checks, __sdc_qt(tbl), freq, __sdc_same_sql(g, '__sdc_r', '__sdc_f'), __sdc_same_sql(k, '__sdc_r', '__sdc_f'));

-- log(1 + u) to full precision for small u (DuckDB has no log1p): ln(1 + u) u / ((1 + u) - 1), the
-- rounding of 1 + u corrected (Goldberg 1991, theorem 4).
CREATE OR REPLACE MACRO __sdc_log1p(u) AS
    CASE WHEN 1.0 + u = 1.0 THEN u ELSE ln(1.0 + u) * u / ((1.0 + u) - 1.0) END;

-- The individual risk of the Benedetti-Franconi approximation (sdcMicro's indivRisk(method = 'approx'))
-- from f_k and F_k >= f_k; the formulas of duckdb_sdc.measures.keys.benedetti_franconi, written so
-- that F_k close to f_k loses no digits.
CREATE OR REPLACE MACRO __sdc_bf_risk(fk, popk) AS
    CASE WHEN popk = fk THEN 1.0 / fk
         WHEN fk = 1 THEN __sdc_log1p((popk - fk) / fk) / ((popk - fk) / fk)
         WHEN fk = 2 THEN list_transform([(popk - fk) / fk], lambda __sdc_u:
                              CASE WHEN __sdc_u < 1e-4 THEN 0.5 - __sdc_u / 3 + __sdc_u * __sdc_u / 4 - __sdc_u ** 3 / 5
                                   ELSE (__sdc_u - __sdc_log1p(__sdc_u)) / (__sdc_u * __sdc_u) END)[1]
         ELSE (fk / popk) / (fk - (1.0 - fk / popk))
    END;

-- A per-combination F_k, or an error when the sum of the weights overflowed or the weights make F_k
-- smaller than f_k (the model needs sampling weights >= 1).
CREATE OR REPLACE MACRO __sdc_risk_Fk(fk, popk, fname) AS
    CASE WHEN NOT isfinite(popk) THEN error(fname || ': the sum of the weights is larger than the largest float64 '
                                          || '(about 1.8e308); rescale the weights')
         WHEN popk < fk THEN error(fname || ': weights make the estimated population frequency F_k = ' || popk
                                 || ' smaller than the sample frequency f_k = ' || fk || '; the Benedetti-Franconi '
                                 || 'model needs F_k >= f_k, sampling weights >= 1')
         ELSE popk
    END;

-- The names `names` of parameter `pname`, or an error when one starts with __sdc_ (the generated SQL
-- names its own columns so).
CREATE OR REPLACE MACRO __sdc_unreserved(fname, pname, names) AS
    CASE WHEN list_bool_or(list_transform(coalesce(names, []::VARCHAR[]), lambda __sdc_c: starts_with(lower(__sdc_c), '__sdc_')))
         THEN error(fname || ': ' || pname || ' names a column starting with __sdc_, a prefix reserved for duckdb_sdc''s '
                    || 'internal columns: rename it')
         ELSE names END;

-- The checked arguments of key measure `fname` as one struct (bound once: the measures below read
-- its fields inside one lambda, which binds several times faster than a lambda per argument): the
-- table __sdc_tt, the keys __sdc_kk, the weight column __sdc_ww (NULL for none), the strata __sdc_gg
-- (NULL for none) and the NULL semantics __sdc_nn (fields named unlike any macro's parameters).
CREATE OR REPLACE MACRO __sdc_key_args(fname, tbl, keys, weight, strata, nulls) AS
    {'__sdc_tt': __sdc_table_name(fname, 'tbl', tbl), '__sdc_kk': __sdc_unreserved(fname, 'keys', __sdc_column_names(fname, 'keys', keys)),
     '__sdc_ww': CASE WHEN weight IS NULL THEN NULL ELSE __sdc_column_name(fname, 'weight', weight) END,
     '__sdc_gg': __sdc_unreserved(fname, 'strata', __sdc_column_names(fname, 'strata', strata, optional := true)),
     '__sdc_nn': __sdc_nulls_choice(nulls, fname)};

-- SQL text of population_frequencies_table: the rows with sample_fk and population_fk (a weight is
-- required: __sdc_column_name refuses NULL first).
CREATE OR REPLACE MACRO __sdc_population_frequencies_sql(fname, tbl, keys, weight, strata, nulls) AS
    list_transform([__sdc_key_args(fname, tbl, keys, __sdc_column_name(fname, 'weight', weight), strata, nulls)], lambda __sdc_a:
        __sdc_beside_frequencies_sql(__sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_gg'],
            __sdc_key_frequencies_sql(fname, __sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_ww'], __sdc_a['__sdc_gg'], __sdc_a['__sdc_nn']),
            'CAST(__sdc_f.__sdc_fk AS BIGINT) AS sample_fk, '
            || format('CASE WHEN isfinite(__sdc_f.__sdc_popk) THEN __sdc_f.__sdc_popk ELSE error({0}) END AS population_fk',
                      __sdc_ql(fname || ': the sum of the weights is larger than the largest float64 (about 1.8e308); '
                               || 'rescale the weights')),
            __sdc_key_checks_sql(fname, __sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_ww'], __sdc_a['__sdc_gg'], ['sample_fk', 'population_fk'])))[1];

-- SQL text of individual_risk_table: the rows with sample_fk, population_fk and individual_risk.
CREATE OR REPLACE MACRO __sdc_individual_risk_sql(fname, tbl, keys, weight, strata, nulls) AS
    list_transform([__sdc_key_args(fname, tbl, keys, weight, strata, nulls)], lambda __sdc_a:
        __sdc_beside_frequencies_sql(__sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_gg'],
            __sdc_risk_combos_sql(fname, __sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_ww'], __sdc_a['__sdc_gg'], __sdc_a['__sdc_nn']),
            'CAST(__sdc_f.__sdc_fk AS BIGINT) AS sample_fk, __sdc_f.__sdc_popk AS population_fk, '
            || '__sdc_f.__sdc_risk AS individual_risk',
            __sdc_key_checks_sql(fname, __sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_ww'], __sdc_a['__sdc_gg'],
                                 ['sample_fk', 'population_fk', 'individual_risk'])))[1];

-- SQL text of the per-combination frequencies with the individual risk __sdc_risk.
CREATE OR REPLACE MACRO __sdc_risk_combos_sql(fname, t, k, w, g, nulls) AS
    format('(SELECT * REPLACE (__sdc_risk_Fk(__sdc_fk, __sdc_popk, {1}) AS __sdc_popk), '
           || '__sdc_bf_risk(__sdc_fk, __sdc_risk_Fk(__sdc_fk, __sdc_popk, {1})) AS __sdc_risk FROM {0})',
           __sdc_key_frequencies_sql(fname, t, k, w, g, nulls), __sdc_ql(fname));

-- SQL text of global_risk_summary: per stratum (one row without strata) the records, the sample
-- uniques (f_k = 1), the expected number of re-identifications (the sum of the individual risks,
-- sdcMicro's global_risk_ER) and its share of the records (sdcMicro's global_risk).
CREATE OR REPLACE MACRO __sdc_global_risk_sql(fname, tbl, keys, weight, strata, nulls) AS
    list_transform([__sdc_key_args(fname, tbl, keys, weight, strata, nulls)], lambda __sdc_a:
        format('SELECT {0}sum(__sdc_own)::BIGINT AS records, '
               || 'coalesce(sum(__sdc_own) FILTER (WHERE __sdc_fk = 1), 0)::BIGINT AS sample_uniques, '
               || 'fsum(__sdc_own * __sdc_risk) AS expected_reidentifications, '
               || 'fsum(__sdc_own * __sdc_risk) / sum(__sdc_own) AS global_risk '
               || 'FROM {1}{2} AS __sdc_f GROUP BY ALL{3}',
               __sdc_cols_sql(__sdc_a['__sdc_gg'], '__sdc_f'),
               __sdc_key_checks_sql(fname, __sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_ww'], __sdc_a['__sdc_gg'], NULL),
               __sdc_risk_combos_sql(fname, __sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_ww'], __sdc_a['__sdc_gg'], __sdc_a['__sdc_nn']),
               CASE WHEN __sdc_a['__sdc_gg'] IS NULL THEN '' ELSE ' ORDER BY ' || __sdc_qi_list(__sdc_a['__sdc_gg']) END))[1];

-- SQL text of weighted_risk_summary (duckdb_sdc.sql.weights): one row (per stratum) of the records, the
-- distinct combinations, the sample uniques (f_k = 1), the records with F_k below `threshold`, their
-- share, and the naive expected re-identifications sum 1 / F_k over the records.
CREATE OR REPLACE MACRO __sdc_risk_summary_sql(fname, tbl, keys, weight, threshold, strata, nulls) AS
    list_transform([__sdc_key_args(fname, tbl, keys, __sdc_column_name(fname, 'weight', weight), strata, nulls)], lambda __sdc_a:
        format('SELECT {0}sum(__sdc_own)::BIGINT AS records, count(*) AS combinations, '
               || 'coalesce(sum(__sdc_own) FILTER (WHERE __sdc_fk = 1), 0)::BIGINT AS sample_uniques, '
               || 'coalesce(sum(__sdc_own) FILTER (WHERE __sdc_popk < {4}), 0)::BIGINT AS at_risk, '
               || 'coalesce(sum(__sdc_own) FILTER (WHERE __sdc_popk < {4}), 0) / sum(__sdc_own) AS share_at_risk, '
               || 'CASE WHEN isfinite(fsum(__sdc_own / __sdc_popk)) AND bool_and(isfinite(__sdc_popk)) '
               || 'THEN fsum(__sdc_own / __sdc_popk) ELSE error({5}) END AS expected_reidentifications '
               || 'FROM {1}{2} AS __sdc_f GROUP BY ALL{3}',
               __sdc_cols_sql(__sdc_a['__sdc_gg'], '__sdc_f'),
               __sdc_key_checks_sql(fname, __sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_ww'], __sdc_a['__sdc_gg'], NULL),
               __sdc_key_frequencies_sql(fname, __sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_ww'], __sdc_a['__sdc_gg'], __sdc_a['__sdc_nn']),
               CASE WHEN __sdc_a['__sdc_gg'] IS NULL THEN '' ELSE ' ORDER BY ' || __sdc_qi_list(__sdc_a['__sdc_gg']) END,
               threshold::VARCHAR,
               __sdc_ql(fname || ': the sum of the weights is larger than the largest float64 (about 1.8e308); '
                        || 'rescale the weights')))[1];

-- SQL text of suda2_table: per stratum one list of the distinct combinations of the keys (as text, for
-- the UDF __sdc_suda2_table, duckdb_sdc.sql.keys), their MSUs and scores unnested beside them, and the
-- rows joined back to their combination.
CREATE OR REPLACE MACRO __sdc_suda2_sql(fname, tbl, keys, strata, nulls, dis_fraction, scores) AS
    list_transform([__sdc_key_args(fname, tbl, keys, NULL, strata, nulls)], lambda __sdc_a:
        format('SELECT __sdc_r.*, __sdc_f.msus, __sdc_f.suda_score, __sdc_f.dis_suda_score FROM {0}{1} AS __sdc_r JOIN '
               || '(SELECT unnest(__sdc_l, max_depth := 2), unnest(__sdc_s.msus) AS msus, unnest(__sdc_s.suda_score) AS suda_score, '
               || 'unnest(__sdc_s.dis_suda_score) AS dis_suda_score FROM (SELECT __sdc_l, __sdc_suda2_table({2}, '
               || 'list_transform(__sdc_l, lambda __sdc_x: [{3}]), list_transform(__sdc_l, lambda __sdc_x: __sdc_x.__sdc_n), '
               || '[{4}], {5}, {6}, {7}) AS __sdc_s FROM (SELECT list(__sdc_c) AS __sdc_l FROM (SELECT {8}count(*) AS __sdc_n '
               || 'FROM {9} GROUP BY ALL) AS __sdc_c{10}))) AS __sdc_f ON {11} AND {12}',
               __sdc_key_checks_sql(fname, __sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], NULL, __sdc_a['__sdc_gg'],
                                    ['msus', 'suda_score', 'dis_suda_score']),
               __sdc_qt(__sdc_a['__sdc_tt']), __sdc_ql(fname),
               array_to_string(list_transform(__sdc_a['__sdc_kk'], lambda __sdc_c: '__sdc_x.' || __sdc_qi(__sdc_c) || '::VARCHAR'), ', '),
               array_to_string(list_transform(__sdc_a['__sdc_kk'], lambda __sdc_c: __sdc_ql(__sdc_c)), ', '),
               __sdc_ql(__sdc_a['__sdc_nn']), __sdc_ql(dis_fraction::VARCHAR), __sdc_ql(scores::VARCHAR),
               __sdc_cols_sql(coalesce(__sdc_a['__sdc_gg'], []::VARCHAR[]) || __sdc_a['__sdc_kk'], ''),
               __sdc_qt(__sdc_a['__sdc_tt']),
               CASE WHEN __sdc_a['__sdc_gg'] IS NULL THEN '' ELSE ' GROUP BY ' || __sdc_cols_sql(__sdc_a['__sdc_gg'], '__sdc_c')[:-3] END,
               __sdc_same_sql(__sdc_a['__sdc_gg'], '__sdc_r', '__sdc_f'), __sdc_same_sql(__sdc_a['__sdc_kk'], '__sdc_r', '__sdc_f')))[1];

-- The sensitive column `s` of key measure `fname`, checked: a name, and not one of the keys `k`.
CREATE OR REPLACE MACRO __sdc_sensitive_name(fname, s, k) AS
    list_transform([__sdc_column_name(fname, 'sensitive', s)], lambda __sdc_s:
        CASE WHEN list_contains(list_transform(k, lambda __sdc_c: lower(__sdc_c)), lower(__sdc_s))
             THEN error(fname || ': sensitive column ' || __sdc_ql(__sdc_s) || ' is also a key; a key''s value is known '
                        || 'to the intruder, so it cannot be the attribute to protect')
             ELSE __sdc_s END)[1];

-- SQL text of the distribution of the sensitive column `s` among the records matching each key
-- combination: (strata, keys, __sdc_x, __sdc_fk = h, __sdc_f = the class's size).
CREATE OR REPLACE MACRO __sdc_classes_sql(fname, a, s) AS
    format('(SELECT *, sum(__sdc_fk) OVER (PARTITION BY {1}) AS __sdc_f FROM {0})',
           __sdc_key_frequencies_sql(fname, a['__sdc_tt'], a['__sdc_kk'], NULL, a['__sdc_gg'], a['__sdc_nn'],
                                     extra := __sdc_qi(s)),
           __sdc_qi_list(coalesce(a['__sdc_gg'], []::VARCHAR[]) || a['__sdc_kk']));

-- SQL text of l_diversity_table: the rows with distinct_l_diversity and entropy_l_diversity.
CREATE OR REPLACE MACRO __sdc_l_diversity_sql(fname, tbl, keys, sensitive, strata, nulls) AS
    list_transform([__sdc_key_args(fname, tbl, keys, NULL, strata, nulls)], lambda __sdc_a:
    list_transform([__sdc_sensitive_name(fname, sensitive, __sdc_a['__sdc_kk'])], lambda __sdc_s:
        __sdc_beside_frequencies_sql(__sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_gg'],
            format('(SELECT {0}count(*) AS __sdc_d, exp(-fsum(__sdc_fk / __sdc_f * ln(__sdc_fk / __sdc_f))) AS __sdc_e '
                   || 'FROM {1} GROUP BY ALL)', __sdc_cols_sql(coalesce(__sdc_a['__sdc_gg'], []::VARCHAR[]) || __sdc_a['__sdc_kk'], ''),
                   __sdc_classes_sql(fname, __sdc_a, __sdc_s)),
            '__sdc_f.__sdc_d AS distinct_l_diversity, __sdc_f.__sdc_e AS entropy_l_diversity',
            __sdc_key_checks_sql(fname, __sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], NULL, __sdc_a['__sdc_gg'],
                                 ['distinct_l_diversity', 'entropy_l_diversity'],
                                 also := [__sdc_columns_exist_sql(fname, 'sensitive', __sdc_a['__sdc_tt'], [__sdc_s])])))[1])[1];

-- SQL text of t_closeness_table: the rows with t_closeness, the total variation distance (the EMD with
-- equal ground distance) between the sensitive values of the records matching the row's keys and
-- those of its stratum: 1/2 (sum over the class's values of |p - q| - q, + 1).
CREATE OR REPLACE MACRO __sdc_t_closeness_sql(fname, tbl, keys, sensitive, strata, nulls) AS
    list_transform([__sdc_key_args(fname, tbl, keys, NULL, strata, nulls)], lambda __sdc_a:
    list_transform([__sdc_sensitive_name(fname, sensitive, __sdc_a['__sdc_kk'])], lambda __sdc_s:
        __sdc_beside_frequencies_sql(__sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], __sdc_a['__sdc_gg'],
            format('(SELECT {0}least(1.0, greatest(0.0, 0.5 * (1.0 + fsum(abs(__sdc_h.__sdc_fk / __sdc_h.__sdc_f - __sdc_q.__sdc_q) '
                   || '- __sdc_q.__sdc_q)))) AS __sdc_tc FROM {1} AS __sdc_h JOIN (SELECT {2}{3} AS __sdc_x, '
                   || 'count(*) / sum(count(*)) OVER ({4}) AS __sdc_q FROM {5} GROUP BY {2}{3}) AS __sdc_q ON {6} AND '
                   || '__sdc_h.__sdc_x IS NOT DISTINCT FROM __sdc_q.__sdc_x GROUP BY ALL)',
                   __sdc_cols_sql(coalesce(__sdc_a['__sdc_gg'], []::VARCHAR[]) || __sdc_a['__sdc_kk'], '__sdc_h'),
                   __sdc_classes_sql(fname, __sdc_a, __sdc_s),
                   __sdc_cols_sql(__sdc_a['__sdc_gg'], ''), __sdc_qi(__sdc_s),
                   CASE WHEN __sdc_a['__sdc_gg'] IS NULL THEN '' ELSE 'PARTITION BY ' || __sdc_qi_list(__sdc_a['__sdc_gg']) END,
                   __sdc_qt(__sdc_a['__sdc_tt']), __sdc_same_sql(__sdc_a['__sdc_gg'], '__sdc_h', '__sdc_q')),
            '__sdc_f.__sdc_tc AS t_closeness',
            __sdc_key_checks_sql(fname, __sdc_a['__sdc_tt'], __sdc_a['__sdc_kk'], NULL, __sdc_a['__sdc_gg'], ['t_closeness'],
                                 also := [__sdc_columns_exist_sql(fname, 'sensitive', __sdc_a['__sdc_tt'], [__sdc_s])])))[1])[1];

-- ---------------------------------------------------------------------------------------------
-- Utility of the released key columns (duckdb_sdc.measures.keys.suppression, class_loss,
-- non_uniform_entropy): the original and the released table, their records paired by the record key.

-- The checked arguments of a utility measure as one struct: the tables __sdc_o and __sdc_r, the record
-- key __sdc_id, the keys __sdc_kk, the strata __sdc_gg (not `paired`: no original and no record key).
CREATE OR REPLACE MACRO __sdc_utility_args(fname, original, released, key, keys, strata, paired := true) AS
    {'__sdc_o': CASE WHEN paired THEN __sdc_table_name(fname, 'original', original) END,
     '__sdc_r': __sdc_table_name(fname, 'released', released),
     '__sdc_id': CASE WHEN paired THEN __sdc_column_name(fname, 'key', key) END,
     '__sdc_kk': __sdc_unreserved(fname, 'keys', __sdc_column_names(fname, 'keys', keys)),
     '__sdc_gg': __sdc_unreserved(fname, 'strata', __sdc_column_names(fname, 'strata', strata, optional := true))};

-- SQL text of a check that refuses original and released tables whose records do not pair one to one
-- by the record key `key` (a key missing on one side, repeated, or NULL), naming up to five such keys.
CREATE OR REPLACE MACRO __sdc_paired_check_sql(fname, o, r, key) AS
    format('SELECT CASE WHEN __sdc_b > 0 THEN error({0} || __sdc_b || '' keys do not: '' || __sdc_shown_v '
           || '|| CASE WHEN __sdc_b > 5 THEN '', ...'' ELSE '''' END) ELSE 1 END '
           || 'FROM (SELECT count(*) AS __sdc_b FROM ({1})), (SELECT string_agg(coalesce(__sdc_v::VARCHAR, ''NULL''), '', '' '
           || 'ORDER BY __sdc_v NULLS FIRST) AS __sdc_shown_v FROM (SELECT __sdc_v FROM ({1}) ORDER BY __sdc_v NULLS FIRST LIMIT 5))',
           __sdc_ql(fname || ': original and released must hold the same records, one per value of the key ' || key
                    || ' (not NULL); '),
           format('SELECT coalesce(__sdc_p.__sdc_v, __sdc_q.__sdc_v) AS __sdc_v FROM (SELECT {0} AS __sdc_v, count(*) AS __sdc_n '
                  || 'FROM {1} GROUP BY 1) AS __sdc_p FULL JOIN (SELECT {0} AS __sdc_v, count(*) AS __sdc_n FROM {2} GROUP BY 1) '
                  || 'AS __sdc_q ON __sdc_p.__sdc_v = __sdc_q.__sdc_v WHERE __sdc_p.__sdc_v IS NULL OR __sdc_q.__sdc_v IS NULL '
                  || 'OR __sdc_p.__sdc_n > 1 OR __sdc_q.__sdc_n > 1', __sdc_qi(key), __sdc_qt(o), __sdc_qt(r)));

-- The checks of a utility measure (FROM item).
CREATE OR REPLACE MACRO __sdc_utility_checks_sql(fname, a, paired := true, strata_in := 'released') AS
    __sdc_checks_sql([
        __sdc_columns_exist_sql(fname, 'keys', a['__sdc_r'], a['__sdc_kk']),
        CASE WHEN paired THEN __sdc_columns_exist_sql(fname, 'keys', a['__sdc_o'], a['__sdc_kk']) END,
        CASE WHEN paired THEN __sdc_columns_exist_sql(fname, 'key', a['__sdc_o'], [a['__sdc_id']]) END,
        CASE WHEN paired THEN __sdc_columns_exist_sql(fname, 'key', a['__sdc_r'], [a['__sdc_id']]) END,
        __sdc_columns_exist_sql(fname, 'strata', CASE WHEN strata_in = 'released' THEN a['__sdc_r'] ELSE a['__sdc_o'] END,
                                a['__sdc_gg']),
        __sdc_not_empty_sql(fname, a['__sdc_r']),
        CASE WHEN paired THEN __sdc_paired_check_sql(fname, a['__sdc_o'], a['__sdc_r'], a['__sdc_id']) END]);

-- SQL text of the pairs: every original record beside its released one (columns o_<key>, r_<key>, the
-- strata of the original, and the record key).
CREATE OR REPLACE MACRO __sdc_pairs_sql(a) AS
    format('(SELECT {0}{1}{2}__sdc_o.{3} AS __sdc_id FROM {4} AS __sdc_o JOIN {5} AS __sdc_r ON __sdc_o.{3} = __sdc_r.{3})',
           __sdc_cols_sql(a['__sdc_gg'], '__sdc_o'),
           array_to_string(list_transform(a['__sdc_kk'], lambda __sdc_c, __sdc_i:
               format('__sdc_o.{0} AS __sdc_o{1}, ', __sdc_qi(__sdc_c), __sdc_i)), ''),
           array_to_string(list_transform(a['__sdc_kk'], lambda __sdc_c, __sdc_i:
               format('__sdc_r.{0} AS __sdc_r{1}, ', __sdc_qi(__sdc_c), __sdc_i)), ''),
           __sdc_qi(a['__sdc_id']), __sdc_qt(a['__sdc_o']), __sdc_qt(a['__sdc_r']));

-- SQL text of suppression_table: per key column the records, its values in the original, those the
-- release suppressed (NULL where the original has a value) and their share.
CREATE OR REPLACE MACRO __sdc_suppression_sql(fname, original, released, key, keys) AS
    list_transform([__sdc_utility_args(fname, original, released, key, keys, NULL)], lambda __sdc_a:
        format('SELECT column_name, records, "values", suppressed, suppressed / nullif("values", 0) AS suppressed_share FROM '
               || '(SELECT unnest([{0}], recursive := true) FROM {1}(SELECT count(*) AS __sdc_cnt, {2} FROM {3}))',
               array_to_string(list_transform(__sdc_a['__sdc_kk'], lambda __sdc_c, __sdc_i:
                   format('{{''column_name'': {0}, ''records'': __sdc_cnt, ''values'': __sdc_v{1}, ''suppressed'': __sdc_s{1}}}',
                          __sdc_ql(__sdc_c), __sdc_i)), ', '),
               __sdc_utility_checks_sql(fname, __sdc_a),
               array_to_string(list_transform(__sdc_a['__sdc_kk'], lambda __sdc_c, __sdc_i:
                   format('count(__sdc_o{0}) AS __sdc_v{0}, count(*) FILTER (WHERE __sdc_o{0} IS NOT NULL AND __sdc_r{0} IS NULL) '
                          || 'AS __sdc_s{0}', __sdc_i)), ', '),
               __sdc_pairs_sql(__sdc_a)))[1];

-- SQL text of record_suppression_table: per record its key, its values among the key columns in the
-- original, those suppressed and their share.
CREATE OR REPLACE MACRO __sdc_record_suppression_sql(fname, original, released, key, keys) AS
    list_transform([__sdc_utility_args(fname, original, released, key, keys, NULL)], lambda __sdc_a:
        format('SELECT __sdc_id AS {0}, "values", suppressed, suppressed / nullif("values", 0) AS suppressed_share FROM '
               || '(SELECT __sdc_id, ({1})::BIGINT AS "values", ({2})::BIGINT AS suppressed FROM {3}{4})',
               __sdc_qi(__sdc_a['__sdc_id']),
               array_to_string(list_transform(__sdc_a['__sdc_kk'], lambda __sdc_c, __sdc_i:
                   format('(__sdc_o{0} IS NOT NULL)::INTEGER', __sdc_i)), ' + '),
               array_to_string(list_transform(__sdc_a['__sdc_kk'], lambda __sdc_c, __sdc_i:
                   format('(__sdc_o{0} IS NOT NULL AND __sdc_r{0} IS NULL)::INTEGER', __sdc_i)), ' + '),
               __sdc_utility_checks_sql(fname, __sdc_a), __sdc_pairs_sql(__sdc_a)))[1];

-- SQL text of class_loss_summary: ARX's discernibility and average equivalence class size of the
-- released keys (classes of equal values, NULL a value; a record of NULLs only is suppressed).
CREATE OR REPLACE MACRO __sdc_class_loss_sql(fname, released, keys, strata) AS
    list_transform([__sdc_utility_args(fname, NULL, released, NULL, keys, strata, paired := false)], lambda __sdc_a:
        format('SELECT sum(__sdc_cnt)::BIGINT AS records, count(*) FILTER (WHERE NOT __sdc_supp) AS classes, '
               || 'coalesce(sum(__sdc_cnt) FILTER (WHERE __sdc_supp), 0)::BIGINT AS suppressed_records, '
               || 'sum(CASE WHEN __sdc_supp THEN __sdc_cnt::HUGEINT * __sdc_ns ELSE __sdc_cnt::HUGEINT * __sdc_cnt END)::DOUBLE AS discernibility, '
               || 'sum(__sdc_cnt) / (count(*) FILTER (WHERE NOT __sdc_supp) + count(DISTINCT {0}) FILTER (WHERE __sdc_supp)) '
               || 'AS average_class_size FROM {1}(SELECT {2}count(*) AS __sdc_cnt, {3} AS __sdc_supp, '
               || 'sum(count(*)) OVER ({4}) AS __sdc_ns FROM {5} GROUP BY {6})',
               CASE WHEN __sdc_a['__sdc_gg'] IS NULL THEN '0' ELSE '[' || __sdc_qi_list(__sdc_a['__sdc_gg']) || ']' END,
               __sdc_utility_checks_sql(fname, __sdc_a, paired := false),
               __sdc_cols_sql(__sdc_a['__sdc_gg'], ''),
               array_to_string(list_transform(__sdc_a['__sdc_kk'], lambda __sdc_c: __sdc_qi(__sdc_c) || ' IS NULL'), ' AND '),
               CASE WHEN __sdc_a['__sdc_gg'] IS NULL THEN '' ELSE 'PARTITION BY ' || __sdc_qi_list(__sdc_a['__sdc_gg']) END,
               __sdc_qt(__sdc_a['__sdc_r']),
               __sdc_qi_list(coalesce(__sdc_a['__sdc_gg'], []::VARCHAR[]) || __sdc_a['__sdc_kk'])))[1];

-- SQL text of non_uniform_entropy_table: per key column sum over the records of -log2 n(a, b) / n(b), a
-- the original value and b the released one (NULL a value), each stratum (of the original) apart.
CREATE OR REPLACE MACRO __sdc_non_uniform_entropy_sql(fname, original, released, key, keys, strata) AS
    list_transform([__sdc_utility_args(fname, original, released, key, keys, strata)], lambda __sdc_a:
        format('WITH __sdc_pairs AS MATERIALIZED {0} SELECT __sdc_u.column_name, __sdc_u.non_uniform_entropy '
               || 'FROM {1}({2}) AS __sdc_u ORDER BY __sdc_u.__sdc_i',
               __sdc_pairs_sql(__sdc_a), __sdc_utility_checks_sql(fname, __sdc_a, strata_in := 'original'),
               array_to_string(list_transform(__sdc_a['__sdc_kk'], lambda __sdc_c, __sdc_i:
                   format('SELECT {0} AS column_name, {1} AS __sdc_i, 0.0 - coalesce(fsum(__sdc_nab * log2(__sdc_nab / __sdc_nb)), 0) '
                          || 'AS non_uniform_entropy FROM (SELECT count(*) AS __sdc_nab, sum(count(*)) OVER ({2}) AS __sdc_nb '
                          || 'FROM __sdc_pairs GROUP BY {3}__sdc_o{1}, __sdc_r{1})',
                          __sdc_ql(__sdc_c), __sdc_i,
                          'PARTITION BY ' || __sdc_cols_sql(__sdc_a['__sdc_gg'], '') || '__sdc_r' || __sdc_i,
                          __sdc_cols_sql(__sdc_a['__sdc_gg'], ''))), ' UNION ALL ')))[1];
