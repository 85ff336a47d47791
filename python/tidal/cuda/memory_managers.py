"""Numba's External Memory Management (EMM) plugin interface:
``cuda.set_memory_manager(plugin_class)`` makes device arrays get their memory
from the plugin (RAPIDS RMM's ``RMMNumbaManager`` is one), with Numba's
classes for writing one: ``BaseCUDAMemoryManager``, ``MemoryPointer``,
``MappedMemory``, ``PinnedMemory`` and ``MemoryInfo`` (here), and
``HostOnlyCUDAMemoryManager`` and ``GetIpcHandleMixin`` (memory_plugins.py,
which uses tidal's host memory).

What tidal asks of a plugin (docs/runtime.md, "Memory-manager plugins"):
``initialize()`` once per device context, ``memalloc(size)`` for the memory
of every ``DeviceNDArray`` made after ``set_memory_manager`` (``to_device``,
``device_array``, ``copy_to_device`` of a new array, ...), freed by dropping
the returned ``MemoryPointer`` (its finalizer runs when the last array over
it goes), ``get_memory_info()`` for ``context.get_memory_info()``,
``defer_cleanup()`` for ``cuda.defer_cleanup()`` and ``reset()`` for
``context.reset()``. Pinned and mapped host memory (``pinned_array``,
``mapped_array``) and the copies of host arrays that a launch makes stay
tidal's own, so ``memhostalloc`` and ``mempin`` are not called (as for
Numba's ``HostOnlyCUDAMemoryManager``). On the cpu target device memory is
host memory: a plugin's pointers must then be host memory too (checked).

The plugin is a class; ``NUMBA_CUDA_MEMORY_MANAGER`` (or
``TIDAL_CUDA_MEMORY_MANAGER``) may name a module whose
``_numba_memory_manager`` is one, as Numba reads it.
"""

import collections
import ctypes
import importlib
import os
import weakref

__all__ = ["BaseCUDAMemoryManager", "MemoryPointer", "MappedMemory", "PinnedMemory",
           "MemoryInfo", "set_memory_manager"]

MemoryInfo = collections.namedtuple("MemoryInfo", "free,total")
MemoryInfo.__doc__ = "Free and total memory of a device, in bytes."


class _Memory:
    """Memory a plugin gives: ``pointer`` (an int or a ctypes c_void_p) and
    ``size`` bytes in ``context``; ``finalizer`` (called once, with no
    arguments) frees it when this object is freed or dropped; ``owner``
    keeps what the memory belongs to alive."""

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        self.context = context
        address = pointer.value if isinstance(pointer, ctypes.c_void_p) else pointer
        self._pointer = ctypes.c_void_p(address or 0)
        self.size = int(size)
        self._owner = owner
        self.is_managed = finalizer is not None
        self._finalizer = weakref.finalize(self, finalizer) if finalizer is not None else None

    @property
    def owner(self):
        return self if self._owner is None else self._owner

    def free(self):
        """Frees the memory now (its finalizer); later calls do nothing."""
        if self._finalizer is not None:
            self._finalizer()


class MemoryPointer(_Memory):
    """Device memory: ``device_pointer`` (a ctypes c_void_p) and ``size``."""

    __cuda_memory__ = True
    refct = 1

    @property
    def device_pointer(self):
        return self._pointer

    handle = device_ctypes_pointer = device_pointer

    @property
    def device_pointer_value(self):
        return self._pointer.value or 0

    # Equal when they describe the same bytes (DeviceNDArray.gpu_data makes
    # a new one at each access).
    def __eq__(self, other):
        if not isinstance(other, MemoryPointer):
            return NotImplemented
        return (self.device_pointer_value, self.size) == (other.device_pointer_value, other.size)

    def __hash__(self):
        return hash((self.device_pointer_value, self.size))

    def __repr__(self):
        return (f"<{type(self).__name__} 0x{self.device_pointer_value:x} of {self.size} bytes>")


class MappedMemory(MemoryPointer):
    """Host memory mapped into the device's address space: ``host_pointer``
    and ``device_pointer`` (equal under unified addressing)."""

    @property
    def host_pointer(self):
        return self._pointer


class PinnedMemory(_Memory):
    """Page-locked host memory: ``host_pointer`` and ``size``."""

    @property
    def host_pointer(self):
        return self._pointer


class BaseCUDAMemoryManager:
    """The plugin interface (Numba's abstract class): a subclass implements
    ``memalloc``, ``memhostalloc``, ``mempin``, ``initialize``,
    ``get_ipc_handle``, ``get_memory_info``, ``reset``, ``defer_cleanup``
    and ``interface_version`` (1)."""

    def __init__(self, *args, **kwargs):
        if "context" not in kwargs:
            raise RuntimeError("Memory manager requires a context")
        self.context = kwargs.pop("context")

    def memalloc(self, size):
        raise NotImplementedError

    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        raise NotImplementedError

    def mempin(self, owner, pointer, size, mapped=False):
        raise NotImplementedError

    def initialize(self):
        raise NotImplementedError

    def get_ipc_handle(self, memory):
        raise NotImplementedError

    def get_memory_info(self):
        raise NotImplementedError

    def reset(self):
        raise NotImplementedError

    def defer_cleanup(self):
        raise NotImplementedError

    @property
    def interface_version(self):
        raise NotImplementedError


# The plugin class, and its instance per device id (made on first use).
_plugin_class = None
_plugins = {}
_environment_read = False


def set_memory_manager(mm_plugin):
    """Device arrays made from now on get their memory from ``mm_plugin``, a
    subclass of BaseCUDAMemoryManager (instantiated once per device, with
    ``context=``); None goes back to tidal's allocator. Arrays made before
    keep their memory."""
    global _plugin_class, _environment_read
    if mm_plugin is not None:
        if not isinstance(mm_plugin, type) or not issubclass(mm_plugin, BaseCUDAMemoryManager):
            raise TypeError("set_memory_manager() takes a subclass of "
                            "BaseCUDAMemoryManager, not " + repr(mm_plugin))
    _environment_read = True
    _plugin_class = mm_plugin
    _plugins.clear()


def _environment_plugin():
    """The class NUMBA_CUDA_MEMORY_MANAGER (or TIDAL_CUDA_MEMORY_MANAGER) names
    by module, read once."""
    global _environment_read, _plugin_class
    if _environment_read:
        return
    _environment_read = True
    name = os.environ.get("TIDAL_CUDA_MEMORY_MANAGER") or \
        os.environ.get("NUMBA_CUDA_MEMORY_MANAGER")
    if not name or name == "default":
        return
    try:
        module = importlib.import_module(name)
        plugin = module._numba_memory_manager
    except (ImportError, AttributeError) as error:
        raise RuntimeError(f"the memory manager module {name!r} (NUMBA_CUDA_MEMORY_MANAGER) "
                           f"could not be used: {error}") from error
    set_memory_manager(plugin)


def plugin_set():
    """Whether a plugin class is set (NUMBA_CUDA_MEMORY_MANAGER read first)."""
    _environment_plugin()
    return _plugin_class is not None


def plugin_of(context):
    """The plugin instance of a device's context (made on first use), or
    None when tidal's own allocator is used."""
    if not plugin_set():
        return None
    plugin = _plugins.get(context.id)
    if plugin is None:
        plugin = _plugin_class(context=context)
        version = plugin.interface_version
        if version != 1:
            raise RuntimeError(f"memory manager {_plugin_class.__name__} has interface "
                               f"version {version}; tidal takes version 1 (Numba's)")
        plugin.initialize()
        plugin = _plugins.setdefault(context.id, plugin)
    return plugin


def allocate(plugin, nbytes):
    """(pointer, owner) of ``nbytes`` of device memory from the plugin."""
    memory = plugin.memalloc(nbytes)
    if not isinstance(memory, MemoryPointer):
        raise TypeError(f"{type(plugin).__name__}.memalloc() must return a MemoryPointer, "
                        f"not {type(memory).__name__}")
    if memory.size < nbytes:
        raise ValueError(f"{type(plugin).__name__}.memalloc({nbytes}) returned "
                         f"{memory.size} bytes")
    if memory.device_pointer_value == 0 and nbytes:
        raise ValueError(f"{type(plugin).__name__}.memalloc({nbytes}) returned a null pointer")
    return memory.device_pointer_value, memory
