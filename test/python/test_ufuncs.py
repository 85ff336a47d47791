"""tidal.vectorize(target='cuda'): signatures chosen from the input dtypes,
scalars, broadcasting, out=, stream=, device arrays in and out, 0-d and N-d
inputs, .reduce, and the decorator's errors (on every target)."""

import inspect
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from source_positions import position_of
from tidal import cuda, float32, float64, int32, vectorize
from tidal.errors import TypingError

SIGNATURES = [int32(int32, int32), float32(float32, float32), float64(float64, float64)]


def make_add():
    @vectorize(SIGNATURES, target="cuda")
    def add(a, b):
        return a + b
    return add


def test_signature_chosen_by_dtype(target):
    add = make_add()
    for dtype in (np.int32, np.float32, np.float64):
        target.forget_driver_calls()
        x = np.arange(100, dtype=dtype)
        result = add(x, x)
        assert isinstance(result, np.ndarray) and result.dtype == dtype
        target.assert_result("__vectorized_add", result, x + x)


def test_string_signatures_and_several_arguments(target):
    @vectorize(["float64(float64, float64, float64)"], target="cuda")
    def fma3(a, b, c):
        return a * b + c

    a, b, c = (np.linspace(0, 1, 33) * k for k in (1, 2, 3))
    target.assert_result("__vectorized_fma3", fma3(a, b, c), a * b + c)


def test_scalars_broadcast_and_all_scalars(target):
    add = make_add()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    result = add(x, 1.5)  # a Python float takes the arrays' float32 signature
    assert result.dtype == np.float32 and result.shape == (3, 4)
    target.assert_result("__vectorized_add", result, x + np.float32(1.5))
    # Two scalars: a NumPy scalar, as NumPy's ufuncs give.
    target.forget_driver_calls()
    both = add(1.25, 2.5)
    assert isinstance(both, np.float64)
    target.assert_result("__vectorized_add", both, 3.75)


def test_untyped_scalars_that_fit_several_signatures():
    add = make_add()
    with pytest.raises(TypeError, match="ambiguous signature. Too many untyped scalars"):
        add(1, 2)  # int64 scalars: no exact signature, and all three take them
    assert add(np.int32(1), np.int32(2)).dtype == np.int32  # typed scalars choose


def test_broadcasting_between_arrays(target):
    add = make_add()
    column = np.arange(3, dtype=np.float64).reshape(3, 1)
    row = np.arange(4, dtype=np.float64) * 10
    result = add(column, row)
    assert result.shape == (3, 4)
    target.assert_result("__vectorized_add", result, column + row)
    with pytest.raises(ValueError, match="failed to broadcast argument #1"):
        add(np.zeros(3), np.zeros(4))


def test_zero_d_and_n_d_inputs_in_any_order(target):
    add = make_add()
    zero_d = add(np.array(2.0), np.array(3.0))
    target.assert_result("__vectorized_add", zero_d, 5.0)
    for ndim in (2, 3, 5):
        data = np.random.default_rng(ndim).random((3,) * ndim).astype(np.float32)
        transposed = np.asfortranarray(data.T)
        target.forget_driver_calls()
        result = add(data, transposed)
        assert result.shape == data.shape
        target.assert_result("__vectorized_add", result, data + data.T)


def test_sequences_become_arrays(target):
    add = make_add()
    result = add((1.0, 2.0, 3.0), [4.0, 5.0, 6.0])
    target.assert_result("__vectorized_add", result, [5.0, 7.0, 9.0])


def test_host_arrays_cast_safely_device_arrays_must_match(target):
    @vectorize(["float64(float64, float64)"], target="cuda")
    def mul(a, b):
        return a * b

    x = np.arange(10, dtype=np.int32)
    result = mul(x, x)  # int32 casts safely to float64
    assert result.dtype == np.float64
    target.assert_result("__vectorized_mul", result, (x * x).astype(np.float64))
    with pytest.raises(TypeError, match=r"No matching version of ufunc 'mul' for \(int32, "
                                        r"float64\).*device arrays must match exactly"):
        mul(cuda.to_device(x), 1.0)

    @vectorize(["float32(float32)"], target="cuda")
    def neg(a):
        return -a

    with pytest.raises(TypeError, match=r"No matching version of ufunc 'neg' for \(int64\)"):
        neg(np.arange(3))  # int64 does not cast safely to float32


def test_out_on_host_and_on_device(target):
    add = make_add()
    x = np.arange(10, dtype=np.float32)
    out = np.zeros_like(x)
    assert add(x, x, out=out) is out
    target.assert_result("__vectorized_add", out, x + x)
    target.forget_driver_calls()
    d = cuda.to_device(x.reshape(2, 5))
    assert add(d, d, out=d) is d  # in place, N-d
    target.assert_result("__vectorized_add", d.copy_to_host(), (x + x).reshape(2, 5))
    target.forget_driver_calls()
    host_out = np.zeros_like(x)
    assert add(cuda.to_device(x), x, out=host_out) is host_out  # device inputs, host out
    target.assert_result("__vectorized_add", host_out, x + x)
    with pytest.raises(ValueError, match=r"out= of ufunc 'add' has shape \(3,\); the result "
                                         r"has shape \(10,\)"):
        add(x, x, out=np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="out= of ufunc 'add' has dtype float64; the chosen "
                                        "signature returns float32"):
        add(x, x, out=np.zeros(10))


def test_device_inputs_give_a_device_result_on_a_stream(target):
    add = make_add()
    x = np.arange(50, dtype=np.int32)
    stream = cuda.stream()
    dx = cuda.to_device(x, stream)
    result = add(dx, x, stream=stream)  # one device input: the result stays there
    assert isinstance(result, cuda.DeviceNDArray)
    host = result.copy_to_host(stream=stream)
    stream.synchronize()
    target.assert_result("__vectorized_add", host, x + x)


def test_user_function_calls_device_functions(target):
    @cuda.jit(device=True)
    def square(x):
        return x * x

    @vectorize(["float64(float64)"], target="cuda")
    def square_plus_one(x):
        return square(x) + 1.0

    x = np.linspace(-2, 2, 17)
    target.assert_result("__vectorized_square_plus_one", square_plus_one(x), x * x + 1.0)


def test_complex_signature(target):
    @vectorize(["complex128(complex128)"], target="cuda")
    def step(z):
        return z * z + 1.0

    z = np.arange(5, dtype=np.complex128) * (1 + 1j)
    target.assert_result("__vectorized_step", step(z), z * z + 1.0)


@pytest.mark.parametrize("n", [1, 2, 7, 64, 1025])
def test_reduce_host_and_device(target, n):
    add = make_add()
    x = np.arange(n, dtype=np.int32)
    result = add.reduce(x)
    if n == 1:
        assert result == 0
    elif target.computes:
        assert result == x.sum()
    stream = cuda.stream()
    result = add.reduce(cuda.to_device(x, stream), stream=stream)
    if target.computes:
        assert result == x.sum()


def test_dynamic_ufunc_compiles_per_input_dtypes(target):
    @vectorize
    def erf(x):
        return math.erf(x)

    # Each new input dtype compiles a signature; the return type is the
    # function's type for it (float32 stays float32, integers give float64).
    for dtype, result_dtype in ((np.float32, np.float32), (np.float64, np.float64),
                                (np.int64, np.float64), (np.uint8, np.float64)):
        target.forget_driver_calls()
        x = np.linspace(0, 3, 20).astype(dtype)
        result = erf(x)
        assert result.dtype == result_dtype
        expected = np.array([math.erf(v) for v in x.tolist()], dtype=result_dtype)
        target.assert_result("__vectorized_erf", result, expected, rtol=1e-6)
    assert erf.types == ["f->f", "d->d", "l->d", "B->d"]
    erf(np.zeros(3, np.float32))  # compiled already
    assert len(erf.types) == 4

    @vectorize(target="cuda")
    def less(x, y):
        return x < y

    target.forget_driver_calls()
    result = less(np.arange(4), 1.5)  # a Python float is a float64
    assert less.types == ["ld->?"] and result.dtype == np.bool_
    target.assert_result("__vectorized_less", result, np.arange(4) < 1.5)


def test_signature_without_return_type(target):
    @vectorize([(int32, int32), "(float32, float64)"], target="cuda")
    def less(a, b):
        return a < b

    assert less.types == ["ii->?", "fd->?"]
    target.assert_result("__vectorized_less", less(np.arange(4, dtype=np.int32), np.int32(2)),
                         np.arange(4) < 2)


def test_dynamic_ufunc_that_returns_a_tuple():
    @vectorize
    def both(x):
        return x, x

    with pytest.raises(TypeError, match=r"ufunc 'both' returns .* for arguments \(float64\): "
                                        r"a ufunc's function returns one number"):
        both(np.zeros(2))


def test_reduce_errors():
    add = make_add()
    with pytest.raises(TypeError, match="Reduction on an empty array."):
        add.reduce(np.zeros(0, np.int32))
    with pytest.raises(ValueError, match=r"reduce of ufunc 'add' needs a 1-D array, got 2-D"):
        add.reduce(np.zeros((2, 2), np.int32))

    @vectorize(["float64(float64)"], target="cuda")
    def neg(a):
        return -a

    with pytest.raises(TypeError, match="a reduction needs a binary ufunc"):
        neg.reduce(np.zeros(4))


def test_attributes():
    add = make_add()
    assert add.__name__ == "add" and add.nin == 2 and add.nout == 1
    assert add.types == ["ii->i", "ff->f", "dd->d"]
    assert add.identity is None

    @vectorize(["f8(f8, f8)"], target="cuda", identity=0)
    def plus(a, b):
        return a + b

    assert plus.identity == 0


def test_decorator_errors():
    def f(a):
        return a

    with pytest.raises(ValueError, match="Unsupported target: 'roc'"):
        vectorize(["float64(float64)"], target="roc")(f)
    with pytest.raises(KeyError, match="cuda vectorize target does not support option: 'what'"):
        vectorize(["float64(float64)"], target="cuda", what=True)
    with pytest.raises(TypeError, match="caching is not supported"):
        vectorize(["float64(float64)"], target="cuda", cache=True)
    with pytest.raises(ValueError, match="Invalid identity value 2"):
        vectorize(["float64(float64)"], target="cuda", identity=2)
    with pytest.raises(TypeError, match="has array types"):
        vectorize(["float64(float64[:])"], target="cuda")(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vectorize(["float64(float64)"], target="cuda", nopython=True)(f)
    assert caught[0].category is RuntimeWarning
    assert "nopython kwarg for cuda target is redundant" in str(caught[0].message)


def broken(a, b):
    return a + not_defined_anywhere  # noqa: F821


def test_error_in_the_users_function_points_at_it():
    line, column = position_of(broken, "not_defined_anywhere")
    with pytest.raises(TypingError) as raised:
        vectorize(["float32(float32, float32)"], target="cuda")(broken)
    assert f"{__file__}:{line}:{column}:" in str(raised.value)


def test_generated_kernel_source_is_registered():
    add = make_add()
    kernel = next(iter(add._specializations.values())).kernels[(frozenset(), 1)]
    source = inspect.getsource(kernel.py_func)
    assert source.startswith("def __vectorized_add(a0, a1, __out__):")
    assert kernel.py_func.__code__.co_filename.startswith("<tidal ufunc add int32(int32, int32)")


# The folder that holds the tidal package under test (build/python).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(cuda.__file__))))


def test_example_runs():
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "ufunc.py")
    environment = dict(os.environ, TIDAL_TARGET="cpu",
                       PYTHONPATH=PACKAGE_ROOT)
    run = subprocess.run([sys.executable, example], capture_output=True, text=True,
                         env=environment, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("OK") == 3


def test_empty_arrays(target):
    add = make_add()
    assert add(np.zeros(0), 1.0).shape == (0,)
    assert add(np.zeros((0, 3)), np.zeros(3)).shape == (0, 3)
    assert target.driver_calls("cuLaunchKernel") in (None, [])  # nothing to launch


def test_signature_and_function_arity_must_agree():
    def one(a):
        return a

    with pytest.raises(TypeError, match="vectorize signature 'f8\\(f8, f8\\)' of 'one' has 2 "
                                        "arguments; the function takes 1"):
        vectorize(["f8(f8, f8)"], target="cuda")(one)


SCALE = 3.0  # a global the pickled function reads


def make_scaled():
    @vectorize(["float64(float64)", "int64(int64)"], target="cuda")
    def scaled(x):
        return x * SCALE if x < 0 else x * 2
    return scaled


def test_pickle_in_this_process_and_another():
    import pickle
    scaled = make_scaled()
    assert pickle.loads(pickle.dumps(scaled)) is scaled  # one object per process
    script = (
        "import pickle, sys, numpy as np\n"
        "from tidal.cuda.target import set_target\n"
        "set_target('cpu')\n"
        "ufunc = pickle.loads(sys.stdin.buffer.read())\n"
        "print(ufunc.types, ufunc(np.array([-1.0, 2.0])).tolist())\n")
    run = subprocess.run([sys.executable, "-c", script], input=pickle.dumps(scaled),
                         capture_output=True, env=dict(os.environ, PYTHONPATH=PACKAGE_ROOT),
                         timeout=300)
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout.decode().split("\n")[0] == "['d->d', 'l->l'] [-3.0, 4.0]"


def test_call_errors():
    add = make_add()
    x = np.arange(4, dtype=np.float64)
    with pytest.raises(TypeError, match="ufunc 'add' takes 2 arguments, got 3"):
        add(x, x, x)
    with pytest.raises(TypeError, match="out= of ufunc 'add' must be a NumPy array or a device "
                                        "array, got list"):
        add(x, x, out=[0.0] * 4)
    with pytest.warns(UserWarning, match="unrecognized keywords: where"):
        add(x, x, where=True)
    with pytest.raises(TypeError, match="the type .* has no NumPy dtype"):
        vectorize(["float64((float64, float64))"], target="cuda")(lambda pair: pair)
    # Numba 0.56's CUDA ufuncs have no device=True: its KeyError.
    with pytest.raises(KeyError, match="does not support option: 'device'"):
        vectorize(["float64(float64)"], target="cuda", device=True)


# --- Numba's type objects, and numba-cuda's cuda.vectorize ----------------------------------

def test_signatures_of_numbas_type_objects(target):
    numba = pytest.importorskip("numba")

    @vectorize([numba.int32(numba.int32, numba.int32), numba.float64(numba.float64, numba.float64)],
               target="cuda")
    def mul(a, b):
        return a * b

    x = np.arange(10, dtype=np.int32)
    result = mul(x, x)
    assert result.dtype == np.int32
    target.assert_result("__vectorized_mul", result, x * x)
    target.forget_driver_calls()
    y = np.linspace(0, 1, 10)
    target.assert_result("__vectorized_mul", mul(y, y), y * y)


def test_cuda_vectorize_defaults_to_the_cuda_target(target):
    @cuda.vectorize([float64(float64)])
    def halve(x):
        return x / 2

    @cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->()")
    def total(values, out):
        s = 0.0
        for v in values:
            s += v
        out[0] = s

    x = np.arange(8.0)
    target.assert_result("__vectorized_halve", halve(x), x / 2)
    target.forget_driver_calls()
    target.assert_result("__gufunc_total", total(x.reshape(2, 4)), x.reshape(2, 4).sum(axis=1))
    with pytest.raises(ValueError, match="Unsupported target: 'gpu'"):
        cuda.vectorize(target="gpu")
