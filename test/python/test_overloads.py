"""Python functions given implementations for kernels (tidal.extending:
Numba's overload(func, target=...) and register_jitable), on every target:
which overload a call takes, the types its typing function sees, caching,
and the errors, located at the call."""

import numpy as np
import pytest

from tidal import cuda, float32, float64, int64
from tidal.errors import TypingError
from tidal.extending import overload, register_jitable


def pick():
    pass


def unsupported_here(a):
    pass


def raising(a):
    pass


@overload(pick, target="generic")
def pick_generic():
    return lambda: 1


@overload(pick, target="cpu")  # not for kernels
def pick_cpu():
    return lambda: 2


@register_jitable
def halve(x):
    return x / 2


@overload(unsupported_here)
def unsupported_here_typing(a):
    return None


@overload(raising)
def raising_typing(a):
    raise ValueError("no arrays, please")


@cuda.jit
def use_halve(a, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = halve(a[i]) + halve(7)


def test_cuda_overloads_come_before_generic_ones(target):
    # Defined here, so that each target's run types them afresh.
    def scale(x, factor):
        raise AssertionError("the Python function itself is never called in a kernel")

    seen = []

    @overload(scale, target="generic")
    def scale_generic(x, factor):
        seen.append(("generic", x, factor))
        def impl(x, factor):
            return x * factor + 1000
        return impl

    @overload(scale, target="cuda")
    def scale_for_kernels(x, factor):
        seen.append(("cuda", x, factor))
        if x is float32:
            return None  # the generic overload takes float32
        def impl(x, factor):
            return x * factor
        return impl

    @cuda.jit
    def use_scale(a, b, out, out32):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = scale(a[i], 3.0) + scale(b[i], 2) + pick()
            out32[i] = scale(np.float32(a[i]), np.float32(2.0))

    a = np.arange(8, dtype=np.float64)
    b = np.arange(8, dtype=np.int64)
    out, out32 = np.zeros(8), np.zeros(8, np.float32)
    use_scale[1, 8](a, b, out, out32)
    if target.computes:
        np.testing.assert_array_equal(out, a * 3 + b * 2 + 1)
        np.testing.assert_array_equal(out32, a.astype(np.float32) * 2 + 1000)
    # The typing functions saw tidal's type objects; the cuda one first.
    assert ("cuda", float64, float64) in seen
    assert ("cuda", int64, int64) in seen
    assert seen.index(("cuda", float32, float32)) < seen.index(("generic", float32, float32))
    # Typed once per argument types: a second launch asks nothing again.
    count = len(seen)
    use_scale[1, 8](a, b, out, out32)
    assert len(seen) == count


def test_register_jitable_functions_run_in_kernels_and_in_python(target):
    a = np.arange(6, dtype=np.float64)
    out = np.zeros(6)
    use_halve[1, 6](a, out)
    if target.computes:
        np.testing.assert_array_equal(out, a / 2 + 3.5)
    assert halve(5) == 2.5  # still the Python function


def test_array_types_reach_the_typing_function(target):
    def first(a):
        pass

    seen = []

    @overload(first, target="cuda")
    def first_typing(a):
        seen.append(a)
        return lambda a: a[0]

    @cuda.jit
    def use_first(a, out):
        out[0] = first(a)

    a = np.arange(3, dtype=np.float32) + 5
    out = np.zeros(1, np.float32)
    use_first[1, 1](a, out)
    assert [str(t) for t in seen] == ["float32[::1]"]
    if target.computes:
        assert out[0] == 5


def test_no_implementation_is_a_located_typing_error(target):
    @cuda.jit
    def use(a):
        unsupported_here(a)

    with pytest.raises(TypingError, match=r"test_overloads.py:\d+:\d+: no implementation of "
                                          r"overloaded 'unsupported_here' for argument types "
                                          r"\(array\(float64, 1d, C\)\): its typing functions "
                                          r"returned None: unsupported_here_typing \(generic\)"):
        use[1, 1](np.zeros(2))


def test_a_typing_function_that_raises_is_a_located_typing_error(target):
    @cuda.jit
    def use(a):
        raising(a)

    with pytest.raises(TypingError, match=r"test_overloads.py:\d+:\d+: the typing function "
                                          r"raising_typing of overloaded 'raising' raised "
                                          r"ValueError: no arrays, please"):
        use[1, 1](np.zeros(2))


def test_bad_registrations_are_refused():
    with pytest.raises(ValueError, match=r"overload\(\): unknown target 'opencl'"):
        overload(pick, target="opencl")
    with pytest.raises(TypeError, match=r"overload\(\) takes the function to overload, not int"):
        overload(3)
    with pytest.raises(TypeError, match=r"decorates the typing function, not str"):
        overload(pick)("not a function")
