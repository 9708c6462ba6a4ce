-- duckdb_sdc internal helper macros (names start with __sdc_; not part of the public reference).
-- Pure SQL: they work in a plain DuckDB shell after `.read`, and duckdb_sdc.register(con) installs
-- them as TEMP macros.

-- Quote an identifier: "a""b" for a"b.
CREATE OR REPLACE MACRO __sdc_qi(name) AS '"' || replace(name, '"', '""') || '"';

-- Quote a possibly qualified table name ('db.schema.table'), part by part. Parts may come quoted, as
-- dbt's ref() renders them ('"db"."main"."people"'; inside quotes a dot is part of the name and ""
-- is a quote): such a name is split at the dots between parts and each part unquoted, then quoted.
CREATE OR REPLACE MACRO __sdc_qt_name(name) AS
    CASE WHEN contains(name, '"') AND regexp_full_match(name, '("([^"]|"")*"|[^."]+)([.]("([^"]|"")*"|[^."]+))*')
         THEN array_to_string(list_transform(regexp_extract_all(name, '"(?:[^"]|"")*"|[^."]+'),
                  lambda part: __sdc_qi(CASE WHEN starts_with(part, '"') THEN replace(part[2:-2], '""', '"')
                                             ELSE part END)), '.')
         ELSE array_to_string(list_transform(string_split(name, '.'), lambda part: __sdc_qi(part)), '.')
    END;

-- Quote a string literal; NULL becomes the keyword NULL.
CREATE OR REPLACE MACRO __sdc_ql(s) AS
    coalesce('''' || replace(s::VARCHAR, '''', '''''') || '''', 'NULL');

-- What dbt's ref() renders for a relation with a row limit, as a regular expression: under `dbt build
-- --empty` (select * from "db"."main"."people" where false limit 0), with a limit (select * from ...
-- limit 10). Group 1 is the relation's name, group 2 ' where false' or empty, group 3 the limit.
CREATE OR REPLACE MACRO __sdc_limited_ref() AS
    '(?i)\(select \* from ((?:"(?:[^"]|"")*"|[^."\s()]+)(?:[.](?:"(?:[^"]|"")*"|[^."\s()]+))*)'
    || '( where false)? limit ([0-9]+)\)';

-- What dbt's ref() renders for a relation filtered on its event time (`dbt build --sample`, a batch of
-- a microbatch model), as a regular expression: (select * from "db"."main"."events" where joined >=
-- '2024-01-01 00:00:00+00:00' and joined < '2024-01-02 00:00:00+00:00'), or with one bound. Group 1 is
-- the relation's name, groups 2 and 5 the event-time column, 3 its operator, 4 and 6 the bounds.
CREATE OR REPLACE MACRO __sdc_event_time_ref() AS
    '(?i)\(select \* from ((?:"(?:[^"]|"")*"|[^."\s()]+)(?:[.](?:"(?:[^"]|"")*"|[^."\s()]+))*) '
    || 'where ((?:"(?:[^"]|"")*"|[^."\s()'']+)) (>=|<) ''([^'']*)''(?: and ((?:"(?:[^"]|"")*"|[^."\s()'']+)) < ''([^'']*)'')?\)';

-- A table argument of a table form as a FROM item: a table name quoted by __sdc_qt_name, or, given
-- what ref() renders with a row limit (__sdc_limited_ref), that relation with that limit, or, given
-- what it renders for an event-time filter (__sdc_event_time_ref), that relation with that filter:
-- names quoted the same way, the bounds as literals, nothing else of the text used. Any other text
-- is a name.
CREATE OR REPLACE MACRO __sdc_qt(name) AS
    CASE WHEN regexp_full_match(name, __sdc_event_time_ref())
         THEN '(SELECT * FROM ' || __sdc_qt_name(regexp_extract(name, __sdc_event_time_ref(), 1))
              || ' WHERE ' || __sdc_qt_name(regexp_extract(name, __sdc_event_time_ref(), 2)) || ' '
              || regexp_extract(name, __sdc_event_time_ref(), 3) || ' '
              || __sdc_ql(regexp_extract(name, __sdc_event_time_ref(), 4))
              || CASE WHEN regexp_extract(name, __sdc_event_time_ref(), 5) = '' THEN ''
                      ELSE ' AND ' || __sdc_qt_name(regexp_extract(name, __sdc_event_time_ref(), 5)) || ' < '
                           || __sdc_ql(regexp_extract(name, __sdc_event_time_ref(), 6)) END
              || ')'
         WHEN regexp_full_match(name, __sdc_limited_ref())
         THEN '(SELECT * FROM ' || __sdc_qt_name(regexp_extract(name, __sdc_limited_ref(), 1))
              || CASE WHEN regexp_extract(name, __sdc_limited_ref(), 2) = '' THEN '' ELSE ' WHERE false' END
              || ' LIMIT ' || regexp_extract(name, __sdc_limited_ref(), 3) || ')'
         ELSE __sdc_qt_name(name)
    END;

-- A column name or a list of column names, as a list.
CREATE OR REPLACE MACRO __sdc_names(strata) AS
    CASE WHEN typeof(strata) = 'VARCHAR' THEN [strata::VARCHAR] ELSE strata::VARCHAR[] END;

-- The types typeof() gives a number, as a regular expression ("NULL" is the type of a NULL literal).
CREATE OR REPLACE MACRO __sdc_number_types() AS
    '(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|"NULL")';

-- Whether a value's type is numeric (folded at bind time).
CREATE OR REPLACE MACRO __sdc_is_number(v) AS
    regexp_full_match(typeof(v), __sdc_number_types());

-- The list argument (parameter `pname`) of a list function as DOUBLE[], or a clear error naming the
-- function and the parameter and saying what was `expected` (the kind's message, params.Data).
CREATE OR REPLACE MACRO __sdc_numeric_list(xs, fname, expected := NULL, pname := 'xs') AS
    CASE
        WHEN regexp_full_match(typeof(xs), __sdc_number_types() || '\[\]|"NULL"') THEN xs::DOUBLE[]
        ELSE error(fname || ': ' || coalesce(expected, pname || ' must be a list of numbers such as list(column) gives')
                   || ', got ' || typeof(xs))
    END;

-- A list of names as quoted identifiers separated by commas: "a", "b".
CREATE OR REPLACE MACRO __sdc_qi_list(names) AS
    array_to_string(list_transform(names, lambda __sdc_n: __sdc_qi(__sdc_n)), ', ');


-- ---------------------------------------------------------------------------------------------
-- Table forms. Every table form (mdav_round_table, idp_cbls_table, box_release_table, ...) builds
-- its SQL text with the macros below and runs it with query(). Its arguments are constants, so the
-- checks here run while the call is bound: a bad name is an error naming the table form and the
-- parameter, never a parser error about the generated text.

-- One name `v` (parameter `pname` of function `fname`) of `what` ('a table' or 'a column'), or an
-- error: the kind params.Name.
CREATE OR REPLACE MACRO __sdc_name(fname, pname, v, what) AS
    CASE
        WHEN v IS NULL THEN error(fname || ': ' || pname || ' must not be NULL')
        WHEN typeof(v) <> 'VARCHAR' THEN error(fname || ': ' || pname || ' must name ' || what || ', got ' || typeof(v))
        WHEN trim(v::VARCHAR) = '' THEN error(fname || ': ' || pname || ' must name ' || what || ', got ' || __sdc_ql(v))
        ELSE v::VARCHAR
    END;

CREATE OR REPLACE MACRO __sdc_table_name(fname, pname, tbl) AS __sdc_name(fname, pname, tbl, 'a table');
CREATE OR REPLACE MACRO __sdc_column_name(fname, pname, col) AS __sdc_name(fname, pname, col, 'a column');

-- A column name or a list of distinct column names (parameter `pname` of `fname`) as a list, or an
-- error; NULL stays NULL when `optional` (no strata). Names are compared as DuckDB does, ignoring case.
-- (list_transform([v], lambda x: ...)[1] binds v once: the table forms use it so that a checked value
-- is not expanded again wherever it is used, which made binding a table form ten times slower.)
CREATE OR REPLACE MACRO __sdc_column_names(fname, pname, names, optional := false) AS
    CASE
        WHEN names IS NULL AND optional THEN NULL::VARCHAR[]
        WHEN names IS NULL THEN error(fname || ': ' || pname || ' must not be NULL')
        WHEN NOT (typeof(names) = 'VARCHAR' OR typeof(names) = 'VARCHAR[]' OR typeof(names) = '"NULL"[]')
            THEN error(fname || ': ' || pname || ' must be a column name or a list of column names, got ' || typeof(names))
        ELSE list_transform([__sdc_names(names)], lambda __sdc_l:
            CASE
                WHEN len(__sdc_l) = 0 THEN error(fname || ': ' || pname || ' must name at least one column')
                WHEN list_count(__sdc_l) < len(__sdc_l) THEN error(fname || ': ' || pname || ' must not contain NULL')
                WHEN list_bool_or(list_transform(__sdc_l, lambda __sdc_n: trim(__sdc_n) = ''))
                    THEN error(fname || ': ' || pname || ' must name columns, got ' || __sdc_l::VARCHAR)
                WHEN len(list_distinct(list_transform(__sdc_l, lambda __sdc_n: lower(__sdc_n)))) < len(__sdc_l)
                    THEN error(fname || ': ' || pname || ' names column ' || __sdc_ql(list_filter(__sdc_l,
                               lambda __sdc_n, __sdc_i: list_position(list_transform(__sdc_l, lambda __sdc_m: lower(__sdc_m)),
                                                                      lower(__sdc_n)) < __sdc_i)[1]) || ' twice')
                ELSE __sdc_l
            END)[1]
    END;

-- SQL text of a query that binds the columns `names` of `tbl` on their own, under the alias
-- "<fname>: <pname> of table <tbl>": a missing column is then reported by DuckDB as 'Table
-- "mdav_round_table: col of table people" does not have a column named "x"', naming the function, the
-- parameter and the table. NULL for no names. (A missing table is DuckDB's own catalog error, pointing
-- at the call: the arguments of query() cannot look the catalog up.)
CREATE OR REPLACE MACRO __sdc_columns_exist_sql(fname, pname, tbl, names) AS
    CASE WHEN names IS NULL OR len(names) = 0 THEN NULL
         ELSE format('SELECT 1 FROM (SELECT {0} FROM {1} AS {2} LIMIT 0)',
                     array_to_string(list_transform(names, lambda __sdc_n:
                         __sdc_qi(fname || ': ' || pname || ' of table ' || tbl) || '.' || __sdc_qi(__sdc_n)), ', '),
                     __sdc_qt(tbl), __sdc_qi(fname || ': ' || pname || ' of table ' || tbl))
    END;

-- SQL text of a query that refuses a table with a column whose name starts with __sdc_, naming `fname`:
-- such a column would take the place of an internal one (a column named __sdc_v came back raw in the
-- masked column's place). The table forms leave such columns out of the rows, so that this refusal,
-- not a binder error about an internal column, is what the caller sees.
CREATE OR REPLACE MACRO __sdc_no_reserved_sql(fname, tbl) AS
    format('SELECT CASE WHEN count(*) > 0 THEN error({1} || first(column_name) || {2}) ELSE 1 END '
           || 'FROM (DESCRIBE SELECT * FROM {0}) WHERE starts_with(lower(column_name), ''__sdc_'')',
           __sdc_qt(tbl), __sdc_ql(fname || ': table ' || tbl || ' has a column named '''),
           __sdc_ql('''; names starting with __sdc_ are reserved for duckdb_sdc''s internal columns: rename it'));

-- SQL text of a check (for __sdc_checks_sql) that refuses a table `tbl` with a column named like one of
-- `names` (ignoring case), which function `fname` adds: its own would come back beside it renamed
-- (sample_fk_1), and a caller reading the old name would read the old values.
CREATE OR REPLACE MACRO __sdc_no_column_sql(fname, tbl, names) AS
    format('SELECT CASE WHEN count(*) > 0 THEN error({1} || first(column_name) || {2}) ELSE 1 END '
           || 'FROM (DESCRIBE SELECT * FROM {0}) WHERE lower(column_name) IN ({3})',
           __sdc_qt(tbl), __sdc_ql(fname || ': table ' || tbl || ' has a column named '),
           __sdc_ql(', a name ' || fname || ' gives a column of its own: rename it'),
           array_to_string(list_transform(names, lambda __sdc_c: __sdc_ql(lower(__sdc_c))), ', '));

-- SQL text of the first FROM item (followed by a comma) of a table form: one row, bound before the
-- table, made of the checks `checks` (texts of queries such as __sdc_columns_exist_sql gives; NULLs
-- ignored), each bound on its own (the branches of a UNION ALL), so that a missing column is reported
-- as such.
CREATE OR REPLACE MACRO __sdc_checks_sql(checks) AS
    '(SELECT count(*) AS __sdc_n FROM (' || array_to_string(list_filter(checks, lambda __sdc_q: __sdc_q IS NOT NULL),
                                                             ' UNION ALL ') || ')) AS __sdc_check, ';

-- A value of a table form's column as DOUBLE, or an error naming the column: not numeric, NaN or
-- infinite. NULL stays NULL.
CREATE OR REPLACE MACRO __sdc_table_value(v, fname, col) AS
    CASE
        WHEN NOT __sdc_is_number(v) THEN error(fname || ': column ' || col || ' must be numeric, got ' || typeof(v))
        WHEN NOT isfinite(v::DOUBLE)
            THEN error(fname || ': column ' || col || ' contains ' || v::DOUBLE
                       || '; NaN and infinite values are refused (use NULL for a missing value)')
        ELSE v::DOUBLE
    END;

-- SQL of a stratum's value of column `col` for table form `fname`, over a row struct __sdc_s.
CREATE OR REPLACE MACRO __sdc_value_of_sql(fname, col) AS
    format('__sdc_table_value(__sdc_s.{0}, {1}, {2})', __sdc_qi(col), __sdc_ql(fname), __sdc_ql(col));

-- SQL of a stratum's records [a, b, ...] of the columns `names` for table form `fname`.
CREATE OR REPLACE MACRO __sdc_record_of_sql(fname, names) AS
    '[' || array_to_string(list_transform(names, lambda __sdc_c: __sdc_value_of_sql(fname, __sdc_c)), ', ') || ']';

-- SQL of the seed argument of stratum __sdc_i of column `col`: NULL, or the seed derived in Python
-- by __sdc_stratum_seed (duckdb_sdc.params.stratum_seed), which also checks the seed.
CREATE OR REPLACE MACRO __sdc_seed_sql(fname, seed, col) AS
    CASE WHEN seed IS NULL THEN 'NULL'
         ELSE format('__sdc_stratum_seed({0}, {1}, {2}, __sdc_i)::VARCHAR', __sdc_ql(fname), __sdc_ql(seed), __sdc_ql(col))
    END;

-- SQL of one select item: the list function `method` (its UDF, reporting errors as `fname`) applied
-- to the list of the SQL expression `elem` over every row __sdc_s of the stratum, with the quoted
-- literal arguments `args` (texts) and then the SQL texts `more`, unnested as `alias`.
CREATE OR REPLACE MACRO __sdc_call_sql(fname, method, elem, args, more, alias) AS
    format('unnest(__sdc_{0}({1}, list_transform(__sdc_l, lambda __sdc_s: {2}){3})) AS {4}',
           method, __sdc_ql(fname), elem,
           array_to_string(list_transform(list_transform(args, lambda __sdc_a: __sdc_ql(__sdc_a)) || more,
                                          lambda __sdc_x: ', ' || __sdc_x), ''),
           alias);

-- SQL text of the rows of table `tbl` beside results computed per stratum. Each stratum's whole rows
-- go into one list of structs __sdc_l, ordered by their whole content (so a stratum's values reach
-- the method in the same order whatever DuckDB's threads and scan order), with its number __sdc_i
-- (from 0 in the ascending order of the strata values, NULLS LAST; 0 without strata); the select items
-- `vs` (SQL over __sdc_l and __sdc_i, such as __sdc_call_sql gives) are unnested beside the rows, which
-- keeps them aligned without a key or a join. The list is unnested one level into row structs, and each
-- struct one level into columns, so LIST and STRUCT columns come back as they were. The columns `names`
-- (parameter `pname`) and the strata are bound on their own first, so that a missing one is reported
-- as such (see __sdc_columns_exist_sql), and a column named __sdc_... is refused
-- (__sdc_no_reserved_sql); so are the checks `also` (such queries, bound before them). With strata, the
-- rows come through __sdc_pooled_source_sql: small strata are refused or pooled as `pool`
-- (__sdc_small_strata) says, before any stratum is masked.
CREATE OR REPLACE MACRO __sdc_beside_sql(fname, tbl, pname, names, vs, strata, pool := NULL, also := NULL) AS
    format(
        'SELECT unnest(__sdc_r), * EXCLUDE (__sdc_r) FROM ('
        || 'SELECT unnest(__sdc_l) AS __sdc_r, {1} '
        || 'FROM (SELECT list(__sdc_src ORDER BY __sdc_src) AS __sdc_l, {2} AS __sdc_i FROM {3}'
        || '{5} AS __sdc_src '
        || '{4}))',
        __sdc_qt(tbl),
        vs,
        CASE WHEN strata IS NULL THEN '0'
             ELSE 'row_number() OVER (ORDER BY '
                  || array_to_string(list_transform(strata, lambda __sdc_c: __sdc_qi(__sdc_c) || ' ASC NULLS LAST'), ', ')
                  || ') - 1'
        END,
        __sdc_checks_sql(coalesce(also, []::VARCHAR[])
                         || [__sdc_columns_exist_sql(fname, pname, tbl, names),
                             __sdc_columns_exist_sql(fname, 'strata', tbl, strata), __sdc_no_reserved_sql(fname, tbl)]),
        CASE WHEN strata IS NULL THEN '' ELSE 'GROUP BY ' || __sdc_qi_list(strata) END,
        CASE WHEN strata IS NULL
             THEN '(SELECT COLUMNS(lambda __sdc_c: NOT starts_with(lower(__sdc_c), ''__sdc_'')) FROM ' || __sdc_qt(tbl) || ')'
                  || coalesce(left(pool.how, 0), '')  -- checks small_strata and rest_stratum without strata too
             ELSE __sdc_pooled_source_sql(fname, tbl, strata, pool)
        END);

-- __sdc_mask_column_sql on checked names (`fname` the table form): every argument that may be NULL
-- (strata, seed) is read through a CASE, since a function of a NULL constant folds to NULL. `more`:
-- SQL texts of arguments after the seed (the weighted forms' weights); `also`: checks bound first.
CREATE OR REPLACE MACRO __sdc_mask_column_checked_sql(fname, method, tbl, col, args, strata, seeded, seed, pool := NULL,
                                                      more := NULL, also := NULL) AS
    format('SELECT * EXCLUDE (__sdc_v) REPLACE (__sdc_v AS {0}) FROM ({1})',
           __sdc_qi(col),
           __sdc_beside_sql(fname, tbl, 'col', [col],
                            __sdc_call_sql(fname, method, __sdc_value_of_sql(fname, col), args,
                                           CASE WHEN seeded THEN [__sdc_seed_sql(fname, seed, col)]
                                                ELSE []::VARCHAR[] END || coalesce(more, []::VARCHAR[]),
                                           '__sdc_v'),
                            strata, pool := pool, also := also));

-- SQL text of the table form of a univariate list function `method` (`<method>_table`): column `col`
-- of `tbl` masked in place (called with the literal arguments `args`, then, when `seeded`, the seed
-- derived for each stratum), optionally per stratum. The names are checked first and bound once
-- (a NULL name must fail, not fold the text into NULL).
CREATE OR REPLACE MACRO __sdc_mask_column_sql(method, tbl, col, args, strata, seeded := false, seed := NULL,
                                              small_strata := 'refuse', rest_stratum := NULL) AS
    list_transform([__sdc_table_name(method || '_table', 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_name(method || '_table', 'col', col)], lambda __sdc_c:
    list_transform([__sdc_column_names(method || '_table', 'strata', strata, optional := true)], lambda __sdc_g:
        __sdc_mask_column_checked_sql(method || '_table', method, __sdc_t, __sdc_c, args, __sdc_g, seeded, seed,
            pool := __sdc_small_strata(method || '_table', method, args, [[__sdc_c]], small_strata, rest_stratum))
    )[1])[1])[1];

-- SQL of the rows of `tbl` beside the multivariate list function's result __sdc_v, which is
-- method(records of the checked columns `names`, args...) per stratum (then, when `seeded`, the seed
-- derived for each stratum and the first column of `names`; then the SQL texts `more`, after checks
-- `also` as __sdc_beside_sql binds them); errors name table form `fname`.
CREATE OR REPLACE MACRO __sdc_rows_beside_sql(fname, method, tbl, names, args, strata, seeded := false, seed := NULL,
                                               small_strata := 'refuse', rest_stratum := NULL,
                                               more := NULL, also := NULL) AS
    list_transform([__sdc_table_name(fname, 'tbl', tbl)], lambda __sdc_t:
    list_transform([__sdc_column_names(fname, 'strata', strata, optional := true)], lambda __sdc_g:
        __sdc_beside_sql(fname, __sdc_t, 'cols', names,
                         __sdc_call_sql(fname, method, __sdc_record_of_sql(fname, names), args,
                                        CASE WHEN seeded THEN [__sdc_seed_sql(fname, seed, names[1])]
                                             ELSE []::VARCHAR[] END || coalesce(more, []::VARCHAR[]),
                                        '__sdc_v'),
                         __sdc_g, pool := __sdc_small_strata(fname, method, args, [names], small_strata, rest_stratum),
                         also := also)
    )[1])[1];

-- SQL text of the table form that masks the columns `cols` of `tbl` in place with the multivariate
-- list function `method` (a record with a NULL in any of them gets NULL in all of them); a seeded
-- method gets the seed derived for each stratum and the first column of `cols`.
CREATE OR REPLACE MACRO __sdc_mask_columns_sql(method, tbl, cols, args, strata, seeded := false, seed := NULL,
                                                small_strata := 'refuse', rest_stratum := NULL,
                                                more := NULL, also := NULL) AS
    list_transform([__sdc_column_names(method || '_table', 'cols', cols)], lambda __sdc_cs:
        format('SELECT * EXCLUDE (__sdc_v) REPLACE ({1}) FROM ({0})',
               __sdc_rows_beside_sql(method || '_table', method, tbl, __sdc_cs, args, strata, seeded := seeded,
                                     seed := seed, small_strata := small_strata, rest_stratum := rest_stratum,
                                     more := more, also := also),
               array_to_string(list_transform(__sdc_cs, lambda __sdc_c, __sdc_j:
                                              '__sdc_v[' || __sdc_j || '] AS ' || __sdc_qi(__sdc_c)), ', '))
    )[1];

-- SQL text of the table form that adds the cluster id of the labels function `method` as column
-- `label_col` (replacing a column of that name, if any).
CREATE OR REPLACE MACRO __sdc_label_columns_sql(method, tbl, cols, args, strata, label_col,
                                                 small_strata := 'refuse', rest_stratum := NULL) AS
    list_transform([__sdc_column_names(method || '_table', 'cols', cols)], lambda __sdc_cs:
    list_transform([__sdc_column_name(method || '_table', 'label_col', label_col)], lambda __sdc_lc:
        format('SELECT COLUMNS(lambda __sdc_c: __sdc_c NOT IN (''__sdc_v'', {1})), __sdc_v AS {2} FROM ({0})',
               __sdc_rows_beside_sql(method || '_table', method, tbl, __sdc_cs, args, strata,
                                     small_strata := small_strata, rest_stratum := rest_stratum),
               __sdc_ql(__sdc_lc), __sdc_qi(__sdc_lc))
    )[1])[1];

-- ---------------------------------------------------------------------------------------------
-- The parameter kinds (duckdb_sdc.params) for the pure-SQL functions: the same rules and messages as
-- the kinds' Python checks. A pure-SQL macro hands its arguments through these.

-- A value as a message shows it: text quoted, numbers bare, NULL as NULL.
CREATE OR REPLACE MACRO __sdc_shown(v) AS
    CASE WHEN v IS NULL THEN 'NULL'
         WHEN typeof(v) = 'VARCHAR' AND TRY_CAST(v AS DOUBLE) IS NULL THEN __sdc_ql(v)
         ELSE v::VARCHAR
    END;

-- A data value (an aggregate's argument) as DOUBLE: numeric and finite, else an error naming the
-- function and the parameter (DOUBLE also for a wrong type, so that what follows binds and the error,
-- not a binder error, is what the caller sees); NULL stays NULL.
CREATE OR REPLACE MACRO __sdc_check_value(v, fname, pname) AS
    CASE WHEN NOT __sdc_is_number(v) THEN error(fname || ': ' || pname || ' must be numbers, got ' || typeof(v))
         WHEN NOT isfinite(TRY_CAST(v AS DOUBLE))
             THEN error(fname || ': ' || pname || ' contains ' || TRY_CAST(v AS DOUBLE)
                        || '; NaN and infinite values are refused (use NULL for a missing value)')
         ELSE TRY_CAST(v AS DOUBLE)
    END;

-- An integer parameter >= minimum (kind Integer).
CREATE OR REPLACE MACRO __sdc_check_integer(v, fname, pname, minimum) AS
    CASE WHEN v IS NULL THEN error(fname || ': ' || pname || ' must not be NULL')
         WHEN NOT isfinite(TRY_CAST(v AS DOUBLE)) OR TRY_CAST(v AS DOUBLE) IS NULL
              OR TRY_CAST(v AS DOUBLE) != floor(TRY_CAST(v AS DOUBLE))
             THEN error(fname || ': ' || pname || ' must be an integer, got ' || __sdc_shown(v))
         WHEN TRY_CAST(v AS DOUBLE) < minimum
             THEN error(fname || ': ' || pname || ' must be an integer >= ' || minimum || ', got ' || __sdc_shown(v))
         ELSE TRY_CAST(v AS DOUBLE)::BIGINT
    END;

-- A bound as the kinds' messages show it: an integral value without decimals (0, 1000000), else as
-- DuckDB prints it (0.5).
CREATE OR REPLACE MACRO __sdc_num(v) AS
    CASE WHEN v = floor(v) AND abs(v) < 1e15 THEN v::BIGINT::VARCHAR ELSE v::DOUBLE::VARCHAR END;

-- A finite number > lower (kind Number with an open lower bound), <= upper unless upper is NULL.
CREATE OR REPLACE MACRO __sdc_check_number(v, fname, pname, lower, upper) AS
    CASE WHEN v IS NULL THEN error(fname || ': ' || pname || ' must not be NULL')
         WHEN TRY_CAST(v AS DOUBLE) IS NULL THEN error(fname || ': ' || pname || ' must be a number, got ' || __sdc_shown(v))
         WHEN NOT isfinite(TRY_CAST(v AS DOUBLE)) OR NOT TRY_CAST(v AS DOUBLE) > lower
              OR (upper IS NOT NULL AND TRY_CAST(v AS DOUBLE) > upper)
             THEN error(fname || ': ' || pname || ' must be '
                        || CASE WHEN upper IS NULL THEN 'a finite number > ' || __sdc_num(lower)
                                ELSE 'in (' || __sdc_num(lower) || ', ' || __sdc_num(upper) || ']' END
                        || ', got ' || __sdc_shown(v))
         ELSE TRY_CAST(v AS DOUBLE)
    END;

-- A boolean switch (kind Flag).
CREATE OR REPLACE MACRO __sdc_check_flag(v, fname, pname) AS
    CASE WHEN v IS NULL THEN error(fname || ': ' || pname || ' must not be NULL')
         WHEN TRY_CAST(v AS BOOLEAN) IS NULL
             THEN error(fname || ': ' || pname || ' must be true or false, got ' || __sdc_shown(v))
         ELSE TRY_CAST(v AS BOOLEAN)
    END;

-- ---------------------------------------------------------------------------------------------
-- Small strata (duckdb_sdc.strata, docs/releases/small-strata.md): a table form with strata counts
-- each stratum's records before masking; a stratum with fewer than the method needs is refused
-- (small_strata 'refuse', naming it, its size and the k) or pooled ('nearest', 'rest'), and pooled
-- records carry the pool's strata values in the result.

-- The pooling setting of table form `fname` masking with `method` and its text arguments `args`;
-- `needs` lists, per masked column or group, the columns whose non-NULL records count. Checks
-- small_strata and rest_stratum as the kinds do (duckdb_sdc.params.SMALL_STRATA, REST_STRATUM).
CREATE OR REPLACE MACRO __sdc_small_strata(fname, method, args, needs, small_strata, rest_stratum) AS
    CASE
        WHEN small_strata IS NULL THEN error(fname || ': small_strata must not be NULL')
        WHEN lower(trim(small_strata::VARCHAR)) NOT IN ('refuse', 'nearest', 'rest')
            THEN error(fname || ': small_strata must be one of ''refuse'', ''nearest'', ''rest'', got '
                       || __sdc_shown(small_strata))
        WHEN rest_stratum IS NOT NULL AND NOT (typeof(rest_stratum) = 'VARCHAR' OR typeof(rest_stratum) = 'VARCHAR[]'
                                               OR typeof(rest_stratum) = '"NULL"[]')
            THEN error(fname || ': rest_stratum must be a text or a non-empty list of texts (one per strata column), got '
                       || typeof(rest_stratum))
        WHEN rest_stratum IS NOT NULL AND (len(__sdc_names(rest_stratum)) = 0
                                           OR list_count(__sdc_names(rest_stratum)) < len(__sdc_names(rest_stratum)))
            THEN error(fname || ': rest_stratum must be a text or a non-empty list of texts (one per strata column), got '
                       || __sdc_names(rest_stratum)::VARCHAR)
        WHEN lower(trim(small_strata::VARCHAR)) = 'rest' AND rest_stratum IS NULL
            THEN error(fname || ': rest_stratum must name the rest stratum when small_strata = ''rest''')
        WHEN lower(trim(small_strata::VARCHAR)) <> 'rest' AND rest_stratum IS NOT NULL
            THEN error(fname || ': rest_stratum is only used with small_strata = ''rest'', got small_strata = '
                       || __sdc_shown(small_strata))
        ELSE {'method': method, 'args': args::VARCHAR[], 'needs': needs::VARCHAR[][],
              'how': lower(trim(small_strata::VARCHAR)),
              'rest': CASE WHEN rest_stratum IS NULL THEN NULL::VARCHAR[] ELSE __sdc_names(rest_stratum) END}
    END;

-- SQL text of a relation: the rows of `tbl` (without columns named __sdc_...) with their strata
-- columns recoded to the values of their pool, by the decision of __sdc_pool_strata
-- (duckdb_sdc.strata.pool) on the strata numbered in ascending order (NULLS LAST), which refuses a
-- small stratum with 'refuse' (the masking reads the recoded rows, so it runs after the decision).
CREATE OR REPLACE MACRO __sdc_pooled_source_sql(fname, tbl, strata, pool) AS
    format('(SELECT __sdc_t.* REPLACE ({0}) FROM (SELECT COLUMNS(lambda __sdc_c: NOT starts_with(lower(__sdc_c), '
           || '''__sdc_'')) FROM {1}) AS __sdc_t JOIN (WITH __sdc_c AS MATERIALIZED (SELECT {2}, '
           || 'row_number() OVER (ORDER BY {3}) - 1 AS __sdc_i, count(*) AS __sdc_rows, [{4}] AS __sdc_n, '
           || '{5} AS __sdc_label, {6} AS __sdc_is_rest, [{7}] AS __sdc_types FROM {1} GROUP BY {8}), '
           || '__sdc_d AS MATERIALIZED (SELECT __sdc_pool_strata({9}, list(__sdc_label ORDER BY __sdc_i), '
           || 'list(__sdc_is_rest ORDER BY __sdc_i), list(__sdc_rows ORDER BY __sdc_i), list(__sdc_n ORDER BY __sdc_i), '
           || 'first(__sdc_types)) AS __sdc_to FROM __sdc_c) '
           || 'SELECT {10}, {11} FROM __sdc_c AS __sdc_a CROSS JOIN __sdc_d '
           || 'LEFT JOIN __sdc_c AS __sdc_b ON __sdc_b.__sdc_i = __sdc_d.__sdc_to[__sdc_a.__sdc_i + 1]) AS __sdc_m ON {12})',
           array_to_string(list_transform(strata, lambda __sdc_s, __sdc_j:
               '__sdc_m.__sdc_g' || __sdc_j || ' AS ' || __sdc_qi(__sdc_s)), ', '),
           __sdc_qt(tbl),
           array_to_string(list_transform(strata, lambda __sdc_s, __sdc_j:
               __sdc_qi(__sdc_s) || ' AS __sdc_o' || __sdc_j), ', '),
           array_to_string(list_transform(strata, lambda __sdc_s: __sdc_qi(__sdc_s) || ' ASC NULLS LAST'), ', '),
           array_to_string(list_transform(pool.needs, lambda __sdc_n:
               'count(*) FILTER (WHERE ' || array_to_string(list_transform(__sdc_n, lambda __sdc_c:
                   __sdc_qi(__sdc_c) || ' IS NOT NULL'), ' AND ') || ')'), ', '),
           array_to_string(list_transform(strata, lambda __sdc_s:
               __sdc_ql(__sdc_s || ' = ') || ' || __sdc_ql(' || __sdc_qi(__sdc_s) || '::VARCHAR)'), ' || '', '' || '),
           CASE WHEN pool.rest IS NULL THEN 'false'
                ELSE '(' || array_to_string(list_transform(strata, lambda __sdc_s, __sdc_j:
                          __sdc_qi(__sdc_s) || '::VARCHAR IS NOT DISTINCT FROM ' || __sdc_ql(pool.rest[__sdc_j])),
                          ' AND ') || ')' END,
           array_to_string(list_transform(strata, lambda __sdc_s: 'typeof(any_value(' || __sdc_qi(__sdc_s) || '))'), ', '),
           __sdc_qi_list(strata),
           array_to_string([__sdc_ql(fname), __sdc_ql(pool.method),
                            '[' || array_to_string(list_transform(pool.args, lambda __sdc_a: __sdc_ql(__sdc_a)), ', ') || ']::VARCHAR[]',
                            __sdc_ql(to_json(pool.needs)::VARCHAR), __sdc_ql(pool.how),
                            __sdc_ql(to_json(pool.rest)::VARCHAR) || '::VARCHAR', __sdc_ql(to_json(strata)::VARCHAR)], ', '),
           array_to_string(list_transform(strata, lambda __sdc_s, __sdc_j: '__sdc_a.__sdc_o' || __sdc_j), ', '),
           array_to_string(list_transform(strata, lambda __sdc_s, __sdc_j:
               CASE WHEN pool.rest IS NULL THEN '__sdc_b.__sdc_o' || __sdc_j
                    ELSE 'CASE WHEN __sdc_d.__sdc_to[__sdc_a.__sdc_i + 1] = -1 THEN ' || __sdc_ql(pool.rest[__sdc_j])
                         || ' ELSE __sdc_b.__sdc_o' || __sdc_j || '::VARCHAR END' END
               || ' AS __sdc_g' || __sdc_j), ', '),
           array_to_string(list_transform(strata, lambda __sdc_s, __sdc_j:
               '__sdc_t.' || __sdc_qi(__sdc_s) || ' IS NOT DISTINCT FROM __sdc_m.__sdc_o' || __sdc_j), ' AND '));
