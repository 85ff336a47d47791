"""Numba's dispatcher API on tidal's kernels (python/tidal/cuda/dispatcher_api.py):
overloads, specialize()/specializations/specialized, definition(s),
inspect_sass's errors."""

import numpy as np
import pytest

import tidal
from tidal import cuda


@cuda.jit
def double(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a[i] * 2


@cuda.jit
def add_scalar(a, x):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] += x


def test_overloads_are_keyed_by_argument_types(target):
    @cuda.jit
    def twice(a, out):
        i = cuda.grid(1)
        if i < a.shape[0]:
            out[i] = a[i] * 2

    a = np.ones(8)
    out = np.zeros(8)
    twice[1, 8](a, out)
    twice[1, 8](cuda.to_device(a), out)  # a device array is C too: no second overload
    assert list(twice.overloads) == [("array(float64, 1d, C)", "array(float64, 1d, C)")]
    (compiled,) = twice.overloads.values()
    assert compiled.argument_types == ("array(float64, 1d, C)", "array(float64, 1d, C)")
    assert compiled.py_func is twice.py_func and compiled.name == "twice"
    assert ".entry" in compiled.inspect_asm() and ".entry" in compiled.inspect_asm((8, 0))
    assert "define" in compiled.inspect_llvm()
    assert list(twice.definitions) == list(twice.overloads)
    assert twice.definition.signature == compiled.signature
    target.assert_result("twice", out, a * 2, launches=2)


def test_definition_needs_exactly_one(target):
    @cuda.jit
    def fill(a, x):
        a[0] = x

    fill.compile("void(float32[::1], float32)")
    fill.compile("void(float64[::1], float64)")
    with pytest.raises(ValueError, match="kernel 'fill' has 2 compiled signatures, not one"):
        fill.definition


def test_specialize_returns_one_dispatcher_per_types(target):
    f_float32 = double.specialize(tidal.float32[::1], tidal.float32[::1])
    assert double.specialize(np.zeros(4, np.float32), np.zeros(4, np.float32)) is f_float32
    f_strided = double.specialize(tidal.float32[:], tidal.float32[:])
    assert f_strided is not f_float32
    assert len([k for k in double.specializations if k[0] == target.name]) == 2
    assert f_float32.specialized and not double.specialized
    assert f_float32.signatures == ["(array(float32, 1d, C), array(float32, 1d, C))"]
    assert f_strided.signatures == ["(array(float32, 1d, A), array(float32, 1d, A))"]
    # One signature: the views give it, not a dict.
    assert ".entry" in f_float32.inspect_asm()
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        f_float32.specialize(tidal.float32[::1], tidal.float32[::1])
    a = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    f_float32[1, 8](a, out)
    target.assert_result("double", out, a * 2)


def test_a_specialised_kernel_converts_scalars_and_compiles_nothing_else(target):
    specialised = add_scalar.specialize(tidal.float64[::1], tidal.float64)
    a = np.zeros(4)
    specialised[1, 4](a, 3)  # int -> float64, as a declared signature
    target.assert_result("add_scalar", a, np.full(4, 3.0))
    with pytest.raises(TypeError, match="No matching definition"):
        specialised[1, 4](np.zeros(4, np.int32), 1)
    assert len(specialised.signatures) == 1


def test_specialize_of_a_value_without_signature_syntax(target):
    @cuda.jit
    def first(a, out):
        out[0] = a[0]

    readonly = np.ones(4)
    readonly.flags.writeable = False
    specialised = first.specialize(readonly, np.zeros(1))
    assert specialised.signatures == ["(readonly array(float64, 1d, C), array(float64, 1d, C))"]


def test_inspect_sass_says_what_it_needs(target, monkeypatch):
    double.compile("void(float32[::1], float32[::1])")
    if target.name == "cpu":
        with pytest.raises(RuntimeError, match="inspect_sass\\(\\) disassembles the code for a "
                                               "GPU; kernels run on the cpu target here"):
            double.inspect_sass()
        return
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("CUDA_HOME", "/nonexistent")
    with pytest.raises(RuntimeError, match="needs ptxas and nvdisasm or cuobjdump of a CUDA "
                                           "toolkit"):
        double.inspect_sass("(array(float32, 1d, C), array(float32, 1d, C))")


class Doubler:
    """An extension: host arrays of float64 are passed doubled, and each
    launch records what it saw; after the launch, a retrieve function runs."""

    def __init__(self):
        self.seen = []
        self.retrieved = 0

    def prepare_args(self, ty, val, stream=0, retr=None):
        self.seen.append((ty, stream))
        retr.append(self.count_retrieve)
        if ty == "array(float64, 1d, C)" and isinstance(val, np.ndarray):
            return ty, val * 2
        return ty, val

    def count_retrieve(self):
        self.retrieved += 1


class NoneToZeros:
    """An extension that turns a value kernels can't take (None) into one."""

    def prepare_args(self, ty, val, stream=0, retr=None):
        if val is None:
            return "array(float64, 1d, C)", np.zeros(4)
        return ty, val


def test_extensions_prepare_each_argument(target):
    doubler = Doubler()

    @cuda.jit(extensions=[doubler])
    def copy(source, out):
        i = cuda.grid(1)
        if i < source.shape[0]:
            out[i] = source[i]

    assert copy.extensions == [doubler]
    out = cuda.to_device(np.zeros(4))
    copy[1, 4](np.arange(4.0), out)
    assert [ty for ty, _ in doubler.seen] == ["array(float64, 1d, C)"] * 2
    assert doubler.retrieved == 2  # one per argument, after the launch
    target.assert_result("copy", out.copy_to_host(), np.arange(4.0) * 2)


def test_extensions_appended_later_and_values_kernels_cannot_take(target):
    @cuda.jit
    def fill(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] = 5

    with pytest.raises(TypeError):
        fill[1, 4](None)
    fill.extensions.append(NoneToZeros())
    fill[1, 4](None)
    if target.mock:
        assert target.launched("fill") == 1
    stream = cuda.stream()
    recorder = Doubler()
    fill.extensions.append(recorder)
    fill[1, 4, stream](np.zeros(4, np.int32))
    assert recorder.seen == [("array(int32, 1d, C)", stream)]


@pytest.mark.parametrize("options, error, message", [
    ({"max_registers": "ABC"}, TypeError, r"max_registers must be an int, not 'ABC'"),
    ({"max_registers": [32]}, TypeError, r"max_registers must be an int, not \[32\]"),
    ({"max_registers": -1}, ValueError, r"max_registers must be 0 or more, not -1"),
    ({"extensions": "ABC"}, TypeError, r"extensions must be a list of objects with a "
                                       r"prepare_args method .*not 'ABC'"),
    ({"extensions": [1]}, TypeError, r"extensions must be a list .*not \[1\]"),
    ({"link": "ABC"}, ValueError, r"cannot link 'ABC': tidal links CUDA C\+\+"),
])
def test_bad_options_are_errors_at_the_decorator(target, options, error, message):
    # Found by the frontend fuzzer's kind of mutation (an option's value
    # changed): each was an error at the first launch, with no line of the
    # user's; now cuda.jit raises it, where the option is written.
    def fill(a):
        a[cuda.grid(1)] = 5

    with pytest.raises(error, match=message):
        cuda.jit(**options)(fill)
    registers = cuda.jit(max_registers=32)(fill)
    a = np.zeros(4, np.int32)
    registers[1, 4](a)
    target.assert_result("fill", a, np.full(4, 5, np.int32))


def test_bind_readies_every_compiled_signature(target):
    # Numba's bind(): the declared signatures are loaded on the current device
    # before any launch (the cuda target loads one module per signature, and
    # the launches load nothing more); on the cpu target they are compiled.
    @cuda.jit(["void(float32[::1], float32)", "void(float64[::1], float64)"])
    def shift(a, x):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] += x

    target.forget_driver_calls()
    assert shift.bind() is None
    if target.name == "cuda" and target.mock:
        assert len(target.driver_calls("cuModuleLoadDataEx")) == 2
    a = np.zeros(4, np.float32)
    b = np.zeros(4, np.float64)
    shift[1, 4](a, 1.5)
    shift[1, 4](b, 2.5)
    if target.name == "cuda" and target.mock:
        assert len(target.driver_calls("cuModuleLoadDataEx")) == 2
    target.assert_result("shift", a, [1.5] * 4, launches=2)
    if target.computes:
        np.testing.assert_array_equal(b, [2.5] * 4)


def test_type_annotation_gives_the_variables_types():
    # What Numba's tests read of overloads[...]._type_annotation: typemap.
    @cuda.jit("void(float32[:])")
    def scratch(a):
        local = cuda.local.array(10, dtype=np.int32)
        shared = cuda.shared.array((2, 3), dtype="float64")
        local[0] = 1
        shared[0, 0] = 2.0
        count = 3
        a[0] = local[0] + shared[0, 0] + count

    typemap = next(iter(scratch.overloads.values()))._type_annotation.typemap
    assert typemap["local"].dtype is tidal.int32 and typemap["local"].ndim == 1
    assert typemap["shared"].dtype is tidal.float64 and str(typemap["shared"]) == "float64[:, ::1]"
    assert typemap["count"] is tidal.int64
    assert str(typemap["a"]) == "float32[:]"


def test_a_kernel_declared_with_signatures_is_specialized(target):
    # Numba's test_no_double_specialize_sig_*: it has its types already.
    @cuda.jit("void(float32[::1])")
    def f(x):
        x[0] = 1

    assert f.specialized
    for types in ((tidal.float32[::1],), (tidal.int32[::1],)):
        with pytest.raises(RuntimeError, match="Dispatcher already specialized: kernel 'f' was "
                                               "declared with signatures void\\(float32"):
            f.specialize(*types)
    assert not double.specialized


def test_extensions_can_make_an_array_cuda_in(target):
    # Numba's test_array_in_from_config: an extension turns every argument
    # into cuda.In, so the kernel's writes are not copied back.
    class DefaultIn:
        def prepare_args(self, ty, val, **kwargs):
            return ty, cuda.In(val) if isinstance(val, np.ndarray) else val

    @cuda.jit(extensions=[DefaultIn()])
    def set_three(a):
        a[0] = 3

    host = np.zeros(1, np.int64)
    set_three[1, 1](host)
    assert host[0] == 0
    if target.mock:
        assert target.launched("set_three") == 1


@cuda.jit(device=True)
def add(x, y):
    return x + y


def test_compile_device_and_the_views_of_a_device_function():
    # Numba's device dispatcher: compile_device(types) -> a compile result
    # whose fndesc.mangled_name is the symbol the LLVM IR and PTX define.
    types = (tidal.int32, tidal.int32)
    result = add.compile_device(types)
    assert add.compile_device(types) is result and add.overloads[types] is result
    assert result.fndesc.mangled_name == "add_int32_int32"
    assert result.signature == "int64(int32, int32)"  # int32 + int32 is int64, as Numba's
    llvm = add.inspect_llvm(types)
    assert f"i32 @{result.fndesc.mangled_name}(ptr" in llvm and "define" in llvm
    ptx = add.inspect_asm(types)
    assert f".visible .func  (.param .b32 func_retval0) {result.fndesc.mangled_name}(" in ptx
    assert "add.s64" in ptx
    # Any signature form, and the declared one by default.
    assert "add_float32_float32" in add.inspect_asm("float32(float32, float32)")

    @cuda.jit("float64(float64, float64)", device=True)
    def declared(x, y):
        return x * y

    assert "mul.f64" in declared.inspect_asm()
    assert "declared_float64_float64" in declared.inspect_llvm()
    with pytest.raises(TypeError, match="device function 'add' has no declared signature"):
        add.inspect_llvm()


def test_a_device_function_is_not_a_kernel():
    with pytest.raises(RuntimeError, match="Cannot compile a device function as a kernel: "
                                           "'add' was made with cuda.jit\\(device=True\\)"):
        add[1, 1]
    with pytest.raises(RuntimeError, match="Cannot inspect SASS of a device function"):
        add.inspect_sass((tidal.int32, tidal.int32))


OFFSET = 1


@cuda.jit
def add_offset(out, x):
    out[0] = x + OFFSET


@cuda.jit("void(float64[::1], float64)")
def add_offset_declared(out, x):
    out[0] = x + OFFSET


def test_recompile_reads_the_globals_again(target):
    # Numba's recompile(): a kernel freezes its globals when it compiles;
    # recompile() compiles every signature so far again with their values now.
    global OFFSET
    OFFSET = 1
    out = np.zeros(1)
    try:
        for kernel in (add_offset, add_offset_declared):
            kernel.recompile()  # the module may have been compiled with another OFFSET
            kernel[1, 1](out, 2.0)
            signatures = list(kernel.signatures)
            if target.computes:
                assert out[0] == 3
            OFFSET = 10
            kernel[1, 1](out, 2.0)
            if target.computes:
                assert out[0] == 3  # still the frozen value
            kernel.recompile()
            assert list(kernel.signatures) == signatures  # compiled again, now
            kernel[1, 1](out, 2.0)
            if target.computes:
                assert out[0] == 12
            OFFSET = 1
    finally:
        OFFSET = 1
