"""numba-cuda's names that programs use, under tidal: Numba's short type
aliases (tidal.f4, ...), cuda.types and the type names numba.cuda has
(cuda.float32), cuda.cudadrv.devicearray's DeviceNDArray for isinstance, in
signatures, casts inside kernels and checks outside them, on every target."""

import numpy as np
import pytest

import tidal
from tidal import cuda

ALIASES = {"b1": "bool", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
           "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
           "f2": "float16", "f4": "float32", "f8": "float64", "c8": "complex64",
           "c16": "complex128"}


def test_short_aliases_are_numbas():
    for alias, name in ALIASES.items():
        assert repr(getattr(tidal, alias)) == name
        assert getattr(tidal, alias) is getattr(tidal.types, alias)
    assert tidal.b1 is tidal.boolean and tidal.f8 is tidal.float64


def test_cuda_types_is_the_type_module():
    assert cuda.types.float32 is tidal.float32 and cuda.types.i4 is tidal.int32
    assert cuda.float32 is tidal.float32 and cuda.void is tidal.void
    assert cuda.int64[:, ::1] == tidal.int64[:, ::1]
    import tidal.cuda.types as module
    assert module is cuda.types


def test_cuda_types_does_not_shadow_cuda_names():
    # the star import gives type names only: cuda's own names stay its own
    for name in cuda.types.__all__:
        assert isinstance(getattr(cuda.types, name), tidal.types.NumberType)
    assert cuda.jit.__module__ == "tidal.cuda.dispatcher"


def test_aliases_in_signatures_and_casts(target):
    @cuda.jit(tidal.void(tidal.f8[::1], tidal.i4[::1], cuda.types.u1))
    def convert(out, values, offset):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = tidal.f4(values[i]) / tidal.f4(2) + cuda.float64(offset)

    values = np.arange(5, dtype=np.int32)
    out = np.zeros(5)
    convert[1, 8](out, values, 3)
    assert convert.signatures == ["(array(float64, 1d, C), array(int32, 1d, C), uint8)"]
    target.assert_result("convert", out, values / 2 + 3)


def test_devicearray_of_cudadrv(target):
    from tidal.cuda.cudadrv import devicearray
    from tidal.cuda.cudadrv.devicearray import DeviceNDArray
    a = cuda.to_device(np.arange(4))
    assert isinstance(a, DeviceNDArray) and DeviceNDArray is cuda.DeviceNDArray
    assert isinstance(cuda.device_array_like(a)[1:], devicearray.DeviceNDArray)
    assert not isinstance(np.arange(4), DeviceNDArray)
    same, created = devicearray.auto_device(a)
    assert same is a and created is False
    copy, created = devicearray.auto_device(np.arange(3.0))
    assert created and isinstance(copy, DeviceNDArray)
    assert copy.copy_to_host().tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="require an cuda ndarray object"):
        devicearray.require_cuda_ndarray(np.arange(3))
    from tidal.cuda.cudadrv.error import CudaSupportError
    assert CudaSupportError is cuda.CudaSupportError and issubclass(CudaSupportError, ImportError)


def test_gpus_as_a_context_manager(target):
    with cuda.gpus[0] as device:
        assert device.id == 0 and cuda.get_current_device().id == 0
        a = cuda.to_device(np.arange(3))
    assert a.copy_to_host().tolist() == [0, 1, 2]


def test_inspect_dictionaries_are_keyed_by_argument_types(target):
    numba_types = pytest.importorskip("numba.core.types")

    @cuda.jit
    def scale(out, x, factor):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * factor

    scale.compile((tidal.float32[::1], tidal.float32[::1], tidal.int64))
    scale.compile("void(float64[::1], float64[::1], float64)")
    single = ("array(float32, 1d, C)", "array(float32, 1d, C)", "int64")
    double = ("array(float64, 1d, C)", "array(float64, 1d, C)", "float64")
    for views in (scale.inspect_asm(), scale.inspect_llvm(), scale.inspect_markers()):
        assert set(views) == {single, double}, "keys: the tuples of argument types, as Numba's"
        assert views[(tidal.float32[::1], tidal.float32[::1], tidal.int64)] is views[single]
        assert views[(numba_types.float64[::1], numba_types.float64[::1],
                      numba_types.float64)] is views[double]
        assert views["(array(float32, 1d, C), array(float32, 1d, C), int64)"] is views[single]
        assert set(scale.overloads) == set(views)
    assert ".entry" in scale.inspect_asm()[single]


def test_specialize_given_type_objects(target):
    numba_types = pytest.importorskip("numba.core.types")

    @cuda.jit
    def add_one(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    by_tidal = add_one.specialize(tidal.float32[::1])
    by_numba = add_one.specialize(numba_types.float32[::1])
    by_value = add_one.specialize(np.zeros(2, dtype=np.float32))
    assert by_tidal is by_numba is by_value
    assert by_numba.signatures == ["(array(float32, 1d, C))"]
    a = np.zeros(4, dtype=np.float32)
    by_numba[1, 4](a)
    target.assert_result("add_one", a, np.ones(4, dtype=np.float32))
