-- duckdb_sdc internal helper macros (names start with __sdc_; not part of the public reference).
-- Pure SQL: they work in a plain DuckDB shell after `.read`, and duckdb_sdc.register(con) installs
-- them as TEMP macros.

-- Quote an identifier: "a""b" for a"b.
CREATE OR REPLACE MACRO __sdc_qi(name) AS '"' || replace(name, '"', '""') || '"';

-- Quote a possibly qualified table name ('db.schema.table'), part by part. Parts may come quoted, as
-- dbt's ref() renders them ('"db"."main"."people"'; inside quotes a dot is part of the name and ""
-- is a quote): such a name is split at the dots between parts and each part unquoted, then quoted.
CREATE OR REPLACE MACRO __sdc_qt(name) AS
    CASE WHEN contains(name, '"') AND regexp_full_match(name, '("([^"]|"")*"|[^."]+)([.]("([^"]|"")*"|[^."]+))*')
         THEN array_to_string(list_transform(regexp_extract_all(name, '"(?:[^"]|"")*"|[^."]+'),
                  lambda part: __sdc_qi(CASE WHEN starts_with(part, '"') THEN replace(part[2:-2], '""', '"')
                                             ELSE part END)), '.')
         ELSE array_to_string(list_transform(string_split(name, '.'), lambda part: __sdc_qi(part)), '.')
    END;

-- Quote a string literal; NULL becomes the keyword NULL.
CREATE OR REPLACE MACRO __sdc_ql(s) AS
    coalesce('''' || replace(s::VARCHAR, '''', '''''') || '''', 'NULL');

-- A column name or a list of column names, as a list.
CREATE OR REPLACE MACRO __sdc_names(strata) AS
    CASE WHEN typeof(strata) = 'VARCHAR' THEN [strata::VARCHAR] ELSE strata::VARCHAR[] END;

-- The types typeof() gives a number, as a regular expression ("NULL" is the type of a NULL literal).
CREATE OR REPLACE MACRO __sdc_number_types() AS
    '(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|"NULL")';

-- Whether a value's type is numeric (folded at bind time).
CREATE OR REPLACE MACRO __sdc_is_number(v) AS
    regexp_full_match(typeof(v), __sdc_number_types());

-- The list argument of a list function as DOUBLE[], or a clear error naming the function and saying
-- what was `expected`.
CREATE OR REPLACE MACRO __sdc_numeric_list(xs, fname,
                                           expected := 'xs must be a list of numbers such as list(column) gives') AS
    CASE
        WHEN regexp_full_match(typeof(xs), __sdc_number_types() || '\[\]|"NULL"') THEN xs::DOUBLE[]
        ELSE error(fname || ': ' || expected || ', got ' || typeof(xs))
    END;

-- A list of names as quoted identifiers separated by commas: "a", "b".
CREATE OR REPLACE MACRO __sdc_qi_list(names) AS
    array_to_string(list_transform(names, lambda __sdc_n: __sdc_qi(__sdc_n)), ', ');

-- SQL of one select item beside the rows of a stratum (see __sdc_beside_sql): the list function `fname`
-- applied to the list of the SQL expression `elem` of every row __sdc_s, followed by the arguments
-- `args` (SQL texts), and its result unnested as `alias`.
CREATE OR REPLACE MACRO __sdc_unnest_call_sql(fname, elem, args, alias) AS
    format('unnest({0}(list_transform(__sdc_l, lambda __sdc_s: {1}){2})) AS {3}',
           fname, elem, array_to_string(list_transform(args, lambda __sdc_x: ', ' || __sdc_x), ''), alias);

-- SQL text of the rows of table `tbl` beside results computed per stratum: whole rows go into one
-- list of structs __sdc_l per stratum, and the select items `vs` (SQL over __sdc_l, such as
-- __sdc_unnest_call_sql gives) are unnested beside it; that keeps them aligned, so no key and no
-- join are needed. The list is unnested one level into row structs, and each struct one level into
-- columns, so LIST and STRUCT columns of the table come back as they were. The columns `names` are
-- bound on their own first, so a missing column is reported as such. With `sorted` each stratum's
-- rows are listed in the order of their whole content; with `hashed` the stratum's hash (0 without
-- strata) comes along as __sdc_h. A table with a column whose name starts with __sdc_ is refused,
-- naming `fname`: such a column would take the place of an internal one (a column named __sdc_v came
-- back raw in the masked column's place); it is left out of the rows, so that the refusal, not a
-- binder error about an internal column, is what the caller sees.
CREATE OR REPLACE MACRO __sdc_beside_sql(tbl, names, vs, strata, sorted := false, hashed := false,
                                         fname := 'duckdb_sdc') AS
    format(
        'SELECT unnest(__sdc_r), * EXCLUDE (__sdc_r) FROM ('
        || 'SELECT unnest(__sdc_l) AS __sdc_r, {1} '
        || 'FROM (SELECT list(__sdc_src{2}) AS __sdc_l{3} '
        || 'FROM (SELECT COLUMNS(lambda __sdc_c: NOT starts_with(lower(__sdc_c), ''__sdc_'')) FROM {0}) AS __sdc_src '
        || 'WHERE (SELECT 1 FROM (SELECT {4} FROM {0} LIMIT 0)) IS NULL '
        || 'AND (SELECT CASE WHEN count(*) > 0 THEN error({6} || first(column_name) || {7}) END '
        || 'FROM (DESCRIBE SELECT * FROM {0}) WHERE starts_with(lower(column_name), ''__sdc_'')) IS NULL {5}))',
        __sdc_qt(tbl),
        vs,
        CASE WHEN sorted THEN ' ORDER BY __sdc_src' ELSE '' END,
        CASE WHEN NOT hashed THEN ''
             WHEN strata IS NULL THEN ', 0 AS __sdc_h'
             ELSE ', hash(' || __sdc_qi_list(__sdc_names(strata)) || ') AS __sdc_h'
        END,
        __sdc_qi_list(names),
        CASE WHEN strata IS NULL THEN '' ELSE 'GROUP BY ' || __sdc_qi_list(__sdc_names(strata)) END,
        __sdc_ql(fname || ': table ' || tbl || ' has a column named '''),
        __sdc_ql('''; names starting with __sdc_ are reserved for duckdb_sdc''s internal columns: rename it'));

-- SQL text of the table form: mask column `col` of table `tbl` in place with the list function
-- `fname` (called with the quoted literal arguments `args`), optionally per stratum.
CREATE OR REPLACE MACRO __sdc_mask_column_sql(fname, tbl, col, args, strata) AS
    format('SELECT * EXCLUDE (__sdc_v) REPLACE (__sdc_v AS {0}) FROM ({1})',
           __sdc_qi(col),
           __sdc_beside_sql(tbl, [col],
                            __sdc_unnest_call_sql(fname, '__sdc_s.' || __sdc_qi(col),
                                                  list_transform(args, lambda a: __sdc_ql(a)), '__sdc_v'),
                            strata, fname := fname || '_table'));
