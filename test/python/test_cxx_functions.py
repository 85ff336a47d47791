"""Python kernels calling CUDA C++ device functions (python/tidal/cuda/
foreign.py, pyfrontend/ForeignFunctions.cpp, python/src/ForeignLinking.cpp)
on every target: Numba's cuda.declare_device with link= (Numba's ABI and
abi='c'; .cu, .ll and .bc files), tidal's cuda.include (overloads,
namespaces, pointers), .ptx files linked by the CUDA driver's JIT linker
on the cuda target, and the errors (a C++ syntax error, a missing
function, a signature that disagrees with the definition, a function tidal
cannot bind, PTX on the cpu target and PTX the driver rejects, a
construct the cpu target cannot run)."""

import os
import shutil
import subprocess

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import CompileError, TypingError

FUNCTIONS = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "cuda_cpp",
                         "functions.cu")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_declare_device_with_numbas_abi(target, rng):
    mul = cuda.declare_device("mul_f32", "float32(float32, float32)", link=[FUNCTIONS])

    @cuda.jit
    def multiply(x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = mul(x[i], y[i])

    x = rng.random(300, dtype=np.float32)
    y = rng.random(300, dtype=np.float32)
    out = np.zeros_like(x)
    multiply[3, 128](x, y, out)
    target.assert_result("multiply", out, x * y)


def test_declare_device_with_the_c_abi_and_the_kernels_link(target):
    axpy = cuda.declare_device("axpy", "float32(float32, float32, float32)", abi="c")

    @cuda.jit(link=[FUNCTIONS])
    def affine(x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = axpy(3.0, x[i], 1)  # an int argument converts to float

    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    affine[1, 64](x, out)
    target.assert_result("affine", out, 3 * x + 1)


def test_declare_device_object_and_signature_forms():
    f = cuda.declare_device("f1", "int32(float32[:])")
    assert f.name == "f1"
    assert f.sig.args == (cuda_types().float32[:],)
    assert f.sig.return_type is cuda_types().int32
    with pytest.raises(TypeError, match="Return type"):
        cuda.declare_device("f1", "(float32[:],)")
    with pytest.raises(TypeError, match="abi='c'"):
        cuda.declare_device("f1", "void(float32)")
    with pytest.raises(FileNotFoundError, match="nothing.cu"):
        cuda.declare_device("f1", "int32(int32)", link=["nothing.cu"])
    with pytest.raises(ValueError, match="tidal links CUDA C\\+\\+"):
        cuda.declare_device("f1", "int32(int32)", link=[__file__])
    with pytest.raises(TypeError, match="only be called inside a kernel"):
        f(1)


def cuda_types():
    import tidal
    return tidal


def test_include_calls_overloads_namespaces_and_pointers(target, rng):
    lib = cuda.include(FUNCTIONS)

    @cuda.jit
    def geometry(x, y, xd, yd, norms, norms64, dots):
        i = cuda.grid(1)
        if i < norms.size:
            norms[i] = lib.geometry.norm(x[i], y[i])
            norms64[i] = lib.geometry.norm(xd[i], yd[i])
        if i == 0:
            dots[0] = lib.geometry.dot(x, y, x.size)
            dots[1] = lib.geometry.dot(x[2:], y[2:], 3)  # from an element on

    n = 100
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    norms = np.zeros(n, dtype=np.float32)
    norms64 = np.zeros(n, dtype=np.float64)
    dots = np.zeros(2, dtype=np.float32)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    geometry[1, n](x, y, xd, yd, norms, norms64, dots)
    if not target.ran("geometry"):
        return
    np.testing.assert_allclose(norms, np.hypot(x, y), rtol=1e-6)
    # The double overload ran in double precision.
    np.testing.assert_allclose(norms64, np.hypot(xd, yd), rtol=1e-15)
    np.testing.assert_allclose(dots, [np.dot(xd, yd), np.dot(xd[2:5], yd[2:5])], rtol=1e-5)


def test_include_a_code_string_with_a_void_function(target):
    lib = cuda.include(code=r'''
        __device__ void fill(int *values, int count, int value) {
          for (int i = 0; i < count; ++i) values[i] = value;
        }
        __device__ bool is_even(long long x) { return x % 2 == 0; }''')

    @cuda.jit
    def fill_and_test(values, flags):
        i = cuda.grid(1)
        if i == 0:
            lib.fill(values, values.size, 7)
        if i < flags.size:
            flags[i] = lib.is_even(i)

    values = np.zeros(10, dtype=np.int32)
    flags = np.zeros(10, dtype=np.bool_)
    fill_and_test[1, 10](values, flags)
    target.assert_result("fill_and_test", values, np.full(10, 7))
    target.assert_result("fill_and_test", flags, np.arange(10) % 2 == 0)


def test_include_lists_and_describes(tmp_path):
    lib = cuda.include(FUNCTIONS)
    assert "float geometry::norm(float x, float y)" in lib.geometry.norm.declarations
    with pytest.raises(AttributeError, match="no __device__ function or namespace 'nothing'"):
        lib.nothing
    with pytest.raises(TypeError, match="only be called inside a kernel"):
        lib.axpy(1.0, 2.0, 3.0)


NVVM_TWICE = r'''
target triple = "nvptx64-nvidia-cuda"
define i32 @twice(ptr %result, i32 %x) {
  %y = shl i32 %x, 1
  store i32 %y, ptr %result
  ret i32 0
}
'''


# A loop whose unroll count LLVM cannot honour (its call may not be
# duplicated): LLVM's "loop not unrolled" warning is not printed; tidal's
# pipelines drop those warnings, whose hints are tidal's own in kernels.
NVVM_SUM_TO = r"""
target triple = "nvptx64-nvidia-cuda"
define internal i32 @step(i32 %i) noinline noduplicate {
  %j = add i32 %i, 1
  ret i32 %j
}
define i32 @sum_to(ptr %result, i32 %n) {
entry:
  %any = icmp sgt i32 %n, 0
  br i1 %any, label %loop, label %done
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i32 [ 0, %entry ], [ %s1, %loop ]
  %i1 = call i32 @step(i32 %i)
  %s1 = add i32 %s, %i1
  %more = icmp slt i32 %i1, %n
  br i1 %more, label %loop, label %done, !llvm.loop !0
done:
  %r = phi i32 [ 0, %entry ], [ %s1, %loop ]
  store i32 %r, ptr %result
  ret i32 0
}
!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.unroll.count", i32 4}
"""


def test_a_loop_hint_llvm_cannot_honour_prints_no_warning(target, tmp_path, capfd):
    sum_to = cuda.declare_device("sum_to", "int32(int32)",
                                 link=[write(tmp_path, "sum_to.ll", NVVM_SUM_TO)])

    @cuda.jit
    def triangular(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = sum_to(i)

    out = np.zeros(16, dtype=np.int32)
    triangular[1, 16](out)
    target.assert_result("triangular", out, np.arange(16) * (np.arange(16) + 1) // 2)
    assert "loop not unrolled" not in capfd.readouterr().err


def test_declare_device_links_llvm_ir_and_bitcode(target, tmp_path):
    ll = write(tmp_path, "twice.ll", NVVM_TWICE)
    files = [ll]
    assembler = shutil.which("llvm-as-19") or shutil.which("llvm-as")
    if assembler:
        bc = str(tmp_path / "twice.bc")
        subprocess.run([assembler, ll, "-o", bc], check=True)
        files.append(bc)
    for file in files:
        target.forget_driver_calls()
        twice = cuda.declare_device("twice", "int32(int32)", link=[file])

        @cuda.jit
        def doubled(out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = twice(i)

        out = np.zeros(16, dtype=np.int32)
        doubled[1, 16](out)
        target.assert_result("doubled", out, 2 * np.arange(16))


# --- errors ------------------------------------------------------------------------------

def test_a_cxx_syntax_error_is_located_in_the_cu_file(target, tmp_path):
    broken = write(tmp_path, "broken.cu",
                   'extern "C" __device__ float f(float x) {\n  return x +;\n}\n')
    f = cuda.declare_device("f", "float32(float32)", abi="c", link=[broken])

    @cuda.jit
    def calls_broken(out):
        out[0] = f(1.0)

    with pytest.raises(CompileError) as error:
        calls_broken[1, 1](np.zeros(1, dtype=np.float32))
    assert f"{broken}:2:" in str(error.value)
    assert "expected expression" in str(error.value)
    with pytest.raises(CompileError, match="broken.cu:2:"):
        cuda.include(broken)


def test_a_missing_function_is_named_at_the_python_call(target):
    missing = cuda.declare_device("not_there", "float32(float32)", link=[FUNCTIONS])

    @cuda.jit
    def calls_missing(out):
        out[0] = missing(1.0)

    with pytest.raises(CompileError) as error:
        calls_missing[1, 1](np.zeros(1, dtype=np.float32))
    message = str(error.value)
    assert "'not_there'" in message and "not defined by the linked files" in message
    assert "test_cxx_functions.py" in message and "missing(1.0)" in message


def test_a_declaration_that_disagrees_with_the_definition_shows_both(target):
    wrong = cuda.declare_device("mul_f32", "float64(float64, float64)", link=[FUNCTIONS])

    @cuda.jit
    def calls_wrong(out):
        out[0] = wrong(1.0, 2.0)

    with pytest.raises(CompileError) as error:
        calls_wrong[1, 1](np.zeros(1))
    message = str(error.value)
    assert "declare_device('mul_f32', 'float64(float64, float64)')" in message
    assert "int32 mul_f32(float64*, float64, float64)" in message
    assert "int mul_f32(float *result, float x, float y)" in message


def test_an_unbindable_function_says_why_at_the_call(target):
    lib = cuda.include(FUNCTIONS)

    @cuda.jit
    def calls_reference(out):
        lib.swap_ints(out[0], out[1])

    with pytest.raises(TypingError) as error:
        calls_reference[1, 1](np.zeros(2, dtype=np.int32))
    message = str(error.value)
    assert "void swap_ints(int &a, int &b)" in message
    assert "'int &' is a reference" in message
    assert "lib.swap_ints(out[0], out[1])" in message


def test_no_overload_takes_the_arguments(target):
    lib = cuda.include(FUNCTIONS)

    @cuda.jit
    def calls_norm(out):
        out[0] = lib.geometry.norm(out, 1.0)

    with pytest.raises(TypingError, match="no 'functions.cu.geometry.norm' takes arguments"):
        calls_norm[1, 1](np.zeros(1, dtype=np.float32))


# --- PTX: linked by the CUDA driver's JIT linker on the cuda target ----------------------

# Numba's ABI in PTX (as llc-19 -mcpu=sm_75 prints NVVM_TWICE).
TWICE_PTX = """//
// twice(result, x): *result = 2 * x
//
.version 6.3
.target sm_75
.address_size 64

.visible .func  (.param .b32 func_retval0) twice(
	.param .b64 twice_param_0,
	.param .b32 twice_param_1
)
{
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<2>;

	ld.param.u64 	%rd1, [twice_param_0];
	ld.param.u32 	%r1, [twice_param_1];
	shl.b32 	%r2, %r1, 1;
	st.u32 	[%rd1], %r2;
	mov.b32 	%r3, 0;
	st.param.b32 	[func_retval0+0], %r3;
	ret;
}
"""


def ptx_kernel(twice):
    @cuda.jit
    def doubled_by_ptx(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = twice(i)
    return doubled_by_ptx


def raises_on_the_cpu_target(target, launch, ptx):
    """On the cpu target a .ptx link is an error at the call that needs it,
    saying what to link instead; True when it was that case."""
    if target.name != "cpu":
        return False
    with pytest.raises(CompileError) as error:
        launch()
    message = str(error.value)
    assert f"cannot link {ptx} on the cpu target: PTX is GPU machine code" in message
    assert "link the CUDA C++ source (.cu)" in message and "LLVM IR (.ll, .bc)" in message
    assert "test_cxx_functions.py" in message and "twice(i)" in message
    return True


def test_declare_device_links_ptx_through_the_drivers_linker(target, tmp_path):
    ptx = write(tmp_path, "twice.ptx", TWICE_PTX)
    kernel = ptx_kernel(cuda.declare_device("twice", "int32(int32)", link=[ptx]))
    out = np.zeros(16, dtype=np.int32)
    if raises_on_the_cpu_target(target, lambda: kernel[1, 16](out), ptx):
        return
    kernel[1, 16](out)
    target.assert_result("doubled_by_ptx", out, 2 * np.arange(16))
    if target.mock:
        # The kernel's PTX and the file, linked, then the image loaded.
        assert [c["name"] for c in target.driver_calls("cuLinkAddData_v2")] == [
            "the PTX of kernel 'doubled_by_ptx'", ptx]
        (complete,) = target.driver_calls("cuLinkComplete")
        assert complete["result"] == 0
        assert [c["linked"] for c in target.driver_calls("cuModuleLoadData")] == [True]
        assert len(target.driver_calls("cuLinkDestroy")) == 1
        assert not target.driver_calls("cuModuleLoadDataEx")


def test_the_kernels_link_takes_ptx_with_the_c_abi(target, tmp_path):
    ptx = write(tmp_path, "add_one.ptx", """.version 7.0
.target sm_75
.address_size 64

.visible .func (.param .b32 func_retval0) add_one(.param .b32 add_one_param_0)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [add_one_param_0];
	add.s32 %r2, %r1, 1;
	st.param.b32 [func_retval0+0], %r2;
	ret;
}
""")
    add_one = cuda.declare_device("add_one", "int32(int32)", abi="c")

    @cuda.jit(link=[ptx])
    def plus_one(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = add_one(i)

    out = np.zeros(8, dtype=np.int32)
    if target.name == "cpu":
        with pytest.raises(CompileError, match="cannot link .*add_one.ptx on the cpu target"):
            plus_one[1, 8](out)
        return
    plus_one[1, 8](out)
    target.assert_result("plus_one", out, np.arange(8) + 1)


NUMBA_JITLINK = "/usr/lib/python3/dist-packages/numba/cuda/tests/cudadrv/data/jitlink.ptx"


@pytest.mark.skipif(not os.path.exists(NUMBA_JITLINK),
                    reason="python3-numba's jitlink.ptx is absent")
def test_numbas_jitlink_ptx_links_unchanged(target):
    # Numba's test_linker.py: 'bar' of jitlink.ptx (NVVM of CUDA 6, sm_20).
    bar = cuda.declare_device("bar", "int32(int32)")

    def compile_foo():  # eagerly: the signature compiles it
        @cuda.jit("void(int32[:], int32[:])", link=[NUMBA_JITLINK])
        def foo(x, y):
            i = cuda.grid(1)
            x[i] += bar(y[i])
        return foo

    if target.name == "cpu":
        with pytest.raises(CompileError, match="jitlink.ptx on the cpu target"):
            compile_foo()
        return
    foo = compile_foo()
    a = np.array([123], dtype=np.int32)
    b = np.array([321], dtype=np.int32)
    foo[1, 1](a, b)
    target.assert_result("foo", a, [123 + 2 * 321])


def test_a_symbol_the_ptx_does_not_define_is_named_at_the_call(target, tmp_path):
    ptx = write(tmp_path, "thrice.ptx", TWICE_PTX.replace("twice", "thrice"))
    kernel = ptx_kernel(cuda.declare_device("twice", "int32(int32)", link=[ptx]))
    out = np.zeros(4, dtype=np.int32)
    if raises_on_the_cpu_target(target, lambda: kernel[1, 4](out), ptx):
        return
    with pytest.raises(CompileError) as error:
        kernel[1, 4](out)
    message = str(error.value)
    assert f"symbol 'twice') is not defined by the linked files ({ptx})" in message
    assert "test_cxx_functions.py" in message and "twice(i)" in message


def test_a_ptx_function_that_is_not_visible_says_so(target, tmp_path):
    ptx = write(tmp_path, "hidden.ptx", TWICE_PTX.replace(".visible .func", ".func"))
    kernel = ptx_kernel(cuda.declare_device("twice", "int32(int32)", link=[ptx]))
    out = np.zeros(4, dtype=np.int32)
    if raises_on_the_cpu_target(target, lambda: kernel[1, 4](out), ptx):
        return
    with pytest.raises(CompileError, match="hidden.ptx has .func \\(.param .b32 func_retval0\\) "
                                           "twice\\(.*which is not .visible"):
        kernel[1, 4](out)


def test_a_declaration_the_ptx_disagrees_with_shows_both(target, tmp_path):
    ptx = write(tmp_path, "twice.ptx", TWICE_PTX)
    kernel = ptx_kernel(cuda.declare_device("twice", "int32(int32)", link=[ptx], abi="c"))
    out = np.zeros(4, dtype=np.int32)
    if raises_on_the_cpu_target(target, lambda: kernel[1, 4](out), ptx):
        return
    with pytest.raises(CompileError) as error:
        kernel[1, 4](out)
    message = str(error.value)
    assert "declare_device('twice', 'int32(int32)', abi='c')" in message
    assert "which calls int32 twice(int32): 1 parameter and a result" in message
    assert (f"{ptx} defines .visible .func (.param .b32 func_retval0) twice(.param .b64 "
            f"twice_param_0, .param .b32 twice_param_1) (2 parameters and a result)") in message


def test_a_file_that_is_not_ptx_is_located(target, tmp_path):
    ptx = write(tmp_path, "notes.ptx", "these are not instructions\n")
    kernel = ptx_kernel(cuda.declare_device("twice", "int32(int32)", link=[ptx]))
    out = np.zeros(4, dtype=np.int32)
    if raises_on_the_cpu_target(target, lambda: kernel[1, 4](out), ptx):
        return
    with pytest.raises(CompileError) as error:
        kernel[1, 4](out)
    assert error.value.file == ptx and error.value.line == 1
    assert "it is not PTX (no .version directive" in str(error.value)


def test_an_undefined_reference_in_the_ptx_is_located_by_the_linker(target, tmp_path):
    # twice calls helper, which nothing defines: tidal cannot see it (it is
    # not the kernel's call); the driver's linker reports it (llc-19's PTX;
    # ptxas -c and nvlink of CUDA 13 say "Undefined reference to 'helper'").
    calls_helper = TWICE_PTX.replace(
        ".visible .func  (.param .b32 func_retval0) twice(",
        ".extern .func (.param .b32 func_retval0) helper(.param .b32 helper_param_0);\n\n"
        ".visible .func  (.param .b32 func_retval0) twice(").replace(
        "\tshl.b32 \t%r2, %r1, 1;",
        "\t{\n\t.param .b32 param0;\n\tst.param.b32 \t[param0+0], %r1;\n"
        "\t.param .b32 retval0;\n\tcall.uni (retval0), helper, (param0);\n"
        "\tld.param.b32 \t%r2, [retval0+0];\n\t}\n\tshl.b32 \t%r2, %r2, 1;")
    ptx = write(tmp_path, "calls_helper.ptx", calls_helper)
    kernel = ptx_kernel(cuda.declare_device("twice", "int32(int32)", link=[ptx]))
    out = np.zeros(4, dtype=np.int32)
    if raises_on_the_cpu_target(target, lambda: kernel[1, 4](out), ptx):
        return
    with pytest.raises(CompileError) as error:
        kernel[1, 4](out)
    message = str(error.value)
    assert "cuLinkComplete failed: CUDA_ERROR_NOT_FOUND" in message
    assert "Undefined reference to 'helper'" in message
    assert error.value.file == ptx
    assert error.value.line == calls_helper.splitlines().index(
        ".extern .func (.param .b32 func_retval0) helper(.param .b32 helper_param_0);") + 1


def test_ptx_the_jit_rejects_names_the_file(target, tmp_path, monkeypatch):
    bad = TWICE_PTX.replace("\tshl.b32", "\tnot_an_instruction.b32 \t%r2;\n\tshl.b32")
    ptx = write(tmp_path, "bad.ptx", bad)
    # The mock driver rejects PTX that holds the marker, as ptxas rejects
    # the instruction.
    monkeypatch.setenv("TIDAL_MOCK_CUDA_JIT_FAIL_MARKER", "not_an_instruction")
    kernel = ptx_kernel(cuda.declare_device("twice", "int32(int32)", link=[ptx]))
    out = np.zeros(4, dtype=np.int32)
    if raises_on_the_cpu_target(target, lambda: kernel[1, 4](out), ptx):
        return
    with pytest.raises(CompileError) as error:
        kernel[1, 4](out)
    message = str(error.value)
    assert "cuLinkAddData failed: CUDA_ERROR_INVALID_PTX" in message
    assert f"the JIT rejected {ptx}" in message
    assert error.value.file == ptx


def cuda_target(name):
    from tidal.cuda.target import use_target
    return use_target(name)


def test_a_construct_the_cpu_target_cannot_run_is_named(target):
    lib = cuda.include(code=r'''
        __device__ int fenced(int x) {
          asm volatile("membar.gl;" ::: "memory");
          return x;
        }''')

    @cuda.jit
    def calls_asm(out):
        out[0] = lib.fenced(1)

    with pytest.raises(CompileError, match="inline PTX assembly 'membar.gl;'.*cannot run on "
                                           "the cpu target"):
        calls_asm[1, 1](np.zeros(1, dtype=np.int32))


NUMBA_FFI = "/usr/lib/python3/dist-packages/numba/cuda/tests/doc_examples/ffi/functions.cu"


@pytest.mark.skipif(not os.path.exists(NUMBA_FFI), reason="python3-numba's ffi example is absent")
def test_numbas_ffi_example_runs_unchanged(target):
    # Numba's documentation example (doc_examples/test_ffi.py), which Numba
    # runs through NVRTC on a GPU only.
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")

    @cuda.jit(link=[NUMBA_FFI])
    def multiply_vectors(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = mul(x[i], y[i])

    x = np.random.default_rng(1).random(32).astype(np.float32)
    y = np.random.default_rng(2).random(32).astype(np.float32)
    r = np.zeros_like(x)
    multiply_vectors[1, 32](r, x, y)
    target.assert_result("multiply_vectors", r, x * y)


def test_the_disk_cache_refuses_linked_files_as_numba_does():
    with pytest.raises(RuntimeError, match="Cannot pickle CUDACodeLibrary with linking files"):
        @cuda.jit(cache=True, link=[FUNCTIONS])
        def cached(out):
            pass


PARTICLE = np.dtype([("x", np.float32), ("y", np.float32), ("id", np.int32)])


def test_struct_pointers_take_records_of_the_same_layout(target):
    lib = cuda.include(FUNCTIONS)

    @cuda.jit
    def particles_kernel(particles, largest):
        i = cuda.grid(1)
        if i < particles.size:
            lib.move(particles[i], 1.5, -2.0)  # a record: its address
        if i == 0:
            largest[0] = lib.largest_id(particles, particles.size)  # a record array

    particles = np.zeros(8, dtype=PARTICLE)
    particles["x"] = np.arange(8)
    particles["id"] = [3, 9, 4, 1, 7, 2, 8, 5]
    largest = np.zeros(1, dtype=np.int32)
    particles_kernel[1, 8](particles, largest)
    target.assert_result("particles_kernel", particles["x"], np.arange(8) + 1.5)
    target.assert_result("particles_kernel", particles["y"], np.full(8, -2.0))
    target.assert_result("particles_kernel", largest, [9])


def test_a_record_of_another_layout_is_refused(target):
    lib = cuda.include(FUNCTIONS)

    @cuda.jit
    def wrong_record(particles):
        lib.move(particles[0], 1.0, 1.0)

    other = np.zeros(2, dtype=[("x", np.float64), ("y", np.float64)])
    with pytest.raises(TypingError, match="struct Particle \\{x: float32 at 0, y: float32 at 4, "
                                          "id: int32 at 8\\} \\(12 bytes\\)"):
        wrong_record[1, 1](other)


def test_device_functions_call_cxx_and_void_c_abi_declarations(target):
    # tidal-bind's line for clamp, as printed: the mangled symbol, abi='c'.
    clamp = cuda.declare_device(
        "_Z5clampPfiff", "void(CPointer(float32), int32, float32, float32)", abi="c",
        link=[FUNCTIONS])
    lib = cuda.include(FUNCTIONS)

    @cuda.jit(device=True)
    def scaled_norm(x, y):
        return 2 * lib.geometry.norm(x, y)

    @cuda.jit
    def uses_device_function(x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = scaled_norm(x[i], y[i])
        cuda.syncthreads()
        if i == 0:
            clamp(out, out.size, 0.0, 2.0)

    x = np.linspace(0, 1, 32, dtype=np.float32)
    y = np.linspace(1, 0, 32, dtype=np.float32)
    out = np.zeros(32, dtype=np.float32)
    uses_device_function[1, 32](x, y, out)
    if target.ran("uses_device_function"):
        np.testing.assert_allclose(out, np.minimum(2 * np.hypot(x, y), 2.0), rtol=1e-6)


STATIC_AND_INLINE = r'''
static inline __device__ int square(int x) { return x * x; }
inline __device__ int cube(int x) { return x * x * x; }
static __device__ float half_of(float x) { return x / 2; }
namespace ns { inline __device__ int twice(int x) { return 2 * x; } }
'''


def test_static_and_inline_device_functions_bind(target, tmp_path):
    # clang emits static and inline functions only where their file calls
    # them; tidal's compile emits them so that they can be called.
    lib = cuda.include(code=STATIC_AND_INLINE)
    cube = cuda.declare_device("_Z4cubei", "int32(int32)", abi="c",
                               link=[write(tmp_path, "static_and_inline.cu", STATIC_AND_INLINE)])

    @cuda.jit
    def static_and_inline(out, halves):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = lib.square(i) + lib.cube(i) + lib.ns.twice(i) + cube(i)
            halves[i] = lib.half_of(halves[i])

    out = np.zeros(16, dtype=np.int32)
    halves = np.arange(16, dtype=np.float32)
    static_and_inline[1, 16](out, halves)
    i = np.arange(16)
    target.assert_result("static_and_inline", out, i * i + 2 * i ** 3 + 2 * i)
    if target.ran("static_and_inline"):
        np.testing.assert_array_equal(halves, np.arange(16, dtype=np.float32) / 2)


def test_structs_by_value_take_and_give_records_of_the_same_layout(target):
    lib = cuda.include(FUNCTIONS)

    @cuda.jit
    def structs_by_value(particles, xs, ys, firsts):
        i = cuda.grid(1)
        if i < particles.size:
            copy = lib.moved(particles[i], 1.5, -2.0)  # a copy: particles[i] is unchanged
            xs[i] = copy.x
            ys[i] = copy.y + particles[i].y
            firsts[i] = lib.first_of(lib.make_pair(3 * i, 7)) + lib.make_pair(1, i).second

    particles = np.zeros(8, dtype=PARTICLE)
    particles["x"] = np.arange(8)
    particles["y"] = 10
    xs = np.zeros(8, dtype=np.float32)
    ys = np.zeros(8, dtype=np.float32)
    firsts = np.zeros(8, dtype=np.int32)
    structs_by_value[1, 8](particles, xs, ys, firsts)
    target.assert_result("structs_by_value", xs, np.arange(8) + 1.5)
    if target.ran("structs_by_value"):
        np.testing.assert_array_equal(ys, np.full(8, 18.0))
        np.testing.assert_array_equal(firsts, 4 * np.arange(8))
        np.testing.assert_array_equal(particles["x"], np.arange(8))  # not moved


def test_a_struct_by_value_of_another_layout_is_refused(target):
    lib = cuda.include(FUNCTIONS)

    @cuda.jit
    def wrong_struct(particles, out):
        out[0] = lib.moved(particles[0], 1.0, 1.0).x

    other = np.zeros(2, dtype=[("x", np.float64), ("y", np.float64)])
    with pytest.raises(TypingError) as error:
        wrong_struct[1, 1](other, np.zeros(1, dtype=np.float32))
    message = str(error.value)
    assert ("takes struct Particle {x: float32 at 0, y: float32 at 4, id: int32 at 8} "
            "(12 bytes) by value: a record of that layout") in message
    assert "lib.moved(particles[0], 1.0, 1.0)" in message


def test_structs_by_value_with_padding_keep_their_offsets(target):
    # char, double, short: 7 bytes of padding after c, 6 after s (24 bytes),
    # NumPy's align=True.
    lib = cuda.include(code=r'''
        struct Mixed { char c; double d; short s; };
        __device__ Mixed bumped(Mixed m) { m.c += 1; m.d *= 2; m.s -= 1; return m; }''')
    mixed = np.dtype([("c", np.int8), ("d", np.float64), ("s", np.int16)], align=True)

    @cuda.jit
    def padded_structs(values, out):
        i = cuda.grid(1)
        if i < values.size:
            r = lib.bumped(values[i])
            out[i] = r.d + 100 * r.c + 1000 * r.s

    values = np.zeros(4, dtype=mixed)
    values["c"] = 1
    values["d"] = np.arange(4)
    values["s"] = 5
    out = np.zeros(4)
    padded_structs[1, 4](values, out)
    target.assert_result("padded_structs", out, 2 * np.arange(4) + 200 + 4000)


def test_declare_device_takes_records_for_structs_by_value(target):
    from tidal import types
    moved = cuda.declare_device("_Z5moved8Particleff",
                                types.Signature(PARTICLE, (PARTICLE, types.float32, types.float32)),
                                abi="c", link=[FUNCTIONS])
    # Numba's text for a record type; another field name, the same layout.
    first_of = cuda.declare_device(
        "_Z8first_of4Pair", "int32(Record(a[type=int32;offset=0],b[type=int32;offset=4];8;False))",
        abi="c", link=[FUNCTIONS])

    @cuda.jit
    def declared_structs(particles, xs, pairs, firsts):
        i = cuda.grid(1)
        if i < particles.size:
            xs[i] = moved(particles[i], 2.0, 0.0).x
            firsts[i] = first_of(pairs[i])

    particles = np.zeros(4, dtype=PARTICLE)
    particles["x"] = np.arange(4)
    xs = np.zeros(4, dtype=np.float32)
    pairs = np.zeros(4, dtype=[("a", np.int32), ("b", np.int32)])
    pairs["a"] = [5, 6, 7, 8]
    firsts = np.zeros(4, dtype=np.int32)
    declared_structs[1, 4](particles, xs, pairs, firsts)
    target.assert_result("declared_structs", xs, np.arange(4) + 2.0)
    if target.ran("declared_structs"):
        np.testing.assert_array_equal(firsts, [5, 6, 7, 8])


def test_a_declared_record_of_another_layout_shows_both(target):
    wide = np.dtype([("a", np.int64), ("b", np.int64)])
    from tidal import types
    first_of = cuda.declare_device("_Z8first_of4Pair", types.Signature(types.int32, (wide,)),
                                   abi="c", link=[FUNCTIONS])
    with pytest.raises(TypeError, match="Numba's ABI returns numbers"):
        cuda.declare_device("make_pair", types.Signature(wide, (types.int32, types.int32)))

    @cuda.jit
    def wrong_layout(pairs, out):
        out[0] = first_of(pairs[0])

    with pytest.raises(CompileError) as error:
        wrong_layout[1, 1](np.zeros(1, dtype=wide), np.zeros(1, dtype=np.int32))
    message = str(error.value)
    assert "int32 _Z8first_of4Pair(struct record{a:int64@0,b:int64@8;16})" in message
    assert "functions.cu defines int first_of(Pair pair)" in message


def test_structs_by_value_keep_their_abi_when_not_inlined(target):
    # Calls that stay calls: the kernel's byval and struct result must be
    # clang's (x86-64 passes a byval struct on the stack, NVPTX in .param).
    lib = cuda.include(code=r'''
        struct Mixed { char c; double d; short s; };
        __attribute__((noinline)) __device__ Mixed bumped(Mixed m, int k) {
          m.c += k; m.d *= 2; m.s -= 1; return m;
        }
        struct Pair { int first, second; };
        __attribute__((noinline)) __device__ int sum_of(Pair p) {
          return p.first + 10 * p.second;
        }''')
    mixed = np.dtype([("c", np.int8), ("d", np.float64), ("s", np.int16)], align=True)
    pair = np.dtype([("a", np.int32), ("b", np.int32)])

    @cuda.jit
    def not_inlined(values, out, pairs, sums):
        i = cuda.grid(1)
        if i < values.size:
            r = lib.bumped(values[i], 3)
            out[i] = r.d + 100 * r.c + 1000 * r.s
            sums[i] = lib.sum_of(pairs[i])

    values = np.zeros(4, dtype=mixed)
    values["c"] = 1
    values["d"] = np.arange(4)
    values["s"] = 5
    pairs = np.zeros(4, dtype=pair)
    pairs["a"] = np.arange(4)
    pairs["b"] = 2
    out = np.zeros(4)
    sums = np.zeros(4, dtype=np.int32)
    not_inlined[1, 4](values, out, pairs, sums)
    if target.name == "cuda":  # the calls are in the PTX
        ptx = next(iter(not_inlined.inspect_asm().values()))
        assert "call.uni" in ptx and "_Z6bumped5Mixedi" in ptx
    target.assert_result("not_inlined", out, 2 * np.arange(4) + 400 + 4000)
    if target.ran("not_inlined"):
        np.testing.assert_array_equal(sums, np.arange(4) + 20)
        np.testing.assert_array_equal(values["c"], 1)  # a copy was bumped


def test_a_ptx_link_the_calls_do_not_need_runs_on_every_target(target, tmp_path):
    # The kernel links a .cu and a .ptx and calls only what the .cu defines:
    # the cpu target has what it needs (the cuda target links both).
    ptx = write(tmp_path, "twice.ptx", TWICE_PTX)
    axpy = cuda.declare_device("axpy", "float32(float32, float32, float32)", abi="c")

    @cuda.jit(link=[FUNCTIONS, ptx])
    def needs_only_the_cu(x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = axpy(2.0, x[i], 1.0)

    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    needs_only_the_cu[1, 8](x, out)
    target.assert_result("needs_only_the_cu", out, 2 * x + 1)


TEMPLATES = r"""
template <typename T> __device__ T clamp(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }
namespace ops { template <typename T> __device__ T axpy(T a, T x, T y) { return a * x + y; } }
"""


def test_include_binds_the_template_instances_named(target):
    # CuPy's name_expressions, for device function templates: each instance
    # named is compiled and bound as one more overload of the template's name.
    lib = cuda.include(code=TEMPLATES,
                       name_expressions=["clamp<float>", "clamp<double>", "ops::axpy<float>"])
    assert lib.clamp.declarations == ["template clamp",
                                      "float clamp<float>(float x, float lo, float hi)",
                                      "double clamp<double>(double x, double lo, double hi)"]

    @cuda.jit
    def use(a, b, out32, out64):
        i = cuda.grid(1)
        if i < a.size:
            clamped = lib.clamp(a[i], np.float32(0), np.float32(1))
            out32[i] = lib.ops.axpy(np.float32(2), clamped, np.float32(1))
            out64[i] = lib.clamp(b[i], 0.0, 1.0)

    a, b = np.linspace(-1, 2, 8).astype(np.float32), np.linspace(-1, 2, 8)
    out32, out64 = np.zeros(8, np.float32), np.zeros(8)
    use[1, 8](a, b, out32, out64)
    if target.computes:
        np.testing.assert_allclose(out32, 2 * np.clip(a, 0, 1) + 1, rtol=1e-6)
        np.testing.assert_array_equal(out64, np.clip(b, 0, 1))

    # Arrays where the template multiplies numbers: C++'s own error, in the
    # template's body.
    @cuda.jit
    def use_int(x, out):
        out[0] = lib.ops.axpy(x, x, x)

    with pytest.raises(TypingError, match=r"cannot call 'include.cu.ops.axpy' with arguments "
                                          r"\(array\(int32, 1d, C\), .*\): C\+\+ cannot call "
                                          r"ops::axpy\(int \*, int \*, int \*\): invalid "
                                          r"operands to binary expression \('int \*' and "
                                          r"'int \*'\).*, at include.cu:3:"):
        use_int[1, 1](np.zeros(1, np.int32), np.zeros(1, np.int32))
    with pytest.raises(TypeError, match=r"a name expression is one C\+\+ name \(a device "
                                        r"function template's instance"):
        cuda.include(code=TEMPLATES, name_expressions=["clamp<float>; int x"])


COUNTED = r"""
__device__ int calls;
__device__ void count() { atomicAdd(&calls, 1); }
__device__ int calls_so_far() { return calls; }
__device__ float twice(float x) { return 2 * x; }
template <typename T> __device__ T twice(T x) { count(); return x + x; }
template <typename T> __device__ T clamp(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }
namespace ops {
template <typename T> __device__ void fill(T *out, int n, T value) {
  for (int i = 0; i < n; ++i) out[i] = value;
}
}
"""


def test_include_makes_template_instances_for_the_calls_types(target):
    # No name_expressions: clang deduces the template arguments from the
    # call's types and picks among the overloads as for a C++ caller; the
    # instances share the source's __device__ variables with the rest.
    lib = cuda.include(code=COUNTED)

    @cuda.jit
    def use(x32, x64, n, out32, out64, filled, calls):
        i = cuda.grid(1)
        if i < x32.size:
            out32[i] = lib.twice(x32[i])          # the non-template overload
            out64[i] = lib.twice(lib.clamp(x64[i], 0.0, 1.0))  # twice<double>
            lib.count()
            n[i] = lib.twice(n[i])                # twice<int>
        if i == 0:
            lib.ops.fill(filled, 3, np.int16(7))  # fill<short>: a pointer
        cuda.syncthreads()
        if i == 0:
            calls[0] = lib.calls_so_far()

    x32 = np.linspace(-1, 2, 8).astype(np.float32)
    x64 = np.linspace(-1, 2, 8)
    n = np.arange(8, dtype=np.int32)
    out32, out64 = np.zeros(8, np.float32), np.zeros(8)
    filled, calls = np.zeros(4, np.int16), np.zeros(1, np.int32)
    use[1, 8](x32, x64, n, out32, out64, filled, calls)
    if target.computes:
        np.testing.assert_array_equal(out32, 2 * x32)
        np.testing.assert_array_equal(out64, 2 * np.clip(x64, 0, 1))
        np.testing.assert_array_equal(n, 2 * np.arange(8))
        np.testing.assert_array_equal(filled, [7, 7, 7, 0])
        # 8 threads count once each, and twice<double> and twice<int> count
        # once each per thread: one variable for all of them.
        assert calls[0] == 24
    assert lib.twice.declarations == ["float twice(float x)", "template twice"]


def test_include_says_why_cxx_cannot_make_a_call(target):
    lib = cuda.include(code=COUNTED)

    @cuda.jit
    def mixed(x, out):
        out[0] = lib.clamp(x[0], 0.0, 1.0)

    # float32 and float64 for one T: clang's deduction failure and where.
    with pytest.raises(TypingError, match=r"test_cxx_functions.py:\d+:\d+: cannot call 'include.cu.clamp' with "
                                          r"arguments \(float32, float64, float64\): C\+\+ "
                                          r"cannot call clamp\(float, double, double\): no "
                                          r"matching function for call to 'clamp' \(note: "
                                          r"candidate template ignored: deduced conflicting "
                                          r"types for parameter 'T' \('float' vs\. 'double'\)"
                                          r", at include.cu:7:36\)"):
        mixed[1, 1](np.zeros(1, np.float32), np.zeros(1, np.float32))

    @cuda.jit
    def with_record(r, out):
        out[0] = lib.twice(r[0])

    pairs = np.zeros(1, np.dtype([("a", np.int32), ("b", np.int32)]))
    with pytest.raises(TypingError, match=r"(?s)no 'include.cu.twice' takes arguments .*"
                                          r"float twice\(float x\): argument 1: takes a number.*"
                                          r"template twice: cannot be bound: tidal makes C\+\+ "
                                          r"template instances from numbers and arrays of "
                                          r"numbers, and argument 1 is Record"):
        with_record[1, 1](pairs, np.zeros(1, np.int32))


DISK_CACHED = r'''
import numpy as np
import tidal._cxx as cxx
from tidal import cuda

lib = cuda.include({source!r})


@cuda.jit
def step(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = lib.step(x[i])


x = np.arange(4, dtype=np.float32)
step[1, 4](x)
print(repr((cxx.cache_counts(), [float(v) for v in x])))
'''


def test_compiled_cxx_is_kept_on_disk_and_keyed_on_its_headers(target, tmp_path):
    # A new process reads an earlier one's compile of the same source,
    # options and headers (TIDAL_CACHE_DIR/cxx); an edited header, a damaged
    # entry or TIDAL_CXX_CACHE=0 compiles again.
    import ast
    import subprocess
    import sys
    from child_processes import python_environment
    from mock_driver import MOCK

    (tmp_path / "step.h").write_text("#define STEP 1\n")
    source = write(tmp_path, "step.cu",
                   '#include "step.h"\n__device__ float step(float x) { return x + STEP; }\n')
    script = DISK_CACHED.format(source=source)
    cache = tmp_path / "cache"

    def run(**settings):
        environment = python_environment(TIDAL_TARGET=target.name, TIDAL_CACHE_DIR=str(cache),
                                         **settings)
        if target.mock:
            environment["TIDAL_CUDA_DRIVER"] = str(MOCK)
        out = subprocess.run([sys.executable, "-c", script], env=environment,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return ast.literal_eval(out.stdout.strip().splitlines()[-1])

    counts, values = run()
    assert counts["compiles"] == 1 and counts["disk_writes"] == 1 and counts["disk_hits"] == 0
    (entry,) = (cache / "cxx").glob("*.tcxx")
    counts, again = run()
    assert counts["compiles"] == 0 and counts["disk_hits"] == 1 and counts["disk_writes"] == 0
    if target.computes:
        assert values == again == [1.0, 2.0, 3.0, 4.0]
    (tmp_path / "step.h").write_text("#define STEP 5\n")
    counts, values = run()
    assert counts["compiles"] == 1 and counts["disk_hits"] == 0
    if target.computes:
        assert values == [5.0, 6.0, 7.0, 8.0]
    entry.write_bytes(entry.read_bytes()[:-40] + b"garbage")
    counts, _ = run()
    assert counts["disk_hits"] == 0 and counts["compiles"] == 1 and counts["disk_writes"] == 1
    counts, _ = run(TIDAL_CXX_CACHE="0")
    assert counts["compiles"] == 1 and counts["disk_writes"] == 0 and counts["disk_hits"] == 0


# --- numba-cuda's code objects in link=[...] ----------------------------------------------

TWICE_CU = 'extern "C" __device__ int twice(int *result, int x) { *result = 2 * x; return 0; }\n'


@pytest.mark.parametrize("form", ["str", "bytes", "StringIO"])
def test_cusource_links_cuda_cpp_from_memory(target, form):
    import io
    data = {"str": TWICE_CU, "bytes": TWICE_CU.encode(), "StringIO": io.StringIO(TWICE_CU)}[form]
    source = cuda.CUSource(data)
    assert source.name == "<unnamed-cu>"
    kernel = ptx_kernel(cuda.declare_device("twice", "int32(int32)", link=[source]))
    out = np.zeros(16, dtype=np.int32)
    kernel[1, 16](out)
    target.assert_result("doubled_by_ptx", out, 2 * np.arange(16))


def test_ptxsource_links_through_the_drivers_linker(target):
    source = cuda.PTXSource(TWICE_PTX, name="twice-in-memory")
    kernel = ptx_kernel(cuda.declare_device("twice", "int32(int32)", link=[source]))
    out = np.zeros(16, dtype=np.int32)
    if raises_on_the_cpu_target(target, lambda: kernel[1, 16](out), "twice-in-memory"):
        return
    kernel[1, 16](out)
    target.assert_result("doubled_by_ptx", out, 2 * np.arange(16))
    if target.mock:
        assert [c["name"] for c in target.driver_calls("cuLinkAddData_v2")] == [
            "the PTX of kernel 'doubled_by_ptx'", "twice-in-memory"]


def test_code_objects_refuse_numba_cudas_callbacks():
    # The binary kinds (Cubin, Fatbin, ...) are test_link_kinds.py's.
    with pytest.raises(NotImplementedError, match="setup_callback"):
        cuda.CUSource(TWICE_CU, setup_callback=lambda module: None)
    from tidal.cuda.cudadrv.linkable_code import CUSource
    assert CUSource is cuda.CUSource
