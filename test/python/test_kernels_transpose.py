"""tidal.cuda.kernels (Numba 0.56's numba.cuda.kernels) on every target:
transpose() of numbers, bools and records, into a given device array or a
new one; reduction.Reduce is cuda.Reduce."""
import numpy as np
import pytest

from tidal import cuda
from tidal.cuda.kernels.transpose import transpose
from tidal.cuda.kernels import reduction

RECORD = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])


@pytest.mark.parametrize("rows, columns, dtype", [
    (5, 6, np.float64), (33, 31, np.complex128), (70, 40, np.int16), (1, 1, np.float32),
])
def test_transpose_into_a_device_array(target, rows, columns, dtype):
    a = np.arange(rows * columns).astype(dtype).reshape(rows, columns)
    b = cuda.device_array((columns, rows), dtype)
    assert transpose(cuda.to_device(a), b) is b
    result = b.copy_to_host()
    if target.computes:
        np.testing.assert_array_equal(result, a.T)


def test_transpose_allocates_the_output(target):
    a = np.random.default_rng(1).integers(2, size=(17, 16)).astype(np.bool_)
    b = transpose(cuda.to_device(a))
    assert b.shape == (16, 17) and b.dtype == np.bool_
    if target.computes:
        np.testing.assert_array_equal(b.copy_to_host(), a.T)


def test_transpose_of_records(target):
    a = np.zeros((14, 15), RECORD)
    a["i"] = np.arange(14 * 15).reshape(14, 15)
    a["j"] = np.arange(14 * 15 * 6, dtype=np.float32).reshape(14, 15, 3, 2)
    b = cuda.device_array_like(np.zeros((15, 14), RECORD))
    transpose(cuda.to_device(a), b)
    if target.computes:
        np.testing.assert_array_equal(b.copy_to_host(), a.T)


def test_transpose_checks_its_arrays():
    with pytest.raises(ValueError, match="transpose\\(\\) takes a 2-D array, got 1 dimensions"):
        transpose(np.zeros(4))
    with pytest.raises(ValueError, match=r"needs an output of shape \(3, 2\) and the same "
                                         r"dtype, got \(2, 3\) and float64"):
        transpose(np.zeros((2, 3)), cuda.device_array((2, 3)))


def test_reduction_module_is_cuda_reduce():
    assert reduction.Reduce is cuda.Reduce
    assert reduction.Reduce(lambda a, b: a + b)(np.arange(10)) == 45


def test_transpose_of_records_into_a_fortran_array(target):
    # device_array_like(a.T) is F-ordered: records then go one per thread.
    a = np.zeros((16, 17), RECORD)
    a["i"] = np.arange(16 * 17).reshape(16, 17)
    a["j"] = np.arange(16 * 17 * 6, dtype=np.float32).reshape(16, 17, 3, 2)
    b = cuda.device_array_like(a.T)
    assert not b.is_c_contiguous()
    transpose(cuda.to_device(a), b)
    if target.computes:
        np.testing.assert_array_equal(b.copy_to_host(), a.T)
