"""cuda.runtime.get_version() (python/tidal/cuda/runtime.py): the CUDA
version as Numba's cuda.runtime gives it, (major, minor). The CUDA runtime
library's (libcudart's cudaRuntimeGetVersion), else the driver's
(cuDriverGetVersion: the mock driver answers 13000), else a RuntimeError
that says neither was found. The same on every target: the version belongs
to the machine, not to where kernels run."""

import ctypes
import os

import pytest

from targets import CUDA_IS_MOCK
from tidal import cuda
from tidal.cuda import runtime as runtime_module
from tidal.cuda._native import native


def libcudart_version():
    """cudaRuntimeGetVersion of the first libcudart tidal would find, asked
    here through ctypes (None without one)."""
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    for home in filter(None, homes):
        path = os.path.join(home, "lib64", "libcudart.so")
        if os.path.exists(path):
            number = ctypes.c_int()
            ctypes.CDLL(path).cudaRuntimeGetVersion(ctypes.byref(number))
            return number.value // 1000, number.value % 1000 // 10
    return None


def test_get_version_is_a_major_minor_tuple(target):
    version = cuda.runtime.get_version()
    assert isinstance(version, tuple) and len(version) == 2
    assert all(isinstance(part, int) for part in version)
    assert version == runtime_module.get_version() == runtime_module.runtime.get_version()
    expected = libcudart_version()
    if expected is not None:
        assert version == expected
        assert "runtime library" in runtime_module.runtime.version_source
    else:
        number = native.cuda_driver_version()
        assert version == (number // 1000, number % 1000 // 10)
        assert "driver" in runtime_module.runtime.version_source
    assert cuda.is_supported_version() == (version >= (11, 8))


def test_without_a_runtime_library_the_driver_answers(target, monkeypatch):
    monkeypatch.setattr(runtime_module, "_runtime_library_version", lambda: None)
    fresh = runtime_module.Runtime()
    number = native.cuda_driver_version()
    if number is None:
        pytest.skip("no usable CUDA driver (the mock driver was not built)")
    assert fresh.get_version() == (number // 1000, number % 1000 // 10)
    assert "cuDriverGetVersion" in fresh.version_source
    if CUDA_IS_MOCK:
        assert fresh.get_version() == (13, 0)  # the mock driver's 13000


def test_neither_runtime_nor_driver_raises(target, monkeypatch):
    monkeypatch.setattr(runtime_module, "_runtime_library_version", lambda: None)
    monkeypatch.setattr(runtime_module.native, "cuda_driver_version", lambda: None,
                        raising=False)
    with pytest.raises(RuntimeError, match="found neither a CUDA runtime library"):
        runtime_module.Runtime().get_version()


def test_a_cuda_home_without_libcudart_is_passed_over(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))  # no lib64/libcudart.so there
    monkeypatch.delenv("CUDA_PATH", raising=False)
    found = runtime_module._runtime_library_version()
    # /usr/local/cuda or the loader's path may still have one; never the empty home.
    assert found is None or found > 0
