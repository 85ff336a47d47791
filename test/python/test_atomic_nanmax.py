"""cuda.atomic.nanmax / nanmin on every target: NaN counts as missing, so
the result is the operand that is not NaN (NaN only when both are), and the
call returns the old value; floats and integers, global and shared memory,
1-D and N-D arrays with tuple indices; non-numeric arrays are refused."""
import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError

NAN = np.nan
# (old, value, nanmax, nanmin)
CASES = [
    (1.0, 2.0, 2.0, 1.0),
    (2.0, 1.0, 2.0, 1.0),
    (NAN, 3.0, 3.0, 3.0),     # old NaN: the value
    (3.0, NAN, 3.0, 3.0),     # new NaN: the old value stays
    (NAN, NAN, NAN, NAN),     # both: NaN
    (-np.inf, NAN, -np.inf, -np.inf),
]


@cuda.jit
def _nan_cases(maxima, minima, values, old_max, old_min):
    i = cuda.grid(1)
    if i < values.size:
        old_max[i] = cuda.atomic.nanmax(maxima, i, values[i])
        old_min[i] = cuda.atomic.nanmin(minima, i, values[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_is_missing(target, dtype):
    old = np.array([c[0] for c in CASES], dtype)
    values = np.array([c[1] for c in CASES], dtype)
    maxima, minima = old.copy(), old.copy()
    old_max, old_min = np.zeros_like(old), np.zeros_like(old)
    _nan_cases[1, 32](maxima, minima, values, old_max, old_min)
    if not target.ran("_nan_cases"):
        return
    np.testing.assert_array_equal(maxima, np.array([c[2] for c in CASES], dtype))
    np.testing.assert_array_equal(minima, np.array([c[3] for c in CASES], dtype))
    np.testing.assert_array_equal(old_max, old)  # NaN == NaN for assert_array_equal
    np.testing.assert_array_equal(old_min, old)


@cuda.jit
def _reduce(values, result):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.nanmax(result, (0, 0), values[i])
        cuda.atomic.nanmin(result, (1, 0), values[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64,
                                   np.uint32, np.uint64])
def test_many_threads_on_a_2d_array(target, dtype):
    rng = np.random.default_rng(3)
    values = rng.integers(1, 1000, size=500).astype(dtype)
    if np.dtype(dtype).kind == "f":
        values[::3] = np.nan
    result = np.zeros((2, 1), dtype)
    result[0, 0], result[1, 0] = (np.nan, np.nan) if np.dtype(dtype).kind == "f" else (0, 5000)
    _reduce[4, 128](values, result)
    target.assert_result("_reduce", result[:, 0], [np.nanmax(values), np.nanmin(values)])


@cuda.jit
def _shared(values, result):
    block = cuda.shared.array(2, np.float64)
    t = cuda.threadIdx.x
    if t == 0:
        block[0] = np.nan
        block[1] = np.nan
    cuda.syncthreads()
    cuda.atomic.nanmax(block, 0, values[t])
    cuda.atomic.nanmin(block, 1, values[t])
    cuda.syncthreads()
    if t == 0:
        result[0] = block[0]
        result[1] = block[1]


def test_shared_memory(target):
    values = np.arange(64, dtype=np.float64)
    values[::2] = np.nan
    result = np.zeros(2)
    _shared[1, 64](values, result)
    target.assert_result("_shared", result, [63.0, 1.0])


def test_boolean_array_is_refused():
    def nanmax_of_booleans(flags):
        cuda.atomic.nanmax(flags, 0, 1)

    kernel = cuda.jit(nanmax_of_booleans)
    with pytest.raises(TypingError, match=r"cuda\.atomic\.nanmax\(\) is not supported on "
                                          r"array\(bool.*it needs int32, int64"):
        kernel[1, 1](np.zeros(1, np.bool_))
