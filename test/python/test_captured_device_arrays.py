"""Device arrays (any __cuda_array_interface__ object) captured as globals
or closure variables are read and written by reference, as numba-cuda does:
the kernel sees later writes to the array, and its writes reach the array;
NumPy arrays and numbers stay frozen at compile time; cache=True refuses
such a kernel with numba-cuda's PicklingError. On every target."""

import pickle

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import UnsupportedError

FLAG = None


def test_a_global_device_array_is_read_by_reference(target):
    global PRICES
    PRICES = cuda.to_device(np.array([10.0, 25.0, 5.0], np.float32))

    @cuda.jit
    def totals(quantities, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = quantities[i] * PRICES[i]

    q = np.ones(3, np.float32)
    out = np.zeros(3, np.float32)
    totals[1, 32](q, out)
    target.assert_result("totals", out, np.array([10.0, 25.0, 5.0], np.float32))
    PRICES.copy_to_device(np.array([20.0, 50.0, 10.0], np.float32))
    totals[1, 32](q, out)   # no recompilation: the same code reads the new values
    assert len(totals.overloads) == 1
    target.assert_result("totals", out, np.array([20.0, 50.0, 10.0], np.float32), launches=2)


def test_a_kernel_writes_a_closure_device_array(target):
    counts = cuda.to_device(np.zeros((2, 3), np.int64))

    @cuda.jit
    def fill(value):
        i, j = cuda.grid(2)
        if i < counts.shape[0] and j < counts.shape[1]:
            counts[i, j] += value + i * 10 + j

    fill[1, (4, 4)](1)
    fill[1, (4, 4)](1)
    target.assert_result("fill", counts.copy_to_host(), 2 * (np.arange(3) + 10 *
                                                             np.arange(2)[:, None] + 1),
                         launches=2)


def test_numpy_globals_stay_frozen_and_none_is_a_constant(target):
    global TABLE
    TABLE = np.array([1.0, 2.0])

    @cuda.jit(device=True)
    def scaled(option, x):
        return x * 2

    @cuda.jit
    def k(out):
        out[0] = TABLE[1]
        unused = FLAG                       # None, a constant (as a literal None)
        out[1] = scaled(FLAG, 0.5)

    out = np.zeros(2)
    k[1, 1](out)
    TABLE[1] = 99.0          # not seen: NumPy arrays are frozen at compile time
    k[1, 1](out)
    target.assert_result("k", out, np.array([2.0, 1.0]), launches=2)


def test_a_captured_non_contiguous_device_array_keeps_its_strides(target):
    base = cuda.to_device(np.arange(12.0).reshape(3, 4))
    columns = base[:, 1::2]

    @cuda.jit
    def k(out):
        for i in range(columns.shape[0]):
            for j in range(columns.shape[1]):
                out[i, j] = columns[i, j]

    out = np.zeros((3, 2))
    k[1, 1](out)
    target.assert_result("k", out, np.arange(12.0).reshape(3, 4)[:, 1::2])


def test_cache_refuses_a_kernel_that_captures_a_device_array(tmp_path, monkeypatch):
    monkeypatch.setenv("TIDAL_CACHE_DIR", str(tmp_path))
    global CACHED_STATE
    CACHED_STATE = cuda.to_device(np.zeros(4))

    @cuda.jit(cache=True)
    def k(x):
        CACHED_STATE[0] = x

    with pytest.raises(pickle.PicklingError, match="Cannot serialize kernels or device functions "
                                                   "referencing global device arrays"):
        k[1, 1](1.0)


class _RecordInterface:
    """An object whose interface describes records, which kernels refuse."""

    def __init__(self):
        self.host = np.zeros(2, np.dtype([("a", np.int32), ("b", np.float32)]))

    @property
    def __cuda_array_interface__(self):
        return {"shape": (2,), "strides": None, "typestr": self.host.dtype.str,
                "descr": self.host.dtype.descr, "data": (self.host.ctypes.data, False),
                "version": 3}


def test_a_captured_array_of_records_is_a_located_error():
    records = _RecordInterface()

    @cuda.jit
    def k(out):
        out[0] = records[0].a

    with pytest.raises(UnsupportedError, match=r"\(a device array\) in a kernel: captured "
                                               r"device arrays of records are not supported"):
        k[1, 1](np.zeros(1))
