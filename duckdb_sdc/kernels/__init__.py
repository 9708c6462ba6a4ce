"""Engine-free pieces of the engines that mask a stratum larger than one piece of memory: numpy only
(no DuckDB, no Spark), shared by the Spark engine (`duckdb_sdc.spark`) and the out-of-core path on
one machine (`duckdb_sdc.outofcore`), and tested on their own against the numpy methods.

* `positional`: a huge stratum of a position-based method (individual ranking, univariate MDAV, the
  DP mechanisms on ranking clusters, plain Laplace noise) masked bucket by bucket, each bucket from
  its global offset and a few constants of the stratum, value for value as the numpy method;
* `summary`: equal-frequency and equal-width intervals from a stratum's (distinct value, count)
  summary, without expanding it;
* `attraction`: the smallest sets of attraction from facts the masking tasks report per bucket;
* `cipher`: Speck64/128, the secret row order of a release with an integer key.

`duckdb_sdc.masking` masks one whole stratum; these modules are what an engine needs beyond it.
"""
