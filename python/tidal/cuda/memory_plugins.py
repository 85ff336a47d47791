"""The base classes of Numba's memory-manager plugins that bring tidal's own
host memory and tidal's CUDA IPC: ``HostOnlyCUDAMemoryManager`` and
``GetIpcHandleMixin`` (the interface and the registry: memory_managers.py)."""

import contextlib

import numpy as np

from .host_memory import mapped_array, pinned_array
from .memory_managers import BaseCUDAMemoryManager, MappedMemory, PinnedMemory

__all__ = ["HostOnlyCUDAMemoryManager", "GetIpcHandleMixin"]


class HostOnlyCUDAMemoryManager(BaseCUDAMemoryManager):
    """A base for plugins that manage device memory only: host memory is
    tidal's (``memhostalloc``, ``mempin``), and ``reset``/``defer_cleanup``
    do what tidal's own allocator does."""

    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        if mapped:
            buffer = mapped_array(int(size), dtype=np.uint8, portable=portable, wc=wc)
        else:
            buffer = pinned_array(int(size), dtype=np.uint8)
        pointer = buffer.ctypes.data
        cls = MappedMemory if mapped else PinnedMemory
        return cls(self.context, pointer, size, owner=buffer)

    def mempin(self, owner, pointer, size, mapped=False):
        cls = MappedMemory if mapped else PinnedMemory
        return cls(self.context, pointer, size, owner=owner)

    def reset(self):
        """Nothing of tidal's is kept for this plugin's memory."""

    @contextlib.contextmanager
    def defer_cleanup(self):
        yield


class GetIpcHandleMixin:
    """Numba's default get_ipc_handle for plugins: the driver allocation that
    holds the memory (cuMemGetAddressRange) exported with cuIpcGetMemHandle,
    as an IpcHandle (ipc.py). The plugin's memory must come from cuMemAlloc
    (or another allocator whose memory cuIpcGetMemHandle takes)."""

    def get_ipc_handle(self, memory):
        from . import ipc
        return ipc.export(memory, self.context)
