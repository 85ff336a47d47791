"""Interop on the cpu target: the CUDA Array Interface's stream rules
(version 3) and the errors for what cannot be exchanged. The cuda target's
side runs on the mock driver in test_cuda_mock_interop.py."""

import numpy as np
import pytest

from tidal import cuda


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
