-- duckdb_sdc internal helper macros (names start with __sdc_; not part of the public reference).
-- Pure SQL: they work in a plain DuckDB shell after `.read`, and duckdb_sdc.register(con) installs
-- them as TEMP macros.

-- Quote an identifier: "a""b" for a"b.
CREATE OR REPLACE MACRO __sdc_qi(name) AS '"' || replace(name, '"', '""') || '"';

-- Quote a possibly qualified table name ('db.schema.table'), part by part.
CREATE OR REPLACE MACRO __sdc_qt(name) AS
    array_to_string(list_transform(string_split(name, '.'), lambda part: __sdc_qi(part)), '.');

-- Quote a string literal; NULL becomes the keyword NULL.
CREATE OR REPLACE MACRO __sdc_ql(s) AS
    coalesce('''' || replace(s::VARCHAR, '''', '''''') || '''', 'NULL');

-- A column name or a list of column names, as a list.
CREATE OR REPLACE MACRO __sdc_names(strata) AS
    CASE WHEN typeof(strata) = 'VARCHAR' THEN [strata::VARCHAR] ELSE strata::VARCHAR[] END;

-- The list argument of a list function as DOUBLE[], or a clear error naming the function.
CREATE OR REPLACE MACRO __sdc_numeric_list(xs, fname) AS
    CASE
        WHEN regexp_full_match(typeof(xs),
            '(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|"NULL")\[\]|"NULL"')
            THEN xs::DOUBLE[]
        ELSE error(fname || ': xs must be a list of numbers such as list(column) gives, got ' || typeof(xs))
    END;

-- SQL text of the table form: mask column `col` of table `tbl` in place with the list function
-- `fname` (called with the quoted literal arguments `args`), optionally per stratum. Whole rows go
-- into one list of structs per stratum; unnesting it beside the masked list keeps them aligned, so
-- no key and no join are needed. The list is unnested one level into row structs, and each struct
-- one level into columns, so LIST and STRUCT columns of the table come back as they were.
CREATE OR REPLACE MACRO __sdc_mask_column_sql(fname, tbl, col, args, strata) AS
    format(
        'SELECT * EXCLUDE (__sdc_v) REPLACE (__sdc_v AS {2}) FROM ('
        || 'SELECT unnest(__sdc_r), * EXCLUDE (__sdc_r) FROM ('
        || 'SELECT unnest(__sdc_l) AS __sdc_r, '
        || 'unnest({1}(list_transform(__sdc_l, lambda __sdc_s: __sdc_s.{2}){3})) AS __sdc_v '
        || 'FROM (SELECT list(__sdc_src) AS __sdc_l FROM {0} AS __sdc_src '
        -- binds col on its own first, so a missing column is reported as such
        || 'WHERE (SELECT 1 FROM (SELECT {2} FROM {0} LIMIT 0)) IS NULL {4})))',
        __sdc_qt(tbl),
        fname,
        __sdc_qi(col),
        array_to_string(list_transform(args, lambda a: ', ' || __sdc_ql(a)), ''),
        CASE WHEN strata IS NULL THEN ''
             ELSE 'GROUP BY ' || array_to_string(list_transform(__sdc_names(strata), lambda c: __sdc_qi(c)), ', ')
        END);
