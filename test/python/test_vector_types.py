"""CUDA vector types (cuda.float32x4, cuda.int16x2, ... and their C aliases
float4, short2, ...): built from numbers and smaller vectors, read with
.x .y .z .w, kept in variables and tuples, passed to and returned from
device functions; and their errors."""

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError

ELEMENTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float32", "float64")


def test_aliases_are_the_same_objects():
    assert cuda.float4 is cuda.float32x4
    assert cuda.double2 is cuda.float64x2
    assert cuda.short3 is cuda.int16x3
    assert cuda.uchar1 is cuda.uint8x1
    assert cuda.long4 is cuda.int64x4  # long is 64 bits on Linux, as in Numba
    assert "float4" in cuda.float32x4.aliases


def test_creation_and_readout(target):
    @cuda.jit
    def k(out):
        v = cuda.float64x4(1.0, 3.0, 5.0, 7.0)
        s = cuda.short2(10, 11)
        out[0] = v.x
        out[1] = v.y
        out[2] = v.z
        out[3] = v.w
        out[4] = s.x
        out[5] = s.y

    out = np.zeros(6)
    k[1, 1](out)
    target.assert_result("k", out, [1, 3, 5, 7, 10, 11])


@pytest.mark.parametrize("element", ELEMENTS)
def test_every_element_type_from_smaller_vectors(target, element):
    v1, v2, v3, v4 = (getattr(cuda, f"{element}x{n}") for n in range(1, 5))

    @cuda.jit
    def k(out):
        one = v1(1)
        two = v2(2, one)          # 2 1
        three = v3(one, two)      # 1 2 1
        four = v4(v1(one), 3, two)  # 1 3 2 1
        out[0] = one.x
        out[1] = two.x * 10 + two.y
        out[2] = three.x * 100 + three.y * 10 + three.z
        out[3] = four.x * 1000 + four.y * 100 + four.z * 10 + four.w

    out = np.zeros(4)
    k[1, 1](out)
    target.assert_result("k", out, [1, 21, 121, 1321])


def test_numbers_convert_to_the_element_type(target):
    @cuda.jit
    def k(out):
        v = cuda.int32x2(2.75, True)  # a float truncates, as int32(2.75) does
        w = cuda.uint8x1(300)         # wraps, as uint8(300) does
        out[0] = v.x
        out[1] = v.y
        out[2] = w.x

    out = np.zeros(3)
    k[1, 1](out)
    target.assert_result("k", out, [2, 1, 44])


def test_device_functions_take_and_return_vectors(target):
    @cuda.jit(device=True)
    def swap(v):
        return cuda.float2(v.y, v.x)

    @cuda.jit(device=True)
    def total(v):
        return v.x + v.y + v.z

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            v = swap(cuda.float2(i, 0.5))
            out[i] = total(cuda.float3(v, i))

    out = np.zeros(40, np.float32)
    k[2, 32](out)
    i = np.arange(40, dtype=np.float32)
    target.assert_result("k", out, 0.5 + 2 * i)


def test_tuples_of_vectors_unroll_in_loops(target):
    @cuda.jit
    def k(out):
        a = cuda.int32x2(1, 2)
        b = cuda.int32x2(30, 40)
        j = 0
        for v in (a, b):
            out[j] = v.x
            out[j + 1] = v.y
            j += 2
        pair = (a, b)
        out[4] = pair[1].y

    out = np.zeros(5, np.int32)
    k[1, 1](out)
    target.assert_result("k", out, [1, 2, 30, 40, 40])


def test_errors_are_located(target):
    @cuda.jit
    def too_few(out):
        out[0] = cuda.float32x3(1.0, 2.0).x

    with pytest.raises(TypingError, match=r"test_vector_types\.py:\d+:\d+: float32x3\(\) needs 3 "
                                          r"elements, but its arguments give 2"):
        too_few[1, 1](np.zeros(1))

    @cuda.jit
    def other_element(out):
        out[0] = cuda.float32x2(cuda.int32x1(1), 2.0).x

    with pytest.raises(TypingError, match=r"test_vector_types\.py:\d+:\d+: float32x2\(\) takes "
                                          r"numbers and vectors of float32 .*not int32x1"):
        other_element[1, 1](np.zeros(1))

    @cuda.jit
    def no_such_field(out):
        out[0] = cuda.float32x2(1.0, 2.0).z

    with pytest.raises(TypingError, match=r"test_vector_types\.py:\d+:\d+: unknown attribute 'z' "
                                          r"of float32x2 \(it has xy\)"):
        no_such_field[1, 1](np.zeros(1))


def test_numbas_vector_constructors_and_scalar_types_compile_as_tidals(target):
    numba = pytest.importorskip("numba", reason="Numba's objects need python3-numba")
    from numba import cuda as numba_cuda
    numba_float32x2 = numba_cuda.float32x2  # a class of numba.cuda.stubs
    numba_int16 = numba.types.int16         # a numba.core.types object

    @cuda.jit
    def k(out):
        v = numba_float32x2(numba_int16(70000), 2.5)  # int16(70000) wraps to 4464
        out[0] = v.x
        out[1] = v.y

    out = np.zeros(2)
    k[1, 1](out)
    target.assert_result("k", out, [70000 - 65536, 2.5])
