"""Masking algorithms on numpy arrays. No DuckDB here: every function takes finite float arrays and
plain parameters and returns arrays, so it can be tested against brute force and reused from pandas
(call it on `series.dropna().to_numpy()` and align on the index) or from other engines.
"""

from __future__ import annotations

import numpy as np

from ._order import sort_column, stable_argsort
from .discretisation import (
    attraction_sizes,
    discretise,
    discretise_labels,
    efd_round,
    ewd_round,
    kmd_round,
    rbd_round,
    stochastic_round,
)
from .freedman_diaconis import freedman_diaconis
from .microaggregation import (
    METHODS,
    mdav_partition,
    microaggregate,
    oma_partition,
    partition,
    ranking_partition,
    vmdav_partition,
)
from .partition import REPRESENTATIVES, group_representatives, represent


def mdav_round(x, k, representative: str = "mean") -> np.ndarray:
    """Univariate MDAV microaggregation of x with minimum group size k (see `mdav_partition`)."""
    return microaggregate(x, k, "mdav", representative)


def vmdav_round(x, k, gamma: float = 0.2, representative: str = "mean") -> np.ndarray:
    """Univariate V-MDAV microaggregation (see `vmdav_partition`)."""
    return microaggregate(x, k, "vmdav", representative, gamma=gamma)


def oma_round(x, k, representative: str = "mean") -> np.ndarray:
    """Optimal univariate microaggregation (see `oma_partition`)."""
    return microaggregate(x, k, "oma", representative)


def ranking_round(x, k, representative: str = "mean") -> np.ndarray:
    """Individual ranking microaggregation with fixed group size k (see `ranking_partition`)."""
    return microaggregate(x, k, "ranking", representative)


__all__ = [
    "METHODS",
    "attraction_sizes",
    "discretise",
    "discretise_labels",
    "efd_round",
    "ewd_round",
    "freedman_diaconis",
    "kmd_round",
    "rbd_round",
    "stochastic_round",
    "REPRESENTATIVES",
    "group_representatives",
    "mdav_partition",
    "mdav_round",
    "microaggregate",
    "oma_partition",
    "oma_round",
    "partition",
    "ranking_partition",
    "ranking_round",
    "represent",
    "sort_column",
    "stable_argsort",
    "vmdav_partition",
    "vmdav_round",
]
