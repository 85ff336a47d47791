"""Interop on the cpu target: the CUDA Array Interface's stream rules
(version 3) and DLPack (DeviceNDArray.__dlpack__, __dlpack_device__,
cuda.from_dlpack), round trips with NumPy, lifetimes, and the errors for
what cannot be exchanged. On the cuda target, over the mock driver: a device
array's DLPack capsule describes its device memory (kDLCUDA, device of the
array, the device pointer) and from_dlpack takes it back without a copy;
__dlpack__(stream=...) makes the consumer's stream wait for the array's; a
__cuda_array_interface__ stream is synchronised (cuStreamSynchronize on that
handle) unless sync=False, also for kernel arguments; host memory is
refused. On a GPU: CuPy and PyTorch both ways, without copies, with the
producers' streams respected (each test needs its library to import, and is
skipped, saying so, where it does not)."""

import gc
import importlib
import sys
import textwrap
import weakref

import numpy as np
import pytest

from targets import needs_gpu, on_targets
from tidal import _tidal, cuda


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


class _Exporter:
    """Another library's device array: only __cuda_array_interface__."""

    def __init__(self, interface, keep=None):
        self.__cuda_array_interface__ = interface
        self.keep = keep


def _interface(host, **entries):
    return dict(host.__array_interface__, version=3, **entries)


# --- __cuda_array_interface__: export ------------------------------------------------

def test_exported_stream_is_the_arrays_stream_and_never_zero():
    s = cuda.stream()
    cases = {None: 0, int(s): s, 1: cuda.legacy_default_stream(),
             2: cuda.per_thread_default_stream()}
    for expected, stream in cases.items():
        d = cuda.device_array(4, np.float32, stream=stream)
        assert d.__cuda_array_interface__["stream"] == expected
    # The default stream's work is done when issued on the cpu target.
    assert cuda.device_array(4).bind(cuda.default_stream()).__cuda_array_interface__[
        "stream"] is None


def test_interface_round_trip_keeps_memory_and_layout():
    d = cuda.to_device(np.arange(12, dtype=np.int16).reshape(3, 4))[:, 1::2]
    for stream in (None, 1, 2, int(cuda.stream())):
        desc = dict(d.__cuda_array_interface__, stream=stream)
        for sync in (True, False):
            view = cuda.from_cuda_array_interface(desc, owner=d, sync=sync)
            assert (view.shape, view.strides, view.dtype) == (d.shape, d.strides, d.dtype)
            np.testing.assert_array_equal(view.copy_to_host(), d.copy_to_host())
    view[0, 0] = -7  # the same memory
    assert d[0, 0] == -7


# --- __cuda_array_interface__: consume -----------------------------------------------

def test_stream_zero_is_refused_by_every_consumer():
    host = np.zeros(4, np.float64)
    exporter = _Exporter(_interface(host, stream=0), keep=host)
    for consume in (lambda: cuda.as_cuda_array(exporter),
                    lambda: cuda.as_cuda_array(exporter, sync=False),
                    lambda: cuda.from_cuda_array_interface(exporter.__cuda_array_interface__),
                    lambda: add_one[1, 32](exporter)):
        with pytest.raises(ValueError, match=r"'stream' is 0, which the CUDA Array Interface "
                                             r"\(version 3\) disallows"):
            consume()
    np.testing.assert_array_equal(host, 0.0)


@pytest.mark.parametrize("stream, error, message", [
    ("1", TypeError, "'stream' must be None or an int"),
    (True, TypeError, "'stream' must be None or an int"),
    (1.0, TypeError, "'stream' must be None or an int"),
    (-3, ValueError, "positive stream handle, not -3"),
])
def test_bad_stream_values_are_refused(stream, error, message):
    host = np.zeros(2, np.float32)
    with pytest.raises(error, match=message):
        cuda.as_cuda_array(_Exporter(_interface(host, stream=stream), keep=host))


def test_producer_streams_are_accepted_in_kernel_arguments():
    # On the cpu target a stream's work is done: nothing to wait for.
    host = np.zeros(8, np.float64)
    for stream in (None, 1, 2, int(cuda.stream())):
        add_one[1, 32](_Exporter(_interface(host, stream=stream), keep=host))
    np.testing.assert_array_equal(host, 4.0)


def test_version_two_without_stream_is_accepted():
    host = np.arange(3, dtype=np.int32)
    desc = {k: v for k, v in _interface(host).items() if k != "stream"}
    desc["version"] = 2
    d = cuda.as_cuda_array(_Exporter(desc, keep=host))
    d[1] = 40
    assert host.tolist() == [0, 40, 2]


@pytest.mark.parametrize("change, error, message", [
    ({"shape": None}, ValueError, "lacks 'shape'"),
    ({"typestr": None}, ValueError, "lacks 'typestr'"),
    ({"data": None}, ValueError, "lacks 'data'"),
    ({"version": None}, ValueError, "lacks 'version'"),
    ({"version": -1}, ValueError, "without a valid version"),
    ({"typestr": "<q9"}, TypeError, "'typestr' '<q9' is not a NumPy type string"),
    ({"data": 1234}, TypeError, r"'data' must be \(pointer, read-only flag\)"),
    ({"data": (-8, False)}, TypeError, r"'data' must be \(pointer, read-only flag\)"),
    ({"shape": "four"}, TypeError, "shape must be an int or a tuple of ints"),
    ({"strides": (8, 8)}, ValueError, "one stride per axis"),
])
def test_bad_interface_dicts_are_refused(change, error, message):
    host = np.zeros(4, np.float64)
    desc = _interface(host)
    for key, value in change.items():
        if value is None:
            del desc[key]
        else:
            desc[key] = value
    with pytest.raises(error, match=message):
        cuda.from_cuda_array_interface(desc, owner=host)


def test_interface_must_be_a_dict():
    with pytest.raises(TypeError, match="must be a dict, not list"):
        cuda.as_cuda_array(_Exporter([("shape", (1,))]))


# --- DLPack: export to NumPy -------------------------------------------------------

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128]


def test_dlpack_device_is_the_host_on_the_cpu_target():
    assert cuda.device_array(3).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_takes_device_arrays_without_copying(dtype):
    values = (np.arange(12) - 4).astype(dtype).reshape(3, 4)
    d = cuda.to_device(values)
    h = np.from_dlpack(d)
    assert (h.dtype, h.shape, h.strides) == (np.dtype(dtype), (3, 4), values.strides)
    np.testing.assert_array_equal(h, values)
    d[1, 2] = 9
    assert h[1, 2] == 9  # the same memory


def test_numpy_takes_views_with_any_strides():
    host = np.arange(30, dtype=np.float64).reshape(5, 6)
    base = cuda.to_device(host)
    for key in (np.s_[::2, 1::3], np.s_[:, 2], np.s_[::-1], np.s_[3, 4:5]):
        view = base[key]
        h = np.from_dlpack(view)
        assert h.strides == view.strides == host[key].strides
        np.testing.assert_array_equal(h, host[key])
        assert h.ctypes.data == view.__cuda_array_interface__["data"][0]


def test_numpy_takes_zero_dimensional_and_empty_arrays():
    scalar = cuda.to_device(np.array(2.5, np.float32))
    assert np.from_dlpack(scalar).shape == () and np.from_dlpack(scalar)[()] == 2.5
    empty = cuda.device_array((0, 3), np.int32)
    assert np.from_dlpack(empty).shape == (0, 3)


def test_exported_capsule_keeps_the_array_alive_and_releases_it_once():
    d = cuda.to_device(np.arange(4, dtype=np.int32))
    alive = weakref.ref(d)
    baseline = sys.getrefcount(d)
    capsule = d.__dlpack__()
    assert sys.getrefcount(d) == baseline + 1
    del capsule  # never consumed: its destructor calls the deleter
    assert sys.getrefcount(d) == baseline
    h = np.from_dlpack(d)
    del d
    gc.collect()
    assert alive() is not None and h.tolist() == [0, 1, 2, 3]
    del h  # NumPy calls the deleter: the last reference goes
    gc.collect()
    assert alive() is None


def test_deleter_may_be_called_from_another_thread_without_the_gil():
    # What a C++ consumer does: take the tensor (rename the capsule), and
    # later call its deleter from a thread of its own. ctypes calls C
    # functions with the GIL released.
    import ctypes
    import threading
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    d = cuda.to_device(np.arange(3, dtype=np.float64))
    baseline = sys.getrefcount(d)
    capsule = d.__dlpack__()
    managed = api.PyCapsule_GetPointer(capsule, b"dltensor")
    assert api.PyCapsule_SetName(capsule, b"used_dltensor") == 0
    del capsule  # taken: its destructor leaves the tensor to the consumer
    assert sys.getrefcount(d) == baseline + 1
    deleter_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    deleter = deleter_type(ctypes.c_void_p.from_address(managed + 56).value)  # DLPack.h
    thread = threading.Thread(target=deleter, args=(managed,))
    thread.start()
    thread.join()
    assert sys.getrefcount(d) == baseline


def test_export_stream_argument_on_the_cpu_target():
    d = cuda.device_array(2)
    assert d.__dlpack__(stream=None) is not None
    for stream in (1, 2, -1, 77):
        with pytest.raises(ValueError, match="kDLCPU memory .* stream must be None"):
            d.__dlpack__(stream=stream)


def test_export_arguments_of_the_array_api():
    d = cuda.device_array(2)
    assert d.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False) is not None
    with pytest.raises(BufferError, match=r"exporting it to \(2, 0\) needs a copy"):
        d.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="copy=True is not supported"):
        d.__dlpack__(copy=True)


def test_export_refuses_what_dlpack_cannot_describe():
    records = cuda.to_device(np.zeros(3, dtype=[("a", np.int32), ("b", np.float32)]))
    with pytest.raises(BufferError, match="no type for dtype"):
        records.__dlpack__()
    for dtype in (np.longdouble, np.clongdouble, "datetime64[s]"):
        with pytest.raises(BufferError, match="no type for dtype"):
            cuda.device_array(2, dtype).__dlpack__()
    swapped = cuda.to_device(np.arange(3, dtype=">i4"))
    with pytest.raises(BufferError, match="not in this machine's byte order"):
        swapped.__dlpack__()
    raw = np.zeros(16, np.uint8)
    odd = cuda.from_cuda_array_interface(
        {"shape": (3,), "strides": (5,), "typestr": "<i4", "data": (raw.ctypes.data, False),
         "version": 3}, owner=raw)
    with pytest.raises(BufferError, match=r"strides \(5,\) are not multiples of the itemsize 4"):
        odd.__dlpack__()


# --- DLPack: import ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_device_arrays_over_numpy_memory(dtype):
    host = (np.arange(10) + 1).astype(dtype)
    d = cuda.from_dlpack(host)
    assert isinstance(d, cuda.DeviceNDArray)
    assert (d.dtype, d.shape, d.strides) == (host.dtype, host.shape, host.strides)
    d[3] = 0
    assert host[3] == 0  # no copy


def test_bool_goes_both_ways_between_tidal_arrays():
    # NumPy 1.24 exchanges no bool through DLPack; tidal does.
    d = cuda.to_device(np.array([True, False, True]))
    e = cuda.from_dlpack(d)
    assert e.dtype == np.bool_ and e.copy_to_host().tolist() == [True, False, True]
    e[1] = True
    assert d[1]


def test_import_keeps_layouts():
    host = np.arange(40, dtype=np.float32).reshape(5, 8)
    for view in (host[1::2, ::3], host.T, host[::-1, 2], np.asarray(np.float32(4))):
        d = cuda.from_dlpack(view)
        assert (d.shape, d.strides) == (view.shape, view.strides)
        assert d.__cuda_array_interface__["data"][0] == view.ctypes.data
        np.testing.assert_array_equal(np.from_dlpack(d), view)  # copy_to_host: no negative strides
    assert cuda.from_dlpack(host[2:2]).shape == (0, 8)


def test_a_kernel_writes_into_the_producers_memory():
    host = np.zeros(50, np.float64)
    d = cuda.from_dlpack(host)
    add_one[2, 32](d)
    add_one[2, 32](d[10:])
    np.testing.assert_array_equal(host, [1.0] * 10 + [2.0] * 40)


def test_imported_memory_lives_as_long_as_its_last_view():
    host = np.arange(6, dtype=np.int64)
    baseline = sys.getrefcount(host)
    d = cuda.from_dlpack(host)
    assert sys.getrefcount(host) == baseline + 1  # NumPy's tensor holds it
    view = d[2:]
    del d
    gc.collect()
    assert sys.getrefcount(host) == baseline + 1 and view.copy_to_host().tolist() == [2, 3, 4, 5]
    del view  # the deleter runs once: exactly the tensor's reference goes
    gc.collect()
    assert sys.getrefcount(host) == baseline


def test_bare_capsules_are_taken_once():
    host = np.arange(3, dtype=np.int32)
    capsule = host.__dlpack__()
    assert cuda.from_dlpack(capsule).copy_to_host().tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="consumed already"):
        cuda.from_dlpack(capsule)


def test_import_refuses_objects_without_dlpack():
    with pytest.raises(TypeError, match="from_dlpack takes an object with __dlpack__"):
        cuda.from_dlpack([1, 2, 3])


class _Producer:
    """A DLPack producer that records how it was asked."""

    def __init__(self, device, capsule=None):
        self.device, self.capsule, self.asked = device, capsule, []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        self.asked.append(kwargs)
        return self.capsule


def test_device_memory_is_refused_before_the_producer_works():
    producer = _Producer((2, 0))
    with pytest.raises(BufferError, match="the cpu target runs kernels on host memory .* not "
                                          r"kDLCUDA \(device memory\)"):
        cuda.from_dlpack(producer)
    assert producer.asked == []


def test_host_memory_is_asked_for_without_a_stream():
    host = np.arange(4, dtype=np.int32)
    producer = _Producer((1, 0), host.__dlpack__())
    assert cuda.from_dlpack(producer).copy_to_host().tolist() == [0, 1, 2, 3]
    assert producer.asked == [{}]


def _crafted_capsule(owner, code=2, bits=32, device_type=1):
    """A capsule of tidal's exporter with any type code and device."""
    return _tidal.dlpack_export(owner, owner.ctypes.data, owner.shape,
                                tuple(s // owner.itemsize for s in owner.strides),
                                code, bits, device_type, 0)


def test_refused_capsules_are_given_back_to_the_producer():
    host = np.zeros(4, np.float32)
    baseline = sys.getrefcount(host)
    for code, bits, device_type, message in [
            (2, 32, 2, r"not kDLCUDA \(device memory\)"),
            (2, 32, 13, r"not kDLCUDAManaged"),
            (4, 16, 1, "bfloat16 has no NumPy dtype"),
            (9, 32, 1, "type code 9 with 32 bits has no NumPy dtype"),
            (2, 24, 1, "type code 2 with 24 bits has no NumPy dtype")]:
        capsule = _crafted_capsule(host, code, bits, device_type)
        with pytest.raises(BufferError, match=message):
            cuda.from_dlpack(capsule)
        del capsule
        assert sys.getrefcount(host) == baseline  # the deleter ran, once


def test_pinned_host_memory_is_host_memory():
    host = np.arange(3, dtype=np.float32)
    d = cuda.from_dlpack(_crafted_capsule(host, device_type=3))
    d[0] = 5
    assert host[0] == 5


# --- the cuda target over the mock driver ---------------------------------------------
# Reads the DLTensor of an unconsumed "dltensor" capsule (python/src/DLPack.h).
READ_CAPSULE = """
import ctypes
get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]

class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]

def read_capsule(capsule):
    t = Tensor.from_address(get_pointer(capsule, b"dltensor"))
    return {"data": t.data, "device": [t.device_type, t.device_id],
            "dtype": [t.code, t.bits, t.lanes], "byte_offset": t.byte_offset,
            "shape": [t.shape[i] for i in range(t.ndim)],
            "strides": [t.strides[i] for i in range(t.ndim)]}
"""


def test_capsule_describes_the_device_memory(mock_script):
    r = mock_script(READ_CAPSULE + textwrap.dedent("""
        d = cuda.to_device(np.arange(24, dtype=np.float32).reshape(4, 6))
        v = d[1:, ::2]
        tensor = read_capsule(v.__dlpack__())
        back = cuda.from_dlpack(v)
        print(json.dumps({"device": d.__dlpack_device__(), "tensor": tensor,
                          "pointer": v.__cuda_array_interface__["data"][0],
                          "back": back.__cuda_array_interface__["data"][0],
                          "back_strides": back.strides,
                          "values": back.copy_to_host().tolist()}))
    """))
    res = r.result
    assert res["device"] == [2, 0]
    t = res["tensor"]
    assert t["device"] == [2, 0] and t["data"] == res["pointer"] and t["byte_offset"] == 0
    assert t["dtype"] == [2, 32, 1] and t["shape"] == [3, 3] and t["strides"] == [6, 2]
    # from_dlpack views the same device memory: no allocation, no copy to it.
    assert res["back"] == res["pointer"] and res["back_strides"] == [24, 8]
    assert res["values"] == [[6.0, 8.0, 10.0], [12.0, 14.0, 16.0], [18.0, 20.0, 22.0]]
    assert len(r.named("cuMemAlloc_v2")) == 1 and len(r.named("cuMemcpyHtoD_v2")) == 1


def test_dlpack_device_is_the_arrays_device(mock_script):
    r = mock_script(READ_CAPSULE + textwrap.dedent("""
        with cuda.gpus[1]:
            d = cuda.to_device(np.arange(4, dtype=np.float32))
            back = cuda.from_dlpack(d)
            on_one = back.copy_to_host().tolist()
        try:
            cuda.from_dlpack(d)
            refused = None
        except BufferError as error:
            refused = str(error)
        print(json.dumps({"device": d.__dlpack_device__(),
                          "tensor": read_capsule(d.__dlpack__())["device"],
                          "on_one": on_one, "refused": refused}))
    """), devices=2)
    res = r.result
    assert res["device"] == [2, 1] and res["tensor"] == [2, 1]
    assert res["on_one"] == [0.0, 1.0, 2.0, 3.0]
    assert res["refused"] == ("from_dlpack: the tensor is on CUDA device 1 and the current "
                              "device is 0: select it first (with cuda.gpus[1]: ...)")


def test_imported_device_memory_keeps_its_producer_alive(mock_script):
    r = mock_script("""
        import gc, weakref
        d = cuda.to_device(np.arange(5, dtype=np.int32))
        alive = weakref.ref(d)
        e = cuda.from_dlpack(d)[1:]
        del d
        gc.collect()
        kept = alive() is not None
        values = e.copy_to_host().tolist()
        del e
        gc.collect()
        print(json.dumps([kept, values, alive() is None]))
    """)
    assert r.result == [True, [1, 2, 3, 4], True]


def test_dlpack_stream_orders_the_consumer_after_the_array(mock_script):
    r = mock_script("""
        s, consumer = cuda.stream(), cuda.stream()
        d = cuda.device_array(8, np.int32, stream=s)
        d.__dlpack__(stream=consumer.handle)
        print(json.dumps("waited"))
        d.__dlpack__(stream=-1)                               # no synchronisation
        cuda.device_array(8, np.int32).__dlpack__()           # both on the legacy stream
        cuda.device_array(8, np.int32).__dlpack__(stream=1)
        print(json.dumps("done"))
    """)
    assert r.returncode == 0, r.stderr
    producer, consumer = [c["stream"] for c in r.named("cuStreamCreate")]
    (wait,) = r.named("cuStreamWaitEvent")
    assert wait["stream"] == consumer
    record = [c for c in r.named("cuEventRecord") if c["event"] == wait["event"]]
    assert [c["stream"] for c in record] == [producer]
    assert r.index("cuEventRecord", event=wait["event"]) < r.index("cuStreamWaitEvent")


def test_dlpack_stream_argument_is_checked(mock_script):
    r = mock_script("""
        d = cuda.device_array(2)
        errors = []
        for stream in (0, -2, "s"):
            try:
                d.__dlpack__(stream=stream)
            except (TypeError, ValueError) as e:
                errors.append([type(e).__name__, str(e)])
        print(json.dumps(errors))
    """)
    (zero, negative, text) = r.result
    assert zero[0] == "ValueError" and "stream 0 is disallowed" in zero[1]
    assert negative[0] == "ValueError" and "not -2" in negative[1]
    assert text[0] == "TypeError" and "must be None or an int" in text[1]


# Another library's array over a tidal device array's memory, with the
# stream it says its work is on.
EXPORTER = """
class Exporter:
    def __init__(self, d, stream):
        self.d = d
        self.__cuda_array_interface__ = dict(d.__cuda_array_interface__, stream=stream)
"""


def test_interface_stream_is_synchronised_unless_sync_is_false(mock_script):
    r = mock_script(EXPORTER + textwrap.dedent("""
        s = cuda.stream()
        d = cuda.to_device(np.zeros(8, np.int32), stream=s)
        b = cuda.to_device(np.zeros(1, np.float32))
        print(json.dumps("as_cuda_array"))
        view = cuda.as_cuda_array(Exporter(d, s.handle))
        print(json.dumps("sync=False"))
        cuda.as_cuda_array(Exporter(d, s.handle), sync=False)
        cuda.from_cuda_array_interface(Exporter(d, s.handle).__cuda_array_interface__,
                                       sync=False)
        print(json.dumps("kernel"))
        fill_seven[1, 32](Exporter(d, s.handle), 0.0, b)
        print(json.dumps("legacy"))
        cuda.as_cuda_array(Exporter(d, 1))
        print(json.dumps({"same": view.__cuda_array_interface__["data"][0]
                          == d.__cuda_array_interface__["data"][0],
                          "exported": d.__cuda_array_interface__["stream"] == s.handle,
                          "default": b.__cuda_array_interface__["stream"],
                          "values": d.copy_to_host(stream=s).tolist()}))
    """))
    res = r.result
    assert res["same"] and res["exported"] and res["values"] == [7] * 8
    # Work on the default stream (the legacy one) may be pending: 1, never 0.
    assert res["default"] == 1
    (created,) = r.named("cuStreamCreate")
    s = created["stream"]
    order = [(c["call"], c["stream"]) for c in r.calls
             if c["call"] in ("cuStreamSynchronize", "cuLaunchKernel")]
    # as_cuda_array; nothing for sync=False; the kernel argument before the
    # launch; then the legacy default stream (the mock logs CU_STREAM_LEGACY
    # as 0).
    assert order[:4] == [("cuStreamSynchronize", s), ("cuStreamSynchronize", s),
                         ("cuLaunchKernel", 0), ("cuStreamSynchronize", 0)]


def test_kernel_argument_on_the_launch_stream_is_not_waited_for(mock_script):
    r = mock_script(EXPORTER + textwrap.dedent("""
        s = cuda.stream()
        d = cuda.to_device(np.zeros(8, np.int32))
        b = cuda.to_device(np.zeros(1, np.float32))
        fill_seven[1, 32](Exporter(d, 1), 0.0, b)           # legacy default: the launch's
        fill_seven[1, 32, s](Exporter(d, s.handle), 0.0, b)  # the launch's stream
        fill_seven[1, 32, s](Exporter(d, 2), 0.0, b)         # per-thread default: waited for
        print(json.dumps(s.handle))
    """))
    calls = [(c["call"], c["stream"]) for c in r.calls
             if c["call"] in ("cuStreamSynchronize", "cuLaunchKernel")]
    (created,) = r.named("cuStreamCreate")
    s = created["stream"]
    # (The mock logs the special handles 1 and 2 as stream 0.) What follows
    # the script (arrays freed as the interpreter exits) is not the launches'.
    assert calls[:4] == [("cuLaunchKernel", 0), ("cuLaunchKernel", s), ("cuStreamSynchronize", 0),
                         ("cuLaunchKernel", s)]


def test_interface_stream_zero_is_refused_on_the_cuda_target(mock_script):
    r = mock_script("""
        d = cuda.to_device(np.zeros(4, np.int32))
        desc = dict(d.__cuda_array_interface__, stream=0)
        try:
            cuda.from_cuda_array_interface(desc, owner=d)
        except ValueError as e:
            print(json.dumps(str(e)))
    """)
    assert "disallows as ambiguous" in r.result
    assert not r.named("cuStreamSynchronize")


def test_host_memory_is_refused_on_the_cuda_target(mock_script):
    r = mock_script("""
        try:
            cuda.from_dlpack(np.arange(3.0))
        except BufferError as e:
            print(json.dumps(str(e)))
    """)
    assert "the cuda target takes device memory" in r.result
    assert "cuda.to_device(np.from_dlpack(obj))" in r.result


def test_dlpack_arguments_are_device_pointers_ordered_on_the_launch_stream(mock_script):
    r = mock_script("""
        class DLPackOnly:
            def __init__(self, d):
                self.d, self.streams = d, []

            def __dlpack__(self, stream=None):
                self.streams.append(stream)
                return self.d.__dlpack__(stream=stream)

            def __dlpack_device__(self):
                return self.d.__dlpack_device__()

        s = cuda.stream()
        d = cuda.to_device(np.zeros(8, np.int32))
        b = cuda.to_device(np.zeros(1, np.float32))
        wrapped = DLPackOnly(d)
        fill_seven[1, 32](wrapped, 0.0, b)
        fill_seven[1, 32, s](wrapped, 0.0, b)
        print(json.dumps({"values": d.copy_to_host().tolist(), "streams": wrapped.streams,
                          "s": s.handle,
                          "pointer": d.__cuda_array_interface__["data"][0]}))
    """)
    res = r.result
    assert res["values"] == [7] * 8
    # Typing asks for no stream; each launch asks for its own (1: the legacy default).
    assert res["streams"] == [None, 1, res["s"]]
    launches = r.named("cuLaunchKernel")
    assert len(launches) == 2 and len(r.named("cuMemcpyHtoD_v2")) == 2  # d and b, once
    assert all(launch["params"][0]["offset"] == 0 for launch in launches)


# --- CuPy and PyTorch on a GPU -------------------------------------------------------------


def _library(name):
    try:
        return importlib.import_module(name)
    except Exception:  # not installed, or built for another CUDA
        return None


cp = _library("cupy")
torch = _library("torch")

needs_cupy = pytest.mark.skipif(cp is None, reason="CuPy does not import here")
needs_torch = pytest.mark.skipif(torch is None or not torch.cuda.is_available(),
                                 reason="PyTorch with CUDA does not import here")

@cuda.jit
def add_index(x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] += i


N = 1 << 20


# --- CuPy -------------------------------------------------------------------------

@on_targets("cuda")
@needs_gpu
@needs_cupy
def test_cupy_arrays_are_kernel_arguments(target):
    x = cp.zeros(N, dtype=cp.float32)
    add_index[N // 256, 256](x)
    np.testing.assert_array_equal(cp.asnumpy(x), np.arange(N, dtype=np.float32))


@on_targets("cuda")
@needs_gpu
@needs_cupy
def test_kernel_waits_for_the_cupy_stream_in_the_interface(target):
    # CuPy fills x on its own stream; its interface names that stream (the
    # current one) and tidal synchronises it before the launch reads x.
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        x = cp.ones(N, dtype=cp.float64) * 3.0
        add_index[N // 256, 256](x)
    cuda.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(x), 3.0 + np.arange(N))


@on_targets("cuda")
@needs_gpu
@needs_cupy
def test_cupy_views_tidal_arrays_through_the_interface(target):
    d = cuda.to_device(np.arange(1000, dtype=np.int32))
    view = cp.asarray(d)  # no copy
    view[:10] = -1
    assert d.copy_to_host()[:11].tolist() == [-1] * 10 + [10]


@on_targets("cuda")
@needs_gpu
@needs_cupy
def test_dlpack_round_trips_with_cupy(target):
    d = cuda.to_device(np.arange(24, dtype=np.float32).reshape(4, 6))[:, ::2]
    c = cp.from_dlpack(d)
    assert c.data.ptr == d.__cuda_array_interface__["data"][0]
    np.testing.assert_array_equal(cp.asnumpy(c), d.copy_to_host())
    x = cp.arange(N, dtype=cp.float32)
    back = cuda.from_dlpack(x)
    assert back.__cuda_array_interface__["data"][0] == x.data.ptr
    add_index[N // 256, 256](back)
    cuda.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(x), 2.0 * np.arange(N, dtype=np.float32))


# --- PyTorch ----------------------------------------------------------------------

@on_targets("cuda")
@needs_gpu
@needs_torch
def test_torch_tensors_are_kernel_arguments(target):
    t = torch.zeros(N, dtype=torch.float32, device="cuda")
    add_index[N // 256, 256](t)
    cuda.synchronize()
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(N, dtype=np.float32))


@on_targets("cuda")
@needs_gpu
@needs_torch
def test_dlpack_round_trips_with_torch(target):
    d = cuda.to_device(np.arange(12, dtype=np.int64))
    t = torch.from_dlpack(d)
    assert t.data_ptr() == d.__cuda_array_interface__["data"][0]
    t += 100
    torch.cuda.synchronize()
    assert d.copy_to_host().tolist() == list(range(100, 112))
    source = torch.arange(N, dtype=torch.float64, device="cuda")
    back = cuda.from_dlpack(source)
    assert back.__cuda_array_interface__["data"][0] == source.data_ptr()
    add_index[N // 256, 256](back)
    cuda.synchronize()
    np.testing.assert_array_equal(source.cpu().numpy(), 2.0 * np.arange(N))


@on_targets("cuda")
@needs_gpu
@needs_torch
def test_torch_keeps_a_tidal_array_alive(target):
    import gc
    import weakref
    d = cuda.to_device(np.arange(8, dtype=np.float32))
    alive = weakref.ref(d)
    t = torch.from_dlpack(d)
    del d
    gc.collect()
    assert alive() is not None
    assert t.cpu().tolist() == list(range(8))
    del t
    gc.collect()
    assert alive() is None
