-- duckdb_sdc recoding and suppression of categorical keys (duckdb_sdc.methods.recoding, suppression,
-- pram, generalisation; docs/methods/recoding.md): the global recodings as pure SQL, and the SQL text
-- of the table forms that hand each stratum's key values (as text) to a Python UDF and put its answer
-- back beside the rows.

-- ---------------------------------------------------------------------------------------------
-- global recoding, value by value

-- The breaks of `fname` as DOUBLE[]: a list of at least two finite numbers, strictly increasing.
CREATE OR REPLACE MACRO __sdc_breaks(b, fname) AS
    CASE WHEN b IS NULL THEN error(fname || ': breaks must not be NULL')
         WHEN NOT regexp_full_match(typeof(b), __sdc_number_types() || '\[\]')
             THEN error(fname || ': breaks must be a list of numbers, got ' || typeof(b))
         WHEN len(b) < 2 THEN error(fname || ': breaks must hold at least two numbers (one band), got ' || len(b))
         WHEN list_count(b) < len(b) THEN error(fname || ': breaks must not contain NULL')
         WHEN NOT list_bool_and(list_transform(b, lambda __sdc_v: isfinite(__sdc_v::DOUBLE)))
             THEN error(fname || ': breaks must be finite, got '
                        || list_filter(b, lambda __sdc_v: NOT isfinite(__sdc_v::DOUBLE))[1]::DOUBLE)
         WHEN NOT list_bool_and(list_transform(range(1, len(b)), lambda __sdc_j: b[__sdc_j]::DOUBLE < b[__sdc_j + 1]::DOUBLE))
             THEN error(fname || ': breaks must be strictly increasing, got '
                        || list_transform(list_filter(range(1, len(b)), lambda __sdc_j: b[__sdc_j]::DOUBLE >= b[__sdc_j + 1]::DOUBLE),
                                          lambda __sdc_j: __sdc_num(b[__sdc_j]::DOUBLE) || ' then ' || __sdc_num(b[__sdc_j + 1]::DOUBLE))[1])
         ELSE b::DOUBLE[]
    END;

-- closed := 'right' or 'left' of `fname`, in lower case.
CREATE OR REPLACE MACRO __sdc_closed(v, fname) AS
    CASE WHEN v IS NULL THEN error(fname || ': closed must not be NULL')
         WHEN lower(trim(v::VARCHAR)) IN ('right', 'left') THEN lower(trim(v::VARCHAR))
         ELSE error(fname || ': closed must be one of ''right'', ''left'', got ' || __sdc_shown(v))
    END;

-- The default label of every band of the checked breaks b (duckdb_sdc.methods.recoding.band_labels).
CREATE OR REPLACE MACRO __sdc_band_labels(b, closed) AS
    list_transform(range(1, len(b)), lambda __sdc_j:
        CASE WHEN closed = 'right' THEN (CASE WHEN __sdc_j = 1 THEN '[' ELSE '(' END) || __sdc_num(b[__sdc_j]) || ', '
                                        || __sdc_num(b[__sdc_j + 1]) || ']'
             ELSE '[' || __sdc_num(b[__sdc_j]) || ', ' || __sdc_num(b[__sdc_j + 1])
                  || (CASE WHEN __sdc_j = len(b) - 1 THEN ']' ELSE ')' END) END);

-- The labels of `fname`: NULL (the defaults) or one text per band.
CREATE OR REPLACE MACRO __sdc_labels(labels, b, closed, fname) AS
    CASE WHEN labels IS NULL THEN __sdc_band_labels(b, closed)
         WHEN NOT (typeof(labels) = 'VARCHAR[]' OR typeof(labels) = '"NULL"[]')
             THEN error(fname || ': labels must be a list of texts, got ' || typeof(labels))
         WHEN list_count(labels) < len(labels) THEN error(fname || ': labels must not contain NULL')
         WHEN len(labels) <> len(b) - 1
             THEN error(fname || ': labels must give one label per band (' || (len(b) - 1) || '), got ' || len(labels))
         ELSE labels::VARCHAR[]
    END;

-- The band label of the value x (numeric, finite) with the checked breaks b and labels; NULL for NULL.
CREATE OR REPLACE MACRO __sdc_band(x, b, labels, closed, fname) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN NOT __sdc_is_number(x) THEN error(fname || ': x must be numeric, got ' || typeof(x))
         WHEN NOT isfinite(x::DOUBLE)
             THEN error(fname || ': x contains ' || x::DOUBLE || '; NaN and infinite values are refused (use NULL for a missing value)')
         WHEN x::DOUBLE < b[1] OR x::DOUBLE > b[-1]
             THEN error(fname || ': breaks do not cover ' || __sdc_num(x::DOUBLE) || ', outside [' || __sdc_num(b[1]) || ', '
                        || __sdc_num(b[-1]) || ']')
         WHEN closed = 'right' THEN labels[greatest(1, len(list_filter(b, lambda __sdc_v: __sdc_v < x::DOUBLE)))]
         ELSE labels[least(len(b) - 1, len(list_filter(b, lambda __sdc_v: __sdc_v <= x::DOUBLE)))]
    END;

CREATE OR REPLACE MACRO recode_bands(x, breaks, labels := NULL, closed := 'right') AS
    list_transform([__sdc_breaks(breaks, 'recode_bands')], lambda __sdc_b:
    list_transform([__sdc_closed(closed, 'recode_bands')], lambda __sdc_cl:
        __sdc_band(x, __sdc_b, __sdc_labels(labels, __sdc_b, __sdc_cl, 'recode_bands'), __sdc_cl, 'recode_bands'))[1])[1];

-- A threshold or replacement of top_code / bottom_code: a finite number (NULL only for the replacement).
CREATE OR REPLACE MACRO __sdc_finite_param(v, fname, pname, nullable) AS
    CASE WHEN v IS NULL AND nullable THEN NULL
         WHEN v IS NULL THEN error(fname || ': ' || pname || ' must not be NULL')
         WHEN NOT __sdc_is_number(v) THEN error(fname || ': ' || pname || ' must be a number, got ' || __sdc_shown(v))
         WHEN NOT isfinite(v::DOUBLE) THEN error(fname || ': ' || pname || ' must be a finite number, got ' || v::DOUBLE)
         ELSE v
    END;

CREATE OR REPLACE MACRO __sdc_coded_value(x, fname) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN NOT __sdc_is_number(x) THEN error(fname || ': x must be numeric, got ' || typeof(x))
         WHEN NOT isfinite(x::DOUBLE)
             THEN error(fname || ': x contains ' || x::DOUBLE || '; NaN and infinite values are refused (use NULL for a missing value)')
         ELSE x
    END;

CREATE OR REPLACE MACRO top_code(x, top, replacement := NULL) AS
    CASE WHEN __sdc_coded_value(x, 'top_code')::DOUBLE > __sdc_finite_param(top, 'top_code', 'top', false)::DOUBLE
         THEN coalesce(__sdc_finite_param(replacement, 'top_code', 'replacement', true), top)
         ELSE __sdc_coded_value(x, 'top_code') END;

CREATE OR REPLACE MACRO bottom_code(x, bottom, replacement := NULL) AS
    CASE WHEN __sdc_coded_value(x, 'bottom_code')::DOUBLE < __sdc_finite_param(bottom, 'bottom_code', 'bottom', false)::DOUBLE
         THEN coalesce(__sdc_finite_param(replacement, 'bottom_code', 'replacement', true), bottom)
         ELSE __sdc_coded_value(x, 'bottom_code') END;

-- merge_categories: the value's image under the mapping (its text), or the value itself as text.
CREATE OR REPLACE MACRO __sdc_mapping(m, fname) AS
    CASE WHEN m IS NULL THEN error(fname || ': mapping must not be NULL')
         WHEN NOT starts_with(typeof(m), 'MAP(') THEN error(fname || ': mapping must be a MAP of categories to their new '
                                                             || 'names, e.g. MAP {''a'': ''ab'', ''b'': ''ab''}, got ' || typeof(m))
         WHEN list_count(map_values(m)) < len(map_values(m))
             THEN error(fname || ': mapping must not map to NULL (to suppress a value use local suppression)')
         ELSE m
    END;

CREATE OR REPLACE MACRO merge_categories(x, mapping) AS
    CASE WHEN mapping IS NULL THEN error('merge_categories: mapping must not be NULL')
         WHEN x IS NULL THEN NULL
         ELSE coalesce(__sdc_mapping(mapping, 'merge_categories')[x::VARCHAR]::VARCHAR, x::VARCHAR) END;

-- unit := 'month', 'quarter' or 'year' of `fname`, in lower case.
CREATE OR REPLACE MACRO __sdc_date_unit(v, fname) AS
    CASE WHEN v IS NULL THEN error(fname || ': unit must not be NULL')
         WHEN lower(trim(v::VARCHAR)) IN ('month', 'quarter', 'year') THEN lower(trim(v::VARCHAR))
         ELSE error(fname || ': unit must be one of ''month'', ''quarter'', ''year'', got ' || __sdc_shown(v))
    END;

CREATE OR REPLACE MACRO __sdc_date_value(d, fname, pname) AS
    CASE WHEN d IS NULL THEN NULL
         WHEN typeof(d) NOT IN ('DATE', 'TIMESTAMP', 'TIMESTAMP WITH TIME ZONE', 'TIMESTAMP_S', 'TIMESTAMP_MS', 'TIMESTAMP_NS')
             THEN error(fname || ': ' || pname || ' must be a date or a timestamp, got ' || typeof(d))
         WHEN __sdc_as_date(d) IS NULL THEN error(fname || ': ' || pname || ' contains ' || d::VARCHAR || '; infinite dates are refused')
         ELSE d
    END;

-- The calendar date of a checked date or timestamp (its local date: a TIMESTAMP WITH TIME ZONE in the
-- session's time zone), through its text so that a value of another type binds (and is refused above).
CREATE OR REPLACE MACRO __sdc_as_date(d) AS TRY_CAST(left(d::VARCHAR, 10) AS DATE);

CREATE OR REPLACE MACRO truncate_date(d, unit) AS
    list_transform([__sdc_date_unit(unit, 'truncate_date')], lambda __sdc_u:
        CASE WHEN __sdc_date_value(d, 'truncate_date', 'd') IS NULL THEN NULL::DATE
             ELSE make_date(year(__sdc_as_date(d)),
                            CASE __sdc_u WHEN 'month' THEN month(__sdc_as_date(d))
                                         WHEN 'quarter' THEN (month(__sdc_as_date(d)) - 1) // 3 * 3 + 1 ELSE 1 END,
                            1) END)[1];

CREATE OR REPLACE MACRO age_in_years(birth, reference) AS
    CASE WHEN __sdc_date_value(birth, 'age_in_years', 'birth') IS NULL
              OR __sdc_date_value(reference, 'age_in_years', 'reference') IS NULL THEN NULL::INTEGER
         WHEN __sdc_as_date(birth) > __sdc_as_date(reference)
             THEN error('age_in_years: birth ' || __sdc_as_date(birth) || ' is after the reference date '
                        || __sdc_as_date(reference))
         ELSE (year(__sdc_as_date(reference)) - year(__sdc_as_date(birth))
               - CASE WHEN month(__sdc_as_date(reference)) * 32 + day(__sdc_as_date(reference))
                           < month(__sdc_as_date(birth)) * 32 + day(__sdc_as_date(birth)) THEN 1 ELSE 0 END)::INTEGER
    END;

-- ---------------------------------------------------------------------------------------------
-- table forms

-- SQL text of the rows of `tbl` (its columns except those named __sdc_...) as one list __sdc_l per
-- stratum of entries {r: the row, c: the codes of the columns `codes`} (a code is the value's dense
-- rank among the stratum's non-NULL values of its column, from 1, in the column type's own order;
-- NULL for NULL), ordered by the rows' whole content so that a stratum reaches the UDF in the same
-- order whatever DuckDB's threads do; with the stratum's number __sdc_i (from 0, in ascending order of
-- the strata values, NULLS LAST; 0 without strata) and its label __sdc_label ('the table' or 'stratum
-- s = v, ...'), after the checks `checks` (texts of queries, see __sdc_checks_sql). `items`: the select
-- items computed from them (SQL text), beside the strata columns when `keep_strata`.
CREATE OR REPLACE MACRO __sdc_strata_lists_sql(tbl, strata, checks, items, codes, keep_strata := false) AS
    format('SELECT {0}{1} FROM (SELECT {7}list({{''r'': __sdc_row, ''c'': __sdc_codes}} ORDER BY __sdc_row) AS __sdc_l, '
           || '{2} AS __sdc_i, {3} AS __sdc_label FROM {4}(SELECT __sdc_t AS __sdc_row, [{5}]::BIGINT[] AS __sdc_codes{8} '
           || 'FROM (SELECT COLUMNS(lambda __sdc_c: NOT starts_with(lower(__sdc_c), ''__sdc_'')) FROM {6}) AS __sdc_t) {9})',
           CASE WHEN keep_strata AND strata IS NOT NULL THEN __sdc_qi_list(strata) || ', ' ELSE '' END,
           items,
           CASE WHEN strata IS NULL THEN '0'
                ELSE 'row_number() OVER (ORDER BY '
                     || array_to_string(list_transform(strata, lambda __sdc_c: __sdc_qi(__sdc_c) || ' ASC NULLS LAST'), ', ')
                     || ') - 1' END,
           CASE WHEN strata IS NULL THEN '''the table'''
                ELSE '''stratum '' || ' || array_to_string(list_transform(strata, lambda __sdc_c:
                         __sdc_ql(__sdc_c || ' = ') || ' || __sdc_ql(' || __sdc_qi(__sdc_c) || '::VARCHAR)'), ' || '', '' || ')
           END,
           __sdc_checks_sql(checks),
           array_to_string(list_transform(coalesce(codes, []::VARCHAR[]), lambda __sdc_c:
               format('CASE WHEN __sdc_t.{0} IS NULL THEN NULL ELSE dense_rank() OVER (PARTITION BY {1}__sdc_t.{0} IS NULL '
                      || 'ORDER BY __sdc_t.{0}) END', __sdc_qi(__sdc_c),
                      array_to_string(list_transform(coalesce(strata, []::VARCHAR[]), lambda __sdc_g:
                          '__sdc_t.' || __sdc_qi(__sdc_g) || ', '), ''))), ', '),
           __sdc_qt(tbl),
           CASE WHEN strata IS NULL THEN '' ELSE __sdc_qi_list(strata) || ', ' END,
           CASE WHEN strata IS NULL THEN ''
                ELSE ', ' || array_to_string(list_transform(strata, lambda __sdc_g: '__sdc_t.' || __sdc_qi(__sdc_g)), ', ') END,
           CASE WHEN strata IS NULL THEN '' ELSE 'GROUP BY ' || __sdc_qi_list(strata) END);

-- SQL text of the records of a stratum's list __sdc_l as lists of the columns `names` cast to text.
CREATE OR REPLACE MACRO __sdc_text_records_sql(names) AS
    'list_transform(__sdc_l, lambda __sdc_s: [' || array_to_string(list_transform(names, lambda __sdc_c:
        '__sdc_s.r.' || __sdc_qi(__sdc_c) || '::VARCHAR'), ', ') || '])';

-- The keys, or an error when one is also a strata column.
CREATE OR REPLACE MACRO __sdc_keys_not_strata(fname, keys, strata) AS
    CASE WHEN strata IS NOT NULL AND len(list_intersect(list_transform(keys, lambda __sdc_c: lower(__sdc_c)),
                                                       list_transform(strata, lambda __sdc_c: lower(__sdc_c)))) > 0
         THEN error(fname || ': ' || list_intersect(list_transform(keys, lambda __sdc_c: lower(__sdc_c)),
                                                     list_transform(strata, lambda __sdc_c: lower(__sdc_c)))[1]
                    || ' is both a key and a strata column')
         ELSE keys END;

-- The checks of a table form over the columns `names` (parameter `pname`): they and the strata exist,
-- no reserved column name, and (`records`) at least one record.
CREATE OR REPLACE MACRO __sdc_key_table_checks(fname, tbl, pname, names, strata, records := true) AS
    [__sdc_columns_exist_sql(fname, pname, tbl, names), __sdc_columns_exist_sql(fname, 'strata', tbl, strata),
     __sdc_no_reserved_sql(fname, tbl), CASE WHEN records THEN __sdc_not_empty_sql(fname, tbl) END];

-- local_suppression_table / local_suppression_report: the UDF over each stratum's key codes.
CREATE OR REPLACE MACRO __sdc_local_suppression_call_sql(fname, k, importance) AS
    format('__sdc_local_suppression_table({0}, list_transform(__sdc_l, lambda __sdc_s: __sdc_s.c), {1}, {2}, __sdc_label)',
           __sdc_ql(fname), __sdc_ql(k::VARCHAR), __sdc_ql(importance::VARCHAR));

CREATE OR REPLACE MACRO __sdc_local_suppression_sql(fname, tbl, keys, k, importance, strata) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_names(fname, 'strata', strata, optional := true)], lambda __sdc_g:
    list_transform([__sdc_keys_not_strata(fname, __sdc_column_names(fname, 'keys', keys), __sdc_g)], lambda __sdc_k:
        format('SELECT * EXCLUDE (__sdc_v) REPLACE ({0}) FROM (SELECT unnest(__sdc_e.r), __sdc_v FROM ({1}))',
               array_to_string(list_transform(__sdc_k, lambda __sdc_c, __sdc_j:
                   format('CASE WHEN __sdc_v[{0}] THEN NULL ELSE {1} END AS {1}', __sdc_j, __sdc_qi(__sdc_c))), ', '),
               __sdc_strata_lists_sql(__sdc_t, __sdc_g, __sdc_key_table_checks(fname, __sdc_t, 'keys', __sdc_k, __sdc_g),
                   'unnest(__sdc_l) AS __sdc_e, unnest(' || __sdc_local_suppression_call_sql(fname, k, importance)
                   || '.mask) AS __sdc_v', __sdc_k))
    )[1])[1])[1];

CREATE OR REPLACE MACRO __sdc_local_suppression_report_sql(fname, tbl, keys, k, importance, strata) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_names(fname, 'strata', strata, optional := true)], lambda __sdc_g:
    list_transform([__sdc_keys_not_strata(fname, __sdc_column_names(fname, 'keys', keys), __sdc_g)], lambda __sdc_k:
        format('SELECT {0}__sdc_o.records, __sdc_o.unsafe, __sdc_o.suppressed_records, __sdc_o.suppressed, '
               || 'map({1}, __sdc_o.per_key) AS per_key, __sdc_o.optimal, __sdc_o.lower_bound, __sdc_o.algorithm '
               || 'FROM ({2}) ORDER BY {3}',
               CASE WHEN __sdc_g IS NULL THEN '' ELSE __sdc_qi_list(__sdc_g) || ', ' END,
               '[' || array_to_string(list_transform(__sdc_k, lambda __sdc_c: __sdc_ql(__sdc_c)), ', ') || ']',
               __sdc_strata_lists_sql(__sdc_t, __sdc_g, __sdc_key_table_checks(fname, __sdc_t, 'keys', __sdc_k, __sdc_g),
                   __sdc_local_suppression_call_sql(fname, k, importance) || ' AS __sdc_o', __sdc_k, keep_strata := true),
               CASE WHEN __sdc_g IS NULL THEN '1'
                    ELSE array_to_string(list_transform(__sdc_g, lambda __sdc_c: __sdc_qi(__sdc_c) || ' NULLS LAST'), ', ') END)
    )[1])[1])[1];

-- pram_table / pram_transitions_table: the UDF gets each stratum's codes of the column and returns,
-- per record, the position (from 1) in the stratum's list of a record whose value is the released one,
-- so that the column keeps its type.
CREATE OR REPLACE MACRO __sdc_pram_call_sql(fname, udf, col, pd, alpha, seed) AS
    format('{0}({1}, list_transform(__sdc_l, lambda __sdc_s: __sdc_s.c[1]), {2}, {3}, {4})',
           udf, __sdc_ql(fname), __sdc_ql(pd::VARCHAR), __sdc_ql(alpha::VARCHAR), __sdc_seed_sql(fname, seed, col));

CREATE OR REPLACE MACRO __sdc_pram_sql(fname, tbl, col, pd, alpha, strata, seed) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_name(fname, 'var', col)], lambda __sdc_c:
    list_transform([__sdc_column_names(fname, 'strata', strata, optional := true)], lambda __sdc_g:
        format('SELECT * EXCLUDE (__sdc_v) REPLACE (__sdc_v AS {0}) FROM (SELECT unnest(__sdc_e.r), __sdc_v FROM ({1}))',
               __sdc_qi(__sdc_c),
               __sdc_strata_lists_sql(__sdc_t, __sdc_g,
                   __sdc_key_table_checks(fname, __sdc_t, 'var', [__sdc_c], __sdc_g, records := false),
                   'unnest(__sdc_l) AS __sdc_e, unnest(list_transform('
                   || __sdc_pram_call_sql(fname, '__sdc_pram_table', __sdc_c, pd, alpha, seed)
                   || ', lambda __sdc_p: __sdc_l[__sdc_p].r.' || __sdc_qi(__sdc_c) || ')) AS __sdc_v', [__sdc_c]))
    )[1])[1])[1];

CREATE OR REPLACE MACRO __sdc_pram_transitions_sql(fname, tbl, col, pd, alpha, strata, seed) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_name(fname, 'var', col)], lambda __sdc_c:
    list_transform([__sdc_column_names(fname, 'strata', strata, optional := true)], lambda __sdc_g:
        format('SELECT {0}__sdc_l[__sdc_x.from_at].r.{1} AS "from", __sdc_l[__sdc_x.to_at].r.{1} AS "to", __sdc_x.probability, '
               || '__sdc_x.records, __sdc_x.epsilon FROM (SELECT {0}__sdc_l, unnest(__sdc_y) AS __sdc_x FROM ({2})) '
               || 'ORDER BY {3}"from", "to"',
               CASE WHEN __sdc_g IS NULL THEN '' ELSE __sdc_qi_list(__sdc_g) || ', ' END,
               __sdc_qi(__sdc_c),
               __sdc_strata_lists_sql(__sdc_t, __sdc_g,
                   __sdc_key_table_checks(fname, __sdc_t, 'var', [__sdc_c], __sdc_g, records := false),
                   '__sdc_l, ' || __sdc_pram_call_sql(fname, '__sdc_pram_transitions_table', __sdc_c, pd, alpha, seed)
                   || ' AS __sdc_y', [__sdc_c], keep_strata := true),
               CASE WHEN __sdc_g IS NULL THEN ''
                    ELSE array_to_string(list_transform(__sdc_g, lambda __sdc_c: __sdc_qi(__sdc_c) || ' NULLS LAST'), ', ')
                         || ', ' END)
    )[1])[1])[1];

-- SQL text of a hierarchy's rows as JSON texts (every cell as text, in column order): a table or view, or
-- a CSV file (a name ending in .csv) as ARX writes hierarchies: ';' between the levels, no header.
CREATE OR REPLACE MACRO __sdc_hierarchy_rows_sql(h) AS
    format('(SELECT list(to_json(__sdc_h)::VARCHAR) FROM (SELECT COLUMNS(*)::VARCHAR FROM {0}) AS __sdc_h)',
           CASE WHEN lower(h) LIKE '%.csv'
                THEN format('read_csv({0}, header := false, delim := '';'', all_varchar := true)', __sdc_ql(h))
                ELSE __sdc_qt(h) END);

-- generalise_table: one column recoded to `level` of its hierarchy (checked by the UDF: a tree, every
-- value of the column in it).
CREATE OR REPLACE MACRO __sdc_generalise_sql(fname, tbl, col, hierarchy, level) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_name(fname, 'col', col)], lambda __sdc_c:
    list_transform([__sdc_name(fname, 'hierarchy', hierarchy, 'a table or a CSV file')], lambda __sdc_hn:
        format('WITH __sdc_m AS MATERIALIZED (SELECT unnest(__sdc_generalise_table({0}, {1}, {2}, '
               || '(SELECT list(DISTINCT {3}::VARCHAR ORDER BY {3}::VARCHAR) FROM {4} WHERE {3} IS NOT NULL), {5})) AS __sdc_e) '
               || 'SELECT __sdc_t.* REPLACE (__sdc_m.__sdc_e.generalised AS {3}) FROM {6}(SELECT COLUMNS(lambda __sdc_c: '
               || 'NOT starts_with(lower(__sdc_c), ''__sdc_'')) FROM {4}) AS __sdc_t LEFT JOIN __sdc_m '
               || 'ON __sdc_t.{3}::VARCHAR = __sdc_m.__sdc_e.value',
               __sdc_ql(fname), __sdc_ql(__sdc_c), __sdc_hierarchy_rows_sql(__sdc_hn), __sdc_qi(__sdc_c),
               __sdc_qt(__sdc_t), __sdc_ql(level::VARCHAR),
               __sdc_checks_sql([__sdc_columns_exist_sql(fname, 'col', __sdc_t, [__sdc_c]),
                                 __sdc_no_reserved_sql(fname, __sdc_t)]))
    )[1])[1])[1];

-- The optimal generalisation search (generalisation_search_table, generalise_keys_table): one call over
-- every record (the strata join the classes), one hierarchy per key.
CREATE OR REPLACE MACRO __sdc_hierarchy_names(fname, h, keys) AS
    CASE WHEN h IS NULL THEN error(fname || ': hierarchies must not be NULL')
         WHEN NOT (typeof(h) = 'VARCHAR[]' OR typeof(h) = 'VARCHAR' OR typeof(h) = '"NULL"[]')
             THEN error(fname || ': hierarchies must be a list of table names or CSV files, one per key, got ' || typeof(h))
         WHEN len(__sdc_names(h)) <> len(keys)
             THEN error(fname || ': hierarchies must give one hierarchy per key (' || len(keys) || '), got ' || len(__sdc_names(h)))
         WHEN list_count(__sdc_names(h)) < len(__sdc_names(h)) THEN error(fname || ': hierarchies must not contain NULL')
         ELSE __sdc_names(h)
    END;

CREATE OR REPLACE MACRO __sdc_generalisation_call_sql(fname, keys, hs, k, share, measure, strata) AS
    format('__sdc_generalisation_search_table({0}, {1}, {2}, {3}, [{4}], {5}, {6}, {7})',
           __sdc_ql(fname),
           '[' || array_to_string(list_transform(keys, lambda __sdc_c: __sdc_ql(__sdc_c)), ', ') || ']',
           __sdc_text_records_sql(keys),
           CASE WHEN strata IS NULL THEN 'NULL::VARCHAR[][]' ELSE __sdc_text_records_sql(strata) END,
           array_to_string(list_transform(hs, lambda __sdc_h: __sdc_hierarchy_rows_sql(__sdc_h)), ', '),
           __sdc_ql(k::VARCHAR), __sdc_ql(share::VARCHAR), __sdc_ql(measure::VARCHAR));

CREATE OR REPLACE MACRO __sdc_generalisation_sql(fname, tbl, keys, hierarchies, k, share, measure, strata, release) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_names(fname, 'strata', strata, optional := true)], lambda __sdc_g:
    list_transform([__sdc_keys_not_strata(fname, __sdc_column_names(fname, 'keys', keys), __sdc_g)], lambda __sdc_k:
    list_transform([__sdc_hierarchy_names(fname, hierarchies, __sdc_k)], lambda __sdc_h:
        CASE WHEN release THEN
            format('SELECT * EXCLUDE (__sdc_v) REPLACE ({0}) FROM (SELECT unnest(__sdc_e.r), __sdc_v FROM ({1}))',
                   array_to_string(list_transform(__sdc_k, lambda __sdc_c, __sdc_j:
                       format('__sdc_v[{0}] AS {1}', __sdc_j, __sdc_qi(__sdc_c))), ', '),
                   __sdc_strata_lists_sql(__sdc_t, NULL, __sdc_key_table_checks(fname, __sdc_t, 'keys', __sdc_k, __sdc_g),
                       'unnest(__sdc_l) AS __sdc_e, unnest('
                       || __sdc_generalisation_call_sql(fname, __sdc_k, __sdc_h, k, share, measure, __sdc_g)
                       || '.released) AS __sdc_v', []::VARCHAR[]))
        ELSE
            format('SELECT {0}, __sdc_n.feasible, __sdc_n.suppressed, __sdc_n.loss, __sdc_n.chosen FROM '
                   || '(SELECT unnest(__sdc_x.lattice) AS __sdc_n FROM ({1})) ORDER BY __sdc_n.levels',
                   array_to_string(list_transform(__sdc_k, lambda __sdc_c, __sdc_j:
                       format('__sdc_n.levels[{0}] AS {1}', __sdc_j, __sdc_qi(__sdc_c))), ', '),
                   __sdc_strata_lists_sql(__sdc_t, NULL, __sdc_key_table_checks(fname, __sdc_t, 'keys', __sdc_k, __sdc_g),
                       __sdc_generalisation_call_sql(fname, __sdc_k, __sdc_h, k, share, measure, __sdc_g) || ' AS __sdc_x',
                       []::VARCHAR[]))
        END
    )[1])[1])[1])[1];

-- recode_bands_table: the column's values checked first (numeric; every value within the breaks, up to
-- five offending ones named), then recoded value by value.
CREATE OR REPLACE MACRO __sdc_bands_table_sql(fname, tbl, col, breaks, labels, closed) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_name(fname, 'col', col)], lambda __sdc_c:
    list_transform([__sdc_breaks(breaks, fname)], lambda __sdc_b:
    list_transform([__sdc_closed(closed, fname)], lambda __sdc_cl:
    list_transform([__sdc_labels(labels, __sdc_b, __sdc_cl, fname)], lambda __sdc_lb:
        format('SELECT __sdc_src.* REPLACE (__sdc_band({0}, {1}::DOUBLE[], {2}::VARCHAR[], {3}, {4}) AS {0}) FROM {5}'
               || '(SELECT COLUMNS(lambda __sdc_c: NOT starts_with(lower(__sdc_c), ''__sdc_'')) FROM {6}) AS __sdc_src',
               __sdc_qi(__sdc_c),
               '[' || array_to_string(list_transform(__sdc_b, lambda __sdc_v: __sdc_v::VARCHAR), ', ') || ']',
               '[' || array_to_string(list_transform(__sdc_lb, lambda __sdc_v: __sdc_ql(__sdc_v)), ', ') || ']',
               __sdc_ql(__sdc_cl), __sdc_ql(fname),
               __sdc_checks_sql([
                   __sdc_columns_exist_sql(fname, 'col', __sdc_t, [__sdc_c]), __sdc_no_reserved_sql(fname, __sdc_t),
                   format('SELECT CASE WHEN count(*) > 0 AND NOT __sdc_is_number(any_value({0})) THEN error({1} || typeof(any_value({0}))) '
                          || 'ELSE 1 END FROM {2}', __sdc_qi(__sdc_c), __sdc_ql(fname || ': column ' || __sdc_c
                          || ' must be numeric, got '), __sdc_qt(__sdc_t)),
                   format('SELECT CASE WHEN __sdc_n > 0 THEN error({0} || array_to_string(list_transform(__sdc_s, lambda __sdc_v: '
                          || '__sdc_num(__sdc_v)), '', '') || CASE WHEN __sdc_n > 5 THEN '' and '' || (__sdc_n - 5) || '' more'' '
                          || 'ELSE '''' END || {1}) ELSE 1 END FROM (SELECT count(*) AS __sdc_n, list_slice(list_sort(list(__sdc_v)), 1, 5) '
                          || 'AS __sdc_s FROM (SELECT DISTINCT TRY_CAST({2} AS DOUBLE) AS __sdc_v FROM {3} '
                          || 'WHERE TRY_CAST({2} AS DOUBLE) < {4} OR TRY_CAST({2} AS DOUBLE) > {5}))',
                          __sdc_ql(fname || ': breaks do not cover column ' || __sdc_c || ': '),
                          __sdc_ql(' outside [' || __sdc_num(__sdc_b[1]) || ', ' || __sdc_num(__sdc_b[-1]) || ']'),
                          __sdc_qi(__sdc_c), __sdc_qt(__sdc_t), __sdc_b[1]::VARCHAR, __sdc_b[-1]::VARCHAR)]),
               __sdc_qt(__sdc_t))
    )[1])[1])[1])[1])[1];
