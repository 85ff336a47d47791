"""The per-element code of guarded, checked kernels (docs/cpu-target.md,
"The histogram's element"): a bounds check tests the index as given and
wraps a negative one only when that test fails, and cuda.grid's `i < n`
bounds the thread loop (a block wholly past n runs no thread). The results
are Python's indexing on every target; the IndexError of an index outside
the array, negative or not, names it and its thread on the cpu target."""

import numpy as np
import pytest

from tidal import cuda
from targets import on_targets


@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i], 1)


@cuda.jit
def scatter(keys, values, out):
    i = cuda.grid(1)
    if i < keys.size:
        out[keys[i]] = values[i]


def test_negative_keys_count_from_the_end(target, rng):
    n, nbins = 10_007, 16
    keys = rng.integers(-nbins, nbins, n)
    bins = np.zeros(nbins, np.int32)
    histogram[(n + 127) // 128, 128](keys, bins)
    target.assert_result("histogram", bins,
                         np.bincount(keys % nbins, minlength=nbins).astype(np.int32))


def test_stores_at_negative_and_positive_indices(target):
    keys = np.array([0, -1, 3, -4, 5, -8], np.int64)
    values = np.arange(1, 7, dtype=np.float32)
    out = np.zeros(8, np.float32)
    scatter[1, 32](keys, values, out)  # 26 threads past keys.size
    expected = np.zeros(8, np.float32)
    expected[keys] = values
    target.assert_result("scatter", out, expected)


@pytest.mark.parametrize("block", [1, 32, 256])
def test_blocks_past_the_guard_run_no_thread(target, block):
    # More blocks than the array needs: the last partial block runs its
    # threads below n, the blocks after it none (their thread loop skipped).
    n = 1_000
    keys = np.arange(n) % 7
    bins = np.zeros(7, np.int64)
    histogram[(n + block - 1) // block + 3, block](keys, bins)
    target.assert_result("histogram", bins, np.bincount(keys, minlength=7))


@on_targets("cpu")
@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("key", [-17, 16])
def test_a_key_outside_the_bins_is_an_index_error_naming_it(target, debug, key):
    @cuda.jit(debug=debug)
    def checked_histogram(x, bins):
        i = cuda.grid(1)
        if i < x.size:
            cuda.atomic.add(bins, x[i], 1)

    keys = np.arange(300) % 16
    keys[261] = key  # thread 5 of block 2
    bins = np.zeros(16, np.int32)
    with pytest.raises(IndexError) as info:
        checked_histogram[3, 128](keys, bins)
    message = str(info.value)
    assert message.startswith(f"index {key} is out of bounds for axis 0 with size 16 in "
                              "kernel 'checked_histogram'"), message
    assert message.endswith("thread (5, 0, 0) of block (2, 0, 0)"), message
