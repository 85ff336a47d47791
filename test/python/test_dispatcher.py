"""The dispatcher: a kernel is compiled once per signature (from its
arguments' types at launch, or eagerly from declared signatures) and its
module loaded once per signature and device; the PTX it hands the driver is
for the device's sm (and passes ptxas where a CUDA toolkit is found); kernel
facts (registers, shared and local memory, threads per block) on every
target; bad signatures are clear errors."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mock_driver import FILL_SEVEN
from tidal import cuda, float32


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def block_sums(out, x):
    # One partial sum per block, in 256 floats of shared memory.
    buf = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[tid] = x[i] if i < x.shape[0] else float32(0)
    cuda.syncthreads()
    if tid == 0:
        total = float32(0)
        for j in range(256):
            total += buf[j]
        out[cuda.blockIdx.x] = total


def launch_saxpy(kernel, a, x, y, threads=128):
    out = np.full_like(x, -7)
    blocks = (x.size + threads - 1) // threads
    kernel[blocks, threads](a, x, y, out)
    return out


# --- signatures and specialisations ----------------------------------------------------

def test_two_signatures_two_specialisations(target, rng):
    @cuda.jit
    def axpy(a, x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + y[i]

    x32 = rng.standard_normal(300).astype(np.float32)
    y32 = rng.standard_normal(300).astype(np.float32)
    x64 = rng.standard_normal(300)
    y64 = rng.standard_normal(300)
    out32 = launch_saxpy(axpy, np.float32(3.0), x32, y32)
    out64 = launch_saxpy(axpy, 3.0, x64, y64)
    launch_saxpy(axpy, np.float32(3.0), x32, y32)  # cached: no third one
    target.assert_result("axpy", out32, np.float32(3.0) * x32 + y32, rtol=target.float_rtol,
                         launches=3)
    target.assert_result("axpy", out64, 3.0 * x64 + y64, rtol=target.float_rtol, launches=3)
    assert axpy.signatures == [
        "(float32, array(float32, 1d, C), array(float32, 1d, C), array(float32, 1d, C))",
        "(float64, array(float64, 1d, C), array(float64, 1d, C), array(float64, 1d, C))",
    ]


def test_eager_signatures_as_strings_lists_and_type_objects(target):
    from tidal import float64, int64, void

    @cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")
    def from_string(a, x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + y[i]

    @cuda.jit([void(float64[:, ::1], int64), "void(float32[:, ::1], int64)"])
    def from_list(grid, n):
        i, j = cuda.grid(2)
        if i < grid.shape[0] and j < grid.shape[1]:
            grid[i, j] = n

    # Compiled at decoration, before any launch.
    assert from_string.signatures == [
        "(float32, array(float32, 1d, C), array(float32, 1d, C), array(float32, 1d, C))"]
    assert from_list.signatures == ["(array(float64, 2d, C), int64)",
                                    "(array(float32, 2d, C), int64)"]
    grid = np.zeros((3, 5))
    from_list[(1, 1), (4, 8)](grid, 7)
    target.assert_result("from_list", grid, np.full((3, 5), 7.0))
    assert len(from_list.signatures) == 2  # the launch reused the eager one


def test_declared_signatures_never_convert_arrays(target):
    # Numba (and its simulator) raise TypeError "No matching definition": a
    # kernel declared for float32[:] never runs on float64 data.
    @cuda.jit("void(float32[:])")
    def fill(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = 1.5

    doubles = np.zeros(4)
    with pytest.raises(TypeError, match=r"No matching definition for argument type\(s\) "
                                        r"\(array\(float64, 1d, C\)\) of kernel 'fill'"):
        fill[1, 4](doubles)
    with pytest.raises(TypeError, match="No matching definition"):
        fill[1, 4](np.zeros((2, 2), np.float32))  # nor another dimension count
    assert np.all(doubles == 0)
    # A C-contiguous array runs the declared layout-A specialisation, and
    # nothing else is compiled.
    floats = np.zeros(4, np.float32)
    fill[1, 4](floats)
    fill[1, 4](floats[::2])
    target.assert_result("fill", floats, np.array([1.5] * 4, np.float32), launches=2)
    assert fill.signatures == ["(array(float32, 1d, A))"]


def test_declared_signatures_convert_scalars(target):
    # As Numba: a scalar converts to the declared type (an int to int32
    # wraps, a float to an int truncates); the best of several signatures
    # runs.
    @cuda.jit(["void(int32[::1], int32)", "void(float64[::1], float64)"])
    def put(out, value):
        out[0] = value

    ints = np.zeros(1, np.int32)
    put[1, 1](ints, 0xFFFFFFFF)
    put[1, 1](ints, 0xFFFFFFFF)  # the launch plan that converts, reused
    target.assert_result("put", ints, np.array([-1], np.int32), launches=2)
    put[1, 1](ints, 7.9)
    target.assert_result("put", ints, np.array([7], np.int32), launches=3)
    put[1, 1](ints, np.int16(-5))
    target.assert_result("put", ints, np.array([-5], np.int32), launches=4)
    doubles = np.zeros(1)
    put[1, 1](doubles, 3)
    target.assert_result("put", doubles, np.array([3.0]), launches=5)
    assert len(put.signatures) == 2


def test_bad_signatures_are_clear_errors():
    with pytest.raises(TypeError, match=r"unknown type 'flaot32' at column 6"):
        @cuda.jit("void(flaot32[:])")
        def k(x):
            pass
    with pytest.raises(TypeError, match="a kernel's signature must return void, not float32"):
        @cuda.jit("float32(float32[:])")
        def k2(x):
            pass


# --- kernel facts ----------------------------------------------------------------------------


def test_kernel_facts(target):
    sig = saxpy.compile("void(float32, float32[::1], float32[::1], float32[::1])")
    if target.name == "cpu":
        with pytest.raises(RuntimeError, match=r"get_regs_per_thread\(\) .* needs a GPU"):
            saxpy.get_regs_per_thread(sig)
        return
    saxpy[1, 32](np.float32(1), np.zeros(32, np.float32), np.zeros(32, np.float32),
                 np.zeros(32, np.float32))
    assert 0 < saxpy.get_regs_per_thread(sig) <= 255
    assert saxpy.get_max_threads_per_block(sig) >= 256
    assert saxpy.get_shared_mem_per_block(sig) == 0
    sums = block_sums.compile("void(float32[::1], float32[::1])")
    assert block_sums.get_local_mem_per_thread(sums) >= 0
    # (the mock driver counts the PTX's .shared declarations)
    assert block_sums.get_shared_mem_per_block(sums) == 256 * 4


# --- the cuda target over the mock driver: modules and PTX ------------------------------


def test_ptx_is_for_the_devices_sm(mock_script):
    r = mock_script(FILL_SEVEN, cc="8.6")
    assert r.returncode == 0, r.stderr
    (load,) = r.named("cuModuleLoadDataEx")
    assert load["target"] == "sm_86"
    assert ".target sm_86" in r.ptx and ".visible .entry fill_seven(" in r.ptx
    # LLVM 19 knows nothing after sm_90: newer devices get sm_90 PTX.
    r = mock_script(FILL_SEVEN, cc="12.0")
    assert r.returncode == 0, r.stderr
    assert r.named("cuModuleLoadDataEx")[0]["target"] == "sm_90"


def test_module_is_loaded_once_per_signature(mock_script):
    r = mock_script("""
        a = np.zeros(10, np.int32)
        b = np.zeros(4, np.float32)
        for _ in range(3):
            fill_seven[1, 32](a, 1.0, b)
        fill_seven[1, 32](np.zeros(5, np.int64), 1.0, b)  # another signature
        print(json.dumps(a.tolist()))
    """)
    assert r.result == [7] * 10
    assert len(r.named("cuModuleLoadDataEx")) == 2
    assert len(r.named("cuLaunchKernel")) == 4
    assert len(r.named("cuDevicePrimaryCtxRetain")) == 1


def test_kernel_facts_of_the_mock_driver(mock_script):
    r = mock_script("""
        sig = fill_seven.compile("void(int32[::1], float64, float32[::1])")
        print(json.dumps([fill_seven.get_regs_per_thread(sig),
                          fill_seven.get_shared_mem_per_block(sig),
                          fill_seven.get_local_mem_per_thread(sig),
                          fill_seven.get_max_threads_per_block(sig),
                          list(fill_seven.get_regs_per_thread().items())]))
    """)
    regs, shared, local, max_threads, per_signature = r.result
    assert (regs, shared, local, max_threads) == (32, 0, 16, 1024)
    # keyed by the argument types, as Numba's
    assert per_signature == [[["array(int32, 1d, C)", "float64", "array(float32, 1d, C)"], 32]]


def _ptxas():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    return path if path.is_file() else None


@pytest.mark.skipif(_ptxas() is None, reason="no ptxas (CUDA toolkit) under CUDA_HOME or /usr/local/cuda")
def test_ptx_handed_to_the_driver_passes_ptxas(mock_script, tmp_path):
    r = mock_script(FILL_SEVEN + """
base = np.zeros((4, 6))
scale_2d[(1, 1), (4, 6)](base, 2.0)
""", cc="9.0")
    assert r.returncode == 0, r.stderr
    images = [i for i in r.ptx.split("// ---- end of image ----\n") if i.strip()]
    assert len(images) == 2
    for n, image in enumerate(images):
        path = tmp_path / f"image{n}.ptx"
        path.write_text(image)
        proc = subprocess.run([str(_ptxas()), "-arch=sm_90", str(path), "-o", os.devnull],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
