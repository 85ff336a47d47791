"""Numba's memory API: device arrays (copies, views, layouts, errors) and
allocation functions on every target; __cuda_array_interface__ over host
memory on the cpu target; device arrays as kernel arguments (used in place)
on every target. On the cuda target, over the mock driver: a device array is copied
to the device once and launches get its device pointer with no copy; views
share the allocation at an offset; freed blocks are reused and go back to
the driver on deallocations.clear(). Host memory (pinned, mapped, managed)
is in test_host_memory.py."""

import ctypes

import numpy as np
import pytest

from targets import on_targets
from tidal import cuda


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@cuda.jit
def scale_2d(x, factor):
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        x[i, j] *= factor


# --- to_device, copies ---------------------------------------------------------------

def test_to_device_copies_and_copy_to_host_round_trips(target, rng):
    host = rng.standard_normal((4, 5)).astype(np.float32)
    d = cuda.to_device(host)
    assert isinstance(d, cuda.DeviceNDArray)
    assert (d.shape, d.dtype, d.strides, d.size, d.ndim, d.nbytes, len(d)) == (
        (4, 5), np.float32, host.strides, 20, 2, 80, 4)
    host[0, 0] = 99  # the device copy is independent of the host array
    back = d.copy_to_host()
    assert back[0, 0] != 99
    back[1, 1] = -1  # and so is the host copy of it
    assert d[1, 1] != -1


def test_to_device_keeps_fortran_order(target):
    host = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    d = cuda.to_device(host)
    assert d.is_f_contiguous() and not d.is_c_contiguous()
    back = d.copy_to_host()
    assert back.flags.f_contiguous
    np.testing.assert_array_equal(back, host)


def test_to_device_of_a_device_array_is_that_array(target):
    d = cuda.to_device(np.arange(3))
    assert cuda.to_device(d) is d


def test_to_device_into_an_existing_array(target):
    d = cuda.device_array(4, dtype=np.int64)
    assert cuda.to_device(np.arange(4), to=d) is d
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(4))


def test_to_device_of_a_list_and_of_a_scalar(target):
    np.testing.assert_array_equal(cuda.to_device([1, 2, 3]).copy_to_host(), [1, 2, 3])
    zero_d = cuda.to_device(np.float32(2.5))
    assert zero_d.shape == () and zero_d.copy_to_host() == np.float32(2.5)


def test_to_device_without_copy_allocates_only(target):
    d = cuda.to_device(np.arange(5.0), copy=False)
    assert d.shape == (5,) and d.dtype == np.float64


def test_to_device_refuses_a_non_contiguous_array(target):
    with pytest.raises(ValueError, match="non-contiguous"):
        cuda.to_device(np.arange(20.0).reshape(4, 5)[:, 1:3])


def test_copy_to_host_into_a_given_array(target):
    d = cuda.to_device(np.arange(6, dtype=np.int32))
    out = np.zeros(6, dtype=np.int32)
    assert d.copy_to_host(out) is out
    np.testing.assert_array_equal(out, np.arange(6))


@pytest.mark.parametrize("bad, error, words", [
    (np.zeros(5, np.int32), ValueError, ["(6,)", "(5,)"]),
    (np.zeros(6, np.float32), TypeError, ["int32", "float32"]),
])
def test_copy_to_host_into_a_wrong_array_raises(target, bad, error, words):
    d = cuda.to_device(np.arange(6, dtype=np.int32))
    with pytest.raises(error) as info:
        d.copy_to_host(bad)
    assert all(w in str(info.value) for w in words)


def test_copy_to_host_into_a_non_array_raises(target):
    with pytest.raises(TypeError, match="NumPy array"):
        cuda.to_device(np.arange(3)).copy_to_host([0, 0, 0])


def test_copy_to_device_copies_host_and_device_arrays(target):
    d = cuda.device_array(4, dtype=np.float64)
    d.copy_to_device(np.arange(4.0))
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(4.0))
    e = cuda.device_array_like(d)
    e.copy_to_device(d)  # device to device
    d.copy_to_device(np.zeros(4))
    np.testing.assert_array_equal(e.copy_to_host(), np.arange(4.0))


def test_copy_to_device_of_a_wrong_shape_names_both_shapes(target):
    d = cuda.device_array((3, 4))
    with pytest.raises(ValueError) as info:
        d.copy_to_device(np.zeros((4, 3)))
    assert "(3, 4)" in str(info.value) and "(4, 3)" in str(info.value)


def test_copy_to_device_of_a_wrong_dtype_raises(target):
    with pytest.raises(TypeError, match="float64.*int64|int64.*float64"):
        cuda.device_array(3).copy_to_device(np.arange(3))


def test_copy_to_device_into_a_non_contiguous_view_raises(target):
    d = cuda.device_array((4, 4))
    with pytest.raises(ValueError, match="non-contiguous"):
        d[:, 1].copy_to_device(np.zeros(4))


def test_array_protocol_copies_to_the_host(target):
    d = cuda.to_device(np.arange(3.0))
    host = np.asarray(d)
    host[0] = 42
    assert d[0] == 0.0
    assert np.asarray(d, dtype=np.int32).dtype == np.int32


# --- allocation ----------------------------------------------------------------------

def test_device_array_layouts(target):
    c = cuda.device_array((2, 3), dtype=np.int16)
    f = cuda.device_array((2, 3), dtype=np.int16, order="F")
    s = cuda.device_array((2, 3), dtype=np.int16, strides=(2, 4))
    assert c.strides == (6, 2) and c.is_c_contiguous()
    assert f.strides == (2, 4) and f.is_f_contiguous()
    assert s.strides == (2, 4)
    assert cuda.device_array(7).shape == (7,) and cuda.device_array(7).dtype == np.float64


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(shape=(-1, 2)), ValueError, "negative"),
    (dict(shape=(2, 2), order="X"), ValueError, "order"),
    (dict(shape="abc"), TypeError, "shape"),
    (dict(shape=(2, 2), strides=(8,)), ValueError, "one stride per axis"),
    (dict(shape=3, dtype="not a dtype"), TypeError, "not a dtype"),
])
def test_device_array_bad_arguments_raise(target, kwargs, error, match):
    with pytest.raises(error, match=match):
        cuda.device_array(**kwargs)


def test_device_array_like_follows_the_layout(target):
    host = np.zeros((3, 4, 5), dtype=np.float32).transpose(2, 0, 1)
    d = cuda.device_array_like(host)
    assert d.shape == host.shape and d.dtype == host.dtype
    assert sorted(d.strides) == sorted(host.strides)
    assert cuda.device_array_like(np.zeros((2, 3), order="F")).is_f_contiguous()
    assert cuda.device_array_like(cuda.device_array(4)).shape == (4,)


# --- views, indexing -----------------------------------------------------------------

def test_slices_are_views_of_the_parent(target):
    d = cuda.to_device(np.arange(12.0).reshape(3, 4))
    row, column = d[1], d[:, 0]
    assert isinstance(row, cuda.DeviceNDArray) and row.shape == (4,)
    assert column.shape == (3,) and column.strides == (32,)
    assert not column.is_c_contiguous()
    column[:] = -1  # writes through to the parent
    np.testing.assert_array_equal(d.copy_to_host()[:, 0], [-1, -1, -1])
    np.testing.assert_array_equal(row.copy_to_host(), [-1, 5, 6, 7])
    np.testing.assert_array_equal(d[0:2, 1:3].copy_to_host(), [[1, 2], [5, 6]])


def test_element_access_returns_a_numpy_scalar(target):
    d = cuda.to_device(np.arange(6, dtype=np.int32).reshape(2, 3))
    value = d[1, 2]
    assert type(value) is np.int32 and value == 5
    assert d[-1, 0] == 3


def test_setitem_with_scalars_arrays_and_device_arrays(target):
    d = cuda.device_array((2, 3), dtype=np.int64)
    d[:] = 7
    d[0, 1] = 1
    d[1] = np.array([4, 5, 6])
    d[:, 2] = cuda.to_device(np.array([10, 20]))
    np.testing.assert_array_equal(d.copy_to_host(), [[7, 1, 10], [4, 5, 20]])


def test_setitem_of_a_wrong_shape_raises(target):
    d = cuda.device_array((2, 3))
    with pytest.raises(ValueError, match="size 2 to array axis 1 with dimension 3"):
        d[:] = np.zeros(2)
    with pytest.raises(ValueError, match="Can't assign 3-D array to 2-D self"):
        d[:] = np.zeros((1, 2, 3))


def test_fancy_indexing_is_refused(target):
    d = cuda.device_array(5)
    with pytest.raises(TypeError, match="ints and slices"):
        d[[0, 1]]
    with pytest.raises(TypeError, match="ints and slices"):
        d[np.array([True, False, True, False, True])] = 0
    with pytest.raises(IndexError):
        d[5]


def test_reshape_and_ravel_are_views_of_contiguous_arrays(target):
    d = cuda.to_device(np.arange(12))
    r = d.reshape(3, 4)
    assert r.shape == (3, 4) and r.is_c_contiguous()
    r[0, 0] = 100
    assert d[0] == 100
    assert d.reshape((2, -1)).shape == (2, 6)
    flat = r.ravel()
    flat[1] = 200
    assert d[1] == 200
    f = d.reshape(3, 4, order="F")  # Numba: the new layout over the same memory
    assert f.is_f_contiguous()
    np.testing.assert_array_equal(f.copy_to_host(), d.copy_to_host().reshape(3, 4, order="F"))


def test_reshape_of_a_non_contiguous_view_raises(target):
    column = cuda.to_device(np.arange(12.0).reshape(3, 4))[:, 1:3]
    with pytest.raises(NotImplementedError, match="non-contiguous"):
        column.reshape(6)
    with pytest.raises(NotImplementedError, match="not contiguous"):
        column.ravel()


@pytest.mark.parametrize("shape, match", [
    ((5, 5), "size 12"), ((-1, -1), "one unknown"), ((5, -1), "size 12")])
def test_reshape_to_a_wrong_size_raises(target, shape, match):
    with pytest.raises(ValueError, match=match):
        cuda.device_array(12).reshape(*shape)


def test_split_views_the_memory(target):
    d = cuda.to_device(np.arange(10))
    parts = list(d.split(4))
    assert [p.shape for p in parts] == [(4,), (4,), (2,)]
    parts[2][0] = -5
    assert d[8] == -5
    with pytest.raises(ValueError, match="1-D"):
        list(cuda.device_array((2, 2)).split(1))
    with pytest.raises(ValueError, match="unit stride"):
        list(d[::2].split(2))


def test_transpose_is_a_copy_as_in_numba(target):
    host = np.arange(6.0).reshape(2, 3)
    d = cuda.to_device(host)
    t = d.T
    np.testing.assert_array_equal(t.copy_to_host(), host.T)
    assert t.is_c_contiguous()
    assert d.transpose((0, 1)) is d
    with pytest.raises(NotImplementedError, match="non-2D"):
        cuda.device_array((2, 2, 2)).T


def test_squeeze_and_view(target):
    d = cuda.to_device(np.arange(4, dtype=np.int32).reshape(1, 4))
    s = d.squeeze()
    assert s.shape == (4,)
    v = s.view(np.uint8)
    assert v.shape == (16,) and v[4] == 1
    with pytest.raises(ValueError, match="C-contiguous"):
        cuda.device_array((4, 4), dtype=np.int32)[:, 0].view(np.int16)


def test_negative_strides_copy_to_host_raises_as_numba(target):
    with pytest.raises(NotImplementedError, match="negative strides"):
        cuda.to_device(np.arange(4))[::-1].copy_to_host()


def test_zero_d_and_empty_arrays(target):
    with pytest.raises(TypeError, match="0-d"):
        len(cuda.to_device(np.float64(1.0)))
    empty = cuda.device_array((0, 3))
    assert empty.size == 0 and empty.copy_to_host().shape == (0, 3)
    assert empty.__cuda_array_interface__["data"][0] == 0


# --- __cuda_array_interface__ over host memory (the cpu target's device memory) ---

@on_targets("cpu")  # host memory as device memory
def test_cuda_array_interface_is_version_3_over_host_memory(target):
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = cuda.to_device(host)
    interface = d.__cuda_array_interface__
    assert interface["version"] == 3 and interface["shape"] == (3, 4)
    assert interface["typestr"] == "<f4" and interface["strides"] is None
    assert interface["stream"] is None
    pointer, readonly = interface["data"]
    assert not readonly
    assert ctypes.c_float.from_address(pointer + 4 * 5).value == 5.0  # host memory
    assert d[:, 1].__cuda_array_interface__["strides"] == (16,)
    assert cuda.is_cuda_array(d) and not cuda.is_cuda_array(host)


class _Exporter:
    """Another library's device array: only __cuda_array_interface__."""

    def __init__(self, interface, keep=None):
        self.__cuda_array_interface__ = interface
        self.keep = keep


@on_targets("cpu")  # host memory as device memory
def test_as_cuda_array_views_the_exported_memory(target):
    host = np.arange(8, dtype=np.int32)
    exporter = _Exporter(dict(host.__array_interface__, version=3), keep=host)
    d = cuda.as_cuda_array(exporter)
    assert d.shape == (8,) and d.dtype == np.int32
    d[0] = 50
    assert host[0] == 50  # no copy
    assert cuda.as_cuda_array(d) is d


@on_targets("cpu")  # host memory as device memory
def test_foreign_device_arrays_are_kernel_arguments(target):
    host = np.zeros(16, dtype=np.float64)
    exporter = _Exporter(dict(host.__array_interface__, version=3), keep=host)
    add_one[1, 32](exporter)
    np.testing.assert_array_equal(host, 1.0)


@on_targets("cpu")  # host memory as device memory
def test_as_cuda_array_refuses_other_objects_and_non_host_pointers(target):
    with pytest.raises(TypeError, match="cuda array interface"):
        cuda.as_cuda_array(np.arange(3))
    gpu_like = _Exporter({"shape": (4,), "typestr": "<f4", "data": (8, False),
                          "version": 3})
    with pytest.raises(ValueError, match="not host memory"):
        cuda.as_cuda_array(gpu_like)
    with pytest.raises(ValueError, match="not host memory"):
        add_one[1, 32](gpu_like)
    masked = _Exporter({"shape": (1,), "typestr": "<f4", "data": (0, False),
                        "version": 3, "mask": object()})
    with pytest.raises(NotImplementedError, match="Masked"):
        cuda.as_cuda_array(masked)


# --- device arrays as kernel arguments ------------------------------------------------

def test_kernels_run_on_device_arrays_in_place(target):
    host = np.arange(10.0)
    d = cuda.to_device(host)
    add_one[1, 32](d)
    add_one[1, 32](d)
    target.assert_result("add_one", d.copy_to_host(), host + 2, launches=2)
    np.testing.assert_array_equal(host, np.arange(10.0))  # the host copy is untouched


def test_kernels_run_on_views(target):
    d = cuda.to_device(np.zeros((4, 6)))
    add_one[1, 32](d[:, 2])  # a strided view: layout A
    scale_2d[(1, 1), (8, 8)](d[1:3], 5.0)
    expected = np.zeros((4, 6))
    expected[:, 2] = 1
    expected[1:3] *= 5
    target.assert_result("add_one", d.copy_to_host(), expected)
    target.assert_result("scale_2d", d.copy_to_host(), expected)


def test_device_array_and_numpy_array_share_a_specialisation(target):
    @cuda.jit
    def fill(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = i

    d = cuda.device_array(5, dtype=np.int64)
    fill[1, 8](d)
    fill[1, 8](np.zeros(5, dtype=np.int64))
    assert len(fill.signatures) == 1
    target.assert_result("fill", d.copy_to_host(), np.arange(5), launches=2)


def test_unsupported_dtype_on_a_device_array_is_named(target):
    with pytest.raises(TypeError, match="dtype"):
        add_one[1, 32](cuda.device_array(3, dtype="U3"))


# --- the cuda target over the mock driver: device memory and the caching allocator -----


COPIES = ("cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2")


def test_device_array_stays_on_the_device(mock_script):
    r = mock_script("""
        d = cuda.to_device(np.zeros(6, np.int32))
        b = cuda.to_device(np.zeros(1, np.float32))
        fill_seven[1, 32](d, 0.0, b)
        fill_seven[1, 32](d, 1.0, b)
        print(json.dumps(d.copy_to_host().tolist()))
    """)
    assert r.result == [7] * 6
    calls = [c["call"] for c in r.calls]
    launches = [i for i, c in enumerate(calls) if c == "cuLaunchKernel"]
    assert len(launches) == 2
    # One host-to-device copy per array, before the launches; none around them.
    assert calls.count("cuMemcpyHtoD_v2") == 2
    assert all(c not in COPIES for c in calls[launches[0]:launches[1]])
    assert calls.count("cuMemcpyDtoH_v2") == 1 and calls.index("cuMemcpyDtoH_v2") > launches[1]
    assert "cuCtxSynchronize" not in calls[launches[0]:]
    # The launch got the allocation's device pointer.
    (alloc,) = [c for c in r.named("cuMemAlloc_v2") if c["bytes"] == 512][:1]
    launch = r.named("cuLaunchKernel")[0]
    assert launch["params"][0]["offset"] == 0 and launch["stream"] == 0


def test_views_share_the_allocation_with_an_offset(mock_script):
    r = mock_script("""
        d = cuda.to_device(np.arange(12, dtype=np.int32))
        v = d[4:10]
        fill_seven[1, 32](v, 0.0, cuda.to_device(np.zeros(1, np.float32)))
        iface = v.__cuda_array_interface__["data"][0] - d.__cuda_array_interface__["data"][0]
        print(json.dumps({"all": d.copy_to_host().tolist(), "view": v.copy_to_host().tolist(),
                          "iface": iface, "elem": int(d[2]), "ptr": v.device_ctypes_pointer.value
                          - d.device_ctypes_pointer.value}))
    """)
    res = r.result
    # The mock's fill_seven writes from the pointer to the end of the allocation.
    assert res["all"] == list(range(4)) + [7] * 8
    assert res["view"] == [7] * 6
    assert res["iface"] == 16 and res["ptr"] == 16 and res["elem"] == 2
    launch = r.named("cuLaunchKernel")[0]
    assert launch["params"][0]["offset"] == 16
    assert len({c["alloc"] for c in r.named("cuMemAlloc_v2")}) == 2


def test_freed_block_is_reused_and_clear_returns_it(mock_script):
    r = mock_script("""
        ctx = cuda.current_context()
        a = cuda.device_array(100, np.float32)
        s1 = ctx.memory_stats()
        del a
        s2 = ctx.memory_stats()
        b = cuda.device_array(120, np.float32)   # same size class (512 bytes)
        s3 = ctx.memory_stats()
        del b
        ctx.deallocations.clear()
        s4 = ctx.memory_stats()
        print(json.dumps([s1, s2, s3, s4]))
    """)
    s1, s2, s3, s4 = r.result
    assert len(r.named("cuMemAlloc_v2")) == 1
    assert r.named("cuMemAlloc_v2")[0]["bytes"] == 512
    assert len(r.named("cuMemFree_v2")) == 1
    assert s1["bytes_in_use"] == 512 and s1["bytes_requested"] == 400 and s1["bytes_cached"] == 0
    assert s2["bytes_in_use"] == 0 and s2["bytes_cached"] == 512
    assert s3["reuses"] == 1 and s3["driver_allocations"] == 1 and s3["bytes_cached"] == 0
    assert s4["bytes_cached"] == 0 and s4["driver_frees"] == 1
    assert s4["live_driver_allocations"] == 0
    # The free recorded an event on the stream that used the block.
    assert r.named("cuEventRecord")


def test_free_is_deferred_while_a_stream_uses_the_block(mock_script):
    r = mock_script("""
        s = cuda.stream()
        ctx = cuda.current_context()
        a = cuda.device_array(10, np.int32, stream=s)
        del a                                   # pending: event not done
        b = cuda.device_array(10, np.int32)     # default stream: a new block
        pending = ctx.memory_stats()["bytes_pending"]
        s.synchronize()
        c = cuda.device_array(10, np.int32)     # now the first block is reused
        print(json.dumps([pending, ctx.memory_stats()]))
    """, events_pending=1)
    pending, stats = r.result
    assert pending == 512
    assert stats["driver_allocations"] == 2 and stats["reuses"] == 1
    assert [c["done"] for c in r.named("cuEventQuery")][:1] == [False]


def test_setitem_transpose_and_memory_info(mock_script):
    r = mock_script("""
        d = cuda.to_device(np.arange(6, dtype=np.float64).reshape(2, 3))
        d[0, 1] = 10.0
        d[1] = np.array([5.0, 6.0, 7.0])
        t = d.T.copy_to_host()
        free, total = cuda.current_context().get_memory_info()
        d2 = cuda.device_array_like(d)
        d2.copy_to_device(d)
        print(json.dumps({"d": d.copy_to_host().tolist(), "t": t.tolist(), "total": total,
                          "d2": d2.copy_to_host().tolist(), "repr": repr(d)}))
    """)
    res = r.result
    assert res["d"] == [[0.0, 10.0, 2.0], [5.0, 6.0, 7.0]]
    assert res["t"] == [[0.0, 5.0], [10.0, 6.0], [2.0, 7.0]]
    assert res["d2"] == res["d"] and res["total"] == 1 << 30
    assert "cuda target" in res["repr"]
    assert r.named("cuMemcpyDtoD_v2")


def test_numbas_devicearray_names(target):
    # cuda.devicearray: the names of Numba's module that programs use.
    from tidal.cuda import devicearray
    d, new = devicearray.auto_device(2)
    assert new and d.shape == ()
    if target.computes:
        assert d.copy_to_host() == 2
    same, new = devicearray.auto_device(d)
    assert same is d and not new
    host = np.arange(6.0)
    copied, new = devicearray.auto_device(host)
    assert new and isinstance(copied, devicearray.DeviceNDArray)
    if target.computes:
        np.testing.assert_array_equal(copied.copy_to_host(), host)
    with pytest.raises(ValueError, match="non-contiguous"):
        devicearray.auto_device(host[::2])
    assert devicearray.is_cuda_ndarray(d) and not devicearray.is_cuda_ndarray(host)
    with pytest.raises(ValueError):
        devicearray.require_cuda_ndarray(host)
