"""Shared and local arrays are checked at compile time against CUDA's
limits (48 KiB of static shared memory per block, 512 KiB of local memory
per thread), with the byte size multiplied without wrapping: a TypingError
at the shape, instead of a wrapped size, an abort or a stack overflow at
launch (/work/shared/bugs/shared_size_wraps_segv.py,
huge_static_shared_abort.py, giant_static_shared_accepted.py,
huge_local_array_segv.py)."""

import numpy as np
import pytest

from tidal import cuda, float32, float64, int32
from tidal.errors import TypingError


def test_shared_size_that_wraps_is_rejected():
    @cuda.jit
    def k(out):
        s = cuda.shared.array(4611686018427387904, float32)
        out[0] = s[0]

    with pytest.raises(TypingError, match=r"more than 2\*\*64 bytes .*48 KiB of static shared"):
        k[1, 1](np.zeros(1, np.float32))


def test_shared_shape_product_that_wraps_is_rejected():
    @cuda.jit
    def k(out):
        s = cuda.shared.array((4294967296, 4294967296), float32)
        out[0] = s[0, 0]

    with pytest.raises(TypingError, match="more than 2\\*\\*64 bytes"):
        k[1, 1](np.zeros(1, np.float32))


def test_shared_array_over_48_kib_is_rejected():
    @cuda.jit
    def k(out):
        s = cuda.shared.array(268435456, int32)
        out[0] = s[0]

    with pytest.raises(TypingError, match="1073741824 bytes is larger than CUDA allows") as info:
        k[1, 1](np.zeros(1, np.int32))
    assert info.value.column == 31


def test_shared_array_of_exactly_48_kib_works():
    @cuda.jit
    def k(out):
        s = cuda.shared.array(12288, int32)
        t = cuda.threadIdx.x
        s[12287 - t] = t
        cuda.syncthreads()
        out[t] = s[12287 - t]

    out = np.zeros(32, np.int32)
    k[1, 32](out)
    assert out.tolist() == list(range(32))


def test_local_array_over_512_kib_is_rejected():
    @cuda.jit
    def k(out):
        a = cuda.local.array(10000000, float64)
        out[0] = a[0]

    with pytest.raises(TypingError, match="80000000 bytes .*512 KiB of local memory per thread"):
        k[1, 1](np.zeros(1))
