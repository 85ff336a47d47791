"""cuda.compile_ptx, cuda.compile_ptx_for_current_device and cuda.compile
(tidal/cuda/compilation.py): PTX of kernels and device functions (Numba's
ABI and the C ABI) without a GPU, whatever the current target; options
(cc, fastmath, lineinfo, debug); the return types; ptxas accepts the PTX
where a CUDA toolkit is found; Numba's errors."""

import math
import os
import re

import numpy as np
import pytest
from ptxas_tool import assert_ptxas_accepts

from tidal import cuda, float32, float64, int64, uint32, void
from tidal.errors import TypingError

numba_types = pytest.importorskip("numba.core.types")


def add_arrays(r, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = x[i] + y[i]


def add(x, y):
    return x + y


def root(x, y, z, d):
    return math.sqrt((x * y + z) / d)




def test_kernel(target, tmp_path):
    # Whatever the current target: compiling for NVPTX needs no GPU.
    ptx, return_type = cuda.compile_ptx(add_arrays, (float32[:], float32[:], float32[:]))
    assert return_type is void
    assert ".visible .entry add_arrays(" in ptx
    assert ".visible .func" not in ptx and "func_retval" not in ptx
    assert ".target sm_75" in ptx
    assert_ptxas_accepts(ptx, tmp_path, 75)


def test_device_function_with_numbas_abi(target, tmp_path):
    ptx, return_type = cuda.compile_ptx(add, (float32, float32), device=True)
    assert return_type is float32
    # int name(float *func_retval, float, float): the result through the pointer.
    assert re.search(r"\.visible \.func  \(\.param \.b32 func_retval0\) "
                     r"add_float32_float32\(\s*\.param \.b64", ptx)
    assert "st.f32" in ptx and ".entry" not in ptx
    assert_ptxas_accepts(ptx, tmp_path, 75)


def test_device_function_with_the_c_abi(target, tmp_path):
    ptx, return_type = cuda.compile(add, (float64, float64))  # device=True, abi='c'
    assert return_type is float64
    assert re.search(r"\.visible \.func  \(\.param \.b64 func_retval0\) add\(\s*"
                     r"\.param \.b64 add_param_0,\s*\.param \.b64 add_param_1\s*\)", ptx)
    assert "add.f64" in ptx
    renamed, _ = cuda.compile(add, "float64(float64, float64)", abi_info={"abi_name": "plus"})
    assert ") plus(" in renamed and ") add(" not in renamed
    assert_ptxas_accepts(renamed, tmp_path, 75)


def test_return_types_are_inferred():
    def halve(x):
        return -x // 2

    def nothing(x):
        x[0] = 1

    assert cuda.compile(halve, (int64,))[1] is int64
    assert cuda.compile(halve, (float32,))[1] is float64  # float32 // int64, as Numba
    assert cuda.compile(nothing, (float64[::1],))[1] is void


def test_cc_picks_the_architecture():
    ptx, _ = cuda.compile_ptx(add_arrays, "void(float32[::1], float32[::1], float32[::1])",
                              cc=(8, 0))
    assert ".target sm_80" in ptx
    # A capability LLVM 19 does not know: the closest one below it.
    assert ".target sm_90" in cuda.compile_ptx(add, (int64, int64), device=True, cc=(12, 0))[0]
    assert ".target sm_87" in cuda.compile_ptx(add, (int64, int64), device=True, cc=(8, 8))[0]
    # sm_70 has nanosleep (PTX 6.3).
    def sleep(x):
        cuda.nanosleep(32)
        cuda.nanosleep(x)

    ptx, _ = cuda.compile_ptx(sleep, (uint32,), cc=(7, 0))
    assert ".target sm_70" in ptx and ptx.count("nanosleep.u32") == 2


def test_fastmath_gives_approximate_instructions():
    ptx, _ = cuda.compile_ptx(root, (float32,) * 4, device=True)
    assert "div.rn.f32" in ptx and "sqrt.rn.f32" in ptx and ".ftz" not in ptx
    ptx, _ = cuda.compile_ptx(root, (float32,) * 4, device=True, fastmath=True)
    for instruction in ("fma.rn.ftz.f32", "div.approx.ftz.f32", "sqrt.approx.ftz.f32"):
        assert instruction in ptx


@pytest.mark.parametrize("device", [False, True])
def test_lineinfo_and_debug_name_the_source_file(device):
    def empty():
        pass

    ptx, _ = cuda.compile_ptx(empty, [], device=device, lineinfo=True)
    assert re.search(r'\.file.*test_compile_ptx\.py"', ptx)
    ptx, _ = cuda.compile_ptx(empty, [], device=device, debug=True, opt=False)
    assert re.search(r'\.file.*test_compile_ptx\.py"', ptx)
    assert re.search(r"\.section\s+\.debug_info", ptx)


def test_compile_ptx_for_current_device(target):
    cc = cuda.get_current_device().compute_capability
    ptx, return_type = cuda.compile_ptx_for_current_device(add, (float32, float32), device=True)
    assert return_type is float32
    assert f".target sm_{cc[0]}{cc[1]}" in ptx


def test_compile_for_current_device_and_compile_all(target, tmp_path):
    # numba-cuda's: a C-ABI device function for the current device's cc; the
    # list of codes of compile_all (one PTX: tidal links what it calls into it).
    cc = cuda.get_current_device().compute_capability
    ptx, return_type = cuda.compile_for_current_device(add, (float64, float64))
    assert return_type is float64 and f".target sm_{cc[0]}{cc[1]}" in ptx
    assert re.search(r"\.visible \.func  \(\.param \.b64 func_retval0\) add\(", ptx)
    codes, return_type = cuda.compile_all(add, (float32, float32), output="ptx", cc=(8, 0))
    assert return_type is float32 and len(codes) == 1
    assert ".target sm_80" in codes[0] and ") add(" in codes[0]
    assert_ptxas_accepts(codes[0], tmp_path, 80)
    # numba-cuda's default output: tidal's LTO-IR (LLVM bitcode).
    codes, return_type = cuda.compile_all(add, (float32, float32))
    assert len(codes) == 1 and codes[0][:4] == b"BC\xc0\xde" and return_type is float32
    with pytest.raises(NotImplementedError, match="Unsupported output type: cubin"):
        cuda.compile_all(add, (float32, float32), output="cubin")


def test_exec_source_and_numba_types_together():
    # How Numba's libdevice tests compile thousands of generated functions.
    namespace = {}
    exec("from tidal import cuda\n"
         "def pyfunc(r0, x):\n"
         "    i = cuda.grid(1)\n"
         "    if i < len(r0):\n"
         "        r0[i] = x * 2\n", namespace)
    ptx, return_type = cuda.compile_ptx(namespace["pyfunc"],
                                        [numba_types.float64[::1], numba_types.float64])
    assert return_type == numba_types.void  # Numba's type objects given, Numba's returned
    assert "ld.param" in ptx and "st.global" in ptx


def test_errors_are_numbas():
    with pytest.raises(TypeError, match="CUDA kernel must have void return type."):
        cuda.compile_ptx(add_arrays, "float32(float32[:], float32[:], float32[:])")
    with pytest.raises(NotImplementedError, match="The C ABI is not supported for kernels"):
        cuda.compile(add_arrays, (float32[:],) * 3, device=False)
    with pytest.raises(NotImplementedError, match="Unsupported output type: llvm"):
        cuda.compile(add, (float32, float32), output="llvm")
    with pytest.raises(NotImplementedError, match="Unsupported ABI: fortran"):
        cuda.compile(add, (float32, float32), abi="fortran")
    with pytest.raises(TypeError, match="cc must be a \\(major, minor\\) tuple"):
        cuda.compile_ptx(add, (float32, float32), device=True, cc="sm_80")
    with pytest.raises(ValueError, match="older than any NVPTX architecture"):
        cuda.compile_ptx(add, (float32, float32), device=True, cc=(1, 0))
    with pytest.raises(TypeError, match="returns float64, not the float64\\[::1\\] its "
                                        "signature declares"):
        cuda.compile(add, "float64[::1](float64, float64)")
    with pytest.raises(TypeError, match="compiles a Python function, not 3"):
        cuda.compile_ptx(3, ())
    with pytest.raises(TypeError, match="unknown type 'flaot32'"):
        cuda.compile_ptx(add, "flaot32, float32", device=True)


def test_typing_errors_are_located():
    def bad(x):
        return x + undefined_name  # noqa: F821

    with pytest.raises(TypingError, match=r"test_compile_ptx\.py:\d+:\d+: .*undefined_name"):
        cuda.compile_ptx(bad, (float32,), device=True)


def _libdevice_found():
    explicit = os.environ.get("TIDAL_LIBDEVICE")
    if explicit is not None:
        return explicit not in ("", "none") and os.path.exists(explicit)
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    return os.path.exists(os.path.join(home, "nvvm", "libdevice", "libdevice.10.bc"))


@pytest.mark.skipif(not _libdevice_found(), reason="math functions on the GPU need libdevice "
                                                   "from a CUDA toolkit, and none is here")
@pytest.mark.parametrize("function, fast", [
    (math.cos, ["cos.approx.ftz.f32 "]),
    (math.sin, ["sin.approx.ftz.f32 "]),
    (math.tan, ["sin.approx.ftz.f32 ", "cos.approx.ftz.f32 ", "div.approx.ftz.f32 "]),
    (math.log, ["lg2.approx.ftz.f32 ", "0f3F317218"]),      # ln(2)
    (math.log10, ["lg2.approx.ftz.f32 ", "0f3E9A209B"]),    # log10(2)
    (math.log2, ["lg2.approx.ftz.f32 "]),
    (math.exp, ["ex2.approx.ftz.f32 "]),  # precise expf has ex2.approx too (below)
])
def test_fastmath_functions_are_libdevices_fast_ones(function, fast):
    # As Numba's fastmath: float32 math functions that libdevice has a fast
    # variant of (__nv_fast_cosf, ...) use it, in kernels, in device
    # functions (inspect_asm of a device function), and in compile_ptx.
    def kernel(r, x):
        r[0] = function(x)

    def device_function(x):
        return function(x)

    kernel_sig, device_sig = (float32[::1], float32), (float32,)
    fast_kernel = cuda.jit(kernel_sig, fastmath=True)(kernel).inspect_asm(kernel_sig)
    precise_kernel = cuda.jit(kernel_sig)(kernel).inspect_asm(kernel_sig)
    fast_device = cuda.jit(device_sig, device=True, fastmath=True)(device_function).inspect_asm()
    precise_device = cuda.jit(device_sig, device=True)(device_function).inspect_asm(device_sig)
    fast_ptx, _ = cuda.compile_ptx(device_function, device_sig, device=True, fastmath=True)
    for ptx in (fast_kernel, fast_device, fast_ptx):
        assert all(instruction in ptx for instruction in fast), ptx
    if function is math.exp:  # precise expf: libdevice's fma sequence, fast: none
        for ptx in (precise_kernel, precise_device):
            assert "fma.rn.f32 " in ptx
        assert "fma.rn.f32 " not in fast_kernel
    else:
        for ptx in (precise_kernel, precise_device):
            assert fast[0] not in ptx
    # float64 keeps the precise function: libdevice has no fast double ones.
    double_ptx, _ = cuda.compile_ptx(device_function, (float64,), device=True, fastmath=True)
    assert "approx.ftz.f32" not in double_ptx


def test_device_function_inspect_asm_needs_a_signature():
    @cuda.jit(device=True)
    def twice(x):
        return x * 2

    with pytest.raises(TypeError, match="device function 'twice' has no declared signature: "
                                        "pass one to inspect_asm"):
        twice.inspect_asm()
    assert ".visible .func" in twice.inspect_asm((float32,))


def test_multiply_add_is_one_fma_without_fastmath():
    # As nvcc's default and Numba's NVVM: a * b + c contracts into fma.rn.
    ptx, _ = cuda.compile_ptx(root, (float32,) * 4, device=True)
    assert "fma.rn.f32" in ptx and "mul.rn.f32" not in ptx
