"""Kernels whose source is not in a file (tidal/_sources.py): exec() and
compile() of a string, ``python -c``; errors in them located in ``<string>``
with the kept line; and what a kernel without any source says."""

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tidal
from tidal import cuda
from tidal.errors import TypingError

KERNELS = textwrap.dedent('''\
    from tidal import cuda

    @cuda.jit(device=True)
    def twice(v):
        return 2 * v

    @cuda.jit
    def doubled(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = twice(x[i])

    def undecorated(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] + 1
''')


def run_doubled(kernel):
    x = np.arange(6, dtype=np.float64)
    out = np.zeros_like(x)
    kernel[1, 8](x, out)
    return x, out


def test_exec_of_a_string(target):
    namespace = {}
    exec(KERNELS, namespace)
    x, out = run_doubled(namespace["doubled"])
    target.assert_result("doubled", out, 2 * x)
    # cuda.jit after exec (how Numba's suite builds its kernels).
    plus_one = cuda.jit(namespace["undecorated"])
    plus_one[1, 8](x, out)
    target.assert_result("undecorated", out, x + 1)


def test_the_same_string_exec_twice_keeps_the_source_of_the_survivor(target):
    """Equal code objects (the same string exec'd twice) each keep their
    source: the first dying does not take the second's."""
    first, second = {}, {}
    exec(KERNELS, first)
    exec(KERNELS, second)
    del first
    gc.collect()
    x, out = run_doubled(second["doubled"])
    target.assert_result("doubled", out, 2 * x)


def test_compile_then_exec_later(target):
    code = compile(KERNELS, "<generated kernels>", "exec")
    compile("x = 1", "<generated kernels>", "exec")  # a later string, same name
    namespace = {}
    exec(code, namespace)
    x, out = run_doubled(namespace["doubled"])
    target.assert_result("doubled", out, 2 * x)


def test_errors_in_exec_kernels_are_located_in_the_kept_source():
    namespace = {}
    exec("from tidal import cuda\n"
         "\n"
         "@cuda.jit\n"
         "def broken(x):\n"
         "    x[0] = undefined_name + 1\n", namespace)
    with pytest.raises(TypingError) as info:
        namespace["broken"][1, 1](np.zeros(1))
    message = str(info.value)
    assert message.startswith("<string>:5:12: ")
    assert "    x[0] = undefined_name + 1\n" in message and "^^^^^^^^^^^^^^" in message
    assert (info.value.file, info.value.line, info.value.column) == ("<string>", 5, 12)


def _python(arguments, **env):
    build_python = os.path.dirname(os.path.dirname(tidal.__file__))
    environment = dict(os.environ, PYTHONPATH=build_python, TIDAL_TARGET="cpu", **env)
    return subprocess.run([sys.executable, *arguments], env=environment, capture_output=True,
                          text=True, timeout=120)


PROGRAM = textwrap.dedent('''\
    import numpy as np
    from tidal import cuda

    @cuda.jit
    def fill(out):
        out[cuda.grid(1)] = 7

    out = np.zeros(4)
    fill[1, 4](out)
    print(out.tolist())
''')


def test_python_dash_c():
    result = _python(["-c", PROGRAM])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[7.0, 7.0, 7.0, 7.0]"


def test_exec_before_tidal_was_imported_says_so():
    program = ("namespace = {}\n"
               "exec('def early(out):\\n    out[0] = 1\\n', namespace)\n"
               "import numpy as np\nfrom tidal import cuda\n"
               "cuda.jit(namespace['early'])[1, 1](np.zeros(1))\n")
    result = _python(["-c", program])
    assert result.returncode != 0
    assert "cannot read the source of 'early'" in result.stderr
    assert "compiled before tidal was imported" in result.stderr


def test_the_switch_turns_keeping_off():
    program = ("import numpy as np\nfrom tidal import cuda\nnamespace = {}\n"
               "exec('def kept(out):\\n    out[0] = 1\\n', namespace)\n"
               "cuda.jit(namespace['kept'])[1, 1](np.zeros(1))\n")
    result = _python(["-c", program], TIDAL_KEEP_SOURCES="0")
    assert result.returncode != 0
    assert "only when TIDAL_KEEP_SOURCES is not 0" in result.stderr


def test_interactive_session_says_what_to_do():
    result = subprocess.run(
        [sys.executable, "-"], input=PROGRAM, capture_output=True, text=True, timeout=120,
        env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(tidal.__file__)),
                 TIDAL_TARGET="cpu"))
    assert result.returncode != 0
    assert "defined in an interactive session" in result.stderr
    assert "IPython/Jupyter" in result.stderr
