"""CUDA IPC (issue 13; python/tidal/cuda/ipc.py, runtime/CudaIpc.cpp): device
memory of this process opened by a child process on every target. On the
cuda target (over the mock driver, whose cuMemAlloc memory is a shared memfd
mapping another process maps, test/mock_driver/MockCudaIpc.cpp; or a GPU) a
child opens the handle, reads the parent's data and writes into it, and the
parent sees the write; handles pickle; Numba's errors; an exported allocation
is never reused by the caching allocator. On the cpu target, whose device
memory is this process's own NumPy memory, every entry point raises OSError
naming what to use instead."""

import gc
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from child_processes import python_environment
from mock_driver import MOCK
from targets import on_targets
from tidal import cuda
from tidal.cuda._native import native

# The child: unpickles (script, payload) from stdin, runs the script with
# `payload`, `cuda` and `np` defined, and pickles its `result` to stdout.
CHILD = textwrap.dedent("""
    import pickle, sys
    import numpy as np
    from tidal import cuda
    script, payload = pickle.load(sys.stdin.buffer)
    scope = {"payload": payload, "cuda": cuda, "np": np}
    exec(script, scope)
    sys.stdout.buffer.write(pickle.dumps(scope["result"]))
""")


def in_child(target, script, payload, **settings):
    """`result` of `script` run in a new Python process on the cuda target
    (over the mock driver when this process uses it)."""
    environment = python_environment(TIDAL_TARGET="cuda", **settings)
    if target.mock:
        environment["TIDAL_CUDA_DRIVER"] = str(MOCK)
    proc = subprocess.run([sys.executable, "-c", CHILD],
                          input=pickle.dumps((textwrap.dedent(script), payload)),
                          env=environment, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return pickle.loads(proc.stdout)


# Opens an IpcArrayHandle, reads it, writes -1 at [0...] through it, and
# checks Numba's error for opening it again; then the closed array is dead.
READ_AND_WRITE = """
    with payload as array:
        seen = array.copy_to_host()
        array[(0,) * array.ndim] = -1
        try:
            payload.open()
            reopened = "opened twice"
        except ValueError as error:
            reopened = str(error)
    try:
        array.copy_to_host()
        after_close = "readable"
    except cuda.CudaDriverError as error:
        after_close = error.error_name
    result = (seen, reopened, after_close)
"""


@pytest.mark.parametrize("index", [None, np.s_[3:], np.s_[3:8], np.s_[:8]],
                         ids=["whole", "3:", "3:8", ":8"])
def test_a_child_reads_and_writes_the_parents_array(target, index):
    host = np.arange(10, dtype=np.int64)
    whole = cuda.to_device(host)
    array = whole if index is None else whole[index]
    if target.name == "cpu":
        with pytest.raises(OSError, match="multiprocessing.shared_memory"):
            array.get_ipc_handle()
        return
    handle = array.get_ipc_handle()
    assert isinstance(handle, cuda.devicearray.IpcArrayHandle)  # Numba's module for it
    seen, reopened, after_close = in_child(target, READ_AND_WRITE, handle)
    np.testing.assert_array_equal(seen, host if index is None else host[index])
    assert reopened == "IpcHandle is already opened"
    # The mock knows the pointer no more (a GPU may fault instead: not run there).
    if target.mock:
        assert after_close == "CUDA_ERROR_INVALID_VALUE"
    expected = host.copy()
    expected[0 if index is None else index.start or 0] = -1
    np.testing.assert_array_equal(whole.copy_to_host(), expected)


@on_targets("cuda")
def test_a_two_dimensional_fortran_array_keeps_its_layout(target):
    host = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    array = cuda.to_device(host)
    seen, _, _ = in_child(target, READ_AND_WRITE, array.get_ipc_handle())
    np.testing.assert_array_equal(seen, host)
    assert seen.flags.f_contiguous
    host[0, 0] = -1
    np.testing.assert_array_equal(array.copy_to_host(), host)


@on_targets("cuda")
def test_handles_pickle_without_the_exporters_memory(target):
    array = cuda.to_device(np.arange(10, dtype=np.intp))[2:]
    ctx = cuda.current_context()
    handle = ctx.get_ipc_handle(array.gpu_data)
    assert isinstance(handle, cuda.IpcHandle)
    assert isinstance(handle.handle, bytes) and len(handle.handle) == 64
    assert (handle.size, handle.offset) == (64, 16)
    assert handle.source_info == ctx.device.get_device_identity()
    copy = pickle.loads(pickle.dumps(handle))
    assert copy.base is None and handle.base is not None
    assert (copy.handle, copy.size, copy.offset, copy.source_info) == \
        (handle.handle, handle.size, handle.offset, handle.source_info)
    # Numba's driver-level use in the child: open_array, then close.
    seen = in_child(target, """
        darr = payload.open_array(cuda.current_context(), shape=payload.size // 8,
                                  dtype=np.intp)
        result = darr.copy_to_host()
        payload.close()
    """, copy)
    np.testing.assert_array_equal(seen, np.arange(2, 10))


def test_numbas_errors(target):
    array = cuda.to_device(np.arange(4, dtype=np.int32))
    if target.name == "cpu":
        for call in (array.get_ipc_handle,
                     lambda: cuda.current_context().get_ipc_handle(array.gpu_data),
                     lambda: cuda.IpcHandle(None, bytes(64), 16).open(
                         cuda.current_context())):
            with pytest.raises(OSError, match="needs the cuda target"):
                call()
        with pytest.raises(OSError, match="cpu target a device array is this process's own"):
            with cuda.open_ipc_array(bytes(64), 4, np.int32):
                pass
        return
    handle = array.get_ipc_handle()
    with pytest.raises(ValueError, match="^opening IpcHandle from original process$"):
        handle.open()
    with pytest.raises(ValueError, match="^IpcHandle not opened$"):
        handle.close()
    # A pickled handle has no base: the driver refuses it in this process.
    with pytest.raises(cuda.CudaDriverError, match="process that exported it") as raised:
        pickle.loads(pickle.dumps(handle)).open()
    assert raised.value.error_name == "CUDA_ERROR_INVALID_CONTEXT"
    with pytest.raises(ValueError, match="64 bytes, not 3"):
        cuda.IpcHandle(None, b"abc", 3)
    with pytest.raises(TypeError, match="64 bytes"):
        cuda.IpcHandle(None, 3.5, 3)
    with pytest.raises(ValueError, match="empty memory"):
        cuda.device_array(0).get_ipc_handle()


@on_targets("cuda")
def test_open_ipc_array_takes_the_raw_handle(target):
    host = np.arange(10, dtype=np.int32)
    array = cuda.to_device(host)
    handle = cuda.current_context().get_ipc_handle(array[4:].gpu_data)
    raw, offset = handle.handle, handle.offset
    signed = tuple(np.frombuffer(raw, dtype=np.int8).tolist())  # Numba's ctypes bytes
    seen = in_child(target, """
        raw, signed, offset = payload
        with cuda.open_ipc_array(raw, shape=6, dtype=np.int32, offset=offset) as a:
            first = a.copy_to_host()
            a[5] = 70
        with cuda.open_ipc_array(signed, shape=(2, 3), dtype=np.int32, offset=offset) as b:
            second = b.copy_to_host()
        result = first, second
    """, (raw, signed, offset))
    np.testing.assert_array_equal(seen[0], host[4:])
    host[9] = 70  # the first opening's write, which the second sees
    np.testing.assert_array_equal(seen[1], host[4:].reshape(2, 3))
    np.testing.assert_array_equal(array.copy_to_host(), host)


def test_an_exported_allocation_is_not_reused(target):
    """The caching allocator keeps a freed block for the next array of its
    size class, but gives an exported one back to the driver."""
    ctx = cuda.current_context()
    nbytes = 3 << 20  # a size class of its own in this test
    cuda.current_context().deallocations.clear()
    before = ctx.memory_stats()
    plain = cuda.device_array(nbytes, dtype=np.uint8)
    del plain
    gc.collect()
    reused = cuda.device_array(nbytes, dtype=np.uint8)
    after_plain = ctx.memory_stats()
    if target.name == "cpu":  # NumPy's memory: nothing to count, nothing to export
        assert after_plain == before
        with pytest.raises(OSError):
            reused.get_ipc_handle()
        return
    assert after_plain["reuses"] == before["reuses"] + 1
    handle = reused.get_ipc_handle()
    assert ctx.memory_stats()["exported_allocations"] == before["exported_allocations"] + 1
    del reused, handle
    gc.collect()
    freed = ctx.memory_stats()
    assert freed["driver_frees"] == after_plain["driver_frees"] + 1
    assert freed["bytes_cached"] == after_plain["bytes_cached"]
    assert freed["exported_allocations"] == before["exported_allocations"]
    fresh = cuda.device_array(nbytes, dtype=np.uint8)
    now = ctx.memory_stats()
    assert now["reuses"] == freed["reuses"]
    assert now["driver_allocations"] == freed["driver_allocations"] + 1
    del fresh


@on_targets("cuda")
def test_a_stale_handle_never_shows_another_arrays_bytes(target):
    if not target.mock:
        pytest.skip("what a freed allocation's handle opens is the driver's business "
                    "(cuda.h: undefined); the mock maps the freed pages")
    first = cuda.to_device(np.full(1000, 7, dtype=np.int32))
    raw = cuda.current_context().get_ipc_handle(first.gpu_data).handle
    del first
    gc.collect()
    second = cuda.to_device(np.full(1000, 5, dtype=np.int32))
    seen = in_child(target, """
        with cuda.open_ipc_array(payload, shape=1000, dtype=np.int32) as a:
            result = a.copy_to_host()
    """, raw)
    assert not (seen == 5).any()
    np.testing.assert_array_equal(second.copy_to_host(), 5)


class IpcPlugin(cuda.GetIpcHandleMixin, cuda.HostOnlyCUDAMemoryManager):
    """A memory-manager plugin with Numba's default get_ipc_handle; its
    memory comes from tidal's allocator (cuMemAlloc)."""

    def initialize(self):
        pass

    def memalloc(self, size):
        owner, pointer = native.cuda_alloc(size, 0)
        return cuda.MemoryPointer(self.context, pointer, size, owner=owner)

    def get_memory_info(self):
        return cuda.MemoryInfo(free=0, total=0)

    @property
    def interface_version(self):
        return 1


def test_a_plugins_memory_is_exported_by_the_mixin(target):
    cuda.set_memory_manager(IpcPlugin)
    try:
        if target.name == "cpu":
            with pytest.raises(OSError, match="needs the cuda target"):
                IpcPlugin(context=cuda.current_context()).get_ipc_handle(None)
            return
        array = cuda.to_device(np.arange(6, dtype=np.float64))
        handle = array.get_ipc_handle()
    finally:
        cuda.set_memory_manager(None)
    seen, _, _ = in_child(target, READ_AND_WRITE, handle)
    np.testing.assert_array_equal(seen, np.arange(6))
    assert array.copy_to_host()[0] == -1


@on_targets("cuda")
def test_another_device_opens_a_staged_copy(target):
    if not target.mock and len(cuda.gpus) < 2:
        pytest.skip("one GPU: no other device to stage on")
    host = np.arange(10, dtype=np.float64)
    array = cuda.to_device(host)
    settings = {"TIDAL_MOCK_CUDA_DEVICES": "2"} if target.mock else {}
    seen = in_child(target, """
        with cuda.gpus[1]:
            with payload as staged:
                data = staged.copy_to_host()
                staged[0] = -1  # a copy: the exporter keeps its value
                try:
                    payload.open()
                    reopened = "opened twice"
                except ValueError as error:
                    reopened = str(error)
        result = data, reopened
    """, array.get_ipc_handle(), **settings)
    np.testing.assert_array_equal(seen[0], host)
    assert seen[1] == "IpcHandle is already opened"
    np.testing.assert_array_equal(array.copy_to_host(), host)


@on_targets("cuda")
def test_numbas_staged_open_and_raw_copy(target):
    """Numba's test_staged: open_staged in another device's context, then
    cuda.driver.device_to_host of the MemoryPointer it gives."""
    if not target.mock and len(cuda.gpus) < 2:
        pytest.skip("one GPU: no other device to stage on")
    host = np.arange(10, dtype=np.intp)
    array = cuda.to_device(host)
    handle = pickle.loads(pickle.dumps(cuda.current_context().get_ipc_handle(array.gpu_data)))
    settings = {"TIDAL_MOCK_CUDA_DEVICES": "2"} if target.mock else {}
    seen = in_child(target, """
        with cuda.gpus[1]:
            pointer = payload.open_staged(cuda.devices.get_context())
            out = np.zeros(payload.size // 8, dtype=np.intp)
            cuda.driver.device_to_host(out, pointer, size=payload.size)
            payload.close()
        result = out
    """, handle, **settings)
    np.testing.assert_array_equal(seen, host)


def test_numbas_raw_copies(target):
    """cuda.driver.host_to_device, device_to_host and device_to_device on
    MemoryPointers and device arrays (a memmove on the cpu target)."""
    a = cuda.to_device(np.arange(8, dtype=np.int32))
    b = cuda.device_array(8, dtype=np.int32)
    out = np.zeros(8, dtype=np.int32)
    cuda.driver.device_to_device(b, a.gpu_data, a.nbytes)
    cuda.driver.device_to_host(out, b.gpu_data, b.nbytes)
    np.testing.assert_array_equal(out, np.arange(8))
    cuda.driver.host_to_device(a, np.full(8, 3, dtype=np.int32), a.nbytes)
    np.testing.assert_array_equal(a.copy_to_host(), 3)
    with pytest.raises(TypeError, match="no device memory"):
        cuda.driver.device_to_host(out, object(), 4)


@on_targets("cuda")
def test_two_copies_of_a_handle_share_one_mapping(target):
    """cuda.h: opening a handle the context has open already returns the same
    pointer and counts a reference; each close undoes one."""
    array = cuda.to_device(np.arange(5, dtype=np.int64))
    handle = cuda.current_context().get_ipc_handle(array.gpu_data)
    seen = in_child(target, """
        first, second = payload
        ctx = cuda.current_context()
        a = first.open(ctx)
        b = second.open(ctx)
        same = a.device_pointer_value == b.device_pointer_value
        first.close()
        out = np.zeros(5, dtype=np.int64)
        cuda.driver.device_to_host(out, b, 40)  # still mapped for the second
        second.close()
        result = same, out
    """, (pickle.loads(pickle.dumps(handle)), pickle.loads(pickle.dumps(handle))))
    assert seen[0]
    np.testing.assert_array_equal(seen[1], np.arange(5))
