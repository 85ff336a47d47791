"""A device function's declared return type (issue 24 section 2): each returned
value is cast to it as Numba casts it, and a value the type cannot hold is a
TypingError at the return. The expected values are Numba 0.56's (the same
functions under @njit with the same signatures, on this machine; numba-cuda
types and casts returns the same way), and neither warns for any of these
casts (Numba's type inference locks the return variable to the declared
type and checks only that a conversion exists)."""

import warnings

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError
from source_positions import position_of


def _identity(x):
    return x


def _double(x):
    return x * 2


def _pair(x):
    return (x, x)


def _none_or(x):
    if x < 0:
        return None
    return x


@pytest.mark.parametrize("signature, function, argument, dtype, expected", [
    ("int32(int64)", _double, 2**31 + 3, np.int64, 6),        # wraps
    ("int32(float64)", _identity, 2.7, np.float64, 2),        # truncates toward zero
    ("int32(float64)", _identity, -2.7, np.float64, -2),
    ("uint8(int64)", _identity, 300, np.int64, 44),
    ("boolean(int64)", _identity, 5, np.float64, 1.0),
    ("int64(boolean)", _identity, True, np.float64, 1.0),
    ("float32(float64)", _identity, 1e300, np.float64, np.inf),
    ("float32(float64)", _identity, 0.1, np.float64, float(np.float32(0.1))),
    ("complex64(float64)", _identity, 1.5, np.complex128, 1.5 + 0j),
])
def test_a_returned_value_is_cast_to_the_declared_type(target, signature, function, argument,
                                                       dtype, expected):
    device = cuda.jit(signature, device=True)(function)

    @cuda.jit
    def k(out, a):
        out[0] = device(a)

    out = np.zeros(1, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: Numba gives none
        warnings.filterwarnings("ignore", message="Grid size")
        warnings.filterwarnings("ignore", message="Host array")
        k[1, 1](out, argument)
    target.assert_result("k", out, [expected])


@pytest.mark.parametrize("signature, expected", [
    ("UniTuple(int32, 2)(int64)", [1, 1]),           # Numba's constructor form
    ("UniTuple(int32 x 2)(int64)", [1, 1]),          # as Numba prints it
    ("Tuple((int32, float64))(int64)", [1, 2**33 + 1]),
])
def test_a_returned_tuple_is_cast_element_by_element(target, signature, expected):
    device = cuda.jit(signature, device=True)(_pair)

    @cuda.jit
    def k(out, a):
        r = device(a)
        out[0] = r[0]
        out[1] = r[1]

    out = np.zeros(2, np.int64)
    k[1, 1](out, 2**33 + 1)
    target.assert_result("k", out, expected)


def _numba_optional_signature():
    types = pytest.importorskip("numba").types  # Debian's python3-numba, a test dependency
    return types.optional(types.int32)(types.int64)  # prints OptionalType(int32)


@pytest.mark.parametrize("signature", ["optional(int32)(int64)", _numba_optional_signature],
                         ids=["text", "numba-types"])
def test_a_declared_optional_return(target, signature):
    if callable(signature):
        signature = signature()
    device = cuda.jit(signature, device=True)(_none_or)

    @cuda.jit
    def k(out, x):
        for i in range(x.size):
            r = device(x[i])
            out[i] = -99 if r is None else r

    out = np.zeros(3, np.int64)
    k[1, 1](out, np.array([3, -1, 2**32 + 7]))
    target.assert_result("k", out, [3, -99, 7])


@pytest.mark.parametrize("signature, function, argument, message", [
    ("float64(complex128)", _identity, 1 + 2j, "cannot convert complex128 to float64"),
    ("int32(int64)", _pair, 1, r"cannot convert UniTuple\(int64 x 2\) to int32"),
    ("UniTuple(int32, 3)(int64)", _pair, 1,
     r"cannot convert UniTuple\(int64 x 2\) to UniTuple\(int32 x 3\)"),
    ("void(int64)", _double, 1, "cannot convert int64 to none"),
])
def test_a_value_the_declared_type_cannot_hold_is_an_error_at_the_return(signature, function,
                                                                          argument, message):
    device = cuda.jit(signature, device=True)(function)

    @cuda.jit
    def k(out, a):
        device(a)

    with pytest.raises(TypingError, match=message) as info:
        k[1, 1](np.zeros(1), argument)
    line, _ = position_of(function, "return")
    assert info.value.line == line


def test_none_where_the_declared_type_is_not_optional_is_an_error():
    # Numba: "No conversion from none to int32".
    device = cuda.jit("int32(int64)", device=True)(_none_or)

    @cuda.jit
    def k(out, a):
        out[0] = device(a)

    with pytest.raises(TypingError, match="device function returns int32 on other paths: a bare "
                                          "'return' here returns nothing") as info:
        k[1, 1](np.zeros(1), 1)
    assert info.value.line == position_of(_none_or, "return None")[0]
