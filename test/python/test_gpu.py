"""Real kernels on a real GPU (the cuda target), checked against NumPy.

Marked ``gpu``: run on a lent GPU machine with ``pytest -m gpu`` (through
utils/gpu-kit/run.sh); everywhere else they are skipped, saying why the CUDA
driver is not usable.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tidal import _tidal, cuda

_USABLE, _COUNT, _REASON, _LIBRARY = _tidal.driver_status()


def _skip_reason():
    if not _USABLE:
        return f"no usable CUDA GPU: {_REASON}"
    if cuda.current_target() != "cuda":
        return f"kernels run on the {cuda.current_target()} target (TIDAL_TARGET)"
    return None


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or ""),
]


@cuda.jit
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@cuda.jit
def add_2d(out, x, y):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = x[i, j] + y[i, j] * (i + 1)


@cuda.jit
def block_sums(out, x):
    # Tree reduction in shared memory: one partial sum per block.
    buf = cuda.shared.array(256, np.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[tid] = x[i] if i < x.shape[0] else np.float32(0)
    cuda.syncthreads()
    stride = 128
    while stride > 0:
        if tid < stride:
            buf[tid] += buf[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = buf[0]


@cuda.jit
def histogram(bins, values):
    i = cuda.grid(1)
    if i < values.shape[0]:
        cuda.atomic.add(bins, values[i] % bins.shape[0], 1)


@cuda.jit
def dynamic_shared_copy(out, x):
    buf = cuda.shared.array(0, np.float32)
    tid = cuda.threadIdx.x
    buf[tid] = x[tid] * 2
    cuda.syncthreads()
    out[tid] = buf[cuda.blockDim.x - 1 - tid]


def test_saxpy():
    n = 100_003
    rng = np.random.default_rng(1)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    saxpy[(n + 255) // 256, 256](out, np.float32(2.5), x, y)
    np.testing.assert_allclose(out, np.float32(2.5) * x + y, rtol=1e-6)


def test_saxpy_device_arrays():
    n = 4096
    x = np.arange(n, dtype=np.float32)
    d_out = cuda.device_array(n, np.float32)
    saxpy[n // 128, 128](d_out, np.float32(3), cuda.to_device(x), cuda.to_device(x))
    np.testing.assert_array_equal(d_out.copy_to_host(), 4 * x)


def test_two_dimensional_grid():
    x = np.arange(300 * 200, dtype=np.float64).reshape(300, 200)
    y = np.ones_like(x)
    out = np.zeros_like(x)
    add_2d[(19, 13), (16, 16)](out, x, y)
    np.testing.assert_array_equal(out, x + np.arange(1, 301)[:, None])


def test_shared_memory_reduction():
    x = np.random.default_rng(2).random(256 * 40 + 17, dtype=np.float32)
    blocks = (x.size + 255) // 256
    out = np.zeros(blocks, np.float32)
    block_sums[blocks, 256](out, x)
    padded = np.concatenate([x, np.zeros(blocks * 256 - x.size, np.float32)])
    np.testing.assert_allclose(out, padded.reshape(blocks, 256).sum(axis=1), rtol=1e-5)


def test_atomics():
    values = np.random.default_rng(3).integers(0, 1000, 50_000).astype(np.int64)
    bins = np.zeros(16, np.int64)
    histogram[(values.size + 127) // 128, 128](bins, values)
    np.testing.assert_array_equal(bins, np.bincount(values % 16, minlength=16))


def test_dynamic_shared_memory_above_48_kb():
    n = 1024
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    dynamic_shared_copy[1, n, 0, 64 * 1024](out, x)  # opts in above 48 KB
    np.testing.assert_array_equal(out, (2 * x)[::-1])


def test_read_only_array_is_not_written_back():
    x = np.arange(64, dtype=np.float32)
    x.flags.writeable = False
    out = np.zeros(64, np.float32)
    saxpy[1, 64](out, np.float32(1), x, x)
    np.testing.assert_array_equal(out, 2 * x)


def test_kernel_facts():
    sig = saxpy.compile("void(float32[::1], float32, float32[::1], float32[::1])")
    saxpy[1, 32](np.zeros(32, np.float32), np.float32(1), np.zeros(32, np.float32),
                 np.zeros(32, np.float32))
    assert 0 < saxpy.get_regs_per_thread(sig) <= 255
    assert saxpy.get_max_threads_per_block(sig) >= 256
    assert saxpy.get_shared_mem_per_block(sig) == 0
    sums = block_sums.compile("void(float32[::1], float32[::1])")
    assert block_sums.get_shared_mem_per_block(sums) == 256 * 4
    assert block_sums.get_local_mem_per_thread(sums) >= 0


def test_launch_beyond_the_device_is_a_clear_error():
    with pytest.raises(ValueError, match="dynamic shared memory"):
        dynamic_shared_copy[1, 32, 0, 1 << 30](np.zeros(32, np.float32),
                                              np.zeros(32, np.float32))


def _run_alone(tmp_path, script):
    """Runs a script in a process of its own (a fault leaves its context unusable)."""
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                          timeout=120)


def test_illegal_address_names_the_kernel(tmp_path):
    # In a process of its own: the fault leaves the context unusable.
    proc = _run_alone(tmp_path, """
        import numpy as np
        from tidal import cuda

        @cuda.jit
        def write_far(a, index):
            a[index] = 1.0

        try:
            write_far[1, 1](np.zeros(4, np.float32), 1 << 40)
        except cuda.CudaDriverError as e:
            print("ERROR", e.call, e.error_name)
            print(e)
    """)
    assert "ERROR cuCtxSynchronize CUDA_ERROR_" in proc.stdout, proc.stdout + proc.stderr
    assert "kernel 'write_far'" in proc.stdout and "no longer usable" in proc.stdout


def test_asynchronous_fault_is_reported_by_the_next_call(tmp_path):
    # A launch of device arrays returns at once; the copy after it observes
    # the fault, and names the kernel.
    proc = _run_alone(tmp_path, """
        import numpy as np
        from tidal import cuda

        @cuda.jit
        def write_far(a, index):
            a[index] = 1.0

        d = cuda.to_device(np.zeros(4, np.float32))
        write_far[1, 1](d, 1 << 40)
        for work in (d.copy_to_host, cuda.synchronize):
            try:
                work()
            except cuda.CudaDriverError as e:
                print("ERROR", e.call, e.error_name)
                print(e)
    """)
    lines = proc.stdout.splitlines()
    assert len(lines) == 4, proc.stdout + proc.stderr
    assert lines[0].startswith("ERROR cuMemcpyDtoH CUDA_ERROR_"), proc.stdout
    assert lines[1].startswith("kernel 'write_far' (launched asynchronously, griddim (1, 1, 1), "
                               "blockdim (1, 1, 1)) failed on device 0")
    assert "reported by cuMemcpyDtoH" in lines[1] and "no longer usable" in lines[1]
    # The later synchronisation raises the same at once.
    assert lines[2:] == lines[:2]


# --- host memory: pinned, mapped and managed arrays ----------------------------------

def test_pinned_mapped_and_managed_memory():
    x = cuda.pinned_array(1000, np.float32)
    x[:] = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, np.float32)
    for wc in (False, True):
        out = cuda.mapped_array(1000, np.float32, wc=wc)
        # As Numba: no copy of mapped memory; synchronise before reading it.
        saxpy[4, 256](cuda.as_cuda_array(out), np.float32(2), cuda.to_device(x),
                      cuda.to_device(y))
        cuda.synchronize()
        np.testing.assert_allclose(out, 2 * x + y)
    managed = cuda.managed_array(1000, np.float32)
    managed[:] = 0
    saxpy[4, 256](cuda.as_cuda_array(managed), np.float32(3), cuda.to_device(x),
                  cuda.to_device(y))
    cuda.synchronize()
    np.testing.assert_allclose(managed, 3 * x + y)
    host = np.zeros(1000, np.float32)
    with cuda.pinned(x, y), cuda.mapped(host) as d:
        saxpy[4, 256](d, np.float32(1), cuda.to_device(x), cuda.to_device(y))
        cuda.synchronize()
    np.testing.assert_allclose(host, x + y)


# --- launching: configurations, plans, forall, streams and events ------------------------

def test_mapped_and_managed_arrays_are_kernel_arguments_in_place():
    x = cuda.to_device(np.arange(512, dtype=np.float32))
    y = cuda.to_device(np.ones(512, np.float32))
    mapped = cuda.mapped_array(512, np.float32)
    managed = cuda.managed_array(512, np.float32)
    saxpy[2, 256](mapped, np.float32(2), x, y)
    saxpy[2, 256](managed, np.float32(3), x, y)
    cuda.synchronize()
    np.testing.assert_allclose(mapped, 2 * np.arange(512) + 1)
    np.testing.assert_allclose(managed, 3 * np.arange(512) + 1)


def test_forall_covers_every_element():
    n = 100_003
    x = np.arange(n, dtype=np.float32)
    out = cuda.device_array(n, np.float32)
    saxpy.forall(n)(out, np.float32(2), cuda.to_device(x), cuda.to_device(x))
    np.testing.assert_allclose(out.copy_to_host(), 3 * x)


def test_stream_launches_copies_and_event_timing():
    stream = cuda.stream()
    n = 1 << 20
    host = cuda.pinned_array(n, np.float32)
    host[:] = 1
    start, end = cuda.event(timing=True), cuda.event(timing=True)
    d = cuda.to_device(host, stream=stream)
    out = cuda.device_array(n, np.float32, stream=stream)
    start.record(stream)
    for _ in range(10):
        saxpy[(n + 255) // 256, 256, stream](out, np.float32(2), d, d)
    end.record(stream)
    result = out.copy_to_host(stream=stream)
    stream.synchronize()
    assert end.query()
    assert cuda.event_elapsed_time(start, end) > 0
    np.testing.assert_allclose(result, 3)
    with stream.auto_synchronize():
        saxpy[(n + 255) // 256, 256, stream](out, np.float32(1), d, d)
    np.testing.assert_allclose(out.copy_to_host(), 2)


def test_events_order_two_streams():
    first, second = cuda.stream(), cuda.stream()
    n = 1 << 16
    d = cuda.to_device(np.ones(n, np.float32), stream=first)
    out = cuda.device_array(n, np.float32)
    done = cuda.event()
    saxpy[(n + 255) // 256, 256, first](out, np.float32(5), d, d)
    done.record(first)
    done.wait(second)
    saxpy[(n + 255) // 256, 256, second](d, np.float32(1), out, d)
    second.synchronize()
    np.testing.assert_allclose(d.copy_to_host(), 7)


@pytest.mark.parametrize("config, message", [
    (((1, 1 << 16), 1), "griddim .* along y: CUDA allows at most 65535"),
    ((1, (1, 1, 65)), "along z: CUDA allows at most 64"),
    ((1, (32, 33)), "has 1056 threads: a block has at most 1024"),
])
def test_each_launch_check(config, message):
    with pytest.raises(ValueError, match=message):
        saxpy[config](np.zeros(1, np.float32), np.float32(1), np.zeros(1, np.float32),
                      np.zeros(1, np.float32))


def test_every_device_runs_kernels():
    for device in cuda.gpus:
        with device:
            x = np.arange(256, dtype=np.float32)
            out = cuda.device_array(256, np.float32)
            saxpy[1, 256](out, np.float32(2), cuda.to_device(x), cuda.to_device(x))
            np.testing.assert_allclose(out.copy_to_host(), 3 * x)
    assert cuda.get_current_device().compute_capability >= (7, 0)
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total
