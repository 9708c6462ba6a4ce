"""The SQL functions and macros: the generated contract and each family through SQL."""
