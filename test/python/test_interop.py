"""Interop on the cpu target: the CUDA Array Interface's stream rules
(version 3) and DLPack (DeviceNDArray.__dlpack__, __dlpack_device__,
cuda.from_dlpack), round trips with NumPy, lifetimes, and the errors for
what cannot be exchanged. The cuda target's side runs on the mock driver in
test_cuda_mock_interop.py; CuPy and PyTorch in test_gpu_interop.py."""

import gc
import sys
import weakref

import numpy as np
import pytest

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
