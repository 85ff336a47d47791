"""a.view(dtype) in kernels: the same bytes as another dtype, as NumPy and
Numba give them, on every target; its errors."""

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError


def test_view_as_another_dtype(target):
    """Bytes of a uint8 slice read as int32 (Numba's
    test_reinterpret_array_type); float32 as uint32 keeps the shape; the
    view writes into the array."""
    @cuda.jit
    def k(byte_arr, floats, out, bits):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = byte_arr[4 * i:4 * i + 8].view(np.int32)[0]
        if i == 0:
            bits[0] = byte_arr.view(np.int32).shape[0]
            as_bits = floats.view(np.uint32)
            bits[1] = as_bits[1]
            as_bits[0] = 0x3F800000  # 1.0f

    byte_arr = np.arange(64, dtype=np.uint8)
    floats = np.array([0.0, 2.0], np.float32)
    out = np.zeros(15, np.int32)
    bits = np.zeros(2, np.int64)
    k[1, 16](byte_arr, floats, out, bits)
    expected = [byte_arr[4 * i:4 * i + 4].view(np.int32)[0] for i in range(15)]
    target.assert_result("k", out, expected)
    target.assert_result("k", bits, [16, np.float32(2.0).view(np.uint32)])
    target.assert_result("k", floats, [1.0, 2.0])


def test_view_errors():
    @cuda.jit
    def strided(a, out):
        out[0] = a[::2].view(np.int32)[0]

    with pytest.raises(TypingError, match=r"test_array_views\.py:\d+:\d+: view\(\) as int32 \(4 bytes\) "
                                          r"of array\(uint8, 1d, A\) \(1-byte items\) needs a "
                                          r"C-contiguous array"):
        strided[1, 1](np.zeros(8, np.uint8), np.zeros(1, np.int32))

    @cuda.jit
    def no_dtype(a, out):
        out[0] = a.view()[0]

    with pytest.raises(TypingError, match=r"view\(\) takes one argument, the dtype"):
        no_dtype[1, 1](np.zeros(8, np.uint8), np.zeros(1, np.int32))
