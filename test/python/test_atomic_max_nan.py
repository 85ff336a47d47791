"""cuda.atomic.max / min on floats follow Numba's NaN rule on every target:
like Python's max(a, b), which returns a when either is NaN, a NaN element
stays NaN and a NaN value changes nothing; the call returns the old value.
(nanmax/nanmin, which treat NaN as missing, are test_atomic_nanmax.py.)"""
import numpy as np
import pytest

from tidal import cuda

NAN = np.nan
# (old, value, max, min)
CASES = [
    (1.0, 2.0, 2.0, 1.0),
    (2.0, 1.0, 2.0, 1.0),
    (NAN, 3.0, NAN, NAN),      # NaN element: stays
    (3.0, NAN, 3.0, 3.0),      # NaN value: nothing changes
    (NAN, NAN, NAN, NAN),
    (-np.inf, np.inf, np.inf, -np.inf),
    (0.0, -0.0, 0.0, 0.0),     # equal: the element stays
]


@cuda.jit
def _max_min_cases(maxima, minima, values, old_max, old_min):
    i = cuda.grid(1)
    if i < values.size:
        old_max[i] = cuda.atomic.max(maxima, i, values[i])
        old_min[i] = cuda.atomic.min(minima, i, values[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_element_stays_and_nan_value_changes_nothing(target, dtype):
    old = np.array([c[0] for c in CASES], dtype)
    values = np.array([c[1] for c in CASES], dtype)
    maxima, minima = old.copy(), old.copy()
    old_max, old_min = np.zeros_like(old), np.zeros_like(old)
    _max_min_cases[1, 32](maxima, minima, values, old_max, old_min)
    if not target.ran("_max_min_cases"):
        return
    np.testing.assert_array_equal(maxima, np.array([c[2] for c in CASES], dtype))
    np.testing.assert_array_equal(minima, np.array([c[3] for c in CASES], dtype))
    assert np.signbit(maxima[-1]) == np.signbit(minima[-1]) == False  # noqa: E712
    np.testing.assert_array_equal(old_max, old)  # NaN == NaN for assert_array_equal
    np.testing.assert_array_equal(old_min, old)


@cuda.jit
def _contended(values, result):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.max(result, (0, 0), values[i])
        cuda.atomic.min(result, (1, 0), values[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_many_threads_skip_nan_values(target, dtype):
    # Many threads on one element, a third of the values NaN: the NaNs change
    # nothing, so the result is the max/min of the others (and the start).
    rng = np.random.default_rng(5)
    values = rng.uniform(-1000, 1000, size=1000).astype(dtype)
    values[::3] = np.nan
    result = np.array([[-np.inf], [np.inf]], dtype)
    _contended[8, 128](values, result)
    target.assert_result("_contended", result[:, 0], [np.nanmax(values), np.nanmin(values)])


@cuda.jit
def _shared(values, result):
    block = cuda.shared.array(4, np.float32)
    t = cuda.threadIdx.x
    if t == 0:
        block[0] = 0.0
        block[1] = 100.0
        block[2] = np.nan
        block[3] = np.nan
    cuda.syncthreads()
    cuda.atomic.max(block, 0, values[t])
    cuda.atomic.min(block, 1, values[t])
    cuda.atomic.max(block, 2, values[t])  # a NaN element stays NaN
    cuda.atomic.min(block, 3, values[t])
    cuda.syncthreads()
    if t < 4:
        result[t] = block[t]


def test_shared_memory(target):
    values = np.arange(64, dtype=np.float32)
    values[::2] = np.nan
    result = np.zeros(4, np.float32)
    _shared[1, 64](values, result)
    target.assert_result("_shared", result, np.array([63.0, 1.0, NAN, NAN], np.float32))


def test_ptx_is_a_compare_exchange_loop():
    # PTX has no float atom.max: a cmpxchg loop on the element's bits, which
    # exchanges only while the value compares (ordered) greater.
    ptx = _max_min_cases.inspect_asm("void(float64[::1], float64[::1], float64[::1], "
                                     "float64[::1], float64[::1])")
    assert "atom.global.cas.b64" in ptx
    assert "atom.global.max" not in ptx
