-- duckdb_sdc: the Freedman-Diaconis rule as aggregates (pure SQL), as the 'auto' parameter of the
-- discretisation and microaggregation functions uses it (duckdb_sdc/methods/freedman_diaconis.py).

-- c from n, the range and the quantiles q at 1/4, 3/4, 1/8, 7/8, ..., 1/512, 511/512 (linear
-- interpolation): the width h = 2 IQR / n^(1/3), where 2 IQR = (q(3/4) - q(1/4)) / (1/2); when that
-- is 0, the first positive (q(1 - a) - q(a)) / (1 - 2a) for a = 1/8, ..., 1/512 replaces it; none
-- positive, or a constant column: c = 1.
CREATE OR REPLACE MACRO __sdc_fd_from_spread(n, lo, hi, h) AS
    CASE
        WHEN n < 2 OR lo = hi OR h IS NULL THEN 1::BIGINT
        ELSE greatest(1, ceil((hi - lo) / (h / pow(n, 1.0 / 3.0))))::BIGINT
    END;

CREATE OR REPLACE MACRO __sdc_fd_count(n, lo, hi, q) AS
    __sdc_fd_from_spread(n, lo, hi,
        list_filter(
            list_transform(range(8), lambda i: (q[2 * i + 2] - q[2 * i + 1]) / (1.0 - 2.0 / pow(2, i + 2))),
            lambda s: s > 0)[1]);

-- The rule on the values scaled by s (c does not depend on s: the range and the width scale alike).
CREATE OR REPLACE MACRO __sdc_fd_scaled(x, s) AS
    __sdc_fd_count(count(x), min(x::DOUBLE * s), max(x::DOUBLE * s),
        quantile_cont(x::DOUBLE * s, [0.25, 0.75, 0.125, 0.875, 0.0625, 0.9375, 0.03125, 0.96875,
                                      0.015625, 0.984375, 0.0078125, 0.9921875, 0.00390625, 0.99609375,
                                      0.001953125, 0.998046875]));

-- Values of 2^400 and more are taken scaled by 2^-600 (exact), so that no range or quantile
-- difference overflows (values near +-1.8e308 gave inf - inf = NaN); see sql/10_measures.sql's
-- __sdc_pick. Smaller values as they are: differences of subnormal values are exact.
CREATE OR REPLACE MACRO __sdc_fd_intervals(x) AS
    __sdc_pick(max(abs(x::DOUBLE)), __sdc_fd_scaled(x, 1.0), __sdc_fd_scaled(x, pow(2.0, -600)),
               __sdc_fd_scaled(x, 1.0));

-- The public aggregates: the column checked (numeric, finite; NULLs left out), then the rule.
CREATE OR REPLACE MACRO fd_intervals(x) AS
    __sdc_fd_intervals(__sdc_check_value(x, 'fd_intervals', 'x'));

CREATE OR REPLACE MACRO fd_group_size(x) AS
    greatest(2, ceil(count(x) / __sdc_fd_intervals(__sdc_check_value(x, 'fd_group_size', 'x'))))::BIGINT;
