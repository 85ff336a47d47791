"""Python device functions called from CUDA C++: cuda.compile(f, sig,
device=True, abi='c', abi_info={'abi_name': ...}, output='ltoir') gives
tidal's LTO-IR of `T name(args...)`, which a RawModule/RawKernel links
(link=[cuda.LTOIR(...)], a tidal extension) and its CUDA C++ kernel calls
through `extern "C" __device__ T name(args...);`. Both are linked as IR
before code generation, on every target: the cpu target runs the function's
marker IR (carried in the LTO-IR) with the raised C++; the cuda target
compiles one module to PTX (ptxas checks it). numba-cuda has no
@cuda.jit(abi=...): cuda.compile is the way to the C ABI there too."""

import math
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tidal import cuda, float32, int32
from tidal.errors import CompileError


def scale(x):
    return 2.0 * x + math.sin(x)  # libdevice's sinf on the GPU, tidal's on the cpu


APPLY_CU = r"""
extern "C" __device__ float py_scale(float);
extern "C" __global__ void apply(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = py_scale(x[i]);
}
"""


def _ptxas():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    return path if path.is_file() else None


def test_a_cuda_cpp_kernel_calls_a_python_function_with_the_c_abi(target, tmp_path):
    code, result = cuda.compile(scale, float32(float32), device=True, abi="c",
                                abi_info={"abi_name": "py_scale"}, output="ltoir")
    assert result is float32
    module = cuda.RawModule(code=APPLY_CU, link=[cuda.LTOIR(code, name="scale.ltoir")])
    apply = module.get_function("apply")
    x = np.linspace(-3, 3, 100).astype(np.float32)
    out = np.zeros_like(x)
    apply[4, 32](x, out, np.int32(x.size))
    target.assert_result("apply", out, 2 * x + np.sin(x), rtol=1e-6)
    if target.name == "cuda":
        # One module: the Python function inlined into the C++ kernel.
        ptx = next(iter(apply.inspect_asm().values()))
        assert ".entry apply(" in ptx and "py_scale" not in ptx and "call" not in ptx
        if _ptxas() is not None:
            path = tmp_path / "apply.ptx"
            path.write_text(ptx)
            sm = re.search(r"\.target sm_(\d+)", ptx).group(1)
            subprocess.run([str(_ptxas()), f"-arch=sm_{sm}", "-c", str(path), "-o",
                            os.devnull], check=True)


def test_the_default_name_is_the_python_name_and_the_numba_abi_works_too(target):
    def add_one(x):
        return x + 1

    c_code, _ = cuda.compile(add_one, int32(int32), output="ltoir")
    numba_code, _ = cuda.compile(add_one, int32(int32), abi="numba", output="ltoir")
    kernel = cuda.RawKernel(r"""
extern "C" __device__ int add_one(int);                             // the C ABI
extern "C" __device__ int add_one_int32(int *result, int x);        // Numba's ABI
extern "C" __global__ void both(int *out) {
  int i = threadIdx.x, r = 0;
  add_one_int32(&r, 10 * i);
  out[i] = add_one(i) * 1000 + r;
}""", "both", link=[cuda.LTOIR(c_code, name="c.ltoir"), cuda.LTOIR(numba_code, name="n.ltoir")])
    out = np.zeros(8, dtype=np.int32)
    kernel[1, 8](out)
    i = np.arange(8)
    target.assert_result("both", out, (i + 1) * 1000 + 10 * i + 1)


def test_a_declaration_that_disagrees_with_the_function_shows_both(target):
    code, _ = cuda.compile(scale, float32(float32), abi_info={"abi_name": "py_scale"},
                           output="ltoir")
    kernel = cuda.RawKernel(APPLY_CU.replace("float py_scale(float)", "int py_scale(int)")
                            .replace("py_scale(x[i])", "py_scale((int)x[i])"),
                            "apply", link=[cuda.LTOIR(code, name="scale.ltoir")])
    x = np.ones(4, dtype=np.float32)
    with pytest.raises(CompileError, match="'py_scale' is declared in the CUDA C\\+\\+ as "
                                           "i32 \\(i32\\) but scale.ltoir defines "
                                           "float \\(float\\)"):
        kernel[1, 4](x, np.zeros_like(x), np.int32(4))


def test_raw_modules_link_cuda_cpp_and_refuse_ptx(target):
    helper = cuda.CUSource('extern "C" __device__ float py_scale(float x) { return -x; }',
                           name="helper.cu")
    kernel = cuda.RawKernel(APPLY_CU, "apply", link=[helper])
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    kernel[1, 8](x, out, np.int32(8))
    target.assert_result("apply", out, -x)
    ptx = cuda.PTXSource(".version 7.0\n.target sm_75\n", name="helper.ptx")
    with pytest.raises(ValueError, match="RawModule cannot link helper.ptx: its kernels link "
                                         "CUDA C\\+\\+"):
        cuda.RawKernel(APPLY_CU, "apply", link=[ptx])
