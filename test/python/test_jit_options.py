"""numba-cuda's jit options that Numba 0.56 lacks: forceinline= (device
functions emitted alwaysinline), shared_memory_carveout= (set on each loaded
kernel on the cuda target, checked as numba-cuda checks it), lto= (accepted:
tidal always links LLVM IR before code generation), and get_const_mem_size(),
on every target (docs/language.md, "jit options")."""

import numpy as np
import pytest

from tidal import cuda, float64, void

CARVEOUT_ATTRIBUTE = 9  # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT


def _define(declared, forceinline):
    @cuda.jit(device=True, forceinline=forceinline)
    def twice_plus_one(x):
        return 2 * x + 1

    @cuda.jit(declared)
    def apply(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = twice_plus_one(i)

    return apply


def _device_definition(markers):
    """The `define` line of the device function in marker IR, and the text
    of the attribute groups it names."""
    line = next(l for l in markers.splitlines()
                if l.startswith("define") and "twice_plus_one" in l)
    groups = [part for part in line.split() if part.startswith("#")]
    attributes = [l for l in markers.splitlines()
                  if any(l.startswith(f"attributes {g} ") for g in groups)]
    return line, " ".join(attributes)


@pytest.mark.parametrize("forceinline", [True, False])
def test_forceinline_marks_the_device_function_alwaysinline(target, forceinline):
    apply = _define("void(int64[::1])", forceinline)
    out = np.zeros(8, dtype=np.int64)
    apply[1, 8](out)
    target.assert_result("apply", out, 2 * np.arange(8) + 1)
    markers = apply.inspect_markers("void(int64[::1])")
    _, attributes = _device_definition(markers)
    assert ("alwaysinline" in attributes) == forceinline


def test_option_types_are_checked():
    with pytest.raises(TypeError, match="forceinline must be True or False, not 'yes'"):
        cuda.jit(device=True, forceinline="yes")
    with pytest.raises(TypeError, match="lto must be True or False, not 1"):
        cuda.jit(lto=1)
    with pytest.raises(ValueError, match=r"Invalid carveout value: MaxL2\. Must be -1 to 100 "
                                         r"or one of \['default', 'maxl1', 'maxshared'\]"):
        cuda.jit(shared_memory_carveout="MaxL2")
    with pytest.raises(ValueError, match="Carveout must be between -1 and 100"):
        cuda.jit(shared_memory_carveout=101)
    with pytest.raises(TypeError, match="shared_memory_carveout must be str or int, got float"):
        cuda.jit(shared_memory_carveout=0.5)


@pytest.mark.parametrize("carveout, percent", [("MaxShared", 100), ("maxl1", 0),
                                               ("default", -1), (25, 25)])
def test_shared_memory_carveout_is_set_on_the_loaded_kernel(target, carveout, percent):
    @cuda.jit(void(float64[::1]), shared_memory_carveout=carveout)
    def reverse(a):
        tile = cuda.shared.array(32, float64)
        i = cuda.threadIdx.x
        tile[i] = a[i]
        cuda.syncthreads()
        a[i] = tile[31 - i]

    a = np.arange(32.0)
    reverse[1, 32](a)
    reverse[1, 32](a)  # loaded once: set once
    target.assert_result("reverse", a, np.arange(32.0), launches=2)
    if target.mock:
        set_calls = [c for c in target.driver_calls("cuFuncSetAttribute")
                     if c["attribute"] == CARVEOUT_ATTRIBUTE]
        assert [c["value"] for c in set_calls] == [percent]


def test_no_carveout_sets_nothing(target):
    @cuda.jit(void(float64[::1]))
    def touch(a):
        a[0] = 1.0

    touch[1, 1](np.zeros(1))
    if target.mock:
        assert not [c for c in target.driver_calls("cuFuncSetAttribute")
                    if c["attribute"] == CARVEOUT_ATTRIBUTE]


@pytest.mark.parametrize("lto", [True, False])
def test_lto_is_accepted(target, lto):
    apply = cuda.jit("void(int64[::1])", lto=lto)(_define("void(int64[::1])", False).py_func)
    out = np.zeros(4, dtype=np.int64)
    apply[1, 4](out)
    target.assert_result("apply", out, 2 * np.arange(4) + 1)


TABLE = np.arange(100, dtype=np.float64)


def test_get_const_mem_size(target, monkeypatch):
    @cuda.jit(void(float64[::1]))
    def lookup(out):
        table = cuda.const.array_like(TABLE)
        i = cuda.grid(1)
        if i < out.size:
            out[i] = table[i]

    sig = lookup.signatures[0]
    if target.name == "cpu":
        with pytest.raises(RuntimeError, match=r"get_const_mem_size\(\) .* needs a GPU"):
            lookup.get_const_mem_size(sig)
        return
    if target.mock:  # the mock reports what it is told
        monkeypatch.setenv("TIDAL_MOCK_CUDA_FUNC_CONST_BYTES", "800")
        assert lookup.get_const_mem_size(sig) == 800
        assert dict(lookup.get_const_mem_size()) == {("array(float64, 1d, C)",): 800}
        assert lookup.get_const_mem_size()[sig] == 800
        assert lookup.overloads[(float64[::1],)].const_mem_size == 800
    else:
        assert lookup.get_const_mem_size(sig) >= TABLE.nbytes
