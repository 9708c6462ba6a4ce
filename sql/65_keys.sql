-- duckdb_sdc risk of key combinations (duckdb_sdc.measures.keys, docs/methods/key-risk.md): the
-- frequencies f_k and F_k of the records' combinations of key values with the NULL semantics of
-- sdcMicro (a NULL key matches any value, nulls := 'any') or NULL as a value of its own
-- (nulls := 'category'), within strata; the Benedetti-Franconi individual risk and the global risk.
--
-- How f_k is counted with nulls := 'any'. The distinct combinations C of (strata, keys) are counted
-- once (a GROUP BY, NULL grouped with NULL), each with its NULL pattern (which keys are NULL). A
-- combination a of pattern P and b of pattern Q match when they are equal outside P | Q, that is
-- when b with the keys of P set to NULL equals a with the keys of Q set to NULL (IS NOT DISTINCT
-- FROM). So the combinations b are grouped by (strata, P, Q_b, b masked by P) for every pattern P,
-- and every a of pattern P looks up (strata, P, Q, a masked by Q) for every pattern Q: each b is
-- found once, by its own pattern. Both sides have C x (number of patterns) rows; without NULLs there
-- is one pattern and this is a join of the combinations with themselves. The records are then
-- joined back to their combination: a GROUP BY and a join back, as DuckDB would count them itself.

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

-- SQL text of the key columns `k` of `alias`, each set to NULL where the pattern `pattern` (a BOOLEAN[]
-- column, true for a NULL key) is true, under their own names.
CREATE OR REPLACE MACRO __sdc_masked_sql(k, alias, pattern) AS
    array_to_string(list_transform(k, lambda __sdc_c, __sdc_i:
        format('CASE WHEN {0}[{1}] THEN NULL ELSE {2}.{3} END AS {3}', pattern, __sdc_i, alias, __sdc_qi(__sdc_c))), ', ');

-- SQL text of a query with one row per distinct combination of (strata `g`, keys `k`) of table `tbl`:
-- the strata and keys under their own names, __sdc_fk (the number of records matching the
-- combination as `nulls` says) and __sdc_popk (the sum of their weights, column `w`; f_k when w is
-- NULL), and __sdc_own (the number of records of the combination itself). `extra`: SQL text of one more
-- column of the records (the sensitive column of l-diversity) to count within each combination (NULL:
-- none): then a row per combination and value __sdc_x of it among the matching records, __sdc_fk and
-- __sdc_popk counting the matching records with that value, and no __sdc_own.
CREATE OR REPLACE MACRO __sdc_key_frequencies_sql(fname, tbl, k, w, g, nulls, extra := NULL) AS
    list_transform([coalesce(g, []::VARCHAR[]) || k], lambda __sdc_gk:
    format('(WITH __sdc_c AS (SELECT {0}{1}count(*) AS __sdc_n, fsum({2}) AS __sdc_ws, [{3}] AS __sdc_m FROM {4} '
           || 'GROUP BY ALL)', __sdc_cols_sql(__sdc_gk, __sdc_qt(tbl)),
           CASE WHEN extra IS NULL THEN '' ELSE extra || ' AS __sdc_x, ' END,
           CASE WHEN w IS NULL THEN '1.0' ELSE format('__sdc_weight_value({0}, {1}, {2})', __sdc_qi(w), __sdc_ql(fname), __sdc_ql(w)) END,
           array_to_string(list_transform(k, lambda __sdc_c: __sdc_qi(__sdc_c) || ' IS NULL'), ', '),
           __sdc_qt(tbl))
    || CASE WHEN nulls = 'category'
         THEN format(' SELECT {0}{1}__sdc_n AS __sdc_fk, __sdc_ws AS __sdc_popk FROM __sdc_c)',
                     __sdc_cols_sql(__sdc_gk, '__sdc_c'),
                     CASE WHEN extra IS NULL THEN '__sdc_n AS __sdc_own, ' ELSE '__sdc_x, ' END)
         ELSE format(', __sdc_p AS (SELECT DISTINCT __sdc_m AS __sdc_q FROM __sdc_c), '
                     || '__sdc_t AS (SELECT {0}{5}__sdc_p.__sdc_q AS __sdc_pa, __sdc_c.__sdc_m AS __sdc_qb, {1}, '
                     || 'sum(__sdc_n) AS __sdc_n, fsum(__sdc_ws) AS __sdc_ws FROM __sdc_c CROSS JOIN __sdc_p GROUP BY ALL) '
                     || 'SELECT {2}{6}sum(__sdc_t.__sdc_n) AS __sdc_fk, fsum(__sdc_t.__sdc_ws) AS __sdc_popk '
                     || 'FROM {7} AS __sdc_a CROSS JOIN __sdc_p JOIN __sdc_t '
                     || 'ON __sdc_t.__sdc_pa = __sdc_a.__sdc_m AND __sdc_t.__sdc_qb = __sdc_p.__sdc_q AND {3} AND {4} '
                     || 'GROUP BY ALL)',
                     __sdc_cols_sql(g, '__sdc_c'),
                     __sdc_masked_sql(k, '__sdc_c', '__sdc_p.__sdc_q'),
                     __sdc_cols_sql(__sdc_gk, '__sdc_a'),
                     __sdc_same_sql(g, '__sdc_t', '__sdc_a'),
                     array_to_string(list_transform(k, lambda __sdc_c, __sdc_i:
                         format('__sdc_t.{0} IS NOT DISTINCT FROM CASE WHEN __sdc_p.__sdc_q[{1}] THEN NULL ELSE __sdc_a.{0} END',
                                __sdc_qi(__sdc_c), __sdc_i)), ' AND '),
                     CASE WHEN extra IS NULL THEN '' ELSE '__sdc_c.__sdc_x, ' END,
                     CASE WHEN extra IS NULL THEN '__sdc_a.__sdc_n AS __sdc_own, ' ELSE '__sdc_t.__sdc_x, ' END,
                     CASE WHEN extra IS NULL THEN '__sdc_c'
                          ELSE '(SELECT DISTINCT ' || __sdc_cols_sql(__sdc_gk, '') || '__sdc_m FROM __sdc_c)' END)
       END)[1];

-- SQL text of the checks every key measure of `fname` runs before anything else, as one FROM item
-- (__sdc_checks_sql): the keys, the weight and the strata exist, no column is named __sdc_..., none
-- of the names `adds` (the columns the function adds) is taken, the table has records, the weights
-- are valid; `also`: more checks.
CREATE OR REPLACE MACRO __sdc_key_checks_sql(fname, tbl, k, w, g, adds, also := NULL) AS
    __sdc_checks_sql(coalesce(also, []::VARCHAR[]) || [
        __sdc_columns_exist_sql(fname, 'keys', tbl, k),
        __sdc_columns_exist_sql(fname, 'weight', tbl, CASE WHEN w IS NULL THEN NULL ELSE [w] END),
        __sdc_columns_exist_sql(fname, 'strata', tbl, g),
        __sdc_no_reserved_sql(fname, tbl),
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

-- SQL text of population_frequencies_table: the rows with sample_fk and population_fk.
CREATE OR REPLACE MACRO __sdc_population_frequencies_sql(fname, tbl, keys, weight, strata, nulls) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_names(fname, 'keys', keys)], lambda __sdc_k:
    list_transform([__sdc_column_name(fname, 'weight', weight)], lambda __sdc_w:
    list_transform([__sdc_column_names(fname, 'strata', strata, optional := true)], lambda __sdc_g:
        __sdc_beside_frequencies_sql(__sdc_t, __sdc_k, __sdc_g,
            __sdc_key_frequencies_sql(fname, __sdc_t, __sdc_k, __sdc_w, __sdc_g, __sdc_nulls_choice(nulls, fname)),
            'CAST(__sdc_f.__sdc_fk AS BIGINT) AS sample_fk, '
            || format('CASE WHEN isfinite(__sdc_f.__sdc_popk) THEN __sdc_f.__sdc_popk ELSE error({0}) END AS population_fk',
                      __sdc_ql(fname || ': the sum of the weights is larger than the largest float64 (about 1.8e308); '
                               || 'rescale the weights')),
            __sdc_key_checks_sql(fname, __sdc_t, __sdc_k, __sdc_w, __sdc_g, ['sample_fk', 'population_fk']))
    )[1])[1])[1])[1];

-- SQL text of individual_risk_table: the rows with sample_fk, population_fk and individual_risk.
CREATE OR REPLACE MACRO __sdc_individual_risk_sql(fname, tbl, keys, weight, strata, nulls) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_names(fname, 'keys', keys)], lambda __sdc_k:
    list_transform([CASE WHEN weight IS NULL THEN NULL ELSE __sdc_column_name(fname, 'weight', weight) END], lambda __sdc_w:
    list_transform([__sdc_column_names(fname, 'strata', strata, optional := true)], lambda __sdc_g:
        __sdc_beside_frequencies_sql(__sdc_t, __sdc_k, __sdc_g,
            __sdc_risk_combos_sql(fname, __sdc_t, __sdc_k, __sdc_w, __sdc_g, __sdc_nulls_choice(nulls, fname)),
            'CAST(__sdc_f.__sdc_fk AS BIGINT) AS sample_fk, __sdc_f.__sdc_popk AS population_fk, '
            || '__sdc_f.__sdc_risk AS individual_risk',
            __sdc_key_checks_sql(fname, __sdc_t, __sdc_k, __sdc_w, __sdc_g, ['sample_fk', 'population_fk', 'individual_risk']))
    )[1])[1])[1])[1];

-- SQL text of the per-combination frequencies with the individual risk __sdc_risk.
CREATE OR REPLACE MACRO __sdc_risk_combos_sql(fname, t, k, w, g, nulls) AS
    format('(SELECT * REPLACE (__sdc_risk_Fk(__sdc_fk, __sdc_popk, {1}) AS __sdc_popk), '
           || '__sdc_bf_risk(__sdc_fk, __sdc_risk_Fk(__sdc_fk, __sdc_popk, {1})) AS __sdc_risk FROM {0})',
           __sdc_key_frequencies_sql(fname, t, k, w, g, nulls), __sdc_ql(fname));

-- SQL text of global_risk_summary: per stratum (one row without strata) the records, the sample
-- uniques (f_k = 1), the expected number of re-identifications (the sum of the individual risks,
-- sdcMicro's global_risk_ER) and its share of the records (sdcMicro's global_risk).
CREATE OR REPLACE MACRO __sdc_global_risk_sql(fname, tbl, keys, weight, strata, nulls) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_names(fname, 'keys', keys)], lambda __sdc_k:
    list_transform([CASE WHEN weight IS NULL THEN NULL ELSE __sdc_column_name(fname, 'weight', weight) END], lambda __sdc_w:
    list_transform([__sdc_column_names(fname, 'strata', strata, optional := true)], lambda __sdc_g:
        format('SELECT {0}sum(__sdc_own)::BIGINT AS records, '
               || 'coalesce(sum(__sdc_own) FILTER (WHERE __sdc_fk = 1), 0)::BIGINT AS sample_uniques, '
               || 'fsum(__sdc_own * __sdc_risk) AS expected_reidentifications, '
               || 'fsum(__sdc_own * __sdc_risk) / sum(__sdc_own) AS global_risk '
               || 'FROM {1}{2} AS __sdc_f GROUP BY ALL{3}',
               __sdc_cols_sql(__sdc_g, '__sdc_f'),
               __sdc_key_checks_sql(fname, __sdc_t, __sdc_k, __sdc_w, __sdc_g, NULL),
               __sdc_risk_combos_sql(fname, __sdc_t, __sdc_k, __sdc_w, __sdc_g, __sdc_nulls_choice(nulls, fname)),
               CASE WHEN __sdc_g IS NULL THEN '' ELSE ' ORDER BY ' || __sdc_qi_list(__sdc_g) END)
    )[1])[1])[1])[1];

-- SQL text of weighted_risk_summary (duckdb_sdc.sql.weights): one row of the records, the distinct
-- combinations, the sample uniques (f_k = 1), the records with F_k below `threshold`, their share,
-- and the naive expected re-identifications sum 1 / F_k over the records.
CREATE OR REPLACE MACRO __sdc_risk_summary_sql(fname, tbl, keys, weight, threshold, strata, nulls) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_names(fname, 'keys', keys)], lambda __sdc_k:
    list_transform([__sdc_column_name(fname, 'weight', weight)], lambda __sdc_w:
    list_transform([__sdc_column_names(fname, 'strata', strata, optional := true)], lambda __sdc_g:
        format('SELECT {0}sum(__sdc_own)::BIGINT AS records, count(*) AS combinations, '
               || 'coalesce(sum(__sdc_own) FILTER (WHERE __sdc_fk = 1), 0)::BIGINT AS sample_uniques, '
               || 'coalesce(sum(__sdc_own) FILTER (WHERE __sdc_popk < {4}), 0)::BIGINT AS at_risk, '
               || 'coalesce(sum(__sdc_own) FILTER (WHERE __sdc_popk < {4}), 0) / sum(__sdc_own) AS share_at_risk, '
               || 'CASE WHEN isfinite(fsum(__sdc_own / __sdc_popk)) AND bool_and(isfinite(__sdc_popk)) '
               || 'THEN fsum(__sdc_own / __sdc_popk) ELSE error({5}) END AS expected_reidentifications '
               || 'FROM {1}{2} AS __sdc_f GROUP BY ALL{3}',
               __sdc_cols_sql(__sdc_g, '__sdc_f'),
               __sdc_key_checks_sql(fname, __sdc_t, __sdc_k, __sdc_w, __sdc_g, NULL),
               __sdc_key_frequencies_sql(fname, __sdc_t, __sdc_k, __sdc_w, __sdc_g, __sdc_nulls_choice(nulls, fname)),
               CASE WHEN __sdc_g IS NULL THEN '' ELSE ' ORDER BY ' || __sdc_qi_list(__sdc_g) END,
               threshold::VARCHAR,
               __sdc_ql(fname || ': the sum of the weights is larger than the largest float64 (about 1.8e308); '
                        || 'rescale the weights'))
    )[1])[1])[1])[1];
