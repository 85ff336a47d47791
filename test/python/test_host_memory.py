"""Host memory: pinned_array, mapped_array, managed_array, cuda.pinned and
cuda.mapped. On every target: kernels use mapped and managed arrays in place.
On the cpu target they are host arrays (device memory is host memory). On
the cuda target, over the mock driver: which driver call each API makes and
with which flags; that memory goes back to the driver when the last array
over it dies; that mapped and managed arrays, and their views, carry the
device pointer (the mock's device pointer of mapped memory is another
address for the same bytes); that cuda.pinned / cuda.mapped register the
arrays' memory for their block only; and the errors for bad input."""

import textwrap

import numpy as np
import pytest

from tidal import cuda
from tidal.cuda.memory import ManagedNDArray, MappedNDArray


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@cuda.jit
def axpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


# --- every target ----------------------------------------------------------------------


def test_pinned_mapped_and_managed_memory(target):
    x = cuda.pinned_array(1000, np.float32)
    x[:] = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, np.float32)
    for wc in (False, True):
        out = cuda.mapped_array(1000, np.float32, wc=wc)
        # As Numba: no copy of mapped memory; synchronise before reading it.
        axpy[4, 256](cuda.as_cuda_array(out), np.float32(2), cuda.to_device(x),
                      cuda.to_device(y))
        cuda.synchronize()
        target.assert_result("axpy", out, 2 * x + y, launches=1 + wc)
    managed = cuda.managed_array(1000, np.float32)
    managed[:] = 0
    axpy[4, 256](cuda.as_cuda_array(managed), np.float32(3), cuda.to_device(x),
                  cuda.to_device(y))
    cuda.synchronize()
    target.assert_result("axpy", managed, 3 * x + y, launches=3)
    host = np.zeros(1000, np.float32)
    with cuda.pinned(x, y), cuda.mapped(host) as d:
        axpy[4, 256](d, np.float32(1), cuda.to_device(x), cuda.to_device(y))
        cuda.synchronize()
    target.assert_result("axpy", host, x + y, launches=4)


def test_mapped_and_managed_arrays_are_kernel_arguments_in_place(target):
    x = cuda.to_device(np.arange(512, dtype=np.float32))
    y = cuda.to_device(np.ones(512, np.float32))
    mapped = cuda.mapped_array(512, np.float32)
    managed = cuda.managed_array(512, np.float32)
    axpy[2, 256](mapped, np.float32(2), x, y)
    axpy[2, 256](managed, np.float32(3), x, y)
    cuda.synchronize()
    target.assert_result("axpy", mapped, 2 * np.arange(512) + 1, launches=2)
    target.assert_result("axpy", managed, 3 * np.arange(512) + 1, launches=2)


# --- the cpu target: host arrays ------------------------------------------------------


def test_pinned_mapped_and_managed_arrays_are_host_arrays():
    p = cuda.pinned_array((2, 3), dtype=np.int32, order="F")
    assert type(p) is np.ndarray and p.flags.f_contiguous
    m = cuda.mapped_array(8, dtype=np.float32)
    g = cuda.managed_array(8, dtype=np.float32)
    for a in (m, g):
        assert isinstance(a, np.ndarray) and cuda.is_cuda_array(a)
        a[:] = 1
        add_one[1, 32](a)  # kernels use them in place
        np.testing.assert_array_equal(a, 2)
        assert a.__cuda_array_interface__["data"][0] == a.ctypes.data
    assert cuda.pinned_array_like(m).shape == (8,)
    assert cuda.mapped_array_like(p).shape == (2, 3)


def test_pinned_and_mapped_context_managers():
    host = np.arange(4.0)
    with cuda.pinned(host):
        d = cuda.to_device(host)
    np.testing.assert_array_equal(d.copy_to_host(), host)
    with cuda.mapped(host) as mapped:
        add_one[1, 32](mapped)
    np.testing.assert_array_equal(host, np.arange(4.0) + 1)  # mapped memory is the host's
    with cuda.mapped(host, np.zeros(2)) as both:
        assert len(both) == 2
    with pytest.raises(TypeError, match="NumPy arrays"):
        with cuda.pinned([1, 2]):
            pass


@pytest.mark.parametrize("make, words", [
    (lambda: cuda.mapped_array(4, portable="yes"), "portable must be True or False"),
    (lambda: cuda.mapped_array(4, wc=2), "wc must be True or False"),
    (lambda: cuda.mapped_array_like(np.zeros(2), wc=None), "wc must be True or False"),
    (lambda: cuda.managed_array(4, attach_global=None), "attach_global must be True or False"),
    (lambda: cuda.managed_array(4, stream="s"), "stream"),
])
def test_host_memory_flags_and_streams_are_checked(make, words):
    with pytest.raises(TypeError, match=words):
        make()


def test_host_memory_arrays_take_numbas_flags():
    m = cuda.mapped_array((2, 3), np.int16, portable=True, wc=True)
    g = cuda.managed_array(5, np.float32, attach_global=False)
    like = cuda.mapped_array_like(np.zeros((3, 2), order="F"), portable=True)
    assert type(m) is MappedNDArray and m.shape == (2, 3)
    assert type(g) is ManagedNDArray and g.dtype == np.float32
    assert type(like) is MappedNDArray and like.flags.f_contiguous


def test_views_of_mapped_arrays_are_used_in_place():
    m = cuda.mapped_array(8, dtype=np.float64)
    m[:] = 0
    view = m[2:6]
    assert type(view) is MappedNDArray
    # Device memory is host memory: no separate device side on the cpu target.
    assert not hasattr(view, "_tidal_device")
    assert view.__cuda_array_interface__["data"][0] == m.ctypes.data + 16
    add_one[1, 32](view)
    np.testing.assert_array_equal(m, [0, 0, 1, 1, 1, 1, 0, 0])
    d = cuda.as_cuda_array(m[::-1])
    assert d.device_ctypes_pointer.value == m.ctypes.data + 56 and d.strides == (-8,)


def test_mapped_shares_memory_of_strided_and_empty_arrays():
    host = np.arange(12.0).reshape(3, 4)
    with cuda.mapped(host[::-1, 1:3], np.zeros(0)) as (strided, empty):
        assert strided.strides == (-32, 8) and empty.size == 0
        strided[0, 0] = -1  # host[2, 1]
    assert host[2, 1] == -1
    with cuda.pinned(cuda.pinned_array(3), np.zeros((2, 0))):
        pass
    with pytest.raises(TypeError, match="stream"):
        with cuda.mapped(host, stream=1.5):
            pass
    with pytest.raises(TypeError, match="cuda.mapped takes NumPy arrays, not str"):
        with cuda.mapped(host, "x"):
            pass


# --- the cuda target over the mock driver ---------------------------------------------
# Counts of the mock's calls, read inside a script.
COUNTS = """
import ctypes, gc, os
_mock = ctypes.CDLL(os.environ["TIDAL_CUDA_DRIVER"])
def count(call):
    return _mock.tidalMockCallCount(call.encode())
def live_host_ranges():
    return _mock.tidalMockLiveHostRanges()
"""


def counted(script):
    """A script that can call count(name) and live_host_ranges()."""
    return COUNTS + textwrap.dedent(script)


def _alloc_ids(r, call):
    return [c["alloc"] for c in r.named(call)]


# --- pinned_array ---------------------------------------------------------------------

def test_pinned_array_is_page_locked_memory_freed_with_its_last_view(mock_script):
    r = mock_script(counted("""
        p = cuda.pinned_array((2, 3), dtype=np.int32, order="F")
        p[...] = [[1, 2, 3], [4, 5, 6]]
        column = p[:, 1]
        steps = [type(p).__name__, p.flags.f_contiguous, column.tolist(), live_host_ranges()]
        del p
        gc.collect()
        steps.append(count("cuMemFreeHost"))      # the view keeps the memory
        del column
        gc.collect()
        steps += [count("cuMemFreeHost"), live_host_ranges()]
        print(json.dumps(steps))
    """))
    assert r.result == ["ndarray", True, [2, 5], 1, 0, 1, 0]
    (alloc,) = r.named("cuMemHostAlloc")
    assert alloc["bytes"] == 24 and alloc["flags"] == 0
    assert _alloc_ids(r, "cuMemFreeHost") == [alloc["alloc"]]
    # Not mapped: no device pointer asked for, no device memory.
    assert not r.named("cuMemHostGetDevicePointer_v2") and not r.named("cuMemAlloc_v2")


def test_pinned_array_like_follows_the_layout(mock_script):
    r = mock_script("""
        p = cuda.pinned_array_like(np.zeros((3, 4, 5), np.float32).transpose(2, 0, 1))
        print(json.dumps([p.shape, sorted(p.strides)]))
    """)
    assert r.result == [[5, 3, 4], [4, 20, 80]]
    assert r.named("cuMemHostAlloc")[0]["bytes"] == 240


# --- mapped_array ---------------------------------------------------------------------

def test_mapped_array_carries_the_device_pointer_of_its_memory(mock_script):
    r = mock_script("""
        m = cuda.mapped_array(8, dtype=np.int32)
        m[:] = np.arange(8)
        device = m._tidal_device.ctypes.data
        d = cuda.as_cuda_array(m)                # no copy: a device array over it
        print(json.dumps({
            "type": type(m).__name__, "capsule": type(m._tidal_memory).__name__,
            "same_address": device == m.ctypes.data,
            "iface": m.__cuda_array_interface__["data"][0] == device,
            "as_cuda": d.device_ctypes_pointer.value == device,
            "read": d.copy_to_host().tolist(),   # through the device pointer
            "layout": [m._tidal_device.shape, m._tidal_device.strides]}))
    """)
    res = r.result
    assert res["type"] == "MappedNDArray" and res["capsule"] == "PyCapsule"
    # The mock's device pointer of mapped memory is another view of the bytes.
    assert not res["same_address"] and res["iface"] and res["as_cuda"]
    assert res["read"] == list(range(8)) and res["layout"] == [[8], [4]]
    (alloc,) = r.named("cuMemHostAlloc")
    assert alloc["flags"] == 2 and alloc["bytes"] == 32        # CU_MEMHOSTALLOC_DEVICEMAP
    assert _alloc_ids(r, "cuMemHostGetDevicePointer_v2") == [alloc["alloc"]]
    assert _alloc_ids(r, "cuMemcpyDtoH_v2") == [alloc["alloc"]]
    assert not r.named("cuMemAlloc_v2")


@pytest.mark.parametrize("portable, wc, flags", [(True, False, 3), (False, True, 6),
                                                 (True, True, 7)])
def test_mapped_array_flags_follow_portable_and_wc(mock_script, portable, wc, flags):
    r = mock_script(f"""
        m = cuda.mapped_array(4, np.float32, portable={portable}, wc={wc})
        like = cuda.mapped_array_like(np.zeros((2, 2)), portable={portable}, wc={wc})
        print(json.dumps([type(like).__name__, like.shape]))
    """)
    assert r.result == ["MappedNDArray", [2, 2]]
    assert [c["flags"] for c in r.named("cuMemHostAlloc")] == [flags, flags]


def test_views_of_a_mapped_array_point_into_its_device_memory(mock_script):
    r = mock_script("""
        m = cuda.mapped_array((4, 6), dtype=np.float64)
        base = m._tidal_device.ctypes.data
        def offset(v):
            return v._tidal_device.ctypes.data - base
        views = {"row": m[1], "column": m[:, 2], "reversed": m[::-1, ::2],
                 "reshaped": m.reshape(6, 4)[2:], "transposed": m.T,
                 "as_int": m.view(np.int64)[3, 1:]}
        out = {name: [offset(v), list(v._tidal_device.strides), list(v.strides),
                      v._tidal_memory is m._tidal_memory,
                      v.__cuda_array_interface__["data"][0] - base]
               for name, v in views.items()}
        copies = [m + 1, m.copy(), np.ascontiguousarray(m[:, 1])]
        out["copies"] = [[type(c).__name__, hasattr(c, "_tidal_device"),
                          cuda.is_cuda_array(c)] for c in copies]
        print(json.dumps(out))
    """)
    res = r.result
    assert res["row"] == [48, [8], [8], True, 48]
    assert res["column"] == [16, [48], [48], True, 16]
    assert res["reversed"] == [144, [-48, 16], [-48, 16], True, 144]
    assert res["reshaped"] == [64, [32, 8], [32, 8], True, 64]
    assert res["transposed"] == [0, [8, 48], [8, 48], True, 0]
    assert res["as_int"] == [152, [8], [8], True, 152]
    # Other memory: plain copy semantics, no device side.
    assert res["copies"][0] == ["MappedNDArray", False, False]
    assert res["copies"][1] == ["MappedNDArray", False, False]
    assert res["copies"][2][1:] == [False, False]


def test_mapped_memory_lives_while_a_view_or_device_array_does(mock_script):
    r = mock_script(counted("""
        m = cuda.mapped_array(16, dtype=np.uint8)
        m[:] = 9
        tail = m[8:]
        d = cuda.as_cuda_array(m)
        del m
        gc.collect()
        steps = [count("cuMemFreeHost"), tail.tolist() == [9] * 8]
        del tail
        gc.collect()
        steps += [count("cuMemFreeHost"), d.copy_to_host().tolist() == [9] * 16]
        del d
        gc.collect()
        steps += [count("cuMemFreeHost"), live_host_ranges()]
        print(json.dumps(steps))
    """))
    assert r.result == [0, True, 0, True, 1, 0]


def test_a_view_follows_shape_changes_and_keeps_the_stream(mock_script):
    r = mock_script("""
        s = cuda.stream()
        m = cuda.mapped_array(12, dtype=np.int32, stream=s)
        v = m[4:]
        v.shape = (2, 4)                          # in place: no new view
        base = m._tidal_device.ctypes.data
        print(json.dumps([v._tidal_device.shape, v._tidal_device.ctypes.data - base,
                          v.__cuda_array_interface__["stream"] == int(s),
                          m.__cuda_array_interface__["stream"] == int(s)]))
    """)
    assert r.result == [[2, 4], 16, True, True]


def test_a_copy_does_not_keep_mapped_memory_alive(mock_script):
    r = mock_script(counted("""
        m = cuda.mapped_array(4)
        copies = [m.copy(), m * 2]
        del m
        gc.collect()
        print(json.dumps([count("cuMemFreeHost"), [hasattr(c, "_tidal_memory") for c in copies]]))
    """))
    assert r.result == [1, [False, False]]


# --- managed_array --------------------------------------------------------------------

def test_managed_array_is_one_address_freed_with_cuMemFree(mock_script):
    r = mock_script(counted("""
        g = cuda.managed_array((2, 4), dtype=np.float32)
        h = cuda.managed_array(3, dtype=np.int64, attach_global=False)
        g[:] = 2.5
        out = [type(g).__name__, g._tidal_device.ctypes.data == g.ctypes.data,
               g.__cuda_array_interface__["data"][0] == g.ctypes.data,
               g[1]._tidal_device.ctypes.data - g.ctypes.data,
               cuda.as_cuda_array(g).copy_to_host().tolist()]
        del g, h
        gc.collect()
        print(json.dumps(out))
    """))
    assert r.result == ["ManagedNDArray", True, True, 16, [[2.5] * 4] * 2]
    allocs = r.named("cuMemAllocManaged")
    assert [(c["bytes"], c["flags"]) for c in allocs] == [(32, 1), (24, 2)]
    assert sorted(_alloc_ids(r, "cuMemFree_v2")) == sorted(c["alloc"] for c in allocs)
    assert not r.named("cuMemHostAlloc") and not r.named("cuMemAlloc_v2")


# --- cuda.pinned and cuda.mapped ------------------------------------------------------

def test_pinned_registers_the_arrays_for_the_block(mock_script):
    r = mock_script(counted("""
        a = np.arange(6.0)
        b = np.zeros(10, np.int32)[::-2]          # strided: its whole span
        p = cuda.pinned_array(4)                  # page-locked already
        with cuda.pinned(a, b, p):
            inside = [count("cuMemHostRegister_v2"), count("cuMemHostUnregister"),
                      live_host_ranges()]
            d = cuda.to_device(a)
        print(json.dumps([inside, count("cuMemHostUnregister"), live_host_ranges(),
                          d.copy_to_host().tolist()]))
    """))
    inside, unregisters, ranges, copied = r.result
    assert inside == [2, 0, 3] and unregisters == 2 and ranges == 1
    assert copied == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    registers = r.named("cuMemHostRegister_v2")
    assert [(c["bytes"], c["flags"]) for c in registers] == [(48, 0), (36, 0)]
    # Unregistered in reverse order at the end of the block.
    assert _alloc_ids(r, "cuMemHostUnregister") == [c["alloc"] for c in registers][::-1]
    assert not r.named("cuMemHostGetDevicePointer_v2")


def test_mapped_yields_device_arrays_over_the_mapped_pointer(mock_script):
    r = mock_script(counted("""
        a = np.arange(5, dtype=np.int32)
        b = np.arange(12.0).reshape(3, 4)[::-1, 1:3]
        with cuda.mapped(a, b) as (da, db):
            out = {"types": [type(da).__name__, type(db).__name__],
                   "pointers": [da.device_ctypes_pointer.value - a.ctypes.data,
                                db.device_ctypes_pointer.value - b.ctypes.data],
                   "strides": list(db.strides),
                   "read": da.copy_to_host().tolist(),
                   "registered": live_host_ranges()}
            da[1] = 50                             # writes the host array's memory
        with cuda.mapped(a) as single:
            out["single"] = type(single).__name__
        out["a"] = a.tolist()
        out["after"] = live_host_ranges()
        print(json.dumps(out))
    """))
    res = r.result
    assert res["types"] == ["DeviceNDArray", "DeviceNDArray"] and res["single"] == "DeviceNDArray"
    # The mock maps registered memory at its own address (as devices that can
    # use the host pointer do), so element 0's device pointer is its address.
    assert res["pointers"] == [0, 0] and res["strides"] == [-32, 8]
    assert res["read"] == [0, 1, 2, 3, 4]
    assert res["a"] == [0, 50, 2, 3, 4]
    assert res["registered"] == 2 and res["after"] == 0
    registers = r.named("cuMemHostRegister_v2")
    assert [(c["bytes"], c["flags"]) for c in registers][:2] == [(20, 2), (80, 2)]
    ids = [c["alloc"] for c in registers[:2]]
    assert _alloc_ids(r, "cuMemHostGetDevicePointer_v2")[:2] == ids
    # No device memory: reads and the element write go through the mapped pointer.
    assert set(_alloc_ids(r, "cuMemcpyDtoH_v2")) == set(_alloc_ids(r, "cuMemcpyHtoD_v2")) \
        == {ids[0]}
    assert not r.named("cuMemAlloc_v2")


def test_mapped_unregisters_when_the_block_raises(mock_script):
    r = mock_script(counted("""
        a = np.zeros(4)
        try:
            with cuda.mapped(a):
                raise KeyError("inside")
        except KeyError:
            pass
        print(json.dumps([count("cuMemHostRegister_v2"), count("cuMemHostUnregister"),
                          live_host_ranges()]))
    """))
    assert r.result == [1, 1, 0]


def test_mapped_uses_the_device_side_of_tidal_host_memory(mock_script):
    r = mock_script("""
        m = cuda.mapped_array(6, dtype=np.int16)
        g = cuda.managed_array(6, dtype=np.int16)
        with cuda.mapped(m[2:], g) as (dm, dg):
            out = [dm.device_ctypes_pointer.value - m._tidal_device.ctypes.data,
                   dg.device_ctypes_pointer.value == g.ctypes.data]
        try:
            with cuda.mapped(cuda.pinned_array(3)):
                pass
        except ValueError as e:
            out.append(str(e))
        print(json.dumps(out))
    """)
    offset, managed, error = r.result
    assert offset == 4 and managed
    assert "cannot map a pinned_array" in error and "cuda.mapped_array" in error
    assert not r.named("cuMemHostRegister_v2")


def test_registering_memory_twice_raises_the_drivers_error(mock_script):
    r = mock_script(counted("""
        a = np.zeros(8)
        try:
            with cuda.pinned(a, a[2:]):
                pass
        except cuda.CudaDriverError as e:
            print(json.dumps([e.call, e.error_name, str(e), count("cuMemHostUnregister"),
                              live_host_ranges()]))
    """))
    call, name, message, unregisters, ranges = r.result
    assert call == "cuMemHostRegister" and name == "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"
    assert message.startswith("cuMemHostRegister failed: "
                              "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED")
    # The first registration was undone.
    assert unregisters == 1 and ranges == 0
    assert r.named("cuMemHostRegister_v2")[1]["result"] == 712


# --- bad input and empty arrays -------------------------------------------------------

@pytest.mark.parametrize("statement, error, words", [
    ("cuda.mapped_array(4, portable='yes')", "TypeError", "portable must be True or False"),
    ("cuda.mapped_array(4, wc=2)", "TypeError", "wc must be True or False"),
    ("cuda.managed_array(4, attach_global=None)", "TypeError",
     "attach_global must be True or False"),
    ("cuda.pinned_array(-1)", "ValueError", "negative dimensions"),
    ("cuda.mapped_array((2, 'x'))", "TypeError", "shape must be an int or a tuple"),
    ("cuda.managed_array(3, stream='s')", "TypeError", "stream"),
    ("cuda.pinned([1, 2]).__enter__()", "TypeError", "cuda.pinned takes NumPy arrays, not list"),
    ("cuda.mapped(np.zeros(2), 'x').__enter__()", "TypeError",
     "cuda.mapped takes NumPy arrays, not str"),
    ("cuda.mapped(np.zeros(2), stream=1.5).__enter__()", "TypeError", "stream"),
    ("_tidal.cuda_host_unregister(object())", "TypeError",
     "takes a tidal.CudaHostRegistration capsule"),
])
def test_bad_input_raises_before_any_driver_call(mock_script, statement, error, words):
    r = mock_script(f"""
        from tidal import _tidal
        try:
            {statement}
        except Exception as e:
            print(json.dumps([type(e).__name__, str(e)]))
    """)
    name, message = r.result
    assert name == error and words in message, message
    for call in ("cuMemHostAlloc", "cuMemAllocManaged", "cuMemHostRegister_v2"):
        assert not r.named(call), call


def test_empty_arrays_allocate_and_register_nothing(mock_script):
    r = mock_script("""
        m = cuda.mapped_array((0, 3), dtype=np.float32)
        g = cuda.managed_array(0)
        p = cuda.pinned_array(0)
        with cuda.pinned(np.zeros(0)), cuda.mapped(np.zeros((2, 0))) as d:
            shape = d.shape
        print(json.dumps([m._tidal_device.shape, m._tidal_memory is None, g.size, p.size,
                          list(shape), m[1:].shape]))
    """)
    assert r.result == [[0, 3], True, 0, 0, [2, 0], [0, 3]]
    for call in ("cuMemHostAlloc", "cuMemAllocManaged", "cuMemHostRegister_v2"):
        assert not r.named(call), call


# --- kernels (needs the launch path change) -------------------------------------------

def test_device_arrays_over_mapped_memory_reach_kernels_without_a_copy(mock_script):
    # Works with today's launch path: as_cuda_array and cuda.mapped give
    # DeviceNDArrays, which launches pass by their device pointer.
    r = mock_script("""
        m = cuda.mapped_array(8, dtype=np.int32)
        m[:] = 0
        a = np.zeros(6, np.int32)
        b = cuda.to_device(np.zeros(1, np.float32))
        fill_seven[1, 32](cuda.as_cuda_array(m), 0.0, b)
        with cuda.mapped(a) as d:
            fill_seven[1, 32](d[1:], 0.0, b)
            cuda.synchronize()
        print(json.dumps([m.tolist(), a.tolist()]))
    """)
    # The mock's fill_seven writes from the pointer to the end of the memory.
    assert r.result == [[7] * 8, [0] + [7] * 5]
    (mapped,) = r.named("cuMemHostAlloc")
    (registered,) = r.named("cuMemHostRegister_v2")
    first, second = (launch["params"][0] for launch in r.named("cuLaunchKernel"))
    assert (first["alloc"], first["offset"]) == (mapped["alloc"], 0)
    assert (second["alloc"], second["offset"]) == (registered["alloc"], 4)
    # Only b went to device memory.
    assert len(r.named("cuMemcpyHtoD_v2")) == 1 and not r.named("cuMemcpyDtoH_v2")


def test_mapped_and_managed_arrays_reach_kernels_without_a_copy(mock_script):
    r = mock_script("""
        m = cuda.mapped_array(8, dtype=np.int32)
        g = cuda.managed_array(8, dtype=np.int32)
        b = cuda.to_device(np.zeros(1, np.float32))
        m[:] = 0
        g[:] = 0
        fill_seven[1, 32](m, 0.0, b)
        fill_seven[1, 32](g[2:], 0.0, b)
        cuda.synchronize()                     # as with Numba: the launch is asynchronous
        print(json.dumps([m.tolist(), g.tolist()]))
    """)
    assert r.result == [[7] * 8, [0, 0] + [7] * 6]
    (mapped,) = r.named("cuMemHostAlloc")
    (managed,) = r.named("cuMemAllocManaged")
    first, second = r.named("cuLaunchKernel")
    assert first["params"][0]["alloc"] == mapped["alloc"] and first["params"][0]["offset"] == 0
    assert second["params"][0]["alloc"] == managed["alloc"]
    assert second["params"][0]["offset"] == 8
    # Only b was copied to the device; nothing comes back after the launches.
    assert len(r.named("cuMemcpyHtoD_v2")) == 1 and not r.named("cuMemcpyDtoH_v2")
    assert len(r.named("cuMemAlloc_v2")) == 1
