"""Bad input gets a clear error and never hurts the interpreter: compile
errors name file:line:col with a caret, launch errors name the kernel."""

import os

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import CompileError, TypingError, UnsupportedError
from source_positions import position_of

THIS_FILE = os.path.abspath(__file__)


def compile_error(kernel, *args):
    with pytest.raises(CompileError) as info:
        kernel[1, 1](*args)
    return info.value


def test_with_statement_is_unsupported():
    @cuda.jit
    def k(out):
        with open("x") as f:
            out[0] = 1

    err = compile_error(k, np.zeros(1))
    assert isinstance(err, UnsupportedError)
    line, col = position_of(k.py_func, "with open")
    assert os.path.abspath(err.file) == THIS_FILE
    assert (err.line, err.column) == (line, col)
    text = str(err)
    assert f"{err.file}:{line}:{col}: 'with' statements are not supported in kernels" in text
    # The source line, then a caret under its first column.
    source, caret = text.splitlines()[1:3]
    assert source.strip() == 'with open("x") as f:'
    assert caret.index("^") == source.index("with")


def test_generator_is_unsupported():
    @cuda.jit
    def k(out):
        yield 1

    err = compile_error(k, np.zeros(1))
    assert isinstance(err, UnsupportedError)
    assert "generators ('yield') are not supported in kernels" in str(err)
    assert err.line == position_of(k.py_func, "yield 1")[0]


def test_list_is_unsupported_with_caret_under_it():
    @cuda.jit
    def k(out):
        values = [1, 2, 3]
        out[0] = values[0]

    err = compile_error(k, np.zeros(1))
    assert isinstance(err, UnsupportedError)
    line, col = position_of(k.py_func, "[1, 2, 3]")
    assert (err.line, err.column) == (line, col)
    caret_line = str(err).splitlines()[2]
    assert caret_line.strip() == "^" * len("[1, 2, 3]")


def test_undefined_name_is_a_typing_error():
    @cuda.jit
    def k(out):
        out[0] = undefined_thing  # noqa: F821

    err = compile_error(k, np.zeros(1))
    assert isinstance(err, TypingError)
    assert "name 'undefined_thing' is not defined" in str(err)


def test_float_index_is_a_typing_error():
    @cuda.jit
    def k(x, out):
        out[0] = x[1.5]

    err = compile_error(k, np.zeros(3, np.float32), np.zeros(1))
    assert isinstance(err, TypingError)
    assert ("cannot index array(float32, 1d, C) with float64: array indices must be "
            "integers") in str(err)


def test_kernel_returning_a_value():
    @cuda.jit
    def k(out):
        return 1

    err = compile_error(k, np.zeros(1))
    assert "a kernel cannot return a value" in str(err)


def test_unsupported_function_call():
    import os as os_module

    @cuda.jit
    def k(out):
        out[0] = os_module.getpid()

    err = compile_error(k, np.zeros(1))
    assert isinstance(err, UnsupportedError)
    assert "call to unsupported function 'posix.getpid' in a kernel" in str(err)


def test_wrong_number_of_arguments():
    @cuda.jit
    def k(a, b, out):
        out[0] = a + b

    with pytest.raises(TypeError) as info:
        k[1, 1](1.0, np.zeros(1))
    assert str(info.value) == "kernel 'k' takes 3 arguments but 2 were given"


@pytest.mark.parametrize("value, shown", [([1.0, 2.0], "'list'"), ("text", "'str'"),
                                          (None, "'NoneType'"), ({}, "'dict'")])
def test_argument_kernels_cannot_take(value, shown):
    @cuda.jit
    def k(a, out):
        out[0] = 1

    with pytest.raises(TypeError) as info:
        k[1, 1](value, np.zeros(1))
    message = str(info.value)
    assert message.startswith(f"argument 'a' of kernel 'k' is {shown}")


@pytest.mark.parametrize("config, error, message", [
    # Numba's errors and words: ValueError for a sequence of the wrong length,
    # TypeError for an item that is not an integer
    (((1, 2, 3, 4), 32), ValueError,
     "griddim must be a sequence of 1, 2 or 3 integers, got [1, 2, 3, 4]"),
    ((1, [3, 4, 5, 6]), ValueError,
     "blockdim must be a sequence of 1, 2 or 3 integers, got [3, 4, 5, 6]"),
    (((), 32), ValueError, "griddim must be a sequence of 1, 2 or 3 integers, got []"),
    ((1.5, 32), TypeError, "griddim must be a sequence of integers, got [1.5]"),
    ((2, 3.0), TypeError, "blockdim must be a sequence of integers, got [3.0]"),
    (("8", 32), TypeError, "griddim must be a sequence of integers, got ['8']"),
    (((1, None), 32), TypeError, "griddim must be a sequence of integers, got [1, None]"),
    ((0, 32), ValueError, "griddim must be a sequence of positive integers, got [0]"),
    ((-1, 32), ValueError, "griddim must be a sequence of positive integers, got [-1]"),
    ((1, 0), ValueError, "blockdim must be a sequence of positive integers, got [0]"),
    ((1, (32, 0)), ValueError, "blockdim must be a sequence of positive integers, got [32, 0]"),
])
def test_bad_launch_configuration(config, error, message):
    @cuda.jit
    def k(out):
        out[0] = 1

    with pytest.raises(error) as info:
        k[config]
    assert message in str(info.value)
    assert "(launching kernel 'k')" in str(info.value)


def test_launch_dimensions_as_lists():
    @cuda.jit
    def k(out):
        out[0] = 1

    config = k[[2, 1], [4]]
    assert config.griddim == (2, 1, 1) and config.blockdim == (4, 1, 1)


def test_launch_configuration_shape_and_limits():
    @cuda.jit
    def k(out):
        out[0] = 1

    with pytest.raises(ValueError, match=r"launched as kernel\[griddim, blockdim\]"):
        k[1]
    # A block beyond the limits fails at the launch (as in Numba).
    with pytest.raises(ValueError, match="has 2048 threads: a block has at most 1024"):
        k[1, (32, 64)](np.zeros(1))
    with pytest.raises(ValueError, match="is 65 along z: CUDA allows at most 64"):
        k[1, (1, 1, 65)](np.zeros(1))
    with pytest.raises(ValueError, match="is 65536 along y: CUDA allows at most 65535"):
        k[(1, 65536), 1]
    with pytest.raises(ValueError, match="sharedmem of kernel 'k' must be"):
        k[1, 1, 0, -4]
    # Numba's ValueError and words
    with pytest.raises(ValueError, match=r"launch configuration was not specified for kernel "
                                         r"'k': launch it as k\[blocks, threads\]"):
        k(np.zeros(1))

    @cuda.jit("void(int32)")
    def declared(x):
        pass

    with pytest.raises(ValueError, match="launch configuration was not specified"):
        declared(0)


def test_interpreter_survives_and_next_compile_works():
    @cuda.jit
    def bad(out):
        with open("x"):
            pass

    @cuda.jit
    def good(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = i

    for _ in range(3):
        with pytest.raises(UnsupportedError):
            bad[1, 1](np.zeros(4))
        with pytest.raises(TypeError):
            good[1, 4]("not an array")
        out = np.zeros(4)
        good[1, 4](out)
        np.testing.assert_array_equal(out, [0, 1, 2, 3])


def test_writing_to_a_read_only_array():
    @cuda.jit
    def k(x):
        x[0] = 1

    x = np.zeros(3)
    x.flags.writeable = False
    err = compile_error(k, x)
    assert isinstance(err, TypingError)
    assert "cannot write to a read-only array" in str(err)


def test_variable_types_that_cannot_unify():
    # Two assignments one read may see (v = x; v = 1.5 alone would be two
    # versions of v, as in Numba's SSA form).
    @cuda.jit
    def k(x, out):
        v = x
        if out[0] > 0:
            v = 1.5
        out[0] = v

    err = compile_error(k, np.zeros(3), np.zeros(1))
    assert isinstance(err, TypingError)
    assert "variable 'v' has type array(float64, 1d, C)" in str(err)


# Typing finds these before any IR of the kernel exists (the type map
# settles first), at the node that causes them.
def test_zero_range_step_is_a_typing_error():
    @cuda.jit
    def k(out):
        for i in range(0, 4, 0):
            out[0] = i

    err = compile_error(k, np.zeros(1))
    assert isinstance(err, TypingError)
    assert "range() step must not be zero" in str(err)
    line, col = position_of(k.py_func, "range(0, 4, 0)")
    assert (err.line, err.column) == (line, col + len("range(0, 4, "))


def test_bare_return_in_a_device_function_declared_to_return_a_value():
    @cuda.jit("float32(float32)", device=True)
    def clamp(x):
        if x < 0:
            x = 0
        return

    @cuda.jit
    def k(out):
        out[0] = clamp(out[0])

    err = compile_error(k, np.zeros(1, dtype=np.float32))
    assert isinstance(err, TypingError)
    assert ("device function returns float32 on other paths: "
            "a bare 'return' here returns nothing") in str(err)
    assert err.line == position_of(clamp.py_func, "return")[0]


def test_returned_value_that_the_declared_return_type_cannot_hold():
    @cuda.jit("float32(float32)", device=True)
    def pair(x):
        return (x, x)

    @cuda.jit
    def k(out):
        out[0] = pair(out[0])

    err = compile_error(k, np.zeros(1, dtype=np.float32))
    assert isinstance(err, TypingError)
    assert "cannot convert UniTuple(float32 x 2) to float32" in str(err)
    assert err.line == position_of(pair.py_func, "return (x, x)")[0]


@pytest.mark.parametrize("source, message", [
    ("out[0] = {1: 2}[1]", "dicts are not supported in kernels"),
    ('out[0] = len("abc")', "len() of a value of type Python object"),
    ("out[0] = sum(v for v in (1, 2))", "generator expressions are not supported in kernels"),
    ("try:\n        out[0] = 1\n    except Exception:\n        pass",
     "'try' statements are not supported in kernels"),
    ("class C:\n        pass", "class definitions are not supported in kernels"),
    ("n = out.size\n    a = cuda.shared.array(n, np.float32)",
     "the shape of cuda.shared.array() must be a constant int or a tuple of constant ints, "
     "not a value computed at run time"),
    ("a = cuda.shared.array((4, out.size), np.float32)",
     "must be a constant int or a tuple of constant ints"),
    ("cuda.atomic.add(out, 0, 1)\n    cuda.atomic.inc(out, 0, 1)",
     "cuda.atomic.inc() is not supported on array(float64, 1d, C): it needs uint32 or uint64"),
    ("a = cuda.shared.array(4, dtype=np.float32, order=1)",
     "cuda.shared.array() got an unexpected keyword argument 'order'"),
])
def test_more_rejected_programs(tmp_path, source, message):
    # Each program is a kernel written to a file, so the frontend reads its source.
    path = tmp_path / "kernel_module.py"
    path.write_text(
        "import numpy as np\nfrom tidal import cuda\n\n@cuda.jit\ndef k(out):\n    "
        + source + "\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("kernel_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(CompileError) as info:
        module.k[1, 1](np.zeros(4))
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_kernel_without_source_says_why():
    # Compiled from an AST, not a string: no source to keep (exec'd strings
    # are kept: test_sources.py).
    import ast
    namespace = {}
    tree = ast.parse("from tidal import cuda\n@cuda.jit\ndef nosource(out):\n    out[0] = 1\n")
    exec(compile(tree, "<generated>", "exec"), namespace)
    with pytest.raises(CompileError) as info:
        namespace["nosource"][1, 1](np.zeros(1))
    assert "cannot read the source of 'nosource'" in str(info.value)
    assert "import tidal before exec()/compile() of the kernel's source" in str(info.value)


GLOBAL_ROWS, GLOBAL_COLUMNS = 5, 6


@pytest.mark.parametrize("shape_source, signature, spelling, caret", [
    ("a[0]", "void(float32[:])", "array(shape=float32, dtype=class(float32))", "a[0]"),
    ("a[0]", "void(int32[:])", "array(shape=int32, dtype=class(float32))", "a[0]"),
    ("(1, a[0])", "void(int32[:])", "array(shape=Tuple(Literal[int](1), int32), dtype=class(float32))",
     "(1, a[0])"),
    ("[GLOBAL_ROWS, GLOBAL_COLUMNS]", "void(int32[:])",
     "array(shape=list(int64)<iv=[5, 6]>, dtype=class(float32))", "[GLOBAL_ROWS, GLOBAL_COLUMNS]"),
])
def test_array_shapes_kernels_cannot_take_say_it_in_numbas_words(shape_source, signature, spelling,
                                                                 caret):
    namespace = {"cuda": cuda, "float32": np.float32, "GLOBAL_ROWS": GLOBAL_ROWS,
                 "GLOBAL_COLUMNS": GLOBAL_COLUMNS}
    exec(f"def k(a):\n    s = cuda.shared.array({shape_source}, float32)\n    a[0] = s[0]\n",
         namespace)
    with pytest.raises(TypingError) as info:
        cuda.jit(signature)(namespace["k"])
    text = str(info.value)
    assert ":2:27: No implementation of function Function(<function shared.array>) found for " \
           f"signature:\n \n >>> {spelling}\n \n" in text
    assert text.splitlines()[-1].strip() == "^" * len(caret)
    if shape_source.startswith("["):
        assert "write a tuple (5, 6)" in text


def test_an_object_dtype_names_the_variable():
    with pytest.raises(TypingError, match=r"test_errors\.py:\d+:\d+: Cannot infer the type of "
                                          r"variable 'arr': cuda\.shared\.array\(\) of dtype object"):
        @cuda.jit("void()")
        def k():
            arr = cuda.shared.array(10, dtype=np.dtype("O"))  # noqa: F841


def test_numpy_dtype_calls_are_compile_time_dtypes(target):
    @cuda.jit
    def k(out):
        s = cuda.local.array(2, dtype=np.dtype("int16"))
        s[0] = 40000  # wraps as an int16
        out[0] = s[0]

    out = np.zeros(1)
    k[1, 1](out)
    target.assert_result("k", out, [40000 - 65536])

    @cuda.jit
    def bad(out):
        s = cuda.local.array(2, dtype=np.dtype("int33"))
        out[0] = s[0]

    with pytest.raises(TypingError, match=r"test_errors\.py:\d+:\d+: numpy\.dtype\(\): data type "
                                          r"'int33' not understood"):
        bad[1, 1](np.zeros(1))
