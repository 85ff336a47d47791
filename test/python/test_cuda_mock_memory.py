"""Device memory, the caching allocator, streams and events of the cuda
target (issue 5), against the mock CUDA driver (no GPU needed; see
test_cuda_mock.py for how a script runs and what the mock logs). What it
shows: a device array is copied to the device once and launches get its
device pointer with no copy; views share the allocation at an offset; freed
blocks are reused and go back to the driver on deallocations.clear(); a
launch on a stream passes that CUstream and does not synchronise; events
are CUevents recorded on the stream.
"""

from test_cuda_mock import MOCK, _u64, run  # noqa: F401  (run is a fixture)

import pytest

pytestmark = pytest.mark.skipif(not MOCK.is_file(), reason=f"no mock CUDA driver at {MOCK}")

COPIES = ("cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2")


def test_device_array_stays_on_the_device(run):
    r = run("""
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


def test_views_share_the_allocation_with_an_offset(run):
    r = run("""
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


def test_freed_block_is_reused_and_clear_returns_it(run):
    r = run("""
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


def test_free_is_deferred_while_a_stream_uses_the_block(run):
    r = run("""
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


def test_launch_on_a_stream_is_asynchronous(run):
    r = run("""
        s = cuda.stream()
        d = cuda.to_device(np.zeros(8, np.int32), stream=s)
        b = cuda.to_device(np.zeros(1, np.float32), stream=s)
        fill_seven[1, 32, s](d, 0.0, b)
        start, end = cuda.event(), cuda.event()
        start.record(s)
        end.record(s)
        host = d.copy_to_host(stream=s)
        s.synchronize()
        end.synchronize()
        print(json.dumps({"host": host.tolist(), "query": end.query(),
                          "ms": cuda.event_elapsed_time(start, end)}))
    """)
    res = r.result
    assert res["host"] == [7] * 8 and res["query"] is True and res["ms"] == 0.5
    (created,) = r.named("cuStreamCreate")
    stream = created["stream"]
    launch = r.named("cuLaunchKernel")[0]
    assert launch["stream"] == stream
    calls = [c["call"] for c in r.calls]
    after = calls[calls.index("cuLaunchKernel"):]
    assert "cuCtxSynchronize" not in after
    assert [c["stream"] for c in r.named("cuMemcpyHtoDAsync_v2")] == [stream, stream]
    assert r.named("cuMemcpyDtoHAsync_v2")[0]["stream"] == stream
    assert [c["stream"] for c in r.named("cuEventRecord")][:2] == [stream, stream]
    assert r.named("cuStreamSynchronize")[0]["stream"] == stream


def test_numpy_arguments_still_copy_and_synchronise_on_a_stream(run):
    r = run("""
        s = cuda.stream()
        a = np.zeros(5, np.int32)
        fill_seven[1, 32, s](a, 0.0, np.zeros(1, np.float32))
        print(json.dumps(a.tolist()))
    """)
    assert r.result == [7] * 5
    calls = [c["call"] for c in r.calls]
    i = calls.index("cuLaunchKernel")
    assert "cuCtxSynchronize" in calls[i:] and "cuMemcpyDtoH_v2" in calls[i:]


def test_setitem_transpose_and_memory_info(run):
    r = run("""
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


def test_launch_configuration_stream_reaches_cuda_launch(run):
    # kernel[grid, block, stream](...) with device arrays only: launched on
    # that CUstream, with no synchronisation after it.
    r = run("""
        s = cuda.stream()
        d = cuda.to_device(np.zeros(8, np.int32), stream=s)
        b = cuda.to_device(np.zeros(1, np.float32), stream=s)
        fill_seven[1, 32, s](d, 0.0, b)
        host = d.copy_to_host(stream=s)
        s.synchronize()
        print(json.dumps({"host": host.tolist()}))
    """)
    assert r.result["host"] == [7] * 8
    (created,) = r.named("cuStreamCreate")
    assert r.named("cuLaunchKernel")[0]["stream"] == created["stream"]
    calls = [c["call"] for c in r.calls]
    assert "cuCtxSynchronize" not in calls[calls.index("cuLaunchKernel"):]


def test_bad_stream_in_launch_configuration():
    import numpy as np
    from tidal import cuda

    @cuda.jit
    def k(out):
        out[0] = 1

    with pytest.raises(TypeError, match="the stream of kernel 'k' must be a cuda.stream"):
        k[1, 1, "default"]


def test_external_stream_uses_the_handle_and_never_destroys_it(run):
    r = run("""
        owner = cuda.stream()
        s = cuda.external_stream(owner.handle)
        d = cuda.to_device(np.zeros(8, np.int32), stream=s)
        fill_seven[1, 32, s](d, 0.0, cuda.to_device(np.zeros(1, np.float32)))
        s.synchronize()
        del s
        import gc
        gc.collect()
        print(json.dumps(d.copy_to_host().tolist()))
    """)
    assert r.result == [7] * 8
    (created,) = r.named("cuStreamCreate")
    stream = created["stream"]
    assert r.named("cuLaunchKernel")[0]["stream"] == stream
    assert [c["stream"] for c in r.named("cuStreamSynchronize")][:1] == [stream]
    assert not r.named("cuStreamDestroy_v2") or \
        r.index("cuStreamDestroy_v2") > r.index("cuMemcpyDtoHAsync_v2")
