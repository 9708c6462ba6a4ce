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

-- The table forms of these functions are built by the macros of 00_internal.sql.
