"""Interop on the cuda target, against the mock CUDA driver (see
test_cuda_mock.py for how a script runs and what the mock logs). What it
shows: a device array's DLPack capsule describes its device memory (kDLCUDA,
device of the array, the device pointer) and from_dlpack takes it back without a copy;
__dlpack__(stream=...) makes the consumer's stream wait for the array's; a
__cuda_array_interface__ stream is synchronised (cuStreamSynchronize on that
handle) unless sync=False, also for kernel arguments; host memory is refused.
"""

import textwrap

from test_cuda_mock import MOCK, run  # noqa: F401  (run is a fixture)

import pytest

pytestmark = pytest.mark.skipif(not MOCK.is_file(), reason=f"no mock CUDA driver at {MOCK}")

# Reads the DLTensor of an unconsumed "dltensor" capsule (pyfrontend/DLPack.h).
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


def test_capsule_describes_the_device_memory(run):
    r = run(READ_CAPSULE + textwrap.dedent("""
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


def test_dlpack_device_is_the_arrays_device(run):
    r = run(READ_CAPSULE + textwrap.dedent("""
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


def test_imported_device_memory_keeps_its_producer_alive(run):
    r = run("""
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


def test_dlpack_stream_orders_the_consumer_after_the_array(run):
    r = run("""
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


def test_dlpack_stream_argument_is_checked(run):
    r = run("""
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


def test_interface_stream_is_synchronised_unless_sync_is_false(run):
    r = run(EXPORTER + textwrap.dedent("""
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


def test_kernel_argument_on_the_launch_stream_is_not_waited_for(run):
    r = run(EXPORTER + textwrap.dedent("""
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
    # (The mock logs the special handles 1 and 2 as stream 0.)
    assert calls == [("cuLaunchKernel", 0), ("cuLaunchKernel", s), ("cuStreamSynchronize", 0),
                     ("cuLaunchKernel", s)]


def test_interface_stream_zero_is_refused_on_the_cuda_target(run):
    r = run("""
        d = cuda.to_device(np.zeros(4, np.int32))
        desc = dict(d.__cuda_array_interface__, stream=0)
        try:
            cuda.from_cuda_array_interface(desc, owner=d)
        except ValueError as e:
            print(json.dumps(str(e)))
    """)
    assert "disallows as ambiguous" in r.result
    assert not r.named("cuStreamSynchronize")


def test_host_memory_is_refused_on_the_cuda_target(run):
    r = run("""
        try:
            cuda.from_dlpack(np.arange(3.0))
        except BufferError as e:
            print(json.dumps(str(e)))
    """)
    assert "the cuda target takes device memory" in r.result
    assert "cuda.to_device(np.from_dlpack(obj))" in r.result


def test_dlpack_arguments_are_device_pointers_ordered_on_the_launch_stream(run):
    r = run("""
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
