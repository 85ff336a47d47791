"""Numba's extension API beyond overload(): keyword arguments and defaults
in calls of overloaded and device functions, overload_method,
overload_attribute and prefer_literal (tidal.extending), on every target,
with the errors located at the use."""

import numpy as np
import pytest

from tidal import cuda, float64, int64
from tidal.errors import TypingError
from tidal.extending import Literal, overload, overload_attribute, overload_method
from tidal.types import ArrayType, NumberType


def test_device_function_parameters_take_their_defaults(target):
    @cuda.jit(device=True)
    def axpy(x, a=2, b=0.5):
        return a * x + b

    @cuda.jit
    def use(x, out):
        out[0] = axpy(x[0])
        out[1] = axpy(x[0], 3)
        out[2] = axpy(x[0], b=1.25)
        out[3] = axpy(b=-1.0, x=x[0], a=10)

    x = np.array([4.0])
    out = np.zeros(4)
    use[1, 1](x, out)
    target.assert_result("use", out, [8.5, 12.5, 9.25, 39.0])


def test_a_missing_parameter_without_default_is_a_located_error(target):
    @cuda.jit(device=True)
    def needs_two(x, y, z=1):
        return x + y + z

    @cuda.jit
    def use(out):
        out[0] = needs_two(1)

    with pytest.raises(TypingError, match=r"test_overload_members.py:\d+:\d+: device function "
                                          r"'needs_two' takes 3 arguments but 1 were given "
                                          r"\(missing 'y'\)"):
        use[1, 1](np.zeros(1))


def test_overloaded_functions_take_keywords_and_defaults(target):
    def clip(x, low=0.0, high=1.0):
        raise AssertionError("the Python function itself is never called in a kernel")

    seen = []

    @overload(clip, target="cuda")
    def clip_typing(x, low=0.0, high=1.0):
        seen.append((x, low, high))

        def impl(x, low=0.0, high=1.0):
            return min(max(x, low), high)
        return impl

    @cuda.jit
    def use(x, out):
        out[0] = clip(x[0])
        out[1] = clip(x[0], high=3.0)
        out[2] = clip(x[1], -5.0)
        out[3] = clip(high=10.0, x=x[0], low=7.0)

    x = np.array([2.5, -7.0])
    out = np.zeros(4)
    use[1, 1](x, out)
    target.assert_result("use", out, [1.0, 2.5, -5.0, 7.0])
    # The typing function got the types of what was passed, by name, and
    # its own defaults for the rest (as Numba calls it).
    assert (float64, 0.0, 1.0) in seen
    assert (float64, 0.0, float64) in seen
    assert (float64, float64, float64) in seen


# Registered once: a second registration of the same name would come after
# this one, which keeps answering.
SCALED_FIRST_SEEN = []


@overload_method(ArrayType, "scaled_first")
def scaled_first_typing(a, factor=10):
    SCALED_FIRST_SEEN.append(str(a))

    def impl(a, factor=10):
        return a[0] * factor
    return impl


def test_overload_method_on_arrays_with_keywords(target):
    @cuda.jit
    def use(a, out):
        out[0] = a.scaled_first()
        out[1] = a.scaled_first(20)
        out[2] = a.scaled_first(factor=30)

    a = np.array([1.5, 2.0])
    out = np.zeros(3)
    use[1, 1](a, out)
    target.assert_result("use", out, [15.0, 30.0, 45.0])
    assert SCALED_FIRST_SEEN and set(SCALED_FIRST_SEEN) == {"float64[::1]"}


def test_overload_method_on_numbers_of_a_type_or_a_class(target):
    @overload_method(NumberType, "twice", target="cuda")
    def twice_typing(x):
        return lambda x: x * 2

    @overload_method(float64, "negated")  # one type only
    def negated_typing(x):
        return lambda x: -x

    @cuda.jit
    def use(a, n, out):
        out[0] = a[0].twice() + n.twice()
        out[1] = a[0].negated()

    out = np.zeros(2)
    use[1, 1](np.array([1.25]), 3, out)
    target.assert_result("use", out, [8.5, -1.25])

    @cuda.jit
    def on_an_integer(n, out):
        out[0] = n.negated()

    with pytest.raises(TypingError, match=r"test_overload_members.py:\d+:\d+: unknown attribute "
                                          r"'negated' of int64"):
        on_an_integer[1, 1](3, np.zeros(1))


def test_overload_methods_registered_with_numbas_type_classes(target):
    types = pytest.importorskip("numba.core.types", reason="Numba (python3-numba) is needed to "
                                                           "name its type classes")

    @overload_method(types.Array, "last")
    def last_typing(a):
        return lambda a: a[a.shape[0] - 1]

    @overload_attribute(types.Integer, "doubled")
    def doubled_typing(n):
        return lambda n: n * 2

    @cuda.jit
    def use(a, n, out):
        out[0] = a.last() + n.doubled

    out = np.zeros(1)
    use[1, 1](np.array([1.0, 2.0, 7.0]), 4, out)
    target.assert_result("use", out, [15.0])

    @cuda.jit
    def doubled_float(x, out):
        out[0] = x.doubled

    with pytest.raises(TypingError, match=r"unknown attribute 'doubled' of float64"):
        doubled_float[1, 1](1.5, np.zeros(1))


def test_overload_attribute_on_arrays(target):
    @overload_attribute(ArrayType, "half_size")
    def half_size_typing(a):
        return lambda a: a.size // 2

    @cuda.jit
    def use(a, out):
        out[0] = a.half_size
        out[1] = out.half_size + a.shape[0]

    a = np.zeros((3, 4))
    out = np.zeros(2, np.int64)
    use[1, 1](a, out)
    target.assert_result("use", out, [6, 4])


def test_prefer_literal_gives_the_typing_function_the_value(target):
    def power(x, n):
        raise AssertionError("never called in Python")

    seen = []

    @overload(power, prefer_literal=True, target="cuda")
    def power_typing(x, n):
        seen.append(n)
        if not isinstance(n, Literal):
            return None
        exponent = n.literal_value

        def impl(x, n):
            result = 1.0
            for _ in range(exponent):
                result *= x
            return result
        return impl

    @cuda.jit
    def use(x, out):
        out[0] = power(x[0], 3)

    out = np.zeros(1)
    use[1, 1](np.array([1.5]), out)
    target.assert_result("use", out, [1.5 ** 3])
    assert seen[0] == Literal(int64, 3) and str(seen[0]) == "Literal[int](3)"

    # Without prefer_literal, the plain type comes first and the literal
    # only when it gives no implementation, as in Numba.
    def root(x, n):
        raise AssertionError("never called in Python")

    tried = []

    @overload(root, target="cuda")
    def root_typing(x, n):
        tried.append(n)
        if isinstance(n, Literal):
            return lambda x, n: x ** (1.0 / n)
        return None

    @cuda.jit
    def use_root(x, out):
        out[0] = root(x[0], 2)

    use_root[1, 1](np.array([9.0]), out)
    target.assert_result("use_root", out, [3.0])
    assert tried == [int64, Literal(int64, 2)]


def test_method_typing_that_returns_none_leaves_the_attribute_unknown(target):
    @overload_method(ArrayType, "only_for_ints")
    def only_for_ints_typing(a):
        if a.dtype is not int64:
            return None
        return lambda a: a[0]

    @cuda.jit
    def use(a, out):
        out[0] = a.only_for_ints()

    with pytest.raises(TypingError, match=r"test_overload_members.py:\d+:\d+: no implementation "
                                          r"of overloaded method 'only_for_ints' of "
                                          r"array\(float64, 1d, C\) for argument types "
                                          r"\(array\(float64, 1d, C\)\)"):
        use[1, 1](np.zeros(1), np.zeros(1))


def test_bad_member_registrations_are_refused():
    with pytest.raises(TypeError, match=r"overload_method\(\) takes a type class .* not 3"):
        overload_method(3, "f")
    with pytest.raises(TypeError, match=r"overload_attribute\(\) takes the name of the "
                                        r"attribute as a string, not 7"):
        overload_attribute(ArrayType, 7)
    with pytest.raises(ValueError, match=r"overload_method\(\): unknown target 'opencl'"):
        overload_method(ArrayType, "f", target="opencl")
