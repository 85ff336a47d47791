"""Signatures in every form a Numba user writes them (tidal/cuda/signatures.py):
tidal's and Numba's text, tidal's type objects, Numba's type objects
(numba.core.types, numba.from_dtype records), argument tuples without a return
type; Numba types and dtype strings where a kernel takes a dtype; and the
errors for what is not a type."""

import io

import numpy as np
import pytest

from tidal import cuda, float32, int64, void
from tidal.cuda import signatures
from tidal.errors import TypingError

numba_types = pytest.importorskip("numba.core.types")
numba = pytest.importorskip("numba")


def scale(out, x, factor):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * factor


SCALE_FORMS = [
    "void(float32[::1], float32[::1], intp)",
    "(float32[::1], float32[::1], int64)",                       # no return type
    "void(array(float32, 1d, C), array(float32, 1d, C), int64)",  # Numba's text
    "(array(float32, 1d, C), array(float32, 1d, C), int64) -> none",  # a printed Signature
    void(float32[::1], float32[::1], int64),                     # tidal's objects
    (float32[::1], float32[::1], int64),
    numba_types.void(numba_types.float32[::1], numba_types.float32[::1], numba_types.intp),
    (numba_types.float32[::1], numba_types.float32[::1], numba_types.int64),
    [numba.float32[::1], numba.float32[::1], numba.intp],        # a list: the arguments
]


@pytest.mark.parametrize("form", SCALE_FORMS, ids=range(len(SCALE_FORMS)))
def test_every_form_declares_the_same_kernel(target, form):
    kernel = cuda.jit(form if not isinstance(form, list) else [tuple(form)])(scale)
    assert kernel.signatures == [
        "(array(float32, 1d, C), array(float32, 1d, C), int64)"]
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    kernel[1, 8](out, x, 3)
    target.assert_result("scale", out, x * 3)


def test_compile_takes_every_form_too():
    kernel = cuda.jit(scale)
    texts = {kernel.compile(form) for form in SCALE_FORMS}
    assert texts == {"(array(float32, 1d, C), array(float32, 1d, C), int64)"}
    assert len(kernel.signatures) == 1


def test_layouts_tuples_and_aliases_normalise():
    cases = {
        "void(float32[:, ::1], f8[::1, :], i4[:, :])":
            "void(float32[:, ::1], float64[::1, :], int32[:, :])",
        "void(UniTuple(int64 x 2), Tuple(int32, float32), double, bool_)":
            "void((int64, int64), (int32, float32), float64, bool)",
        "float32(int32)": "float32(int32)",
        "(float32[::1], intp)": "(float32[::1], int64)",
        "void(array(int16, 2d, F), array(uint8, 3d, A))":
            "void(int16[::1, :], uint8[:, :, :])",
        "": "()",
    }
    for text, expected in cases.items():
        assert repr(signatures.signature_of(text)) == expected, text
    objects = {
        numba_types.UniTuple(numba_types.int64, 3): "(int64, int64, int64)",
        numba_types.float32[:, ::1]: "float32[:, ::1]",
        numba_types.float32[::1, :]: "float32[::1, :]",
        numba_types.complex64: "complex64",
        numba.double: "float64",
        np.dtype(np.int16): "int16",
        np.float16: "float16",
    }
    # tidal's void and scalars build signatures around Numba's types too.
    assert repr(signatures.signature_of(void(numba_types.float32[::1], int64))) == \
        "void(float32[::1], int64)"
    for value, expected in objects.items():
        assert signatures.canonical_text(signatures.type_of(value)) == expected, value


def test_device_function_signatures_from_numba_types(target):
    @cuda.jit(numba_types.float32(numba_types.float32, numba_types.int32), device=True)
    def twice_plus(x, n):
        return x * 2 + n

    @cuda.jit((numba_types.float32[::1],))
    def run(out):
        out[0] = twice_plus(1.25, 3)

    assert twice_plus.signatures == ["float32(float32, int32)"]
    out = np.zeros(1, np.float32)
    run[1, 1](out)
    target.assert_result("run", out, np.array([5.5], np.float32))


def test_records_from_numba_types(target):
    dtype = np.dtype([("a", np.int32), ("b", np.float64)], align=True)
    record = numba.from_dtype(dtype)

    @cuda.jit((record[:],))
    def copy_b_to_a(items):
        i = cuda.grid(1)
        if i < items.size:
            items[i].a = items[i].b

    items = np.zeros(3, dtype)
    items["b"] = [1.0, 2.0, 3.0]
    copy_b_to_a[1, 3](items)
    target.assert_result("copy_b_to_a", items["a"], np.array([1, 2, 3], np.int32))
    # np.recarray's dtype (numpy.record) reports alignment 1 for the same
    # aligned layout: it still matches the declared record.
    records = np.recarray(3, dtype=dtype)
    records.b = [4.0, 5.0, 6.0]
    copy_b_to_a[1, 3](records)
    target.assert_result("copy_b_to_a", records.a, np.array([4, 5, 6], np.int32), launches=2)
    # The record's text form, as str() of Numba's type prints it, reads too.
    parsed = signatures.type_of(str(record))
    assert parsed == ("record", dtype)


def test_read_only_arrays_from_numba_types():
    readonly = numba_types.Array(numba_types.float32, 1, "C", readonly=True)

    @cuda.jit((readonly, numba_types.float32[::1]))
    def copy(x, out):
        out[0] = x[0]

    assert copy.signatures == ["(readonly array(float32, 1d, C), array(float32, 1d, C))"]


def test_dtypes_inside_kernels_from_numba_types_and_strings(target):
    @cuda.jit
    def fill(out):
        local = cuda.local.array(2, numba_types.int32)
        shared = cuda.shared.array(2, dtype="float64")
        half = cuda.local.array(1, numba_types.float16)
        flags = cuda.shared.array(1, numba_types.boolean)
        local[0] = 7
        shared[0] = 0.5
        half[0] = 2
        flags[0] = True
        out[0] = local[0] + shared[0] + half[0] + flags[0]

    out = np.zeros(1)
    fill[1, 1](out)
    target.assert_result("fill", out, np.array([10.5]))
    listing = io.StringIO()
    fill.inspect_types(file=listing)
    for typed in ("local = array(int32, 1d, C)", "shared = array(float64, 1d, C)",
                  "half = array(float16, 1d, C)", "flags = array(bool, 1d, C)"):
        assert typed in listing.getvalue()


def test_bad_dtypes_inside_kernels_are_located_errors():
    @cuda.jit
    def bad_string(out):
        local = cuda.local.array(2, dtype="int33")
        out[0] = local[0]

    with pytest.raises(TypingError, match=r"test_signatures.py:\d+:\d+: "
                                          r"Invalid NumPy dtype specified: 'int33'"):
        bad_string[1, 1](np.zeros(1))

    pair = numba_types.UniTuple(numba_types.int32, 2)

    @cuda.jit
    def not_a_dtype(out):
        local = cuda.local.array(2, pair)
        out[0] = local[0]

    with pytest.raises(TypingError, match=r"expected a dtype .* got UniTuple\(int32 x 2\)"):
        not_a_dtype[1, 1](np.zeros(1))


def test_bad_signatures_are_clear_errors():
    bad = {
        "void(flaot32[:])": r"unknown type 'flaot32' at column 6",
        "void(float32[::1, ::1])": r"only one dimension can be '::1'",
        "void(array(float32, 1x, C))": r"expected 'd' at column 22",
        "void(array(float32, 1d, Q))": r"expected the layout C, F or A",
        "void(float32[::1]": r"expected '\)'",
        "void(float32) extra": r"unexpected text",
        "void(UniTuple(int64 x ))": r"expected a number",
    }
    for text, message in bad.items():
        with pytest.raises(TypeError, match=message):
            cuda.jit(text)(scale)
    with pytest.raises(TypeError, match=r"must return void, not float32 \(kernel 'scale'\)"):
        cuda.jit(numba_types.float32(numba_types.float32[::1]))(scale)
    with pytest.raises(TypeError, match=r"unknown type 'not'"):
        cuda.jit(("not a type",))(scale)
    with pytest.raises(TypeError, match=r"<object object .*> is not a type"):
        cuda.jit((object(),))(scale)
    with pytest.raises(TypeError, match=r"cannot be declared in a device function's signature"):
        cuda.jit((numba.from_dtype(np.dtype([("a", np.int32)]))[:],), device=True)(scale)


def test_declared_ints_take_floats_but_never_complex_numbers(target):
    # Numba's test_coerce_input_types_unsafe_complex: no conversion from
    # complex to a real type, safe or unsafe.
    @cuda.jit("(i4[::1], i4, i4)")
    def add_kernel(r, x, y):
        r[0] = x + y

    r = np.zeros(1, dtype=np.int32)
    add_kernel[1, 1](r, 12.3, 45.6)
    target.assert_result("add_kernel", r, np.array([57], np.int32))
    with pytest.raises(TypeError, match=r"No matching definition .* nor complex numbers to "
                                        r"real types"):
        add_kernel[1, 1](r, 12.3, 45.6j)
