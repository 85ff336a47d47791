"""Devices and contexts: cuda.gpus, get_current_device(), current_context(), ...

These are the cpu target's objects: one device (id 0, "tidal cpu target")
whose multiprocessors are the workers of the thread pool that runs blocks,
and one context, whose memory is this machine's memory. They carry the
attributes that mean something on the cpu target (the launch limits, which
every target enforces, the warp size, the worker count); others, such as the
PCI ids, raise AttributeError instead of pretending.
"""

import collections
import contextlib

from . import streams

_MemoryInfo = collections.namedtuple("_MemoryInfo", "free,total")

# The capability the cpu target implements: what kernels compile for by
# default (the frontend's sm_75), so that code choosing on it picks paths
# the cpu target runs.
_COMPUTE_CAPABILITY = (7, 5)

_ATTRIBUTES = {
    "MAX_THREADS_PER_BLOCK": 1024,
    "MAX_BLOCK_DIM_X": 1024, "MAX_BLOCK_DIM_Y": 1024, "MAX_BLOCK_DIM_Z": 64,
    "MAX_GRID_DIM_X": 2**31 - 1, "MAX_GRID_DIM_Y": 65535, "MAX_GRID_DIM_Z": 65535,
    "WARP_SIZE": 32,
    "COMPUTE_CAPABILITY_MAJOR": _COMPUTE_CAPABILITY[0],
    "COMPUTE_CAPABILITY_MINOR": _COMPUTE_CAPABILITY[1],
    # device memory is host memory: mapped and managed memory are the same thing
    "UNIFIED_ADDRESSING": 1, "CAN_MAP_HOST_MEMORY": 1, "MANAGED_MEMORY": 1,
    "CONCURRENT_MANAGED_ACCESS": 1,
}


def _worker_count():
    from .. import _tidal
    return _tidal.cpu_worker_count()


class Device:
    """The cpu target seen as a CUDA device."""

    id = 0
    name = "tidal cpu target"
    compute_capability = _COMPUTE_CAPABILITY

    def __getattr__(self, attr):
        if attr == "MULTIPROCESSOR_COUNT":
            return _worker_count()
        if attr in _ATTRIBUTES:
            return _ATTRIBUTES[attr]
        raise AttributeError(f"the tidal cpu target has no device attribute {attr!r}")

    def reset(self):
        """Releases the device's context (cuda.close())."""
        close()

    def __repr__(self):
        return f"<CUDA device {self.id} '{self.name}'>"

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)


class _PendingDeallocations:
    """Numba's context.deallocations. On the cpu target memory is freed when
    its last reference goes, so nothing is ever pending."""

    def clear(self):
        """Frees the pending deallocations: none on the cpu target. On the
        cuda target the caching allocator's freed blocks go back to the
        driver (cuMemFree), once the streams that used them are done."""
        from .target import current_target
        if current_target() == "cuda":
            from .. import _tidal
            _tidal.cuda_memory_clear()

    @contextlib.contextmanager
    def disable(self):
        yield

    @property
    def is_disabled(self):
        return False

    def __len__(self):
        return 0


class Context:
    """The cpu target's context: its memory is this machine's memory."""

    def __init__(self, device):
        self.device = device
        self.deallocations = _PendingDeallocations()

    @property
    def id(self):
        return self.device.id

    def memory_stats(self):
        """The cuda target's caching allocator (tidal's own API; numba-cuda
        has none): a dict of bytes_in_use (size-class bytes of live
        allocations), bytes_requested, bytes_cached (freed blocks kept for
        reuse), bytes_pending (of those, blocks a stream may still be
        using), driver_allocations and driver_frees (cuMemAlloc / cuMemFree
        calls), live_driver_allocations and reuses. On the cpu target
        memory is NumPy's: every count is 0."""
        from .target import current_target
        if current_target() == "cuda":
            from .. import _tidal
            return _tidal.cuda_memory_stats()
        return dict.fromkeys(("bytes_in_use", "bytes_requested", "bytes_cached",
                              "bytes_pending", "driver_allocations", "driver_frees",
                              "live_driver_allocations", "reuses"), 0)

    def get_memory_info(self):
        """(free, total) bytes of this machine's memory (MemAvailable and
        MemTotal of /proc/meminfo); cuMemGetInfo on the cuda target."""
        from .target import current_target
        if current_target() == "cuda":
            from .. import _tidal
            return _MemoryInfo(*_tidal.cuda_memory_info())
        fields = {}
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                key, value = line.split(":", 1)
                fields[key] = int(value.split()[0]) * 1024
        return _MemoryInfo(free=fields.get("MemAvailable", fields["MemFree"]),
                           total=fields["MemTotal"])

    def synchronize(self):
        """Waits for all work: on the cpu target it has finished."""
        streams.synchronize()

    def reset(self):
        """Nothing to release: arrays hold their own (host) memory."""
        self.deallocations.clear()

    def create_stream(self):
        return streams.stream()

    def get_default_stream(self):
        return streams.default_stream()

    def get_legacy_default_stream(self):
        return streams.legacy_default_stream()

    def get_per_thread_default_stream(self):
        return streams.per_thread_default_stream()

    def create_event(self, timing=True):
        return streams.event(timing)

    @contextlib.contextmanager
    def defer_cleanup(self):
        with self.deallocations.disable():
            yield

    def __repr__(self):
        return f"<CUDA context of {self.device!r}>"


_device = Device()
_context = None


def current_context():
    """The context of the current device (created on first use)."""
    global _context
    if _context is None:
        _context = Context(_device)
    return _context


def _check_device_id(device_id):
    if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id != 0:
        raise ValueError(f"the tidal cpu target has one device, id 0, not {device_id!r}")


def select_device(device_id):
    """Makes device ``device_id`` current; returns it. The cpu target has
    device 0 only."""
    _check_device_id(device_id)
    current_context()
    return _device


def get_current_device():
    return current_context().device


def close():
    """Drops the current context (cuda.close()). On the cpu target, arrays
    keep their memory: it is theirs, not the context's."""
    global _context
    _context = None


@contextlib.contextmanager
def defer_cleanup():
    """Defers freeing memory inside the block: nothing to defer on the cpu target."""
    with current_context().defer_cleanup():
        yield


class _DeviceContextManager:
    """cuda.gpus[i]: the device, and ``with cuda.gpus[i]:`` to make it current."""

    def __init__(self, device):
        self._device = device

    def __getattr__(self, attr):
        return getattr(self._device, attr)

    def __enter__(self):
        select_device(self._device.id)
        return self._device

    def __exit__(self, exc_type, exc_value, traceback):
        return None

    def __repr__(self):
        return f"<Managed Device {self._device.id}>"


class _DeviceList:
    """cuda.gpus: the devices (one on the cpu target)."""

    def __init__(self):
        self._devices = (_DeviceContextManager(_device),)

    def __getitem__(self, index):
        _check_device_id(index)
        return self._devices[index]

    def __iter__(self):
        return iter(self._devices)

    def __len__(self):
        return len(self._devices)

    @property
    def current(self):
        """The current device, or None when no context is current."""
        return _device if _context is not None else None

    def __repr__(self):
        return ", ".join(repr(d) for d in self._devices)


gpus = _DeviceList()


def list_devices():
    return gpus
