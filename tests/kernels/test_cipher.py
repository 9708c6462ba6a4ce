"""The secret row order's cipher (duckdb_sdc.kernels.cipher, Speck64/128) without Spark: the paper's test
vector, the vectorised version against the round function written word by word on random keys and
secrets, a permutation (distinct keys, distinct cipher texts), and the kernel's HASH field: the cipher
text of each record's key in place, NULL for a NULL key."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckdb_sdc.release.methods import METHODS
from duckdb_sdc.kernels.cipher import ROUNDS, encrypt, encrypt_words, round_keys
from duckdb_sdc.spark.kernel import WHOLE, BucketTask, Part, StageKernel
from duckdb_sdc.spark.ordering import B, HASH
from duckdb_sdc.spark.stratum import StratumCall

# IACR ePrint 2013/404, appendix C, Speck64/128: key 1b1a1918 13121110 0b0a0908 03020100 (words l2 l1 l0
# k0), plaintext 3b726574 7475432d (x y), ciphertext 8c6fa548 454e028b
PAPER_KEY = bytes.fromhex("000102030809 0a0b10111213 18191a1b".replace(" ", ""))
PAPER_PLAIN = 0x3B726574_7475432D
PAPER_CIPHER = 0x8C6FA548_454E028B


def _signed(u: int) -> int:
    return u - (1 << 64) if u >= 1 << 63 else u


def test_the_paper_test_vector():
    keys = round_keys(PAPER_KEY)
    assert len(keys) == ROUNDS and keys[0] == 0x03020100
    assert encrypt_words(0x3B726574, 0x7475432D, keys) == (0x8C6FA548, 0x454E028B)
    got = encrypt(np.array([_signed(PAPER_PLAIN)], np.int64), keys)
    assert got.dtype == np.int64 and int(got[0]) == _signed(PAPER_CIPHER)


def test_a_key_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="the key has 15 bytes, not 16"):
        round_keys(bytes(15))


@settings(max_examples=60, deadline=None)
@given(secret=st.binary(min_size=16, max_size=16),
       values=st.lists(st.one_of(st.integers(-2**63, 2**63 - 1), st.sampled_from([0, -1, 1, -2**63, 2**63 - 1])),
                       min_size=0, max_size=40))
def test_the_vectorised_cipher_equals_the_round_function_word_by_word(secret, values):
    keys = round_keys(secret)
    got = encrypt(np.array(values, np.int64), keys)
    for v, h in zip(values, got.tolist()):
        u = v & (2**64 - 1)
        x, y = encrypt_words(u >> 32, u & 0xFFFFFFFF, keys)
        assert h == _signed((x << 32) | y)


@pytest.mark.parametrize("seed", range(4))
def test_distinct_keys_get_distinct_cipher_texts_and_equal_keys_equal_ones(seed):
    """A permutation: what lets the release sort on the cipher text alone and find a repeated key
    by comparing neighbours. 200,000 keys around 0, the extremes and random ones, each twice."""
    rng = np.random.default_rng(seed)
    keys = round_keys(rng.bytes(16))
    values = np.concatenate((np.arange(-100_000, 100_000), [-2**63, 2**63 - 1],
                             rng.integers(-2**63, 2**63 - 1, 100_000, dtype=np.int64)))
    values = np.unique(values)
    once = encrypt(values, keys)
    assert np.unique(once).shape[0] == values.shape[0]
    twice = encrypt(np.concatenate((values, values[::-1])), keys)
    assert np.array_equal(twice[:values.shape[0]], once) and np.array_equal(twice[values.shape[0]:], once[::-1])


def test_another_secret_gives_another_order():
    values = np.arange(1000, dtype=np.int64)
    a = np.argsort(encrypt(values, round_keys(bytes(range(16)))))
    b = np.argsort(encrypt(values, round_keys(bytes(range(1, 17)))))
    assert not np.array_equal(a, b) and not np.array_equal(a, values)
    assert abs(np.corrcoef(a, values)[0, 1]) < 0.1  # unrelated to the key order


@pytest.mark.parametrize("key_type", [pa.int8(), pa.int16(), pa.int32(), pa.int64()])
def test_the_kernel_adds_each_records_cipher_text_in_place(key_type):
    """Two whole strata and records of NULL value (bucket -1), keys of every integer width, one NULL key:
    HASH is the cipher text of the record's key (as a BIGINT), in the records' order, NULL where the key is."""
    rng = np.random.default_rng(7)
    n = 60
    ids = np.sort(rng.choice([-1, 0, 1], n))
    keys = rng.permutation(120)[:n].astype(np.int64) - 60
    x = np.round(rng.normal(0, 3, n), 0)
    x[ids == -1] = np.nan
    key_mask = np.zeros(n, bool)
    key_mask[np.flatnonzero(ids == 0)[0]] = True
    secret = round_keys(rng.bytes(16))
    fields = [pa.field("x", pa.float64()), pa.field(HASH, pa.int64())]
    kernel = StageKernel(parts=(Part(StratumCall(METHODS["mdav_round"], {"k": 3}, ("x",)), ("x",), "columns.x"),),
                         key="id", tasks={0: BucketTask(WHOLE, 0), 1: BucketTask(WHOLE, 1)},
                         schema=pa.schema(fields), arguments=(B, "id", "x"), cipher=secret)
    arrays = (pa.array(ids, pa.int64()), pa.array(keys, key_type, mask=key_mask), pa.array(x, pa.float64(), mask=np.isnan(x)))
    out = pa.concat_arrays(list(kernel.masked(iter([tuple(a.slice(i, 25) for a in arrays) for i in range(0, n, 25)]))))
    got = out.field(HASH)
    assert got.null_count == 1 and not got.is_valid()[int(np.flatnonzero(key_mask)[0])].as_py()
    expected = encrypt(keys, secret)
    valid = ~key_mask
    assert np.array_equal(got.fill_null(0).to_numpy()[valid], expected[valid])
