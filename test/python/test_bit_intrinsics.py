"""cuda.popc, cuda.brev, cuda.clz and cuda.ffs on every integer width, on
every target, against a reference computed in Python on the operand's bits;
and the cases of Numba's own test_intrinsics, whose expected values its CUDA
simulator gives (issue 12, section 3: clz of an int32 gave 43, brev of a
uint32 gave 0, when a declared signature's scalar was passed as an int64)."""

import numpy as np
import pytest

from tidal import cuda

WIDTHS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _bits(value, dtype):
    """The operand's bits, as a non-negative Python int, and its width."""
    width = np.dtype(dtype).itemsize * 8
    return int(value) & ((1 << width) - 1), width


def _popc(value, dtype):
    bits, _ = _bits(value, dtype)
    return bin(bits).count("1")


def _brev(value, dtype):
    bits, width = _bits(value, dtype)
    return int(format(bits, f"0{width}b")[::-1], 2)


def _clz(value, dtype):
    bits, width = _bits(value, dtype)
    return width - bits.bit_length()


def _ffs(value, dtype):
    bits, _ = _bits(value, dtype)
    return (bits & -bits).bit_length()


def _operands(dtype):
    info = np.iinfo(dtype)
    width = info.bits
    values = {0, 1, 2, 3, info.max, info.min, 1 << (width - 2), 0x5A & info.max,
              (1 << (width - 1)) - 3, info.max // 7}
    if info.min < 0:
        values |= {-1, -2, info.min + 1}
    else:
        values |= {info.max - 1, 1 << (width - 1)}
    return np.array(sorted(values), dtype=dtype)


@cuda.jit
def _bit_operations(x, popc, brev, clz, ffs):
    i = cuda.grid(1)
    if i < x.size:
        popc[i] = cuda.popc(x[i])
        brev[i] = cuda.brev(x[i])
        clz[i] = cuda.clz(x[i])
        ffs[i] = cuda.ffs(x[i])


@pytest.mark.parametrize("dtype", WIDTHS, ids=lambda d: np.dtype(d).name)
def test_bit_operations_on_every_width(target, dtype):
    x = _operands(dtype)
    results = [np.zeros_like(x) for _ in range(4)]
    _bit_operations[1, 64](x, *results)
    for name, got, reference in zip(("popc", "brev", "clz", "ffs"), results,
                                    (_popc, _brev, _clz, _ffs)):
        # Each result is of the operand's type: compare the bits.
        expected = np.array([_bits(reference(v, dtype), dtype)[0] for v in x.tolist()],
                            dtype=np.uint64).astype(dtype)
        target.assert_result("_bit_operations", got, expected, launches=1)


# Numba's test_intrinsics cases, with the values its CUDA simulator gives.

def _simple_brev(ary, c):
    ary[0] = cuda.brev(c)


def _simple_clz(ary, c):
    ary[0] = cuda.clz(c)


def _simple_ffs(ary, c):
    ary[0] = cuda.ffs(c)


def _simple_popc(ary, c):
    ary[0] = cuda.popc(c)


@pytest.mark.parametrize("function, signature, dtype, operand, expected", [
    (_simple_brev, "void(uint32[:], uint32)", np.uint32, 0x000030F0, 0x0F0C0000),
    (_simple_brev, "void(uint64[:], uint64)", np.uint64, 0x000030F0000030F0, 0x0F0C00000F0C0000),
    (_simple_clz, "void(int32[:], int32)", np.int32, 0x00100000, 11),
    (_simple_clz, "void(int32[:], uint32)", np.int32, 0x00100000, 11),
    (_simple_clz, "void(int32[:], int32)", np.int32, 0xFFFFFFFF, 0),
    (_simple_clz, "void(int32[:], int32)", np.int32, 0, 32),
    (_simple_clz, "void(int32[:], int64)", np.int32, 0x000000000010000, 47),
    (_simple_ffs, "void(uint32[:], int32)", np.uint32, 0x00100000, 21),
    (_simple_ffs, "void(uint32[:], int32)", np.uint32, 0x80000000, 32),
    (_simple_ffs, "void(uint32[:], int32)", np.uint32, 0, 0),
    (_simple_popc, "void(uint32[:], uint32)", np.uint32, 0xF00000F0, 8),
    (_simple_popc, "void(uint32[:], uint64)", np.uint32, 0xF00000000000F000, 8),
])
def test_declared_signature_operands(target, function, signature, dtype, operand, expected):
    kernel = cuda.jit(signature)(function)
    ary = np.zeros(1, dtype=dtype)
    kernel[1, 1](ary, operand)
    target.assert_result(function.__name__, ary, np.array([expected], dtype=dtype), launches=1)
