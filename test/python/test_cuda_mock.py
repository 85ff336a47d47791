"""The cuda target end to end against a mock CUDA driver (no GPU needed).

Each test runs a real tidal kernel in a fresh Python process with
TIDAL_CUDA_DRIVER pointing at build/lib/libtidal_mock_cuda.so (built from
test/runtime/MockCudaDriver.cpp). The mock checks the call sequence and the
argument packing, not PTX execution: device memory is host memory, every call
is logged as one JSON line, and a kernel named ``fill_seven`` writes int32 7
into its first array. What it shows: PTX for the device's sm reaches
cuModuleLoadDataEx; arguments reach cuLaunchKernel as the frontend's
flattened ABI with device pointers; arrays are copied to the device and back
(read-only ones are not copied back); launch limits, JIT logs and kernel
faults raise clear errors.
"""

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tidal
from tidal import cuda


def _mock_library():
    explicit = os.environ.get("TIDAL_MOCK_CUDA_LIBRARY")
    if explicit:
        return Path(explicit)
    # build/python/tidal/__init__.py -> build/lib/libtidal_mock_cuda.so
    return Path(tidal.__file__).resolve().parents[2] / "lib" / "libtidal_mock_cuda.so"


MOCK = _mock_library()
pytestmark = pytest.mark.skipif(not MOCK.is_file(), reason=f"no mock CUDA driver at {MOCK}")

# The kernels, in a file of their own (tidal reads kernels from their source).
KERNELS = '''
import numpy as np
from tidal import cuda


@cuda.jit
def fill_seven(a, x, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = 7


@cuda.jit
def scale_2d(a, factor):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] *= factor


@cuda.jit
def faulty_kernel(a):
    a[0] = 1


@cuda.jit
def jit_rejected(a):
    a[0] = 2
'''


class Run:
    """The outcome of one script in a process of its own on the mock driver."""

    def __init__(self, proc, log_path, ptx_path):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.calls = ([json.loads(line) for line in log_path.read_text().splitlines()]
                      if log_path.exists() else [])
        self.ptx = ptx_path.read_text() if ptx_path.exists() else ""

    def named(self, call):
        return [c for c in self.calls if c["call"] == call]

    def index(self, call, **fields):
        for i, c in enumerate(self.calls):
            if c["call"] == call and all(c.get(k) == v for k, v in fields.items()):
                return i
        raise AssertionError(f"no {call} {fields} in {[c['call'] for c in self.calls]}")

    @property
    def result(self):
        assert self.returncode == 0, self.stderr
        return json.loads(self.stdout.strip().splitlines()[-1])


@pytest.fixture
def run(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)

    def go(script, target="cuda", driver=MOCK, **mock_env):
        log, ptx = tmp_path / "calls.jsonl", tmp_path / "images.ptx"
        for path in (log, ptx):
            if path.exists():
                path.unlink()
        env = dict(os.environ)
        for name in list(env):
            if name.startswith("TIDAL_MOCK_CUDA_") or name == "TIDAL_TARGET":
                del env[name]
        env["PYTHONPATH"] = os.pathsep.join(
            [str(tmp_path), str(Path(tidal.__file__).resolve().parents[1])]
            + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env["TIDAL_CUDA_DRIVER"] = str(driver)
        if target:
            env["TIDAL_TARGET"] = target
        env["TIDAL_MOCK_CUDA_LOG"] = str(log)
        env["TIDAL_MOCK_CUDA_PTX_OUT"] = str(ptx)
        env.update({f"TIDAL_MOCK_CUDA_{k.upper()}": str(v) for k, v in mock_env.items()})
        proc = subprocess.run(
            [sys.executable, "-c", "import json, numpy as np\nfrom tidal import cuda\n"
             "from kernels import *\n" + textwrap.dedent(script)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        return Run(proc, log, ptx)

    return go


def _u64(hex_bytes):
    return struct.unpack("<Q", bytes.fromhex(hex_bytes))[0]


def _f64(hex_bytes):
    return struct.unpack("<d", bytes.fromhex(hex_bytes))[0]


FILL_SEVEN = """
a = np.zeros(10, np.int32)
b = np.arange(4, dtype=np.float32)
b.flags.writeable = False
fill_seven[2, 8](a, 2.5, b)
print(json.dumps({"a": a.tolist(), "b": b.tolist()}))
"""


def test_arrays_go_to_the_device_and_back(run):
    r = run(FILL_SEVEN)
    assert r.result == {"a": [7] * 10, "b": [0.0, 1.0, 2.0, 3.0]}
    # a (40 bytes) and b (16 bytes) were copied to fresh device memory.
    allocs = {c["bytes"]: c["alloc"] for c in r.named("cuMemAlloc_v2")}
    assert set(allocs) == {40, 16}
    a_id, b_id = allocs[40], allocs[16]
    assert sorted((c["alloc"], c["bytes"]) for c in r.named("cuMemcpyHtoD_v2")) == sorted(
        [(a_id, 40), (b_id, 16)])
    # Only the writable array comes back.
    assert [(c["alloc"], c["bytes"]) for c in r.named("cuMemcpyDtoH_v2")] == [(a_id, 40)]
    # Copies in, launch, synchronise, copies back, free: in that order.
    launch = r.index("cuLaunchKernel")
    assert r.index("cuMemcpyHtoD_v2", alloc=a_id) < launch
    assert r.index("cuMemcpyHtoD_v2", alloc=b_id) < launch
    sync = r.index("cuCtxSynchronize")
    assert launch < sync < r.index("cuMemcpyDtoH_v2", alloc=a_id) < r.index("cuMemFree_v2", alloc=a_id)
    assert len(r.named("cuMemFree_v2")) == 2


def test_in_out_and_inout_choose_the_copies(run):
    r = run("""
        a = np.zeros(10, np.int32)       # 40 bytes: Out, written by the kernel
        b = np.zeros(4, np.float32)      # 16 bytes: In, read only
        c = np.zeros(4, np.int32)        # 16 bytes, InOut: both ways
        fill_seven[2, 8](cuda.Out(a), 2.5, cuda.In(b))
        fill_seven[1, 4](cuda.InOut(c), 2.5, cuda.In(b))
        print(json.dumps([a.tolist(), c.tolist()]))
    """)
    assert r.result == [[7] * 10, [7] * 4]
    allocs = [(c["bytes"], c["alloc"]) for c in r.named("cuMemAlloc_v2")]
    (a_id, b_id), (c_id, b2_id) = [[i for _, i in allocs[k:k + 2]] for k in (0, 2)]
    copied_in = [c["alloc"] for c in r.named("cuMemcpyHtoD_v2")]
    copied_back = [c["alloc"] for c in r.named("cuMemcpyDtoH_v2")]
    assert a_id not in copied_in and sorted(copied_in) == sorted([b_id, c_id, b2_id])
    assert copied_back == [a_id, c_id]


def test_arguments_are_the_flattened_abi_with_device_pointers(run):
    r = run(FILL_SEVEN)
    assert r.returncode == 0, r.stderr
    (launch,) = r.named("cuLaunchKernel")
    assert launch["kernel"] == "fill_seven"
    assert launch["grid"] == [2, 1, 1] and launch["block"] == [8, 1, 1]
    assert launch["shared"] == 0
    p = launch["params"]
    # a: data, shape, stride; x: float64; b: data, shape, stride.
    assert len(p) == 7
    allocs = {c["bytes"]: c["alloc"] for c in r.named("cuMemAlloc_v2")}
    assert (p[0].get("alloc"), p[0].get("offset")) == (allocs[40], 0)
    assert (_u64(p[1]["hex"]), _u64(p[2]["hex"])) == (10, 4)
    assert _f64(p[3]["hex"]) == 2.5
    assert (p[4].get("alloc"), p[4].get("offset")) == (allocs[16], 0)
    assert (_u64(p[5]["hex"]), _u64(p[6]["hex"])) == (4, 4)


def test_ptx_is_for_the_devices_sm(run):
    r = run(FILL_SEVEN, cc="8.6")
    assert r.returncode == 0, r.stderr
    (load,) = r.named("cuModuleLoadDataEx")
    assert load["target"] == "sm_86"
    assert ".target sm_86" in r.ptx and ".visible .entry fill_seven(" in r.ptx
    # LLVM 19 knows nothing after sm_90: newer devices get sm_90 PTX.
    r = run(FILL_SEVEN, cc="12.0")
    assert r.returncode == 0, r.stderr
    assert r.named("cuModuleLoadDataEx")[0]["target"] == "sm_90"


def test_module_is_loaded_once_per_signature(run):
    r = run("""
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


def test_two_dimensional_non_contiguous_array(run):
    r = run("""
        base = np.arange(24, dtype=np.float64).reshape(4, 6)
        view = base[:, ::2]
        scale_2d[(1, 1), (4, 3)](view, 2.0)
        print(json.dumps(base.tolist()))
    """)
    assert r.returncode == 0, r.stderr
    (launch,) = r.named("cuLaunchKernel")
    p = launch["params"]
    # data, 2 shapes, 2 strides, factor
    assert len(p) == 6
    assert [_u64(x["hex"]) for x in p[1:5]] == [4, 3, 48, 16]
    # The whole span the view covers is copied: 3 rows of 6 plus 5 elements.
    (alloc,) = r.named("cuMemAlloc_v2")
    assert alloc["bytes"] == (3 * 6 + 5) * 8
    # The mock does not run the kernel: the values come back unchanged.
    assert r.result == np.arange(24, dtype=np.float64).reshape(4, 6).tolist()


def test_device_array_argument(run):
    r = run("""
        d = cuda.to_device(np.zeros(6, np.int32))
        fill_seven[1, 32](d, 0.0, np.zeros(1, np.float32))
        print(json.dumps(d.copy_to_host().tolist()))
    """)
    assert r.result == [7] * 6


def test_entry_points_through_dlsym_too(run):
    r = run(FILL_SEVEN, no_proc_address=1)
    assert r.result["a"] == [7] * 10
    # The mock refused every cuGetProcAddress_v2, so dlsym found them.
    assert r.named("cuGetProcAddress_v2")
    r = run(FILL_SEVEN)
    assert r.result["a"] == [7] * 10


def test_too_many_threads_for_the_device(run):
    r = run("""
        try:
            fill_seven[1, 256](np.zeros(4, np.int32), 1.0, np.zeros(1, np.float32))
        except ValueError as e:
            print(json.dumps(str(e)))
    """, max_threads=128)
    assert "cannot launch kernel 'fill_seven' on device 0 (tidal mock GPU 0): blockdim " \
        "(256, 1, 1) has 256 threads, the device allows at most 128 per block" in r.result
    assert not r.named("cuLaunchKernel")


def test_grid_beyond_the_device(run):
    r = run("""
        try:
            fill_seven[100, 32](np.zeros(4, np.int32), 1.0, np.zeros(1, np.float32))
        except ValueError as e:
            print(json.dumps(str(e)))
    """, max_grid_x=64)
    assert "griddim (100, 1, 1) is 100 along x, the device allows at most 64" in r.result


def test_dynamic_shared_memory(run):
    r = run("""
        a, b = np.zeros(4, np.int32), np.zeros(1, np.float32)
        fill_seven[1, 32, 0, 100 * 1024](a, 1.0, b)
        try:
            fill_seven[1, 32, 0, 300 * 1024](a, 1.0, b)
        except ValueError as e:
            print(json.dumps(str(e)))
    """)
    assert "307200 bytes of dynamic shared memory asked, the device allows at most 232448" \
        in r.result
    # Above 48 KB the kernel opted in first, as CUDA requires.
    (opt_in,) = r.named("cuFuncSetAttribute")
    assert (opt_in["attribute"], opt_in["value"]) == (8, 100 * 1024)
    assert r.index("cuFuncSetAttribute") < r.index("cuLaunchKernel")
    assert [c["shared"] for c in r.named("cuLaunchKernel")] == [100 * 1024]


def test_jit_failure_carries_the_log(run):
    r = run("""
        try:
            jit_rejected[1, 1](np.zeros(1, np.int32))
        except cuda.CudaDriverError as e:
            print(json.dumps([str(e), e.call, e.error_name, e.code]))
    """, jit_fail_marker="jit_rejected")
    message, call, name, code = r.result
    assert (call, name, code) == ("cuModuleLoadDataEx", "CUDA_ERROR_INVALID_PTX", 218)
    assert "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX" in message
    assert "mock JIT rejects PTX containing 'jit_rejected'" in message


def test_illegal_address_names_the_kernel(run):
    r = run("""
        out = []
        a = np.zeros(1, np.int32)
        for _ in range(2):
            try:
                faulty_kernel[1, 1](a)
            except cuda.CudaDriverError as e:
                out.append([str(e), e.call, e.error_name])
        print(json.dumps(out))
    """, fault_kernel="faulty")
    (first, call, name), (second, _, _) = r.result
    assert (call, name) == ("cuCtxSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS")
    assert "kernel 'faulty_kernel' (griddim (1, 1, 1), blockdim (1, 1, 1)) failed on device 0 " \
        "(tidal mock GPU 0): reported by cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS" in first
    assert "context is no longer usable" in first
    # The second launch raises at once, without reaching the driver.
    assert "no longer usable" in second
    assert len(r.named("cuLaunchKernel")) == 1
    assert not r.named("cuMemcpyDtoH_v2")


def test_kernel_facts(run):
    r = run("""
        sig = fill_seven.compile("void(int32[::1], float64, float32[::1])")
        print(json.dumps([fill_seven.get_regs_per_thread(sig),
                          fill_seven.get_shared_mem_per_block(sig),
                          fill_seven.get_local_mem_per_thread(sig),
                          fill_seven.get_max_threads_per_block(sig),
                          fill_seven.get_regs_per_thread()]))
    """)
    regs, shared, local, max_threads, per_signature = r.result
    assert (regs, shared, local, max_threads) == (32, 0, 16, 1024)
    assert list(per_signature.values()) == [32]


def test_forall_launches_with_the_block_size_of_the_best_occupancy(run):
    r = run("""
        d = cuda.to_device(np.zeros(2000, np.int32))
        b = cuda.to_device(np.zeros(1, np.float32))
        fill_seven.forall(2000)(d, 1.0, b)
        fill_seven.forall(2000, sharedmem=256)(d, 1.0, b)
        fill_seven.forall(100, tpb=64)(d, 1.0, b)
        print(json.dumps(d.copy_to_host()[:3].tolist()))
    """, occupancy_block=768)
    assert r.result == [7, 7, 7]
    occupancy = r.named("cuOccupancyMaxPotentialBlockSize")
    assert [(c["dynamic_shared"], c["limit"]) for c in occupancy] == [(0, 1024), (256, 1024)]
    launches = r.named("cuLaunchKernel")
    assert [(c["grid"], c["block"], c["shared"]) for c in launches] == [
        ([3, 1, 1], [768, 1, 1], 0), ([3, 1, 1], [768, 1, 1], 256), ([2, 1, 1], [64, 1, 1], 0)]


def test_kernel_facts_need_a_gpu():
    if cuda.current_target() != "cpu":
        pytest.skip("this process runs on a GPU")

    @cuda.jit
    def k(a):
        a[0] = 1

    k.compile("void(int32[::1])")
    with pytest.raises(RuntimeError, match=r"get_regs_per_thread\(\) .* needs a GPU"):
        k.get_regs_per_thread()


def test_default_target_is_cuda_when_the_driver_has_a_device(run):
    r = run("print(json.dumps(cuda.current_target()))", target=None)
    assert r.result == "cuda" and "tidal:" not in r.stderr
    r = run("print(json.dumps(cuda.current_target()))", target=None, devices=0)
    assert r.result == "cpu"
    assert "tidal: no usable CUDA GPU (no CUDA device" in r.stderr


def test_cuda_target_without_a_driver_says_why(run):
    r = run("""
        try:
            fill_seven[1, 1](np.zeros(1, np.int32), 1.0, np.zeros(1, np.float32))
        except RuntimeError as e:
            print(json.dumps(str(e)))
    """, driver="/nonexistent/libcuda.so.1")
    assert "kernel 'fill_seven' cannot run on the cuda target: the CUDA driver is not " \
        "usable: cannot open /nonexistent/libcuda.so.1" in r.result


def _ptxas():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    return path if path.is_file() else None


@pytest.mark.skipif(_ptxas() is None, reason="no ptxas (CUDA toolkit) under CUDA_HOME or /usr/local/cuda")
def test_ptx_handed_to_the_driver_passes_ptxas(run, tmp_path):
    r = run(FILL_SEVEN + """
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
