"""Numba's memory-manager plugins (EMM: cuda.set_memory_manager and its
classes; python/tidal/cuda/memory_managers.py) on every target: device arrays
take their memory from the plugin, which frees it when the last array over it
goes; get_memory_info, defer_cleanup and reset are the plugin's; bad plugins
and bad memory are refused."""

import gc

import numpy as np
import pytest

from tidal import cuda
from tidal.cuda._native import native
from tidal.cuda.target import on_cuda


class CountingPlugin(cuda.HostOnlyCUDAMemoryManager):
    """Memory from tidal's own allocator on the cuda target (so that it is
    device memory on a GPU too), from NumPy on the cpu target; counts what
    it is asked."""

    events = []

    def initialize(self):
        self.events.append("initialize")

    def memalloc(self, size):
        if on_cuda():
            owner, pointer = native.cuda_alloc(size, 0)
        else:
            owner = np.empty(size, np.uint8)
            pointer = owner.ctypes.data
        self.events.append(("memalloc", size))
        return cuda.MemoryPointer(self.context, pointer, size, owner=owner,
                                  finalizer=lambda: self.events.append(("free", size)))

    def get_memory_info(self):
        return cuda.MemoryInfo(free=123, total=456)

    def get_ipc_handle(self, memory):
        raise NotImplementedError

    @property
    def interface_version(self):
        return 1


@cuda.jit
def scale(a, factor):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] *= factor


@pytest.fixture
def plugin():
    CountingPlugin.events = []
    cuda.set_memory_manager(CountingPlugin)
    yield CountingPlugin
    cuda.set_memory_manager(None)


def test_device_arrays_take_the_plugins_memory_and_give_it_back(target, plugin):
    d = cuda.to_device(np.arange(32, dtype=np.float32))
    scale[1, 32](d, np.float32(2))
    e = cuda.device_array((4, 4), np.int64)
    assert plugin.events[:3] == ["initialize", ("memalloc", 128), ("memalloc", 128)]
    view = d[8:16]  # a view keeps the memory
    del d
    gc.collect()
    assert ("free", 128) not in plugin.events
    if target.computes:
        np.testing.assert_array_equal(view.copy_to_host(), np.arange(8, 16) * 2)
    del view, e
    gc.collect()
    assert plugin.events.count(("free", 128)) == 2
    # Context calls go to the plugin.
    assert cuda.current_context().get_memory_info() == (123, 456)
    with cuda.defer_cleanup():
        cuda.device_array(3)
    assert plugin.events.count("initialize") == 1
    # HostOnlyCUDAMemoryManager's host memory is tidal's pinned and mapped memory.
    manager = CountingPlugin(context=cuda.current_context())
    pinned, mapped = manager.memhostalloc(64), manager.memhostalloc(64, mapped=True)
    assert isinstance(pinned, cuda.PinnedMemory) and isinstance(mapped, cuda.MappedMemory)
    assert pinned.size == mapped.size == 64
    assert pinned.host_pointer.value and mapped.device_pointer.value
    # Back to tidal's allocator: the plugin is not asked again.
    cuda.set_memory_manager(None)
    cuda.to_device(np.zeros(5))
    assert ("memalloc", 40) not in plugin.events


def test_bad_plugins_and_memory_are_refused(target):
    with pytest.raises(TypeError, match=r"set_memory_manager\(\) takes a subclass of "
                                        r"BaseCUDAMemoryManager"):
        cuda.set_memory_manager(object)

    class Version2(CountingPlugin):
        @property
        def interface_version(self):
            return 2

    class NotAPointer(CountingPlugin):
        def memalloc(self, size):
            return 1234

    class TooSmall(CountingPlugin):
        def memalloc(self, size):
            return cuda.MemoryPointer(self.context, 4096, size - 1)

    cases = [(Version2, RuntimeError, "has interface version 2; tidal takes version 1"),
             (NotAPointer, TypeError, r"NotAPointer.memalloc\(\) must return a MemoryPointer, not int"),
             (TooSmall, ValueError, r"TooSmall.memalloc\(16\) returned 15 bytes")]
    try:
        for plugin, error, message in cases:
            cuda.set_memory_manager(plugin)
            with pytest.raises(error, match=message):
                cuda.device_array(4, np.float32)
        if not on_cuda():
            # On the cpu target a plugin's memory must be host memory.
            class DevicePointers(CountingPlugin):
                def memalloc(self, size):
                    return cuda.MemoryPointer(self.context, 0x10, size)

            cuda.set_memory_manager(DevicePointers)
            with pytest.raises(ValueError):
                cuda.device_array(4, np.float32)
    finally:
        cuda.set_memory_manager(None)


def test_the_base_class_is_abstract():
    base = cuda.BaseCUDAMemoryManager(context=None)
    for call in (lambda: base.memalloc(1), lambda: base.initialize(),
                 lambda: base.get_memory_info(), lambda: base.interface_version):
        with pytest.raises(NotImplementedError):
            call()
    with pytest.raises(RuntimeError, match="requires a context"):
        cuda.BaseCUDAMemoryManager()
    # GetIpcHandleMixin's get_ipc_handle works: test_ipc.py.


def test_gpu_data_describes_the_bytes_of_the_elements(target):
    d = cuda.to_device(np.arange(10, dtype=np.float64))
    memory = d.gpu_data
    assert isinstance(memory, cuda.MemoryPointer)
    assert memory.size == 80 and memory.owner is d
    assert memory.device_pointer_value == d.device_ctypes_pointer.value
    assert d.view(np.int64).gpu_data == memory  # the same bytes
    assert d[2:].gpu_data != memory
    assert d[2:].gpu_data.device_pointer_value == memory.device_pointer_value + 16
    assert cuda.device_array(0).gpu_data.size == 0


def test_the_environment_names_a_plugin_module(tmp_path):
    # Numba's NUMBA_CUDA_MEMORY_MANAGER (tidal also reads
    # TIDAL_CUDA_MEMORY_MANAGER): a module whose _numba_memory_manager is the
    # plugin class, read at the first allocation.
    import os
    import subprocess
    import sys
    (tmp_path / "counting_manager.py").write_text(
        "import numpy as np\n"
        "from tidal import cuda\n"
        "calls = []\n"
        "class Plugin(cuda.HostOnlyCUDAMemoryManager):\n"
        "    def initialize(self): pass\n"
        "    def memalloc(self, size):\n"
        "        calls.append(size)\n"
        "        owner = np.empty(size, np.uint8)\n"
        "        return cuda.MemoryPointer(self.context, owner.ctypes.data, size, owner=owner)\n"
        "    def get_memory_info(self): return cuda.MemoryInfo(1, 2)\n"
        "    def get_ipc_handle(self, memory): raise NotImplementedError\n"
        "    @property\n"
        "    def interface_version(self): return 1\n"
        "_numba_memory_manager = Plugin\n")
    script = ("import numpy as np, counting_manager\n"
              "from tidal import cuda\n"
              "cuda.to_device(np.zeros(4))\n"
              "print(counting_manager.calls)\n")
    env = dict(os.environ, TIDAL_TARGET="cpu", NUMBA_CUDA_MEMORY_MANAGER="counting_manager",
               PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[32]"
    env["NUMBA_CUDA_MEMORY_MANAGER"] = "no_such_module"
    out = subprocess.run([sys.executable, "-c", "import numpy as np\nfrom tidal import cuda\n"
                          "cuda.to_device(np.zeros(4))"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode != 0
    assert "the memory manager module 'no_such_module' (NUMBA_CUDA_MEMORY_MANAGER) could " \
           "not be used" in out.stderr
