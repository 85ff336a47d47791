"""Exceptions in kernels and device functions (pyfrontend/KernelExceptions.cpp):
with debug=True, `raise SomeError(...)` ends the thread and the exception
reaches the host after the launch, with its class and message, as Numba's
does; division by zero raises ZeroDivisionError. Without debug a raise in a
kernel ends the thread quietly, as in Numba. The cpu target runs the kernels;
on the cuda target the raising thread writes its module's exception slot
(llvm-plugin/LowerExceptions.cpp), which the host reads after the launch: a
GPU runs the kernels, and over the mock driver, which runs none, the test
plays the raising thread's write (`play_raise`)."""

import ctypes
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import CompileError, TypingError, UnsupportedError
from mock_driver import EXCEPTION_SLOT, MOCK, play_raise
from source_positions import position_of
from targets import needs_gpu, on_targets




class KernelProblem(Exception):
    """A user's exception class, raised by kernels below."""


def test_raise_with_a_message_reaches_the_host(target):
    @cuda.jit(debug=True)
    def check(x, out):
        i = cuda.grid(1)
        if x[i] < 0:
            raise ValueError("negative input")
        out[i] = x[i] * 2

    out = np.zeros(4)
    check[1, 4](np.array([1.0, 2.0, 3.0, 4.0]), out)
    target.assert_result("check", out, [2.0, 4.0, 6.0, 8.0])
    play_raise(target, check, "negative input", thread=(1, 0, 0))
    with pytest.raises(ValueError) as info:
        check[1, 4](np.array([1.0, -2.0, 3.0, 4.0]), out)
    # Numba's prefix: the function, file and line, then the thread and block.
    line, _ = position_of(check.py_func, "raise ValueError")
    assert str(info.value) == (f"In function 'check', file {os.path.abspath(__file__)}, "
                               f"line {line}, tid=[1, 0, 0] ctaid=[0, 0, 0]: negative input")
    # The slot was cleared: the next launch raises nothing, and the context
    # still works (a GPU's failed assert would have made it unusable).
    out = np.zeros(4)
    check[1, 4](np.array([1.0, 2.0, 3.0, 4.0]), out)
    target.assert_result("check", out, [2.0, 4.0, 6.0, 8.0], launches=3)
    np.testing.assert_array_equal(cuda.to_device(np.arange(3.0)).copy_to_host(), [0.0, 1.0, 2.0])


def test_raise_of_a_bare_class_and_of_a_user_class(target):
    @cuda.jit(debug=True)
    def bare(flag):
        if flag:
            raise KeyError

    @cuda.jit(debug=True)
    def mine(flag):
        if flag:
            raise KernelProblem("code", 42)

    bare[1, 1](False)
    play_raise(target, bare, "KeyError")
    with pytest.raises(KeyError):
        bare[1, 1](True)
    mine[1, 1](False)
    play_raise(target, mine, "KernelProblem")
    with pytest.raises(KernelProblem) as info:
        mine[1, 1](True)
    assert info.value.args[0].startswith("In function 'mine', file ")
    assert info.value.args[0].endswith("tid=[0, 0, 0] ctaid=[0, 0, 0]: code")
    assert info.value.args[1] == 42
    play_raise(target, bare, "KeyError")
    with pytest.raises(KeyError) as info:
        bare[1, 1](True)
    assert info.value.args[0].startswith("In function 'bare', file ")
    assert info.value.args[0].endswith("tid=[0, 0, 0] ctaid=[0, 0, 0]")


@on_targets("cpu")
def test_raise_ends_the_thread(target):
    @cuda.jit(debug=True)
    def stop_early(out):
        out[0] = 1.0
        if out.size > 0:
            raise RuntimeError("stop")
        out[1] = 2.0

    out = np.zeros(2)
    with pytest.raises(RuntimeError, match="stop"):
        stop_early[1, 1](out)
    np.testing.assert_array_equal(out, [1.0, 0.0])


def test_raise_in_a_device_function_reaches_the_host(target):
    @cuda.jit(device=True)
    def checked_sqrt(x):
        if x < 0:
            raise ValueError("Device Function Error")
        return x ** 0.5

    @cuda.jit(debug=True)
    def roots(x, out):
        i = cuda.grid(1)
        out[i] = checked_sqrt(x[i])

    out = np.zeros(2)
    roots[1, 2](np.array([4.0, 9.0]), out)
    target.assert_result("roots", out, [2.0, 3.0])
    play_raise(target, roots, "Device Function Error", thread=(1, 0, 0))
    with pytest.raises(ValueError) as info:
        roots[1, 2](np.array([4.0, -9.0]), out)
    line, _ = position_of(checked_sqrt.py_func, "raise ValueError")
    assert str(info.value) == (f"In function 'checked_sqrt', file {os.path.abspath(__file__)}, "
                               f"line {line}, tid=[1, 0, 0] ctaid=[0, 0, 0]: Device Function Error")
    roots[1, 2](np.array([4.0, 9.0]), out)  # the slot was cleared
    target.assert_result("roots", out, [2.0, 3.0], launches=3)


def test_index_error_of_a_debug_kernel_reaches_the_host(target):
    @cuda.jit(debug=True)
    def pick(x, out, i):
        out[cuda.threadIdx.x] = x[i]

    x, out = np.arange(4.0), np.zeros(2)
    pick[1, 2](x, out, 3)
    target.assert_result("pick", out, [3.0, 3.0])
    # Both threads read x[6]: one of them wins the slot.
    play_raise(target, pick, "array 'x'", thread=(1, 0, 0), block=(0, 0, 0), axis=0, index=6,
               extent=4)
    with pytest.raises(IndexError) as info:
        pick[1, 2](x, out, 6)
    line, _ = position_of(pick.py_func, "x[i]")
    message = str(info.value)
    assert message.startswith(f"index 6 is out of bounds for axis 0 with size 4 in kernel 'pick' "
                              f"at {__file__}:{line}, array 'x', thread (")
    assert message.endswith(") of block (0, 0, 0)")
    assert message.split("thread ")[1].split(")")[0] in ("(0, 0, 0", "(1, 0, 0")
    pick[1, 2](x, out, 0)
    target.assert_result("pick", out, [0.0, 0.0], launches=3)


@on_targets("cuda")
def test_only_kernels_that_can_raise_wait_for_the_launch(target):
    # A debug kernel's module has the exception slot: its launch waits for
    # the stream and reads the slot. Without raise sites, a launch on device
    # memory stays asynchronous (no slot is looked up).
    @cuda.jit(debug=True)
    def checked(x):
        if x[0] < 0:
            raise ValueError("negative")

    @cuda.jit
    def plain(x):
        x[0] = 1.0

    d = cuda.to_device(np.ones(1))
    if not target.mock:
        checked[1, 1](d)
        plain[1, 1](d)
        return
    target.forget_driver_calls()
    checked[1, 1](d)
    checked[1, 1](d)
    assert [c["name"] for c in target.driver_calls("cuModuleGetGlobal_v2")] == [EXCEPTION_SLOT]
    assert len(target.driver_calls("cuStreamSynchronize")) == 2
    target.forget_driver_calls()
    plain[1, 1](d)
    assert target.driver_calls("cuModuleGetGlobal_v2") == []
    assert target.driver_calls("cuStreamSynchronize") == []
    assert target.driver_calls("cuMemcpyDtoH_v2") == []


@on_targets("cuda")
def test_the_mock_writes_only_a_variable_the_module_has(target):
    if not target.mock:
        pytest.skip("tidalMockWriteGlobalOnNextLaunch is the mock driver's test hook")

    @cuda.jit(debug=True)
    def checked(x):
        if x[0] < 0:
            raise ValueError("negative")

    d = cuda.to_device(np.ones(1))
    checked[1, 1](d)
    ctypes.CDLL(str(MOCK)).tidalMockWriteGlobalOnNextLaunch(b"no_such_global", b"\1\0\0\0",
                                                            ctypes.c_size_t(4))
    with pytest.raises(cuda.CudaDriverError, match="CUDA_ERROR_NOT_FOUND"):
        checked[1, 1](d)


def test_raise_without_debug_ends_the_thread_quietly(target):
    @cuda.jit
    def quiet(x, out):
        i = cuda.grid(1)
        if x[i] < 0:
            raise ValueError("ignored without debug")
        out[i] = x[i]

    out = np.full(3, 7.0)
    quiet[1, 3](np.array([1.0, -1.0, 3.0]), out)
    target.assert_result("quiet", out, np.array([1.0, 7.0, 3.0]))


def test_raise_compiles_with_debug_on_every_target(target):
    @cuda.jit(debug=True)
    def guarded(x, out):
        i = cuda.grid(1)
        if x[i] > 100:
            raise OverflowError("too large")
        out[i] = x[i]

    out = np.zeros(2)
    guarded[1, 2](np.array([1.0, 2.0]), out)
    target.assert_result("guarded", out, np.array([1.0, 2.0]))


@on_targets("cpu")
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_division_by_zero_raises_in_debug_mode(target, dtype):
    @cuda.jit(debug=True, opt=False)
    def divide(r, x, y):
        r[0] = y[0] / x[0]
        r[1] = y[0]

    r = np.zeros(2)
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        divide[1, 1](r, np.zeros(1, dtype), np.ones(1, dtype))
    np.testing.assert_array_equal(r, [0.0, 0.0])  # the thread stopped at the division


@on_targets("cpu")
def test_floor_division_and_modulo_by_zero_raise_in_debug_mode(target):
    @cuda.jit(debug=True)
    def floor_div(r, a, b):
        r[0] = a[0] // b[0]

    @cuda.jit(debug=True)
    def modulo(r, a, b):
        r[0] = a[0] % b[0]

    for kernel in (floor_div, modulo):
        with pytest.raises(ZeroDivisionError):
            kernel[1, 1](np.zeros(1, np.int64), np.ones(1, np.int64), np.zeros(1, np.int64))


@on_targets("cpu")
def test_float_division_by_zero_with_fastmath_does_not_raise(target):
    @cuda.jit(debug=True, fastmath=True)
    def divide(r, x, y):
        r[0] = y[0] / x[0]

    r = np.zeros(1)
    divide[1, 1](r, np.zeros(1), np.ones(1))
    assert np.isinf(r[0])


def test_division_by_zero_without_debug_does_not_raise(target):
    @cuda.jit
    def divide(r, x, y):
        r[0] = y[0] / x[0]
        r[1] = y[0]

    r = np.zeros(2)
    divide[1, 1](r, np.zeros(1), np.ones(1))
    if target.ran("divide"):
        assert np.isinf(r[0]) and r[1] == 1.0


def _compile_error(kernel, *args):
    with pytest.raises(CompileError) as info:
        kernel[1, 1](*args)
    return info.value


def test_raise_of_a_non_exception_is_a_located_typing_error():
    @cuda.jit(debug=True)
    def bad(x):
        raise x

    err = _compile_error(bad, np.zeros(1))
    assert isinstance(err, TypingError)
    assert "a kernel can only raise an exception class, not 'x'" in str(err)
    line, column = position_of(bad.py_func, "raise x")
    assert (err.line, err.column) == (line, column + len("raise "))


def test_raise_with_a_run_time_argument_is_unsupported_and_located():
    @cuda.jit(debug=True)
    def bad(x):
        raise ValueError(x[0])

    err = _compile_error(bad, np.zeros(1))
    assert isinstance(err, UnsupportedError)
    assert "must be constants (literals), as in Numba: 'x[0]' is not" in str(err)
    line, column = position_of(bad.py_func, "x[0])")
    assert (err.line, err.column) == (line, column)


def test_bare_raise_is_unsupported_and_located():
    @cuda.jit
    def bad(x):
        if x[0] > 0:
            raise

    err = _compile_error(bad, np.zeros(1))
    assert isinstance(err, UnsupportedError)
    assert "a bare 'raise' (re-raising) is not supported in kernels" in str(err)
    line, column = position_of(bad.py_func, "raise")
    assert (err.line, err.column) == (line, column)


def test_a_device_function_that_raises_on_its_other_path_needs_no_return():
    @cuda.jit(device=True)
    def positive(x):
        if x > 0:
            return x
        else:
            raise ValueError("not positive")

    @cuda.jit
    def use(out, x):
        out[0] = positive(x[0])

    out = np.zeros(1)
    use[1, 1](out, np.array([3.0]))


def test_raise_on_the_nvptx_path_writes_the_exception_slot():
    # On a GPU, a raise with debug=True claims the module's exception slot
    # (a compare-and-swap of its code), records the thread and exits: no
    # __assertfail, no trap. Without debug the thread returns, and the
    # module has no slot.
    def guarded(x):
        if x[0] > 100:
            raise OverflowError("too large")
        x[0] = 1.0

    from tidal import float64, void
    debug_ptx, _ = cuda.compile_ptx(guarded, void(float64[::1]), debug=True)
    assert ".visible .global .align 8 .b8 __tidal_exception_slot[48];" in debug_ptx
    assert "atom.global.cas.b32" in debug_ptx and "exit;" in debug_ptx
    assert "__assertfail" not in debug_ptx and "trap;" not in debug_ptx
    quiet_ptx, _ = cuda.compile_ptx(guarded, void(float64[::1]))
    assert "__tidal_exception_slot" not in quiet_ptx


def test_ptxas_accepts_the_exception_slot(tmp_path):
    # A debug kernel with all three kinds of raise site: a raise in the
    # kernel, one in a device function, and the bounds checks of x[i].
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    ptxas = Path(home) / "bin" / "ptxas"
    if not ptxas.is_file():
        pytest.skip(f"no ptxas at {ptxas} (the CUDA toolkit is optional)")

    @cuda.jit(device=True)
    def checked_sqrt(x):
        if x < 0:
            raise ValueError("negative")
        return x ** 0.5

    def kernel(x, i):
        if i > 100:
            raise OverflowError("too large", 100)
        x[i] = checked_sqrt(x[i])

    from tidal import float64, int64, void
    ptx, _ = cuda.compile_ptx(kernel, void(float64[::1], int64), debug=True, cc=(9, 0))
    assert ptx.count("atom.global.cas.b32") >= 3
    path = tmp_path / "raises.ptx"
    path.write_text(ptx)
    done = subprocess.run([str(ptxas), "-arch=sm_90", "-c", str(path), "-o", os.devnull],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@needs_gpu
def test_a_raise_on_a_gpu_leaves_the_context_usable():
    # On a real GPU: raises from many threads of many blocks; one wins, the
    # exception arrives as its class, and the context keeps working (a
    # __assertfail would have made every later call fail).
    from tidal.cuda.target import use_target
    with use_target("cuda"):
        @cuda.jit(debug=True)
        def check(x):
            i = cuda.grid(1)
            if x[i] < 0:
                raise KernelProblem("negative", 7)

        x = cuda.to_device(-np.ones(256 * 4))
        with pytest.raises(KernelProblem) as info:
            check[4, 256](x)
        assert info.value.args[0].startswith("In function 'check', file ")
        assert info.value.args[0].endswith(": negative") and info.value.args[1] == 7
        check[4, 256](cuda.to_device(np.ones(256 * 4)))  # the slot was cleared
        np.testing.assert_array_equal(cuda.to_device(np.arange(5.0)).copy_to_host(), np.arange(5.0))
