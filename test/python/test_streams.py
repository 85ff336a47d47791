"""Streams and events. On every target: launches and copies on streams, events
that time and order them. On the cpu target streams order work (launches
are synchronous) and events time the host. On the cuda target, over the
mock driver: a launch on a stream passes that CUstream and does not
synchronise, NumPy arguments still copy and synchronise, external streams
use their handle and are never destroyed. Devices and contexts are in
test_devices.py."""

import time

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
def axpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


# --- streams -------------------------------------------------------------------------

@on_targets("cpu")  # checks the kernels' results
def test_work_on_a_stream_is_done_in_order(target):
    stream = cuda.stream()
    d = cuda.to_device(np.zeros(100), stream=stream)
    add_one[4, 32, stream](d)
    add_one[4, 32, stream, 0](d)
    out = d.copy_to_host(stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(out, 2.0)


def test_auto_synchronize_yields_the_stream(target):
    stream = cuda.stream()
    with stream.auto_synchronize() as s:
        assert s is stream
        d = cuda.to_device(np.arange(3.0), stream=s)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(3.0))


def test_default_streams_and_new_streams(target):
    assert int(cuda.default_stream()) == 0
    assert int(cuda.legacy_default_stream()) == 1
    assert int(cuda.per_thread_default_stream()) == 2
    a, b = cuda.stream(), cuda.stream()
    assert int(a) != int(b) and int(a) > 2
    assert "Default" in repr(cuda.default_stream())
    d = cuda.device_array(3, stream=a)
    assert d.stream is a and d.__cuda_array_interface__["stream"] == int(a)
    assert d.bind(b).stream is b
    assert cuda.mapped_array(3, stream=a).__cuda_array_interface__["stream"] == int(a)


def test_a_stream_handle_is_an_int_with_ctypes_value(target):
    # Numba's handles: int(handle) with the NVIDIA binding, handle.value with
    # ctypes (c_void_p, whose value is None for 0).
    s = cuda.stream()
    assert isinstance(s.handle, int) and int(s.handle) == int(s) > 2
    assert s.handle.value == int(s) and s.handle == int(s)
    assert repr(s.handle) == f"StreamHandle({int(s):#x})"
    assert cuda.default_stream().handle.value is None
    assert int(cuda.default_stream().handle) == 0
    assert cuda.legacy_default_stream().handle.value == 1
    assert cuda.per_thread_default_stream().handle.value == 2
    # Stable: a stream keeps its handle, and no two live streams share one.
    assert s.handle == s.handle and int(s) == int(s)
    others = [cuda.stream() for _ in range(8)]
    assert len({int(o) for o in others} | {int(s)}) == 9
    # A launch on it takes the handle (kernel[grid, block, stream]).
    d = cuda.to_device(np.zeros(4), stream=s)
    add_one[1, 4, s](d)
    s.synchronize()


def test_interface_stream_is_produced_and_consumed(target):
    # Numba's test_produce_stream / test_consume_stream: an array made on a
    # stream exports its handle; an array made from that interface has an
    # external stream with the same handle as its default stream.
    s = cuda.stream()
    d = cuda.device_array(10, stream=s)
    assert d.__cuda_array_interface__["stream"] == s.handle.value
    assert cuda.managed_array(10, stream=s).__cuda_array_interface__["stream"] == int(s)

    class Foreign:
        def __init__(self, array):
            self.__cuda_array_interface__ = array.__cuda_array_interface__
            self.array = array

    consumed = cuda.as_cuda_array(Foreign(d))
    assert consumed.stream.external and consumed.stream.handle.value == s.handle.value
    assert "External CUDA stream" in repr(consumed.stream)
    synced = cuda.from_cuda_array_interface(d.__cuda_array_interface__, owner=d, sync=False)
    assert synced.stream.external and int(synced.stream) == int(s)
    # No stream in the interface: the array's stream is 0 (the default).
    plain = cuda.device_array(10)
    if plain.__cuda_array_interface__["stream"] is None:
        assert cuda.as_cuda_array(Foreign(plain)).stream == 0


def test_stream_callbacks_run_once_work_is_done(target):
    stream = cuda.stream()
    seen = []
    stream.add_callback(lambda s, status, arg: seen.append((s, status, arg)), "x")
    assert seen == [(stream, 0, "x")]


def test_a_bad_stream_argument_raises(target):
    with pytest.raises(TypeError, match="stream"):
        cuda.to_device(np.zeros(2), stream="fast")
    with pytest.raises(TypeError, match="stream"):
        cuda.device_array(2).copy_to_host(stream=3)
    with pytest.raises(TypeError, match="stream"):
        cuda.event().record(stream=object())


# --- events --------------------------------------------------------------------------

@on_targets("cpu")  # the cpu target's events time the host
def test_events_time_the_host_in_milliseconds(target):
    start, end = cuda.event(), cuda.event(timing=True)
    start.record()
    time.sleep(0.02)
    end.record(cuda.stream())
    end.synchronize()
    assert start.query() and end.query()
    elapsed = start.elapsed_time(end)
    assert 15.0 <= elapsed < 2000.0
    assert cuda.event_elapsed_time(start, end) == elapsed
    assert end.elapsed_time(start) == -elapsed


def test_event_wait_orders_nothing_that_is_not_done(target):
    event = cuda.event()
    event.record()
    event.wait(cuda.stream())
    assert event.query()


def test_elapsed_time_needs_recorded_timing_events(target):
    start, end = cuda.event(), cuda.event()
    with pytest.raises(RuntimeError, match="start event was never recorded"):
        start.elapsed_time(end)
    start.record()
    with pytest.raises(RuntimeError, match="end event was never recorded"):
        start.elapsed_time(end)
    untimed = cuda.event(timing=False)
    untimed.record()
    with pytest.raises(RuntimeError, match="timing=False"):
        start.elapsed_time(untimed)
    with pytest.raises(TypeError, match="cuda.event"):
        cuda.event_elapsed_time(start, 0)


def test_synchronize_returns(target):
    add_one[1, 32](np.zeros(4))
    assert cuda.synchronize() is None


@on_targets("cpu")  # the handle is no CUstream
def test_external_streams_wrap_a_handle(target):
    s = cuda.external_stream(0x1234)
    assert s.handle == 0x1234 and s.external and int(s) == 0x1234
    x = np.zeros(4, np.float32)
    d = cuda.to_device(x, stream=s)
    s.synchronize()
    assert np.array_equal(d.copy_to_host(stream=s), x)
    for bad in (0, -1, True, "0x1234"):
        with pytest.raises(ValueError, match="cuda.external_stream takes a CUstream handle"):
            cuda.external_stream(bad)


# --- every target: launches and copies on streams, ordered by events -------------------


def test_stream_launches_copies_and_event_timing(target):
    stream = cuda.stream()
    n = 1 << 20
    host = cuda.pinned_array(n, np.float32)
    host[:] = 1
    start, end = cuda.event(timing=True), cuda.event(timing=True)
    d = cuda.to_device(host, stream=stream)
    out = cuda.device_array(n, np.float32, stream=stream)
    start.record(stream)
    for _ in range(10):
        axpy[(n + 255) // 256, 256, stream](out, np.float32(2), d, d)
    end.record(stream)
    result = out.copy_to_host(stream=stream)
    stream.synchronize()
    assert end.query()
    assert cuda.event_elapsed_time(start, end) > 0
    target.assert_result("axpy", result, np.full(n, 3.0), launches=10)
    with stream.auto_synchronize():
        axpy[(n + 255) // 256, 256, stream](out, np.float32(1), d, d)
    target.assert_result("axpy", out.copy_to_host(), np.full(n, 2.0), launches=11)


def test_events_order_two_streams(target):
    first, second = cuda.stream(), cuda.stream()
    n = 1 << 16
    d = cuda.to_device(np.ones(n, np.float32), stream=first)
    out = cuda.device_array(n, np.float32)
    done = cuda.event()
    axpy[(n + 255) // 256, 256, first](out, np.float32(5), d, d)
    done.record(first)
    done.wait(second)
    axpy[(n + 255) // 256, 256, second](d, np.float32(1), out, d)
    second.synchronize()
    target.assert_result("axpy", d.copy_to_host(), np.full(n, 7.0), launches=2)


# --- the cuda target over the mock driver: streams reach the driver -------------------


def test_launch_on_a_stream_is_asynchronous(mock_script):
    r = mock_script("""
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


def test_numpy_arguments_still_copy_and_synchronise_on_a_stream(mock_script):
    r = mock_script("""
        s = cuda.stream()
        a = np.zeros(5, np.int32)
        fill_seven[1, 32, s](a, 0.0, np.zeros(1, np.float32))
        print(json.dumps(a.tolist()))
    """)
    assert r.result == [7] * 5
    calls = [c["call"] for c in r.calls]
    i = calls.index("cuLaunchKernel")
    assert "cuCtxSynchronize" in calls[i:] and "cuMemcpyDtoH_v2" in calls[i:]


def test_launch_configuration_stream_reaches_cuda_launch(mock_script):
    # kernel[grid, block, stream](...) with device arrays only: launched on
    # that CUstream, with no synchronisation after it.
    r = mock_script("""
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
    @cuda.jit
    def k(out):
        out[0] = 1

    with pytest.raises(TypeError, match="the stream of kernel 'k' must be a cuda.stream"):
        k[1, 1, "default"]


def test_external_stream_uses_the_handle_and_never_destroys_it(mock_script):
    r = mock_script("""
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
