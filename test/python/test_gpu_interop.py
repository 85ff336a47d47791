"""tidal with CuPy and PyTorch on a real GPU: __cuda_array_interface__ and
DLPack both ways, without copies, with the producers' streams respected.

Marked ``gpu`` (run with ``pytest -m gpu`` on a lent GPU machine); each test
also needs its library to import in the Python that runs tidal, and is
skipped, saying so, where it does not.
"""

import importlib

import numpy as np
import pytest

from tidal import _tidal, cuda

_USABLE, _COUNT, _REASON, _LIBRARY = _tidal.driver_status()


def _gpu_skip_reason():
    if not _USABLE:
        return f"no usable CUDA GPU: {_REASON}"
    if cuda.current_target() != "cuda":
        return f"kernels run on the {cuda.current_target()} target (TIDAL_TARGET)"
    return None


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

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(_gpu_skip_reason() is not None, reason=_gpu_skip_reason() or ""),
]


@cuda.jit
def add_index(x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] += i


N = 1 << 20


# --- CuPy -------------------------------------------------------------------------

@needs_cupy
def test_cupy_arrays_are_kernel_arguments():
    x = cp.zeros(N, dtype=cp.float32)
    add_index[N // 256, 256](x)
    np.testing.assert_array_equal(cp.asnumpy(x), np.arange(N, dtype=np.float32))


@needs_cupy
def test_kernel_waits_for_the_cupy_stream_in_the_interface():
    # CuPy fills x on its own stream; its interface names that stream (the
    # current one) and tidal synchronises it before the launch reads x.
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        x = cp.ones(N, dtype=cp.float64) * 3.0
        add_index[N // 256, 256](x)
    cuda.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(x), 3.0 + np.arange(N))


@needs_cupy
def test_cupy_views_tidal_arrays_through_the_interface():
    d = cuda.to_device(np.arange(1000, dtype=np.int32))
    view = cp.asarray(d)  # no copy
    view[:10] = -1
    assert d.copy_to_host()[:11].tolist() == [-1] * 10 + [10]


@needs_cupy
def test_dlpack_round_trips_with_cupy():
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

@needs_torch
def test_torch_tensors_are_kernel_arguments():
    t = torch.zeros(N, dtype=torch.float32, device="cuda")
    add_index[N // 256, 256](t)
    cuda.synchronize()
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(N, dtype=np.float32))


@needs_torch
def test_dlpack_round_trips_with_torch():
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


@needs_torch
def test_torch_keeps_a_tidal_array_alive():
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
