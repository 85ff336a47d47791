"""Functions defined inside kernels and device functions (language.md, "Functions
defined in kernels"): def and lambda, closing over arguments and locals,
called with several argument types, aliased, passed to and returned from
device functions, nested; and what Numba refuses, refused with its meaning.
Expected values are Numba's (checked with Numba 0.56's njit, which inlines
closures with the same machinery as its CUDA target, and its simulator)."""

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError, UnsupportedError


@cuda.jit(device=True)
def apply(f, x):
    return f(x)


@cuda.jit(device=True)
def make_tripler():
    def triple(y):
        return y * 3
    return triple


@cuda.jit(device=True)
def scaled_sum(x, a):
    # A closure in a device function, over its argument.
    def scale(y):
        return y * a
    return scale(x) + scale(1)


def test_closure_over_arguments_and_locals_called_with_two_types(target):
    @cuda.jit
    def k(x, out, a):
        i = cuda.grid(1)
        if i < x.size:
            offset = i * 10

            def inner(y):
                return y * a + offset
            out[i, 0] = inner(x[i])      # float64
            out[i, 1] = inner(i)         # int64: another specialisation
            out[i, 2] = inner(2.5)

    x = np.linspace(0.0, 1.0, 8)
    out = np.zeros((8, 3))
    k[1, 8](x, out, 3)
    i = np.arange(8)
    target.assert_result("k", out, np.stack([x * 3 + i * 10, i * 3 + i * 10,
                                             2.5 * 3 + i * 10], axis=1))


def test_closure_reads_the_variable_as_it_is_at_the_call(target):
    # Python (and Numba's inlining) read a captured variable when the
    # closure runs, not when it is defined.
    @cuda.jit
    def k(out, a):
        a = a + 1

        def inner(y):
            return y * a
        first = inner(3)
        a = a + 10
        out[0] = first
        out[1] = inner(3)

    out = np.zeros(2, np.int64)
    k[1, 1](out, 2)
    target.assert_result("k", out, np.array([9, 39]))


def test_lambdas_aliases_and_immediate_calls(target):
    @cuda.jit
    def k(out, a):
        g = lambda y: y + a    # noqa: E731
        h = g
        out[0] = h(3)
        out[1] = (lambda v: v * 3)(a)
        add = lambda p, q=10: p + q    # noqa: E731
        out[2] = add(1) + add(1, 2) + add(q=5, p=1)

    out = np.zeros(3, np.int64)
    k[1, 1](out, 2)
    target.assert_result("k", out, np.array([5, 6, 11 + 3 + 6]))


def test_closure_writes_into_a_captured_array(target):
    @cuda.jit
    def k(x, arr):
        def put(i):
            arr[i] = x * (i + 1)
        put(0)
        put(2)

    arr = np.zeros(3)
    k[1, 1](1.5, arr)
    target.assert_result("k", arr, np.array([1.5, 0.0, 4.5]))


def test_functions_passed_to_and_returned_from_device_functions(target):
    @cuda.jit
    def k(out, x):
        def double(y):
            return y * 2
        a = 5                              # a constant: may be captured

        def add_a(y):
            return y + a
        f = make_tripler()                 # a function returned by a device function
        out[0] = apply(double, x)          # a function argument
        out[1] = apply(add_a, x)
        out[2] = f(x) + apply(f, 1)
        out[3] = apply(lambda v: v - 1, x)
        out[4] = scaled_sum(x, 4)

    out = np.zeros(5, np.int64)
    k[1, 1](out, 7)
    target.assert_result("k", out, np.array([14, 12, 21 + 3, 6, 28 + 4]))
    markers = k.inspect_markers(k.signatures[0])
    # The callee is specialised per function passed, as Numba does.
    assert "@apply.xdouble." in markers and "@apply.xadd_a." in markers


def test_nested_closures_and_closures_calling_closures(target):
    @cuda.jit
    def k(out, x, a):
        def outer(y):
            def innermost(z):
                return z + a + y
            return innermost(y * 2)

        def g(y):
            return y + a

        def f(y):
            return g(y) * 2                # g's capture of a travels with f
        out[0] = outer(x)
        out[1] = f(x)

    out = np.zeros(2, np.int64)
    k[1, 1](out, 3, 2)
    target.assert_result("k", out, np.array([11, 10]))


def test_closure_in_a_loop_reads_the_loop_variable(target):
    @cuda.jit
    def k(out, n):
        acc = 0
        for i in range(n):
            f = lambda y: y + i    # noqa: E731
            acc += f(1)
        out[0] = acc

    out = np.zeros(1, np.int64)
    k[1, 1](out, 3)
    target.assert_result("k", out, np.array([6]))


# --- what Numba refuses ------------------------------------------------------


def test_capturing_closure_passed_to_a_device_function_is_refused():
    @cuda.jit
    def k(out, a):
        def inner(y):
            return y * a
        out[0] = apply(inner, 3)

    with pytest.raises(TypingError) as e:
        k[1, 1](np.zeros(1, np.int64), 2)
    assert "Cannot capture the non-constant value associated with variable 'a' in a " \
           "function that will escape" in str(e.value)
    assert "apply(inner, 3)" in str(e.value)


def test_capturing_closure_returned_or_put_in_a_tuple_is_refused():
    @cuda.jit(device=True)
    def make(a):
        def inner(y):
            return y * a
        return inner

    @cuda.jit
    def k(out, a):
        f = make(a)
        out[0] = f(1)

    with pytest.raises(TypingError) as e:
        k[1, 1](np.zeros(1, np.int64), 2)
    assert "Cannot capture the non-constant value associated with variable 'a'" in str(e.value)
    assert "return inner" in str(e.value)

    @cuda.jit
    def k2(out, a):
        def inner(y):
            return y * a
        t = (inner, 1)
        out[0] = t[1]

    with pytest.raises(TypingError) as e:
        k2[1, 1](np.zeros(1, np.int64), 2)
    assert "Cannot capture the non-constant value associated with variable 'a'" in str(e.value)
    assert "t = (inner, 1)" in str(e.value)


def test_recursion_through_a_closure_is_refused():
    @cuda.jit
    def k(out, n):
        def fact(m):
            if m <= 1:
                return 1
            return m * fact(m - 1)
        out[0] = fact(n)

    with pytest.raises(UnsupportedError) as e:
        k[1, 1](np.zeros(1, np.int64), 4)
    assert "recursion through a closure" in str(e.value)
    assert "def fact(m):" in str(e.value)


def test_inner_function_signatures_kernels_cannot_take_are_refused():
    @cuda.jit
    def k(out, n):
        def f(*xs):
            return 0
        out[0] = f(n)

    with pytest.raises(UnsupportedError, match=r"takes \*args and \*\*kwargs"):
        k[1, 1](np.zeros(1, np.int64), 4)

    @cuda.jit
    def k2(out, n):
        def f(x, y=n):
            return x + y
        out[0] = f(n)

    with pytest.raises(TypingError, match="defaults of function 'f' defined in a kernel must "
                                          "be constants, not 'n'"):
        k2[1, 1](np.zeros(1, np.int64), 4)


def test_nonlocal_in_an_inner_function_is_refused():
    @cuda.jit
    def k(out, a):
        def inner(y):
            nonlocal a
            a = y
            return a
        out[0] = inner(3) + a

    with pytest.raises(UnsupportedError, match="'nonlocal' statements are not supported"):
        k[1, 1](np.zeros(1, np.int64), 2)


def test_mutual_recursion_through_closures_is_refused():
    @cuda.jit
    def k(out, x):
        def f(y):
            return g(y) + 1

        def g(y):
            return f(y)
        out[0] = g(x)

    with pytest.raises(TypingError, match="reads 'g', which is not assigned where the function "
                                          "is defined"):
        k[1, 1](np.zeros(1, np.int64), 2)


def test_one_variable_holding_either_of_two_functions_is_refused():
    # Numba types this (a first-class function type); tidal's compile-time
    # objects are one per variable.
    @cuda.jit
    def k(out, x):
        f = lambda y: y + 1    # noqa: E731
        g = lambda y: y * 2    # noqa: E731
        if x > 0:
            h = f
        else:
            h = g
        out[0] = h(x)

    with pytest.raises(TypingError, match="variable 'h' is bound to different compile-time "
                                          "objects"):
        k[1, 1](np.zeros(1, np.int64), 2)
