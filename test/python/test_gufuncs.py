"""tidal.guvectorize(target='cuda'): layouts such as (n),(n)->() and
(m,n),(n,p)->(m,p), scalar inputs and outputs, loop dimensions, out=,
device arrays in and out, and Numba's errors for layouts and shapes (on
every target)."""

import numpy as np
import pytest

from tidal import cuda, float32, float64, guvectorize, int32, void


def make_matmul(dtype=float32):
    @guvectorize([void(dtype[:, :], dtype[:, :], dtype[:, :])], "(m,n),(n,p)->(m,p)",
                 target="cuda")
    def matmul(A, B, C):
        m, n = A.shape
        n, p = B.shape
        for i in range(m):
            for j in range(p):
                C[i, j] = 0
                for k in range(n):
                    C[i, j] += A[i, k] * B[k, j]
    return matmul


def make_dot():
    @guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()", target="cuda")
    def dot(x, y, result):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * y[i]
        result[0] = s
    return dot


def test_matrix_multiply_with_loop_dimensions(target):
    matmul = make_matmul()
    A = np.arange(7 * 2 * 4, dtype=np.float32).reshape(7, 2, 4)
    B = np.arange(7 * 4 * 5, dtype=np.float32).reshape(7, 4, 5)
    C = matmul(A, B)
    assert C.shape == (7, 2, 5) and isinstance(C, np.ndarray)
    target.assert_result("__gufunc_matmul", C, A @ B)
    # Two loop dimensions, and an input reused by every item.
    target.forget_driver_calls()
    A4 = np.arange(3 * 5 * 2 * 4, dtype=np.float32).reshape(3, 5, 2, 4)
    target.assert_result("__gufunc_matmul", matmul(A4, B[0]), A4 @ B[0])


def test_scalar_output(target):
    dot = make_dot()
    x = np.arange(12, dtype=np.float64).reshape(4, 3)
    y = x + 1
    result = dot(x, y)
    assert result.shape == (4,)
    target.assert_result("__gufunc_dot", result, (x * y).sum(axis=1))
    target.forget_driver_calls()
    assert dot(x[0], y[0]).shape == ()  # no loop dimension: a 0-d result


def test_scalar_inputs_and_casting(target):
    @guvectorize(["void(float32, float32[:], float32[:], float32[:])"], "(),(t),(t)->(t)",
                 target="cuda")
    def saxpy(a, x, y, out):
        for i in range(out.shape[0]):
            out[i] = a * x[i] + y[i]

    X = np.arange(10, dtype=np.float32).reshape(5, 2)
    target.assert_result("__gufunc_saxpy", saxpy(np.float32(2), X, X), 2 * X + X)
    target.forget_driver_calls()
    a = np.arange(5, dtype=np.float32)  # one scalar per item
    target.assert_result("__gufunc_saxpy", saxpy(a, X, X), a[:, None] * X + X)
    target.forget_driver_calls()
    # float64 and int inputs convert to the float32 signature (same kind).
    target.assert_result("__gufunc_saxpy", saxpy(2.0, X.astype(np.float64), X), 2 * X + X)


def test_out_positional_keyword_and_on_device(target):
    @guvectorize([void(int32[:], int32[:])], "(n)->(n)", target="cuda")
    def double(x, out):
        for i in range(x.shape[0]):
            out[i] = 2 * x[i]

    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = np.zeros_like(x)
    assert double(x, out=out) is out
    target.assert_result("__gufunc_double", out, 2 * x)
    target.forget_driver_calls()
    out2 = np.zeros_like(x)
    double(x, out2)  # the output as the last positional argument
    target.assert_result("__gufunc_double", out2, 2 * x)
    target.forget_driver_calls()
    stream = cuda.stream()
    dx = cuda.to_device(x, stream)
    dout = cuda.device_array_like(x, stream)
    assert double(dx, out=dout, stream=stream) is dout
    host = dout.copy_to_host(stream=stream)
    stream.synchronize()
    target.assert_result("__gufunc_double", host, 2 * x)


def test_device_input_gives_a_device_result(target):
    matmul = make_matmul(float64)
    X = np.random.default_rng(3).standard_normal((6, 3, 3))
    Y = np.random.default_rng(4).standard_normal((3, 3))
    result = matmul(X, cuda.to_device(Y))
    assert isinstance(result, cuda.DeviceNDArray) and result.shape == (6, 3, 3)
    target.assert_result("__gufunc_matmul", result.copy_to_host(), X @ Y, rtol=1e-12)
    target.forget_driver_calls()
    host_out = np.zeros((6, 3, 3))
    assert matmul(cuda.to_device(X), Y, out=host_out) is host_out  # device input, host out
    target.assert_result("__gufunc_matmul", host_out, X @ Y, rtol=1e-12)


def test_several_signatures():
    @guvectorize(["void(int32[:], int32[:])", "void(float64[:], float64[:])"], "(n)->()",
                 target="cuda")
    def total(x, out):
        s = 0
        for i in range(x.shape[0]):
            s += x[i]
        out[0] = s

    assert total(np.ones((2, 3), np.int32)).dtype == np.int32
    assert total(np.ones((2, 3))).dtype == np.float64


@pytest.mark.parametrize("layout, error, message", [
    ("(n),(n)->(m)", NameError, "undefined output symbols: m"),
    ("(n;)->()", ValueError, 'bad token in signature ";"'),
    ("n->()", ValueError, 'bad token in signature "n"'),
    ("(n)(n)->()", ValueError, 'bad token in signature "("'),
    ("(n),(n)->", ValueError, "has no output"),
])
def test_layout_errors(layout, error, message):
    def f(x, y, out):
        pass

    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        guvectorize(["void(float64[:], float64[:], float64[:])"], layout, target="cuda")(f)


def test_shape_errors():
    dot = make_dot()
    with pytest.raises(ValueError, match=r"arg #2: shape\[1\] mismatch argument"):
        dot(np.zeros((4, 3)), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="arg #1: outer dimension mismatch"):
        dot(np.zeros((4, 3)), np.zeros((5, 3)))
    with pytest.raises(ValueError, match="arg #1: insufficient inner dimension"):
        make_matmul()(np.zeros(3, np.float32), np.zeros((3, 3), np.float32))
    with pytest.raises(TypeError, match=r"This gufunc accepts 2 positional arguments .* Got 1 "
                                        r"positional argument\.$"):
        dot(np.zeros(3))
    with pytest.raises(TypeError, match="invalid number of input argument"):
        dot(np.zeros(3), out=np.zeros(1))
    with pytest.raises(ValueError, match="output shape mismatch"):
        dot(np.zeros((4, 3)), np.zeros((4, 3)), out=np.zeros(5))
    with pytest.raises(ValueError, match="cannot specify 'out' as both a positional and "
                                         "keyword argument"):
        dot(np.zeros((4, 3)), np.zeros((4, 3)), np.zeros(4), out=np.zeros(4))
    with pytest.raises(TypeError, match="no matching signature of gufunc 'dot' for inputs "
                                        r"\(complex128, float64\)"):
        dot(np.zeros((4, 3), np.complex128), np.zeros((4, 3)))


def test_device_input_that_needs_a_cast():
    @guvectorize(["void(int32, int32[:], int32[:])"], "(),(t)->(t)", target="cuda")
    def scale(a, b, out):
        for i in range(b.size):
            out[i] = a * b[i]

    with pytest.raises(TypeError, match=r"does not support \.astype\(\)"):
        scale(cuda.to_device(np.array(2, np.int64)), np.arange(3, dtype=np.int32))


def test_decorator_errors():
    def f(x, out):
        pass

    signature = [void(float32[:], float32[:])]
    with pytest.raises(TypeError, match="nopython flag must be True"):
        guvectorize(signature, "(x)->(x)", target="cuda", nopython=False)(f)
    with pytest.raises(TypeError, match="The following target options are not supported: "
                                        "'what'"):
        guvectorize(signature, "(x)->(x)", target="cuda", what=1)(f)
    with pytest.raises(ValueError, match="Unsupported target: 'roc'"):
        guvectorize(signature, "(x)->(x)", target="roc")(f)
    with pytest.raises(TypeError, match="guvectorize with target='cuda' needs signatures"):
        guvectorize("(x)->(x)", target="cuda")(f)
    with pytest.raises(ValueError, match="gufunc signature mismatch: ndim>0 for scalar"):
        guvectorize(["void(float32, float32[:])"], "(x)->(x)", target="cuda")(f)
    with pytest.raises(TypeError, match="has 2 arguments; the layout '\\(x\\),\\(x\\)->\\(x\\)' "
                                        "has 3"):
        guvectorize(signature, "(x),(x)->(x)", target="cuda")(f)
    with pytest.raises(TypeError, match="returns float32: a gufunc's function returns nothing"):
        guvectorize(["float32(float32[:], float32[:])"], "(x)->(x)", target="cuda")(f)
    with pytest.raises(TypeError, match="guvectorize\\(\\) takes one or two positional"):
        guvectorize(signature, "(x)->(x)", "extra", target="cuda")


def test_empty_loop_and_empty_core(target):
    dot = make_dot()
    assert dot(np.zeros((0, 3)), np.zeros((0, 3))).shape == (0,)
    # Zero-length rows: every item still runs, and the sum of nothing is 0.
    result = dot(np.zeros((2, 0)), np.zeros((2, 0)))
    target.assert_result("__gufunc_dot", result, [0.0, 0.0])


def test_signature_and_function_arity_must_agree():
    def one(x):
        pass

    with pytest.raises(TypeError, match="guvectorize signature 'void\\(f8\\[:\\], f8\\[:\\]\\)' "
                                        "of 'one' has 2 arguments; the function takes 1"):
        guvectorize(["void(f8[:], f8[:])"], "(n)->()", target="cuda")(one)


def test_pickle_in_another_process():
    import os
    import pickle
    import subprocess
    import sys
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
        cuda.__file__))))
    script = (
        "import pickle, sys, numpy as np\n"
        "from tidal.cuda.target import set_target\n"
        "set_target('cpu')\n"
        "dot = pickle.loads(sys.stdin.buffer.read())\n"
        "print(dot.layout, dot(np.ones((2, 3)), np.ones((2, 3))).tolist())\n")
    run = subprocess.run([sys.executable, "-c", script], input=pickle.dumps(make_dot()),
                         capture_output=True, env=dict(os.environ, PYTHONPATH=package_root),
                         timeout=300)
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout.decode().split("\n")[0] == "(n),(n)->() [3.0, 3.0]"


def test_call_errors():
    dot = make_dot()
    x = np.ones((2, 3))
    with pytest.raises(TypeError, match="gufunc 'dot' got unexpected keyword argument\\(s\\) "
                                        "where: it takes out= and stream="):
        dot(x, x, where=True)
    with pytest.raises(TypeError, match=r"^This gufunc accepts 2 positional arguments \(when "
                                        r"providing input only\) or 3 positional arguments "
                                        r"\(when providing input and output\)\. Got 4 positional "
                                        r"arguments\.$"):
        dot(x, x, np.zeros(2), np.zeros(2))
    with pytest.raises(TypeError, match="out= of gufunc 'dot' has dtype float32; the signature "
                                        "void\\(float64\\[:\\], float64\\[:\\], "
                                        "float64\\[:\\]\\) writes float64"):
        dot(x, x, out=np.zeros(2, np.float32))

    def f(x, out):
        pass

    with pytest.raises(TypeError, match="the output \\(last argument\\) must be an array"):
        guvectorize(["void(float64[:], float64)"], "(n)->()", target="cuda")(f)


# --- several outputs (numba-cuda's) ------------------------------------------------------

def make_copy_and_scale():
    @guvectorize(["void(float32[:], float32[:], float64[:])",
                  "void(int64[:], int64[:], float64[:])"], "(x)->(x),(x)", target="cuda")
    def copy_and_scale(a, b, c):
        for i in range(b.size):
            b[i] = a[i]
            c[i] = a[i] * 1.5
    return copy_and_scale


def test_several_outputs_allocated(target):
    f = make_copy_and_scale()
    assert (f.nin, f.nout) == (1, 2)
    a = np.arange(10, dtype=np.float32).reshape(2, 5)
    b, c = f(a)
    assert b.dtype == np.float32 and c.dtype == np.float64 and b.shape == c.shape == (2, 5)
    if target.ran("__gufunc_copy_and_scale"):
        np.testing.assert_array_equal(b, a)
        np.testing.assert_array_equal(c, a * 1.5)


def test_several_outputs_given(target):
    f = make_copy_and_scale()
    a = np.arange(6, dtype=np.int64)
    b, c = np.zeros(6, np.int64), np.zeros(6)
    returned = f(a, b, c)  # positional
    assert returned[0] is b and returned[1] is c
    target.assert_result("__gufunc_copy_and_scale", c, a * 1.5)
    target.forget_driver_calls()
    b2, c2 = np.zeros(6, np.int64), cuda.device_array(6)
    on_device = f(a, out=(b2, c2))  # out=, one output on the device: results stay there
    assert on_device[1] is c2 and cuda.is_cuda_array(on_device[0])
    target.assert_result("__gufunc_copy_and_scale", c2.copy_to_host(), a * 1.5)


def test_several_outputs_errors():
    f = make_copy_and_scale()
    a = np.arange(4.0, dtype=np.float32)
    with pytest.raises(TypeError, match=r"This gufunc accepts 1 positional argument \(when "
                                        r"providing input only\) or 3 positional arguments "
                                        r"\(when providing input and output\)\. Got 2 "
                                        r"positional arguments\."):
        f(a, np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="out= of gufunc 'copy_and_scale' must be a tuple of its 2 "
                                        "outputs"):
        f(a, out=np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="out= of gufunc 'copy_and_scale' is a tuple of 1; it "
                                         "has 2 output"):
        f(a, out=(np.zeros(4, np.float32),))
    with pytest.raises(TypeError, match="out= of gufunc 'copy_and_scale' has dtype float32; the "
                                        "signature .* writes float64"):
        f(a, np.zeros(4, np.float32), np.zeros(4, np.float32))

    def g(x, y, z):
        pass

    with pytest.raises(TypeError, match="each of its 2 outputs \\(the last arguments\\) must be "
                                        "an array"):
        guvectorize(["void(float64[:], float64[:], float64)"], "(n)->(n),()", target="cuda")(g)
