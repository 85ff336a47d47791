"""Devices and contexts: cuda.gpus, select_device(), get_current_device(),
current_context(), close(), with numba-cuda's names.

On the cuda target these are the CUDA driver's devices. Each thread has a
current device (device 0 until select_device() or ``with cuda.gpus[i]:``
chooses another); arrays, streams and events are made on it and kernels run
on it. A Device carries what the driver reports: ``name`` (a str, as
numba-cuda gives it since 0.21; Numba's older ctypes binding gave bytes),
``compute_capability``, ``uuid`` and every CUdevice_attribute by its name
less ``CU_DEVICE_ATTRIBUTE_`` (``device.MULTIPROCESSOR_COUNT``), read on
first use and kept. A device's context is its primary context, retained
until the process exits.

On the cpu target there is one device (id 0, "tidal cpu target") whose
multiprocessors are the workers of the thread pool that runs blocks, and one
context, whose memory is this machine's memory. It carries the attributes
that mean something there (the launch limits, which every target enforces,
the warp size, the worker count); others, such as the PCI ids, raise
AttributeError instead of pretending.
"""

import collections
import contextlib
import operator
import threading

from . import memory_managers, streams
from ._native import (MAX_BLOCK_DIM, MAX_GRID_DIM, MAX_SHARED_MEMORY_PER_BLOCK,
                      MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, MAX_THREADS_PER_BLOCK, native)
from .target import current_target, on_cuda

_MemoryInfo = collections.namedtuple("_MemoryInfo", "free,total")

# The oldest compute capability tidal supports (detect() says which devices
# are): what kernels compile for by default, the frontend's sm_75, which is
# also the oldest CUDA 13's ptxas takes.
MIN_COMPUTE_CAPABILITY = (7, 5)

# The capability the cpu target implements: the default one, so that code
# choosing on it picks paths the cpu target runs.
_CPU_COMPUTE_CAPABILITY = MIN_COMPUTE_CAPABILITY

_CPU_ATTRIBUTES = {
    "MAX_THREADS_PER_BLOCK": MAX_THREADS_PER_BLOCK,
    "MAX_BLOCK_DIM_X": MAX_BLOCK_DIM[0], "MAX_BLOCK_DIM_Y": MAX_BLOCK_DIM[1],
    "MAX_BLOCK_DIM_Z": MAX_BLOCK_DIM[2],
    "MAX_GRID_DIM_X": MAX_GRID_DIM[0], "MAX_GRID_DIM_Y": MAX_GRID_DIM[1],
    "MAX_GRID_DIM_Z": MAX_GRID_DIM[2],
    "WARP_SIZE": 32,
    # checked at each launch, as a GPU's (dynamic shared memory opts in)
    "MAX_SHARED_MEMORY_PER_BLOCK": MAX_SHARED_MEMORY_PER_BLOCK,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
    "COMPUTE_CAPABILITY_MAJOR": _CPU_COMPUTE_CAPABILITY[0],
    "COMPUTE_CAPABILITY_MINOR": _CPU_COMPUTE_CAPABILITY[1],
    # device memory is host memory: mapped and managed memory are the same thing
    "UNIFIED_ADDRESSING": 1, "CAN_MAP_HOST_MEMORY": 1, "MANAGED_MEMORY": 1,
    "CONCURRENT_MANAGED_ACCESS": 1,
}


class InvalidDeviceError(ValueError, IndexError):
    """A device id that names no device. A ValueError, as tidal raises for
    bad values, and an IndexError, as numba-cuda's ``cuda.gpus[i]`` raises."""


# --- devices ---------------------------------------------------------------------------

class Device:
    """A device, as numba-cuda's: ``id``, ``name``, ``compute_capability``
    and the device's attributes by name (``device.WARP_SIZE``)."""

    def get_primary_context(self):
        """The device's context (created on first use; not made current)."""
        return _context_of(self)

    @property
    def supports_float16(self):
        return self.compute_capability >= (5, 3)

    @property
    def supports_bfloat16(self):
        return self.compute_capability >= (8, 0)

    @property
    def supports_fp8(self):
        return self.compute_capability >= (8, 9)

    def __repr__(self):
        return f"<CUDA device {self.id} '{self.name}'>"

    def __eq__(self, other):
        if isinstance(other, _DeviceContextManager):
            other = other._device
        return isinstance(other, Device) and type(other) is type(self) and other.id == self.id

    def __hash__(self):
        return hash(self.id)


class _CpuDevice(Device):
    """The cpu target seen as a CUDA device."""

    id = 0
    name = "tidal cpu target"
    compute_capability = _CPU_COMPUTE_CAPABILITY

    def __getattr__(self, attr):
        if attr == "MULTIPROCESSOR_COUNT":
            return native.cpu_worker_count()
        if attr in _CPU_ATTRIBUTES:
            return _CPU_ATTRIBUTES[attr]
        raise AttributeError(f"the tidal cpu target has no device attribute {attr!r}")

    def reset(self):
        """Releases the device's context (cuda.close())."""
        close()


_attribute_numbers = None


def _cuda_attribute_numbers():
    """{CUdevice_attribute name less CU_DEVICE_ATTRIBUTE_: number}."""
    global _attribute_numbers
    if _attribute_numbers is None:
        _attribute_numbers = native.cuda_device_attributes()
    return _attribute_numbers


class _CudaDevice(Device):
    """A device of the CUDA driver."""

    def __init__(self, device_id):
        info = native.cuda_device_info(device_id)
        self.id = device_id
        self.name = info["name"]
        self.compute_capability = info["compute_capability"]
        self.uuid = info["uuid"]

    def __getattr__(self, attr):
        # Read from the driver on first use, then kept (as numba-cuda does).
        if attr.startswith("_") or attr not in _cuda_attribute_numbers():
            raise AttributeError(
                f"CUDA devices have no attribute {attr!r} (device attributes are "
                f"CUdevice_attribute names less CU_DEVICE_ATTRIBUTE_, such as "
                f"MULTIPROCESSOR_COUNT)")
        value = native.cuda_device_attribute(self.id, _cuda_attribute_numbers()[attr])
        setattr(self, attr, value)
        return value

    def get_device_identity(self):
        """The device's PCI location, as numba-cuda gives it."""
        return {"pci_domain_id": self.PCI_DOMAIN_ID, "pci_bus_id": self.PCI_BUS_ID,
                "pci_device_id": self.PCI_DEVICE_ID}

    def reset(self):
        """Waits for the device's work and returns its cached memory to the
        driver. Unlike numba-cuda, the primary context is not reset: loaded
        kernels and live arrays stay valid."""
        native.cuda_synchronize(self.id)
        native.cuda_memory_clear(self.id)


_cpu_device = _CpuDevice()
_cuda_devices = None


def _driver_devices():
    """The CUDA driver's devices, whatever the target (RuntimeError with the
    driver's reason when it is not usable)."""
    global _cuda_devices
    if _cuda_devices is None:
        _cuda_devices = tuple(_CudaDevice(i) for i in range(native.cuda_device_count()))
    return _cuda_devices


def _all_devices():
    """The devices of the target kernels run on."""
    return _driver_devices() if on_cuda() else (_cpu_device,)


def _device_index(device_id):
    """``device_id`` checked against the target's devices."""
    if not on_cuda():
        if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id != 0:
            raise InvalidDeviceError(
                f"the tidal cpu target has one device, id 0, not {device_id!r}")
        return 0
    if isinstance(device_id, bool):
        raise TypeError(f"a device id must be an int, not {device_id!r}")
    try:
        index = operator.index(device_id)
    except TypeError:
        raise TypeError(
            f"a device id must be an int, not {type(device_id).__name__}") from None
    count = len(_all_devices())
    if not 0 <= index < count:
        ids = "id 0" if count == 1 else f"ids 0 to {count - 1}"
        raise InvalidDeviceError(
            f"there is no CUDA device {index}: the driver has {count} "
            f"device{'' if count == 1 else 's'}, {ids}")
    return index


# --- contexts ---------------------------------------------------------------------------

class _PendingDeallocations:
    """Numba's context.deallocations. On the cpu target memory is freed when
    its last reference goes, so nothing is ever pending."""

    def __init__(self, device_id):
        self._device_id = device_id

    def clear(self):
        """Frees the pending deallocations: none on the cpu target. On the
        cuda target the device's caching allocator gives its freed blocks
        back to the driver (cuMemFree), once the streams that used them are
        done."""
        if on_cuda():
            native.cuda_memory_clear(self._device_id)

    @contextlib.contextmanager
    def disable(self):
        yield

    @property
    def is_disabled(self):
        return False

    def __len__(self):
        return 0


class Context:
    """A device's context: its memory, its work. On the cpu target its memory
    is this machine's memory."""

    def __init__(self, device):
        self.device = device
        self.deallocations = _PendingDeallocations(device.id)

    @property
    def id(self):
        return self.device.id

    def memory_stats(self):
        """The cuda target's caching allocator of this device (tidal's own
        API; numba-cuda has none): a dict of bytes_in_use (size-class bytes
        of live allocations), bytes_requested, bytes_cached (freed blocks
        kept for reuse), bytes_pending (of those, blocks a stream may still
        be using), driver_allocations and driver_frees (cuMemAlloc /
        cuMemFree calls), live_driver_allocations, reuses and
        exported_allocations (live blocks exported with CUDA IPC, which are
        never cached). On the cpu
        target memory is NumPy's: every count is 0."""
        if on_cuda():
            return native.cuda_memory_stats(self.device.id)
        return dict.fromkeys(("bytes_in_use", "bytes_requested", "bytes_cached",
                              "bytes_pending", "driver_allocations", "driver_frees",
                              "live_driver_allocations", "reuses", "exported_allocations"), 0)

    def get_memory_info(self):
        """(free, total) bytes of the device's memory (cuMemGetInfo in this
        context); on the cpu target this machine's memory (MemAvailable and
        MemTotal of /proc/meminfo). With a memory-manager plugin, its
        get_memory_info()."""
        plugin = memory_managers.plugin_of(self)
        if plugin is not None:
            return plugin.get_memory_info()
        if on_cuda():
            return _MemoryInfo(*native.cuda_memory_info(self.device.id))
        fields = {}
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                key, value = line.split(":", 1)
                fields[key] = int(value.split()[0]) * 1024
        return _MemoryInfo(free=fields.get("MemAvailable", fields["MemFree"]),
                           total=fields["MemTotal"])

    def synchronize(self):
        """Waits for all the device's work (on the cpu target it has finished)."""
        if on_cuda():
            native.cuda_synchronize(self.device.id)
        else:
            streams.synchronize()

    def reset(self):
        """Returns cached memory to the driver: arrays hold their own memory.
        With a memory-manager plugin, its reset() too."""
        self.deallocations.clear()
        plugin = memory_managers.plugin_of(self)
        if plugin is not None:
            plugin.reset()

    def create_stream(self):
        with _on_device(self.device.id):
            return streams.stream()

    def get_default_stream(self):
        return streams.default_stream()

    def get_legacy_default_stream(self):
        return streams.legacy_default_stream()

    def get_per_thread_default_stream(self):
        return streams.per_thread_default_stream()

    def create_event(self, timing=True):
        with _on_device(self.device.id):
            return streams.event(timing)

    @contextlib.contextmanager
    def defer_cleanup(self):
        plugin = memory_managers.plugin_of(self)
        with self.deallocations.disable(), \
                (plugin.defer_cleanup() if plugin is not None else contextlib.nullcontext()):
            yield

    def get_ipc_handle(self, memory):
        """An IpcHandle of device memory (a MemoryPointer such as an
        array's gpu_data) for another process: a memory-manager plugin's
        get_ipc_handle when one is set, else tidal's (ipc.py). OSError on
        the cpu target, whose memory no other process can map."""
        return _ipc_entry_points["get_ipc_handle"](self, memory)

    def open_ipc_handle(self, handle, size):
        """Maps another process's allocation (its 64-byte handle) in this
        context: a MemoryPointer of ``size`` bytes at its start, unmapped
        when it is dropped (Numba's; ipc.py)."""
        return _ipc_entry_points["open_ipc_handle"](self, handle, size)

    def __repr__(self):
        return f"<CUDA context of {self.device!r}>"


# CUDA IPC's context methods: ipc.py, which builds on this module, puts them
# here when it is imported (tidal.cuda imports it).
_ipc_entry_points = {}

# The contexts made so far, by device class and id (dropped by close()).
_contexts = {}
# cpu target: whether its device is current (set by select_device() and
# current_context(), cleared by close()). The cuda target keeps the current
# device of each thread in the runtime.
_cpu_selected = False


def _context_of(device):
    # By target and id: the cpu target's device 0 is not the GPU's.
    key = (type(device), device.id)
    context = _contexts.get(key)
    if context is None:
        context = _contexts.setdefault(key, Context(device))
    return context


def _selected_id():
    """The device selected on this thread, or None."""
    if on_cuda():
        return native.cuda_current_device()
    return 0 if _cpu_selected else None


def _select(device_id):
    """Makes device ``device_id`` (checked) current on this thread; None
    forgets the selection."""
    global _cpu_selected
    if on_cuda():
        native.cuda_select_device(device_id)
    else:
        _cpu_selected = device_id is not None


def current_context():
    """The context of the current device (device 0 unless another was
    selected), created and made current on first use."""
    device_id = _selected_id()
    if device_id is None:
        device_id = 0
        _select(0)
    return _context_of(_all_devices()[device_id])


def get_context(devnum=None):
    """Numba's cuda.devices.get_context(): the context of device ``devnum``
    (made current on this thread), or of the current device for None."""
    if devnum is None:
        return current_context()
    select_device(devnum)
    return current_context()


def select_device(device_id):
    """Makes device ``device_id`` current on this thread and returns it: the
    arrays, streams and events made after it and the kernels launched after
    it use it. A bad id raises InvalidDeviceError (a ValueError and an
    IndexError), a non-integer TypeError."""
    index = _device_index(device_id)
    _select(index)
    return current_context().device


def get_current_device():
    """The current device of this thread."""
    return current_context().device


def is_fp8_supported():
    """numba-cuda's cuda.is_fp8_supported(): True on the cpu target, which
    computes the fp8 conversions in integer code; on the cuda target, whether
    the current device has compute capability 8.9 or higher (numba-cuda's
    rule; tidal's conversions run on older GPUs too, in integer code)."""
    if current_target() == "cpu":
        return True
    return get_current_device().supports_fp8


def close():
    """Drops the contexts and the thread's selection (cuda.close()): the
    next use starts again from device 0. On the cuda target it first waits
    for the work of every device used and returns the caching allocators'
    free blocks to the driver; the primary contexts stay retained (numba-cuda
    resets them), so arrays and loaded kernels stay valid. On the cpu
    target arrays keep their memory: it is theirs, not the context's."""
    global _cpu_selected
    if on_cuda():
        native.cuda_close()
    _cpu_selected = False
    _contexts.clear()


@contextlib.contextmanager
def defer_cleanup():
    """Defers freeing memory inside the block: nothing to defer (memory goes
    back to the caching allocator, which defers reuse itself)."""
    with current_context().defer_cleanup():
        yield


# --- cuda.gpus -----------------------------------------------------------------------------

# Per thread: the selections that ``with cuda.gpus[i]:`` blocks replaced.
_saved_selections = threading.local()


@contextlib.contextmanager
def _on_device(device_id):
    with gpus[device_id]:
        yield


class _DeviceContextManager:
    """cuda.gpus[i]: the device (its attributes are the device's), and
    ``with cuda.gpus[i]:`` to make it current for the block; on exit the
    device current before is current again, as in numba-cuda."""

    def __init__(self, device):
        self._device = device

    def __getattr__(self, attr):
        return getattr(self._device, attr)

    def __enter__(self):
        saved = _saved_selections.__dict__.setdefault("stack", [])
        saved.append(_selected_id())
        try:
            _select(self._device.id)
        except BaseException:
            saved.pop()
            raise
        return self._device

    def __exit__(self, exc_type, exc_value, traceback):
        _select(_saved_selections.stack.pop())
        return None

    def __eq__(self, other):
        return self._device == other

    def __hash__(self):
        return hash(self._device)

    def __repr__(self):
        return f"<Managed Device {self._device.id}>"


class _DeviceList:
    """cuda.gpus: the devices of the target kernels run on (one on the cpu
    target), each a context manager that makes it current."""

    def __init__(self):
        self._managers = {}

    def _manager(self, device):
        key = (type(device), device.id)
        if key not in self._managers:
            self._managers[key] = _DeviceContextManager(device)
        return self._managers[key]

    def __getitem__(self, device_id):
        if isinstance(device_id, slice):  # gpus[1:], a list, as Numba's
            return [self._manager(d) for d in _all_devices()[device_id]]
        return self._manager(_all_devices()[_device_index(device_id)])

    def __iter__(self):
        return iter([self._manager(d) for d in _all_devices()])

    def __len__(self):
        return len(_all_devices())

    @property
    def current(self):
        """The current device of this thread, or None when none is selected
        (nothing has used a device since the start or close())."""
        device_id = _selected_id()
        return None if device_id is None else self[device_id]

    def __repr__(self):
        return ", ".join(repr(d) for d in self)


gpus = _DeviceList()


def list_devices():
    return gpus


def detect():
    """Prints the CUDA devices (id, name, whether tidal supports them, and
    a few of their facts, laid out as numba.cuda.detect() prints them), then
    the target kernels run on. Returns True when a supported GPU is found,
    or when kernels run on the cpu target (as cuda.is_available(), and as
    Numba's simulator answers)."""
    usable, count, reason, library = native.driver_status()
    if not usable:
        target = current_target()
        print(f"No usable CUDA device: {reason}")
        print(f"Kernels run on the '{target}' target")
        return target == "cpu"
    print(f"Found {count} CUDA devices")
    supported = 0
    for device in _driver_devices():
        major, minor = device.compute_capability
        if (major, minor) < MIN_COMPUTE_CAPABILITY:
            status = "[NOT SUPPORTED: CC < {}.{}]".format(*MIN_COMPUTE_CAPABILITY)
        else:
            status = "[SUPPORTED]"
            supported += 1
        print(f"id {device.id}    {device.name:>20s} {status:>40s}")
        facts = (
            ("Compute Capability", f"{major}.{minor}"),
            ("PCI Device ID", device.PCI_DEVICE_ID),
            ("PCI Bus ID", device.PCI_BUS_ID),
            ("UUID", device.uuid),
            ("Watchdog", "Enabled" if device.KERNEL_EXEC_TIMEOUT else "Disabled"),
            ("FP32/FP64 Performance Ratio", device.SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO),
        )
        for key, value in facts:
            print(f"{key:>40s}: {value}")
    print("Summary:")
    print(f"\t{supported}/{count} devices are supported")
    target = current_target()
    print(f"Kernels run on the '{target}' target (driver: {library})")
    return supported > 0 or target == "cpu"
