"""Random test columns shared by the tests of the univariate methods."""

from __future__ import annotations

import numpy as np


def random_columns(seed: int, count: int, max_n: int = 40):
    """(rng, x): `count` columns of 1..max_n values, in turn integer data with many ties, integer data
    with few, and continuous data of any scale. The caller draws its parameters from the same rng,
    so a test's inputs depend on its seed alone."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        n = int(rng.integers(1, max_n + 1))
        kind = i % 3
        if kind == 0:
            x = rng.integers(0, max(2, n // 3), n).astype(float)
        elif kind == 1:
            x = rng.integers(-1000, 1000, n).astype(float)
        else:
            x = rng.normal(0, 1, n) * 10.0 ** rng.integers(-3, 4)
        yield rng, x
