-- duckdb_sdc internal helpers of the multivariate list functions, whose records come as one list of
-- equally long numeric vectors per group: rows DOUBLE[][] (e.g. list([a, b, c])).

-- The rows argument as DOUBLE[][], or a clear error naming the function.
CREATE OR REPLACE MACRO __sdc_numeric_rows(rows, fname) AS
    CASE
        WHEN regexp_full_match(typeof(rows), __sdc_number_types() || '\[\d*\]\[\]|"NULL"\[\]|"NULL"')
            THEN rows::DOUBLE[][]
        ELSE error(fname || ': rows must be a list of numeric lists, one per record, such as list([a, b, c]) gives, got '
                   || typeof(rows))
    END;

-- A list of cluster ids aligned with the records, as BIGINT[], or a clear error.
CREATE OR REPLACE MACRO __sdc_integer_list(xs, fname, pname) AS
    CASE
        WHEN regexp_full_match(typeof(xs), '(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|"NULL")\[\]|"NULL"')
            THEN xs::BIGINT[]
        ELSE error(fname || ': ' || pname || ' must be a list of integer cluster ids such as mdav_multi_labels gives, got '
                   || typeof(xs))
    END;

-- An attribute of a table form's record as DOUBLE, or a clear error naming the column.
CREATE OR REPLACE MACRO __sdc_numeric_attribute(v, fname, col) AS
    CASE
        WHEN __sdc_is_number(v) THEN v::DOUBLE
        ELSE error(fname || '_table: column ' || col || ' must be numeric, got ' || typeof(v))
    END;

-- SQL of the records of a table form: [__sdc_numeric_attribute(__sdc_s."a", ...), ...] of the named columns.
CREATE OR REPLACE MACRO __sdc_record_of(fname, names) AS
    '[' || array_to_string(list_transform(names, lambda c: format('__sdc_numeric_attribute(__sdc_s.{0}, {1}, {2})',
                                                                   __sdc_qi(c), __sdc_ql(fname), __sdc_ql(c))), ', ')
    || ']';

-- SQL of the rows of `tbl` beside the multivariate function's result __sdc_v, which is fname(records,
-- args...) per stratum (see __sdc_beside_sql).
CREATE OR REPLACE MACRO __sdc_rows_beside_sql(fname, tbl, names, args, strata) AS
    __sdc_beside_sql(tbl, names,
                     __sdc_unnest_call_sql(fname, __sdc_record_of(fname, names),
                                           list_transform(args, lambda a: __sdc_ql(a)), '__sdc_v'),
                     strata, fname := fname || '_table');

-- SQL of the table form that masks the columns `cols` of `tbl` in place with the multivariate list
-- function fname (a record with a NULL in any of them gets NULL in all of them).
CREATE OR REPLACE MACRO __sdc_mask_columns_sql(fname, tbl, cols, args, strata) AS
    CASE WHEN cols IS NULL OR len(__sdc_names(cols)) = 0
             THEN error(fname || '_table: cols must name at least one column')
         ELSE format('SELECT * EXCLUDE (__sdc_v) REPLACE ({1}) FROM ({0})',
                     __sdc_rows_beside_sql(fname, tbl, __sdc_names(cols), args, strata),
                     array_to_string(list_transform(__sdc_names(cols),
                                                    lambda c, i: '__sdc_v[' || i || '] AS ' || __sdc_qi(c)), ', '))
    END;

-- SQL of the table form that adds the cluster id of the labels function fname as column `label_col`
-- (replacing a column of that name, if any).
CREATE OR REPLACE MACRO __sdc_label_columns_sql(fname, tbl, cols, args, strata, label_col) AS
    CASE WHEN cols IS NULL OR len(__sdc_names(cols)) = 0
             THEN error(fname || '_table: cols must name at least one column')
         WHEN label_col IS NULL THEN error(fname || '_table: label_col must not be NULL')
         ELSE format('SELECT COLUMNS(lambda __sdc_c: __sdc_c NOT IN (''__sdc_v'', {1})), __sdc_v AS {2} FROM ({0})',
                     __sdc_rows_beside_sql(fname, tbl, __sdc_names(cols), args, strata),
                     __sdc_ql(label_col), __sdc_qi(label_col))
    END;
