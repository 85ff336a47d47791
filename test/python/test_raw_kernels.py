"""CUDA C++ kernels from Python (tidal.cuda.RawKernel / RawModule,
python/tidal/cuda/raw.py, python/src/RawKernels.cpp), on every target: the
examples of examples/cuda_cpp against NumPy, scalar conversions, libdevice
calls, and the errors (clang's, an unknown kernel, wrong arguments, a
construct tidal-raise-nvvm refuses)."""

import math
import os

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import CompileError

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "cuda_cpp")


def example(name):
    return cuda.RawModule(path=os.path.join(EXAMPLES, name + ".cu"))


def test_reduction(target, rng):
    kernel = example("reduction").get_function("sum_reduce")
    values = rng.random(10_000, dtype=np.float32)
    total = np.zeros(1, dtype=np.float32)
    kernel[8, 256](values, len(values), total)
    target.assert_result("sum_reduce", total[0], values.sum(dtype=np.float64), rtol=1e-4)


def test_histogram(target, rng):
    kernel = example("histogram").get_function("histogram")
    data = rng.integers(0, 64, 5000, dtype=np.uint8)
    bins = np.zeros(64, dtype=np.uint32)
    kernel[4, 128](data, len(data), bins)
    target.assert_result("histogram", bins, np.bincount(data, minlength=64))


def test_scan(target, rng):
    kernel = example("scan").get_function("block_scan")
    block, blocks = 256, 3
    values = rng.integers(-100, 100, block * blocks, dtype=np.int32)
    out = np.zeros_like(values)
    totals = np.zeros(blocks, dtype=np.int32)
    kernel[blocks, block](values, out, totals, len(values))
    slices = values.reshape(blocks, block)
    target.assert_result("block_scan", out, np.cumsum(slices, axis=1).ravel())
    target.assert_result("block_scan", totals, slices.sum(axis=1))


def test_transpose_of_a_two_dimensional_array(target, rng):
    kernel = example("transpose").get_function("transpose")
    rows, columns = 70, 45
    matrix = rng.random((rows, columns), dtype=np.float32)
    out = np.zeros((columns, rows), dtype=np.float32)
    kernel[((columns + 31) // 32, (rows + 31) // 32), (32, 8)](matrix, out, rows, columns)
    target.assert_result("transpose", out, matrix.T)


def test_device_arrays_and_a_stream(target):
    kernel = cuda.RawKernel(r'''
        extern "C" __global__ void scale(double *x, double by, unsigned long long n) {
          unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) x[i] *= by;
        }''', "scale")
    host = np.arange(100, dtype=np.float64)
    device = cuda.to_device(host)
    stream = cuda.stream()
    kernel[4, 32, stream, 0](device, 2.5, 100)
    stream.synchronize()
    target.assert_result("scale", device.copy_to_host(), host * 2.5)


SCALARS = r'''
extern "C" __global__ void scalars(float *out, float f, double d, int i, unsigned u,
                                   long long l, bool b, short s, unsigned char c) {
  out[0] = f; out[1] = d; out[2] = i; out[3] = u; out[4] = l; out[5] = b; out[6] = s;
  out[7] = c;
}'''


def test_scalars_convert_to_the_cxx_parameter_types(target):
    kernel = cuda.RawKernel(SCALARS, "scalars")
    assert kernel.parameter_types == ("float32*", "float32", "float64", "int32", "uint32",
                                      "int64", "bool", "int16", "uint8")
    out = np.zeros(8, dtype=np.float32)
    # Python ints and floats, and NumPy scalars: each becomes the C++ type
    # (a float to an int parameter truncates, as a C++ conversion).
    kernel[1, 1](out, 1.5, np.float32(2.25), 7.9, 2**32 - 1, -(2**40), 3, np.int64(-2), 300)
    target.assert_result("scalars", out,
                         np.array([1.5, 2.25, 7, 2**32 - 1, -(2**40), 1, -2, 44], np.float32))


def test_libdevice_functions_and_math(target):
    kernel = cuda.RawKernel(r'''
        extern "C" __global__ void math(const float *x, float *out, float *inverse, double *dout) {
          int i = threadIdx.x;
          out[i] = sinf(x[i]) + __saturatef(x[i]);
          inverse[i] = erfinvf(x[i] / 2.0f);
          dout[i] = normcdf((double)x[i]) + cospi((double)x[i]);
        }''', "math")
    x = np.linspace(-0.9, 0.9, 32, dtype=np.float32)
    out = np.zeros(32, dtype=np.float32)
    inverse = np.zeros(32, dtype=np.float32)
    dout = np.zeros(32, dtype=np.float64)
    kernel[1, 32](x, out, inverse, dout)
    if not target.ran("math"):
        return
    xd = x.astype(np.float64)
    np.testing.assert_allclose(out, np.sin(xd) + np.clip(xd, 0, 1), rtol=1e-6, atol=1e-7)
    # erfinv through erf, normcdf through erfc (the standard library's).
    np.testing.assert_allclose([math.erf(v) for v in inverse.astype(np.float64)], xd / 2,
                               rtol=1e-5, atol=1e-7)
    expected = [0.5 * math.erfc(-v / math.sqrt(2)) + math.cos(math.pi * v) for v in xd]
    np.testing.assert_allclose(dout, expected, rtol=1e-12, atol=1e-15)


def test_module_with_several_kernels_and_options(target):
    module = cuda.RawModule(code=r'''
        extern "C" __global__ void fill(int *x) { x[threadIdx.x] = VALUE; }
        extern "C" __global__ void twice(int *x) { x[threadIdx.x] *= 2; }''',
                            options=("-DVALUE=21",))
    assert sorted(module.kernel_names) == ["fill", "twice"]
    x = np.zeros(8, dtype=np.int32)
    d = cuda.to_device(x)
    module.get_function("fill")[1, 8](d)
    module.get_function("twice")[1, 8](d)
    target.assert_result("twice", d.copy_to_host(), np.full(8, 42, np.int32))


def test_syntax_error_is_a_compile_error_at_the_cxx_line():
    with pytest.raises(CompileError) as error:
        cuda.RawKernel('extern "C" __global__ void k(float *x) {\n  x[0] = 1\n}\n', "k")
    text = str(error.value)
    assert text.startswith("rawkernel.cu:2:11: CUDA C++: expected ';' after expression")
    assert "  x[0] = 1\n" in text and text.rstrip().endswith("^")


def test_clangs_notes_follow_its_first_error():
    # The candidates of an overloaded call that none takes, each with its
    # place; the second error is not reported.
    code = ('__device__ int f(int *p) { return *p; }\n'
            '__device__ int f(float *p) { return 0; }\n'
            'extern "C" __global__ void k(double *x) {\n  x[0] = f(x);\n  undeclared();\n}\n')
    with pytest.raises(CompileError) as error:
        cuda.RawKernel(code, "k")
    text = str(error.value)
    assert text.startswith("rawkernel.cu:4:10: CUDA C++: no matching function for call to 'f' "
                           "(note: candidate function not viable: no known conversion from "
                           "'double *' to 'int *' for 1st argument, at rawkernel.cu:1:16) "
                           "(note: candidate function not viable: no known conversion from "
                           "'double *' to 'float *' for 1st argument, at rawkernel.cu:2:16)\n")
    assert "undeclared" not in text


def test_unknown_kernel_lists_the_kernels():
    module = cuda.RawModule(code='extern "C" __global__ void a(int *x) {}\n'
                                 '__global__ void b(float *y, int n) {}')
    with pytest.raises(ValueError, match=r"has no kernel 'c'; its __global__ functions: "
                                         r"a\(int32\*\), b \(_Z1bPfi\)\(float32\*, int32\)"):
        module.get_function("c")
    assert module.get_function("b").__name__ == "b"


def test_wrong_arguments(target):
    kernel = cuda.RawKernel(SCALARS, "scalars")
    out = np.zeros(8, dtype=np.float32)
    with pytest.raises(TypeError, match=r"takes 9 arguments but 2 were given"):
        kernel[1, 1](out, 1.0)
    with pytest.raises(TypeError, match=r"argument 'out' of kernel 'scalars' \(C\+\+ type "
                                        r"'float \*'\): takes an array of float32, not "
                                        r"array\(float64, 1d, C\)"):
        kernel[1, 1](out.astype(np.float64), 1, 2, 3, 4, 5, 6, 7, 8)
    with pytest.raises(TypeError, match=r"argument 'out' .*takes a contiguous array \(C or F "
                                        r"order\), not array\(float32, 1d, A\)"):
        kernel[1, 1](np.zeros(16, np.float32)[::2], 1, 2, 3, 4, 5, 6, 7, 8)
    with pytest.raises(TypeError, match=r"argument 'f' .*takes a number, not array"):
        kernel[1, 1](out, out, 2, 3, 4, 5, 6, 7, 8)
    with pytest.raises(TypeError, match=r"argument 'd' .*takes a number, not complex128"):
        kernel[1, 1](out, 1, 2j, 3, 4, 5, 6, 7, 8)


def test_unsupported_parameter_type():
    # A struct with a pointer field is no record dtype.
    with pytest.raises(TypeError, match=r"parameter 'n' of CUDA C\+\+ kernel 'k' has type "
                                        r"'Node \('Node' is a struct tidal cannot pass by value: "
                                        r"field 'next' of 'Node' is not a number.*\)': "
                                        r"tidal passes only scalars, structs of numbers"):
        cuda.RawKernel('struct Node { int value; Node *next; };\n'
                       'extern "C" __global__ void k(Node n, int *out) { out[0] = n.value; }',
                       "k")


STRUCTS = r"""
struct Params { float scale; int n; };
struct Particle { float x, y; double mass; };
extern "C" __global__ void fill(Params p, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) out[i] = p.scale * i;
}
extern "C" __global__ void move(Particle *ps, int n, float dx) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { ps[i].x += dx; ps[i].mass *= 2; }
}
"""
PARAMS = np.dtype([("scale", np.float32), ("n", np.int32)])
PARTICLE = np.dtype([("x", np.float32), ("y", np.float32), ("mass", np.float64)])


def test_structs_by_value_and_through_pointers_are_records(target):
    module = cuda.RawModule(code=STRUCTS)
    out = np.zeros(8, np.float32)
    module.get_function("fill")[1, 8](np.array((2.5, 6), dtype=PARAMS)[()], out)
    particles = np.zeros(4, PARTICLE)
    particles["mass"] = 1
    module.get_function("move")[1, 8](particles, np.int32(4), np.float32(0.5))
    if target.computes:
        np.testing.assert_array_equal(out, [0, 2.5, 5, 7.5, 10, 12.5, 0, 0])
        np.testing.assert_array_equal(particles["x"], 0.5)
        np.testing.assert_array_equal(particles["mass"], 2)
    # The field names may differ; the layout may not.
    renamed = np.array((1.0, 2), dtype=[("s", np.float32), ("count", np.int32)])[()]
    module.get_function("fill")[1, 8](renamed, out)
    with pytest.raises(TypeError, match=r"argument 'p' of kernel 'fill' \(C\+\+ type 'struct "
                                        r"Params \{scale: float32 at 0, n: int32 at 4\} \(8 "
                                        r"bytes\)'\): takes a record of that layout, not "
                                        r"Record\(a:float64, b:float64\), whose layout is struct "
                                        r"record \{a: float64 at 0, b: float64 at 8\} \(16 bytes\)"):
        module.get_function("fill")[1, 8](
            np.array((2.5, 6.0), dtype=[("a", np.float64), ("b", np.float64)])[()], out)
    with pytest.raises(TypeError, match=r"argument 'ps' .*takes an array of records of that "
                                        r"layout, not array\(float32, 1d, C\)"):
        module.get_function("move")[1, 8](np.zeros(4, np.float32), np.int32(4), np.float32(1))


def test_construct_raise_nvvm_refuses(target):
    kernel = cuda.RawKernel(r'''
        extern "C" __global__ void k(long long *out) {
          out[0] = __nvvm_read_ptx_sreg_clock64();
        }''', "k")
    # (clock64 has no marker: the cpu target has no clock.)
    with pytest.raises(CompileError, match=r"^CUDA C\+\+ kernel 'k' of rawkernel.cu cannot run on "
                                           r"tidal: .*special register "
                                           r"'llvm.nvvm.read.ptx.sreg.clock64' in function 'k'"):
        kernel[1, 1](np.zeros(1, np.int64))


TEMPLATES = r"""
template <typename T, int N>
__global__ void scale(T *x, T a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) x[i] *= a;
}
namespace ops {
template <typename T>
__global__ void add_one(T *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += T(1);
}
}
"""


def test_kernel_templates_by_name_expressions(target):
    # CuPy's RawModule(..., name_expressions=[...]).get_function("f<T>").
    module = cuda.RawModule(code=TEMPLATES, name_expressions=[
        "scale<float, 3>", "scale<double,5>", "ops::add_one<int>"])
    assert module.kernel_names == ["scale<float, 3>", "scale<double, 5>", "ops::add_one<int>"]
    x = np.ones(8, np.float32)
    module.get_function("scale<float,3>")[1, 8](x, 2.5)  # spaces as the user writes them
    target.assert_result("_Z5scaleIfLi3EEvPT_S0_", x, [2.5] * 3 + [1.0] * 5)  # its symbol
    y = np.ones(8)
    scale = module.get_function("scale<double, 5>")
    assert scale.parameter_types == ("float64*", "float64")
    scale[1, 8](y, 3.0)
    z = np.zeros(4, np.int32)
    module.get_function("ops::add_one<int>")[1, 4](z, 3)
    if target.computes:
        np.testing.assert_array_equal(y, [3.0] * 5 + [1.0] * 3)
        np.testing.assert_array_equal(z, [1, 1, 1, 0])


def test_kernel_template_errors():
    module = cuda.RawModule(code=TEMPLATES, name_expressions=["scale<float, 3>"])
    with pytest.raises(ValueError, match="no kernel 'scale<int, 3>'.*name_expressions names it"):
        module.get_function("scale<int, 3>")
    with pytest.raises(CompileError, match=r"rawmodule.cu:\d+:\d+: CUDA C\+\+: "):
        cuda.RawModule(code=TEMPLATES, name_expressions=["scale<float>"])  # N is missing
    with pytest.raises(TypeError, match="a name expression is one C\\+\\+ name"):
        cuda.RawModule(code=TEMPLATES, name_expressions=["scale<float, 3>; int x"])


def test_writes_in_range_run_and_the_ptx_keeps_no_check(target, mock_script):
    # The adapter checks C++ writes through array pointers (test_cpu_faults.py
    # has the writes out of range); on every target writes in range run, and
    # over the cuda target the check is gone from the PTX: an address out of
    # range is undefined on a GPU, as in CUDA.
    code = r'''
        extern "C" __global__ void put(float *out) {
            out[blockIdx.x * blockDim.x + threadIdx.x] = 2.0f;
            atomicAdd(&out[0], 1.0f);
        }'''
    out = cuda.to_device(np.zeros(64, np.float32))
    cuda.RawKernel(code, "put")[2, 32](out)
    if not target.mock:
        expected = np.full(64, 2.0, np.float32)
        expected[0] += 64
        np.testing.assert_array_equal(out.copy_to_host(), expected)
    run = mock_script(f"""
        put = cuda.RawKernel(r'''{code}''', "put")
        put[2, 32](np.zeros(64, np.float32))
    """)
    assert run.returncode == 0, run.stderr
    body = run.ptx[run.ptx.index(".entry put("):]
    assert "st.global" in body and "atom.global.add.f32" in body, body
    assert "setp" not in body and "bra" not in body, body


GLOBALS = r"""
__device__ int counter;
__device__ float table[4] = {1.5f, 2.5f, 3.5f, 4.5f};
__constant__ float coeffs[3];
namespace ns { __device__ double offset = 0.25; }
__device__ int *where = &counter;
extern "C" __global__ void bump() { atomicAdd(&counter, 1); }
extern "C" __global__ void read(float *out) {
    int i = threadIdx.x;
    out[i] = table[i] * coeffs[i % 3] + counter + ns::offset;
}
"""


def test_device_and_constant_variables_are_shared_by_the_modules_kernels(target):
    # As in CUDA: one storage per variable, which every kernel of the module
    # uses and get_global() reads and writes (CuPy's name).
    module = cuda.RawModule(code=GLOBALS)
    module.get_global("coeffs", np.float32).copy_to_device(np.array([1, 10, 100], np.float32))
    module.get_function("bump")[1, 32]()
    module.get_function("bump")[2, 16]()
    out = np.zeros(4, np.float32)
    module.get_function("read")[1, 4](out)
    if target.computes:
        np.testing.assert_array_equal(out, np.array([1.5, 25, 350, 4.5]) + 64.25)
        assert module.get_global("counter", np.int32).copy_to_host()[0] == 64
        assert module.get_global("_ZN2ns6offsetE", np.float64).copy_to_host()[0] == 0.25
        np.testing.assert_array_equal(module.get_global("table", np.float32).copy_to_host(),
                                      [1.5, 2.5, 3.5, 4.5])
    assert module.get_global("ns::offset").shape == (8,)  # bytes, without a dtype
    # Another module of the same source has its own variables.
    other = cuda.RawModule(code=GLOBALS)
    if target.computes:
        assert other.get_global("counter", np.int32).copy_to_host()[0] == 0
    with pytest.raises(KeyError, match=r"has no __device__ or __constant__ variable 'nothing'; "
                                       r"its variables: counter, table, coeffs, ns::offset, where"):
        module.get_global("nothing")
    with pytest.raises(ValueError, match=r"__device__ variable 'where' of rawmodule.cu has an "
                                         r"initializer that is not numbers"):
        module.get_global("where")
