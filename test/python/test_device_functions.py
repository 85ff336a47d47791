"""@cuda.jit(device=True): compiled per argument types into the caller's
module; several returns, tuples, keyword arguments, declared signatures (the
kernels that call them run on every target)."""

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError, UnsupportedError


@cuda.jit(device=True)
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@cuda.jit(device=True)
def floor_divmod(a, b):
    return a // b, a % b


@cuda.jit("float64(float64)", device=True)
def half(x):
    return x / 2


@cuda.jit(device=True)
def twice_clamped(x):
    return 2 * clamp(x, -1.0, 1.0)  # device functions call each other


def test_several_returns_tuples_and_declared_signature(target):
    @cuda.jit
    def k(x, out, q, r):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = twice_clamped(x[i]) + half(i)
            q[i], r[i] = floor_divmod(i - 10, 3)

    x = np.linspace(-3, 3, 50)
    out = np.zeros(50)
    q = np.zeros(50, np.int64)
    r = np.zeros(50, np.int64)
    k[1, 64](x, out, q, r)
    i = np.arange(50)
    target.assert_result("k", out, 2 * np.clip(x, -1, 1) + i / 2)
    target.assert_result("k", q, (i - 10) // 3)
    target.assert_result("k", r, (i - 10) % 3)


def test_specialised_per_argument_types_and_keywords(target):
    @cuda.jit
    def k(ints, floats):
        i = cuda.grid(1)
        if i < ints.size:
            ints[i] = clamp(ints[i], lo=0, hi=5)
            floats[i] = clamp(floats[i], hi=0.5, lo=-0.5)

    ints = np.arange(-4, 12, dtype=np.int64)
    floats = np.linspace(-1, 1, 16)
    k[1, 16](ints, floats)
    target.assert_result("k", ints, np.clip(np.arange(-4, 12), 0, 5))
    target.assert_result("k", floats, np.clip(np.linspace(-1, 1, 16), -0.5, 0.5))
    markers = k.inspect_markers(k.signatures[0])
    # Integer literals specialise the callee on their values (language.md).
    assert "define internal i64 @clamp.i64.i64c0.i64c5(" in markers
    assert "define internal double @clamp.f64.f64.f64(" in markers


def test_device_function_called_from_python_runs_as_python():
    assert clamp(7, 0, 5) == 5


def test_wrong_number_of_arguments_to_a_device_function():
    @cuda.jit
    def k(out):
        out[0] = clamp(1.0, 2.0)

    with pytest.raises(TypingError) as info:
        k[1, 1](np.zeros(1))
    assert "device function 'clamp' takes 3 arguments but 2 were given" in str(info.value)


def test_a_kernel_called_from_a_kernel_compiles_as_a_device_function(target):
    # As in Numba: a @cuda.jit dispatcher without device=True called from a
    # kernel compiles its function as a device function.
    @cuda.jit
    def inner(x):
        return x * 2

    @cuda.jit
    def outer(out):
        out[0] = inner(21)

    out = np.zeros(1)
    outer[1, 1](out)
    target.assert_result("outer", out, np.array([42.0]))


def test_calling_a_kernel_with_declared_signatures_from_a_kernel_is_an_error():
    @cuda.jit("void(float64[:])")
    def inner(out):
        out[0] = 1

    @cuda.jit
    def outer(out):
        inner(out)

    with pytest.raises(TypingError, match="a kernel compiled for declared signatures cannot be "
                                          "called from a kernel"):
        outer[1, 1](np.zeros(1))


def test_error_inside_a_device_function_points_into_it():
    @cuda.jit(device=True)
    def broken(x):
        return x + undefined_name  # noqa: F821

    @cuda.jit
    def k(out):
        out[0] = broken(1.0)

    with pytest.raises(TypingError) as info:
        k[1, 1](np.zeros(1))
    err = info.value
    assert "NameError: name 'undefined_name' is not defined" in str(err)
    assert "return x + undefined_name" in str(err)
    # Numba's words for the call that led there, which its users search for.
    assert "During: resolving callee type: type(CUDADispatcher(<function broken>))" in str(err)


def test_return_type_unifies_over_returns(target):
    @cuda.jit(device=True)
    def pick(flag):
        if flag:
            return 1
        return 2.5

    @cuda.jit
    def k(out):
        # Run-time flags: both branches are typed (a literal flag would
        # prune the other, see test_device_function_values.py).
        out[0] = pick(out.size > 0)
        out[1] = pick(out.size < 0)

    out = np.zeros(2)
    k[1, 1](out)
    target.assert_result("k", out, [1.0, 2.5])
    assert "define internal double @pick.b1(" in k.inspect_markers(k.signatures[0])


def test_every_branch_of_an_if_elif_else_returning_is_a_complete_function(target):
    # Issue 12 section 3: rejected as "can reach its end without a return"
    # (the nested if of the elif left an unreachable block that branched to
    # the end). Expected values: Python's (and Numba's simulator's).
    @cuda.jit(device=True)
    def sign(x):
        if x > 0:
            return 1
        elif x < 0:
            return -1
        else:
            return 0

    @cuda.jit(device=True)
    def quadrant(a, b):
        if a > 0:
            if b > 0:
                return 1
            else:
                return 2
        elif a < 0:
            return 3
        else:
            if b > 0:
                return 4
            elif b < 0:
                return 5
            return 6

    @cuda.jit(device=True)
    def first_above(x, limit):
        i = 0
        while True:
            if x[i] > limit:
                return i
            i += 1

    @cuda.jit
    def k(out, a, b):
        for i in range(a.size):
            out[0, i] = sign(a[i])
            out[1, i] = quadrant(a[i], b[i])
        out[2, 0] = first_above(b, 0.5)

    a = np.array([1.0, 1.0, -1.0, 0.0, 0.0, 0.0])
    b = np.array([1.0, 0.0, 0.0, 1.0, -1.0, 0.0])
    out = np.zeros((3, a.size), np.int64)
    k[1, 1](out, a, b)
    expected = np.zeros((3, a.size), np.int64)
    for i in range(a.size):
        expected[0, i] = sign.py_func(a[i])
        expected[1, i] = quadrant.py_func(a[i], b[i])
    expected[2, 0] = first_above.py_func(b, 0.5)
    assert expected[1].tolist() == [1, 2, 3, 4, 5, 6]  # every path taken
    target.assert_result("k", out, expected)


def test_a_path_without_a_return_returns_none(target):
    # Python returns None at the end of a function: Numba types partial as
    # Optional(int64), which a caller tests with `is None` (issue 24 section 2).
    @cuda.jit(device=True)
    def partial(x):
        if x > 0:
            return 1
        elif x < 0:
            return -1

    @cuda.jit
    def k(out, x):
        for i in range(x.size):
            r = partial(x[i])
            out[i] = 99 if r is None else r

    x = np.array([2.0, 0.0, -3.0])
    out = np.zeros(3, np.int64)
    k[1, 1](out, x)
    expected = [99 if partial.py_func(v) is None else partial.py_func(v) for v in x]
    assert expected == [1, 99, -1]
    target.assert_result("k", out, expected)


def test_a_reachable_end_of_a_declared_function_is_a_typing_error():
    # Declared int64, its end returns None, which int64 cannot hold.
    @cuda.jit("int64(float64)", device=True)
    def partial(x):
        if x > 0:
            return 1

    @cuda.jit
    def k(out, x):
        out[0] = partial(x[0])

    with pytest.raises(TypingError, match=r"\.py:\d+:5: device function 'partial' returns int64 on "
                                          r"some paths but can reach its end without a return"):
        k[1, 1](np.zeros(1, np.int64), np.zeros(1))


def test_ends_that_no_path_reaches_are_complete_functions(target):
    # Typing's reachability check (before any IR): a `while True:` left only
    # by return, and an `if` on a constant, end the function.
    @cuda.jit(device=True)
    def count_up_to(x, limit):
        n = 0
        while True:
            if x >= limit:
                return n
            x += 1
            n += 1

    @cuda.jit(device=True)
    def constant_branch(x):
        if True:
            return x * 2

    @cuda.jit
    def k(out):
        out[0] = count_up_to(3, 10)
        out[1] = constant_branch(21)

    out = np.zeros(2, np.int64)
    k[1, 1](out)
    target.assert_result("k", out, [7, 42])


def _breaks_out_of_the_loop(x):
    while True:
        if x > 10:
            break
        if x < -10:
            return 2
        x += 1


def _returns_only_inside_a_for_loop(n):
    for i in range(n):
        return i


def _returns_only_in_an_if_without_else(x):
    if x > 0:
        return 1
    x += 1


@pytest.mark.parametrize("function", [_breaks_out_of_the_loop, _returns_only_inside_a_for_loop,
                                      _returns_only_in_an_if_without_else])
def test_a_reachable_end_returns_none(function, target):
    # Each of these can reach its end: it returns None there (Optional(int64)).
    device = cuda.jit(device=True)(function)

    @cuda.jit
    def k(out, x):
        for i in range(x.size):
            r = device(x[i])
            out[i] = -99 if r is None else r

    x = np.array([1, 0, -20])
    out = np.zeros(3, np.int64)
    k[1, 1](out, x)
    expected = [-99 if function(v) is None else function(v) for v in x.tolist()]
    assert -99 in expected
    target.assert_result("k", out, expected)


def test_inspect_types_shows_each_variables_type(capsys):
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        s = 0
        for j in range(3):
            s += x[i] * j
        out[i] = s

    k[1, 4](np.ones(4, np.float32), np.zeros(4))
    k.inspect_types()
    text = capsys.readouterr().out
    assert text.startswith("k (array(float32, 1d, C), array(float64, 1d, C))")
    assert "#   s = float64" in text          # int then float32: float64
    assert "#   i = int64" in text and "#   j = int64" in text  # range of an int64 literal
    assert "s += x[i] * j" in text and "# --- LINE " in text


# Lambdas: compiled as a def that returns the lambda's body, from the line
# that holds it; two lambdas on one line are told apart.
scale_and_shift = cuda.jit(device=True)(lambda x, a: a * x + 1.0)
pick_first, pick_second = cuda.jit(device=True)(lambda p, q: p), cuda.jit(device=True)(lambda p, q: q)


def test_lambdas_are_device_functions(target):
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = scale_and_shift(x[i], 3.0) + pick_second(0.0, x[i]) - pick_first(x[i], 5.0)

    x = np.linspace(-1.0, 1.0, 40)
    out = np.zeros_like(x)
    k[1, 64](x, out)
    target.assert_result("k", out, 3.0 * x + 1.0 + x - x, rtol=1e-12)


def test_an_error_in_a_lambda_points_into_its_line():
    bad = cuda.jit(device=True)(lambda v: v.no_such_attribute)

    @cuda.jit
    def k(out):
        out[0] = bad(1.0)

    with pytest.raises(TypingError) as info:
        k[1, 1](np.zeros(1))
    message = str(info.value)
    assert "test_device_functions.py:" in message and "no_such_attribute" in message
    line = bad.py_func.__code__.co_firstlineno if hasattr(bad, "py_func") else None
    assert line is None or f"test_device_functions.py:{line}:" in message
