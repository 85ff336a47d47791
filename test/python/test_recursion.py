"""Recursive device functions, typed as Numba types them: a function that
calls itself, with a declared signature or with the return type its other
returns give (typing goes round until the type settles); literal arguments
do not specialise the recursive calls; mutual recursion (f calls g calls f)
with f's return type as its returns typed before the cycle give it. Run-away
recursion (no return that types without calling itself) and mutual recursion
whose type is not known or changes are located errors."""

import numpy as np
import pytest

from tidal import cuda, int64
from tidal.errors import TypingError
from source_positions import position_of


@cuda.jit("i8(i8)", device=True)
def fib_declared(n):
    if n < 2:
        return n
    return fib_declared(n - 1) + fib_declared(n - 2)


@cuda.jit(device=True)
def fib_inferred(n):
    if n < 2:
        return n
    return fib_inferred(n - 1) + fib_inferred(n - 2)


@cuda.jit(device=True)
def power_first(x, n):
    # The recursive return comes first: its type comes from the later one.
    if n > 0:
        return x * power_first(x, n - 1)
    return 1.0


@pytest.mark.parametrize("fib", [fib_declared, fib_inferred], ids=["declared", "inferred"])
def test_self_recursion_computes_fibonacci(target, fib):
    @cuda.jit
    def kernel(r, x):
        i = cuda.grid(1)
        if i < x.size:
            r[i] = fib(x[i])

    x = np.arange(12, dtype=np.int64)
    r = np.zeros_like(x)
    kernel[1, 12](r, x)
    target.assert_result("kernel", r, np.array([0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89]))


def test_recursion_whose_base_case_comes_last(target):
    @cuda.jit
    def kernel(r, x):
        r[0] = power_first(x[0], 10)  # a literal argument: not unrolled
        r[1] = power_first(x[0], 3)

    r = np.zeros(2)
    kernel[1, 1](r, np.array([1.5]))
    target.assert_result("kernel", r, np.array([1.5 ** 10, 1.5 ** 3]))


def test_recursion_declared_inside_a_function(target):
    def make():
        @cuda.jit("i8(i8)", device=True)
        def factorial(n):
            if n <= 1:
                return 1
            return n * factorial(n - 1)
        return factorial

    factorial = make()

    @cuda.jit
    def kernel(r):
        r[0] = factorial(10)

    r = np.zeros(1, np.int64)
    kernel[1, 1](r)
    target.assert_result("kernel", r, np.array([3628800]))


@cuda.jit(device=True)
def runaway(x):
    return runaway(x)


def test_runaway_recursion_is_a_located_typing_error():
    with pytest.raises(TypingError) as info:
        @cuda.jit("void()")
        def kernel():
            runaway(1)
    message = str(info.value)
    assert "cannot type infer runaway recursion: device function 'runaway'" in message
    line, column = position_of(runaway.py_func, "runaway(x)\n")
    assert (info.value.line, info.value.column) == (line, column)


@cuda.jit(device=True)
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@cuda.jit(device=True)
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def test_mutual_recursion(target):
    @cuda.jit
    def kernel(r, x):
        i = cuda.grid(1)
        if i < x.size:
            r[i] = is_even(x[i])

    x = np.arange(40)
    r = np.zeros(40, np.bool_)
    kernel[2, 32](r, x)
    target.assert_result("kernel", r, x % 2 == 0)


@cuda.jit(device=True)
def countdown_a(n):
    if n <= 0:
        return 0
    return countdown_b(n - 1) + 1


@cuda.jit(device=True)
def countdown_b(n):
    if n <= 0:
        return 0.5  # a float where countdown_a's calls were typed as int64
    return countdown_a(n - 1)


@cuda.jit(device=True)
def recurse_first(n):
    if n > 0:
        return recurse_second(n - 1)
    return 1


@cuda.jit(device=True)
def recurse_second(n):
    return recurse_first(n)


def test_mutual_recursion_errors_are_located():
    @cuda.jit
    def widening(r, x):
        r[0] = countdown_a(x[0])

    with pytest.raises(TypingError) as info:
        widening[1, 1](np.zeros(1), np.array([4]))
    assert "the return type of 'countdown_a' (float64) differs from the type its mutually " \
           "recursive calls were given (int64)" in str(info.value)

    @cuda.jit
    def no_type_yet(r, x):
        r[0] = recurse_first(x[0])

    with pytest.raises(TypingError) as info:
        no_type_yet[1, 1](np.zeros(1), np.array([4]))
    assert "cannot type the mutually recursive call of 'recurse_first'" in str(info.value)
    line, column = position_of(recurse_second.py_func, "recurse_first(n)")
    assert (info.value.line, info.value.column) == (line, column)


@cuda.jit(device=True)
def make_list(n):
    if n <= 0:
        return None
    return (n, make_list(n - 1))


def test_a_recursive_return_type_that_grows_is_a_located_typing_error():
    with pytest.raises(TypingError) as info:
        @cuda.jit("void()")
        def kernel():
            make_list(100)
    assert "Return type of recursive function does not converge" in str(info.value)
    line, column = position_of(make_list.py_func, "return (n, make_list(n - 1))")
    assert (info.value.line, info.value.column) == (line, column)
