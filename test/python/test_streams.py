"""Streams, events, devices and contexts on the cpu target: streams order
work (launches are synchronous), events time the host, one device."""

import time

import numpy as np
import pytest

from tidal import cuda


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


# --- streams -------------------------------------------------------------------------

def test_work_on_a_stream_is_done_in_order():
    stream = cuda.stream()
    d = cuda.to_device(np.zeros(100), stream=stream)
    add_one[4, 32, stream](d)
    add_one[4, 32, stream, 0](d)
    out = d.copy_to_host(stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(out, 2.0)


def test_auto_synchronize_yields_the_stream():
    stream = cuda.stream()
    with stream.auto_synchronize() as s:
        assert s is stream
        d = cuda.to_device(np.arange(3.0), stream=s)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(3.0))


def test_default_streams_and_new_streams():
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


def test_stream_callbacks_run_once_work_is_done():
    stream = cuda.stream()
    seen = []
    stream.add_callback(lambda s, status, arg: seen.append((s, status, arg)), "x")
    assert seen == [(stream, 0, "x")]


def test_a_bad_stream_argument_raises():
    with pytest.raises(TypeError, match="stream"):
        cuda.to_device(np.zeros(2), stream="fast")
    with pytest.raises(TypeError, match="stream"):
        cuda.device_array(2).copy_to_host(stream=3)
    with pytest.raises(TypeError, match="stream"):
        cuda.event().record(stream=object())


# --- events --------------------------------------------------------------------------

def test_events_time_the_host_in_milliseconds():
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


def test_event_wait_orders_nothing_that_is_not_done():
    event = cuda.event()
    event.record()
    event.wait(cuda.stream())
    assert event.query()


def test_elapsed_time_needs_recorded_timing_events():
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


def test_synchronize_returns():
    add_one[1, 32](np.zeros(4))
    assert cuda.synchronize() is None


# --- devices and contexts ------------------------------------------------------------

def test_the_cpu_target_has_one_device():
    device = cuda.get_current_device()
    assert device.id == 0 and device.name == "tidal cpu target"
    assert device.compute_capability == (7, 5)
    from tidal import _tidal
    assert device.MULTIPROCESSOR_COUNT == _tidal.cpu_worker_count()
    assert device.MAX_THREADS_PER_BLOCK == 1024 and device.WARP_SIZE == 32
    assert device.MAX_BLOCK_DIM_Z == 64
    with pytest.raises(AttributeError, match="PCI_BUS_ID"):
        device.PCI_BUS_ID
    assert len(cuda.gpus) == 1 and cuda.gpus[0].name == device.name
    assert [g.id for g in cuda.gpus] == [0]
    assert cuda.select_device(0) == device
    assert cuda.list_devices() is cuda.gpus


def test_selecting_another_device_raises():
    with pytest.raises(ValueError, match="one device, id 0"):
        cuda.select_device(1)
    with pytest.raises(ValueError, match="one device, id 0"):
        cuda.gpus[1]


def test_context_memory_info_and_deallocations():
    context = cuda.current_context()
    free, total = context.get_memory_info()
    assert 0 < free <= total
    assert context.get_memory_info().total == total
    context.deallocations.clear()
    assert len(context.deallocations) == 0
    assert context.device == cuda.get_current_device()
    with cuda.defer_cleanup():
        pass


def test_close_drops_the_context_but_not_the_arrays():
    d = cuda.to_device(np.arange(3.0))
    with cuda.gpus[0]:
        before = cuda.current_context()
    cuda.close()
    assert cuda.gpus.current is None
    assert cuda.current_context() is not before
    assert cuda.gpus.current == cuda.get_current_device()
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(3.0))


def test_external_streams_wrap_a_handle():
    s = cuda.external_stream(0x1234)
    assert s.handle == 0x1234 and s.external and int(s) == 0x1234
    x = np.zeros(4, np.float32)
    d = cuda.to_device(x, stream=s)
    s.synchronize()
    assert np.array_equal(d.copy_to_host(stream=s), x)
    for bad in (0, -1, True, "0x1234"):
        with pytest.raises(ValueError, match="cuda.external_stream takes a CUstream handle"):
            cuda.external_stream(bad)
