"""Python semantics as Numba computes them, checked against CPython running
the same function body for each thread index, on every target."""

import numpy as np
import pytest

from tidal import cuda


def check_per_thread(target, kernel, reference, n, dtype=np.int64):
    """kernel(out) writes out[i] = f(i) for each thread; reference(i) is f."""
    out = np.zeros(n, dtype=dtype)
    kernel[(n + 31) // 32, 32](out)
    expected = np.array([reference(i) for i in range(n)], dtype=dtype)
    target.assert_result(kernel.__name__, out, expected)


def test_floor_division_and_modulo_follow_python(target):
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            a = i - 20
            b = i % 7 - 3
            out[i, 0] = a // b if b != 0 else 0
            out[i, 1] = a % b if b != 0 else 0
            out[i, 2] = a // 4
            out[i, 3] = a % -3

    out = np.zeros((41, 4), dtype=np.int64)
    k[2, 32](out)
    if not target.ran("k"):
        return
    for i in range(41):
        a, b = i - 20, i % 7 - 3
        assert list(out[i]) == [a // b if b else 0, a % b if b else 0, a // 4, a % -3], i


def test_float_floor_division_and_modulo(target):
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i, 0] = x[i] // 0.75
            out[i, 1] = x[i] % -0.75
            out[i, 2] = x[i] / 4

    x = np.linspace(-5, 5, 33)
    out = np.zeros((33, 3))
    k[1, 64](x, out)
    if not target.ran("k"):
        return
    for i, v in enumerate(x):
        assert out[i, 0] == v // 0.75 and out[i, 1] == v % -0.75 and out[i, 2] == v / 4


def test_float_divmod_is_cpythons_exactly(target, rng):
    # CPython's float_divmod (which Numba follows), signed zeros included,
    # where floor(x / y) would differ because x / y rounds.
    @cuda.jit
    def k(x, y, q, r):
        i = cuda.grid(1)
        if i < x.size:
            q[i] = x[i] // y[i]
            r[i] = x[i] % y[i]

    x = np.concatenate([rng.uniform(-50, 50, 3000), [-28.0, 0.0, -0.0, 5.0, -5.0, 1.0]])
    y = np.concatenate([rng.uniform(-3, 3, 3000), [0.6666666666666667, 3.0, 3.0, -1e-4, 2.5, 0.1]])
    q = np.zeros_like(x)
    r = np.zeros_like(x)
    k[(x.size + 127) // 128, 128](x, y, q, r)
    if not target.ran("k"):
        return
    for i in range(x.size):
        xq, xr = float(x[i]) // float(y[i]), float(x[i]) % float(y[i])
        assert (q[i], r[i]) == (xq, xr), (x[i], y[i])
        assert (np.signbit(q[i]), np.signbit(r[i])) == (np.signbit(xq), np.signbit(xr))


def test_true_division_of_ints_is_float64(target):
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = (i + 1) / 3

    check_per_thread(target, k, lambda i: (i + 1) / 3, 50, np.float64)


def test_integer_overflow_wraps(target):
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            big = 9223372036854775807
            out[i] = big + i

    out = np.zeros(3, dtype=np.int64)
    k[1, 3](out)
    target.assert_result("k", out, np.array([2**63 - 1, -2**63, -2**63 + 1]))


def test_loops_break_continue_and_range_steps(target):
    def body(i):
        total = 0
        for j in range(i):
            if j % 3 == 0:
                continue
            total += j
        for j in range(10, i, -2):
            total += 100 * j
        k = 0
        while True:
            k += 1
            if k * k > i:
                break
        return total + 10000 * k

    @cuda.jit
    def kernel(out):
        i = cuda.grid(1)
        if i < out.size:
            total = 0
            for j in range(i):
                if j % 3 == 0:
                    continue
                total += j
            for j in range(10, i, -2):
                total += 100 * j
            k = 0
            while True:
                k += 1
                if k * k > i:
                    break
            out[i] = total + 10000 * k

    check_per_thread(target, kernel, body, 40)


def test_variable_unifies_int_then_float_to_float64(target):
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            s = 0
            for j in range(i + 1):
                s += x[j]
            out[i] = s

    x = (np.arange(20) * 0.5).astype(np.float32)
    out = np.zeros(20)
    k[1, 32](x, out)
    target.assert_result("k", out, np.cumsum(x.astype(np.float64)))
    # s unified to float64: the sum is a double add of the widened element.
    markers = k.inspect_markers(k.signatures[0])
    assert "fpext float" in markers and "fadd double" in markers


def test_comparisons_chains_bool_ops_and_conditional_expressions(target):
    def f(i):
        a = 3 < i <= 10
        b = (i % 2 == 0) and (i % 3 == 0)
        c = (i > 30) or (i < 2)
        d = -i if i % 4 == 1 else i * 2
        return int(a) + 2 * int(b) + 4 * int(c) + 8 * d + (not a) * 1000

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            a = 3 < i <= 10
            b = (i % 2 == 0) and (i % 3 == 0)
            c = (i > 30) or (i < 2)
            d = -i if i % 4 == 1 else i * 2
            out[i] = int(a) + 2 * int(b) + 4 * int(c) + 8 * d + (not a) * 1000

    check_per_thread(target, k, f, 40)


def test_bitwise_shifts_unary_power_min_max_abs(target):
    def f(i):
        a = (i << 3) ^ (i >> 1) | (i & 5)
        b = ~i + (-i) + (+i)
        c = i ** 3 + 2 ** (i % 10)
        return a + b * 7 + c + max(i, 7, 3) - min(i, 5) + abs(i - 20)

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            a = (i << 3) ^ (i >> 1) | (i & 5)
            b = ~i + (-i) + (+i)
            c = i ** 3 + 2 ** (i % 10)
            out[i] = a + b * 7 + c + max(i, 7, 3) - min(i, 5) + abs(i - 20)

    check_per_thread(target, k, f, 64)


def test_globals_and_closures_are_frozen_constants(target):
    scale = 3

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = i * scale + OFFSET

    check_per_thread(target, k, lambda i: i * 3 + OFFSET, 10)


OFFSET = 17


def test_casts_numpy_and_tidal_types(target):
    from tidal import float32, int32

    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i, 0] = int32(x[i])
            out[i, 1] = np.float32(x[i]) * float32(3)
            out[i, 2] = int(x[i] * 2)
            out[i, 3] = float(i) / 2

    x = np.linspace(-3.7, 3.7, 11)
    out = np.zeros((11, 4))
    k[1, 16](x, out)
    target.assert_result("k", out[:, 0], np.trunc(x))
    target.assert_result("k", out[:, 1], (x.astype(np.float32) * np.float32(3)))
    target.assert_result("k", out[:, 2], np.trunc(x * 2))
    target.assert_result("k", out[:, 3], np.arange(11) / 2)


def test_negative_constant_index_wraps(target):
    @cuda.jit
    def k(x, out):
        out[0] = x[-1]
        out[1] = x[-x.size]
        out[2] = x.shape[-1] + len(x) + x.ndim

    x = np.arange(5.0)
    out = np.zeros(3)
    k[1, 1](x, out)
    target.assert_result("k", out, [4.0, 0.0, 11.0])


def test_slices_are_views_with_python_bounds(target):
    @cuda.jit
    def k(a, out):
        row = a[2, :]            # one row: C stays C
        tail = a[1:, 3]          # a column from row 1
        back = a[-1, ::-2]       # the last row, backwards, every other
        mid = a[1:-1, 2:4]       # a block
        clamp = a[0, 5:100]      # clamped to the end
        empty = a[0, 4:2]        # empty
        out[0] = row.size + 10 * tail.size + 100 * back.size
        out[1] = mid.shape[0] * 10 + mid.shape[1]
        out[2] = clamp.size * 10 + empty.size
        s = 0.0
        for j in range(back.size):
            s = s * 10 + back[j]
        out[3] = s
        out[4] = mid[1, 0] + tail[0] + row[-1]
        sub = a[1:3][1]          # slicing then indexing
        out[5] = sub[0]

    a = np.arange(42, dtype=np.float64).reshape(6, 7) % 10
    out = np.zeros(6)
    k[1, 1](a, out)
    back = a[-1, ::-2]
    expected_s = 0.0
    for v in back:
        expected_s = expected_s * 10 + v
    target.assert_result("k", out, [7 + 10 * 5 + 100 * 4, 4 * 10 + 2, 2 * 10 + 0, expected_s,
                                    a[1:-1, 2:4][1, 0] + a[1:, 3][0] + a[2, -1], a[1:3][1][0]])
    markers = k.inspect_markers(k.signatures[0])
    assert "getelementptr i8, ptr %a" in markers


BIG_UNSIGNED = np.uint64(0x9E3779B97F4A7C15)


def test_integer_literals_from_2_63_are_uint64(target):
    # Numba types 2**63 .. 2**64-1 as uint64 (a literal or a NumPy global alike).
    @cuda.jit
    def k(out):
        out[0] = 0xFFFFFFFFFFFFFFFF
        out[1] = 2**63 + 5
        out[2] = BIG_UNSIGNED ^ 0xF0F0F0F0F0F0F0F0
        out[3] = (0x8000000000000001 >> 1) & 0xFFFFFFFF

    out = np.zeros(4, np.uint64)
    k[1, 1](out)
    target.assert_result("k", out, np.array(
        [2**64 - 1, 2**63 + 5, 0x9E3779B97F4A7C15 ^ 0xF0F0F0F0F0F0F0F0, 0], np.uint64))


def test_an_integer_literal_beyond_uint64_is_a_located_error():
    from tidal.errors import TypingError

    @cuda.jit
    def k(out):
        out[0] = 18446744073709551617  # 2**64 + 1

    with pytest.raises(TypingError, match="does not fit in int64 or uint64"):
        k[1, 1](np.zeros(1, np.uint64))


def test_a_float_out_of_an_ints_range_converts_to_some_int_not_to_nothing(target):
    # Frontend fuzzer, seed 19, input 4911: int(1e30) converted to LLVM's
    # poison, the branch on it made the whole kernel unreachable, and the
    # launch failed with "launch of a null block function". The conversion
    # of an out-of-range float gives some integer (which one is the
    # hardware's: CUDA leaves it undefined), and the rest of the kernel runs.
    @cuda.jit
    def k(out, x):
        i = int(1e30)
        j = int(x[0])
        if i < out.size:
            out[1] = 2
        if j < out.size:
            out[2] = 3
        out[0] = 1

    out = np.zeros(3, np.int64)
    k[1, 1](out, np.array([np.nan]))
    if target.ran("k"):
        assert out[0] == 1
        assert set(out[1:]) <= {0, 2, 3}
