"""Interop on the cuda target, against the mock CUDA driver (see
test_cuda_mock.py for how a script runs and what the mock logs). What it
shows: a __cuda_array_interface__ stream is synchronised (cuStreamSynchronize
on that handle) unless sync=False, also for kernel arguments.
"""

from test_cuda_mock import MOCK, run  # noqa: F401  (run is a fixture)

import pytest

pytestmark = pytest.mark.skipif(not MOCK.is_file(), reason=f"no mock CUDA driver at {MOCK}")


def test_interface_stream_is_synchronised_unless_sync_is_false(run):
    r = run("""
        class Exporter:
            def __init__(self, d, stream):
                self.d = d
                self.__cuda_array_interface__ = dict(d.__cuda_array_interface__, stream=stream)

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
    """)
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
