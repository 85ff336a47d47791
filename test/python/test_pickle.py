"""Kernels, device functions and device arrays through pickle and
cloudpickle (tidal/pickling.py): by value with their source, so that a
process without the user's file compiles them; compiled once per process."""

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tidal
from tidal import cuda

try:
    import cloudpickle
except ImportError:  # pragma: no cover - Debian's python3-cloudpickle is in setup.sh
    cloudpickle = None

PICKLERS = [pytest.param(pickle, id="pickle"),
            pytest.param(cloudpickle, id="cloudpickle",
                         marks=pytest.mark.skipif(cloudpickle is None,
                                                  reason="cloudpickle is not installed"))]

# A user's module: a kernel calling a device function, a module global, a
# constant, tidal names imported directly, and a closure.
USER_MODULE = textwrap.dedent('''\
    import math
    import numpy as np
    from tidal import cuda, float64
    from tidal.cuda import grid

    SCALE = 3.0

    @cuda.jit(device=True)
    def twice(v):
        return 2.0 * v

    @cuda.jit
    def transform(x, out):
        i = grid(1)
        if i < x.size:
            out[i] = twice(x[i]) * SCALE + math.sqrt(float64(4.0))

    def make_shift(offset):
        @cuda.jit
        def shift(x, out):
            i = cuda.grid(1)
            if i < x.size:
                out[i] = x[i] + offset
        return shift

    shift_by_seven = make_shift(7.0)

    @cuda.jit
    def broken(x):
        i = cuda.grid(1)
        x[i] = undefined_name

    @cuda.jit("void(float32[::1], float32[::1])")
    def declared(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] + 1
''')


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    path = tmp_path / "user_kernels_for_pickle.py"
    path.write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    sys.modules.pop("user_kernels_for_pickle", None)
    module = importlib.import_module("user_kernels_for_pickle")
    yield module
    sys.modules.pop("user_kernels_for_pickle", None)


def _run(kernel, x):
    out = np.zeros_like(x)
    kernel[(x.size + 63) // 64, 64](x, out)
    return out


@pytest.mark.parametrize("pickler", PICKLERS)
def test_kernel_round_trip_in_one_process_is_the_same_kernel(user_module, pickler):
    # In the process that has the kernel, unpickling gives it back: its
    # compiled signatures are kept.
    x = np.arange(10, dtype=np.float64)
    _run(user_module.transform, x)
    again = pickler.loads(pickler.dumps(user_module.transform))
    assert again is user_module.transform
    assert again.signatures


@pytest.mark.parametrize("pickler", PICKLERS)
def test_device_function_and_closure_kernel_round_trip(user_module, pickler):
    x = np.arange(5, dtype=np.float64)
    shift = pickler.loads(pickler.dumps(user_module.shift_by_seven))
    np.testing.assert_array_equal(_run(shift, x), x + 7.0)
    twice = pickler.loads(pickler.dumps(user_module.twice))
    assert twice is user_module.twice
    assert twice(4.0) == 8.0


# The pickling process and the unpickling one are separate interpreters;
# the second never sees the user's file (it is deleted in between).
DUMP = textwrap.dedent('''\
    import sys, {pickler}
    sys.path.insert(0, sys.argv[1])
    import user_kernels_for_pickle as user
    from tidal import cuda
    import numpy as np
    objects = (user.transform, user.shift_by_seven, user.broken,
               cuda.to_device(np.arange(6, dtype=np.float32).reshape(2, 3)))
    sys.stdout.buffer.write({pickler}.dumps(objects))
''')

LOAD = textwrap.dedent('''\
    import sys, pickle
    import numpy as np
    transform, shift, broken, device = pickle.loads(sys.stdin.buffer.read())
    x = np.arange(100, dtype=np.float64)
    out = np.zeros_like(x)
    transform[4, 32](x, out)
    assert np.array_equal(out, 2.0 * x * 3.0 + 2.0), out
    shift[4, 32](x, out)
    assert np.array_equal(out, x + 7.0), out
    # Unpickled twice in this process: one kernel, compiled once.
    again = pickle.loads(pickle.dumps(transform))
    assert again is transform and len(transform.signatures) == 1
    from tidal import cuda
    assert isinstance(device, cuda.DeviceNDArray), type(device)
    assert np.array_equal(device.copy_to_host(),
                          np.arange(6, dtype=np.float32).reshape(2, 3))
    try:
        broken[1, 1](x)
    except Exception as error:
        print(type(error).__name__, error)
    print("ok")
''')


def _python_env(extra_path=None):
    env = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(tidal.__file__))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_path, package_parent) if p)
    env["TIDAL_TARGET"] = "cpu"
    return env


@pytest.mark.parametrize("pickler", ["pickle", "cloudpickle"])
def test_kernel_compiles_in_a_process_without_the_source_file(tmp_path, pickler):
    if pickler == "cloudpickle" and cloudpickle is None:
        pytest.skip("cloudpickle is not installed")
    source_dir = tmp_path / "user"
    source_dir.mkdir()
    path = source_dir / "user_kernels_for_pickle.py"
    path.write_text(USER_MODULE)
    dumped = subprocess.run([sys.executable, "-c", DUMP.format(pickler=pickler),
                             str(source_dir)], env=_python_env(), capture_output=True,
                            check=True, cwd=tmp_path).stdout
    path.unlink()
    loaded = subprocess.run([sys.executable, "-c", LOAD], input=dumped, env=_python_env(),
                            capture_output=True, cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stderr.decode()
    text = loaded.stdout.decode()
    assert text.endswith("ok\n"), text
    # The error of a broken kernel points at its line in the original file.
    error_line = text.splitlines()[0]
    assert "undefined_name" in error_line, error_line
    assert "user_kernels_for_pickle.py" in error_line, error_line
    assert ":31:" in error_line, error_line


def test_device_array_pickles_as_its_host_copy(rng):
    host = rng.standard_normal((4, 5))
    device = cuda.to_device(host)
    data = pickle.dumps(device)
    again = pickle.loads(data)
    assert isinstance(again, cuda.DeviceNDArray)
    assert again is not device
    np.testing.assert_array_equal(again.copy_to_host(), host)
    # A strided view comes back with its elements (contiguous).
    view = pickle.loads(pickle.dumps(device[:, ::2]))
    np.testing.assert_array_equal(view.copy_to_host(), host[:, ::2])


def test_unpickling_without_the_extension_names_what_is_missing(tmp_path, user_module):
    # A process whose tidal package lacks the compiled _tidal extension (the
    # pure-Python sources only): a clear ImportError, not a pickle traceback.
    import shutil
    package = tmp_path / "sources_only" / "tidal"
    shutil.copytree(os.path.dirname(tidal.__file__), package,
                    ignore=shutil.ignore_patterns("_tidal*", "__pycache__"))
    data = pickle.dumps(user_module.transform)
    script = ("import pickle, sys\n"
              "try:\n"
              "    pickle.loads(sys.stdin.buffer.read())\n"
              "except ImportError as error:\n"
              "    print(error)\n")
    env = dict(os.environ, PYTHONPATH=str(package.parent))
    result = subprocess.run([sys.executable, "-c", script], input=data, env=env,
                            capture_output=True, check=True)
    message = result.stdout.decode()
    assert "tidal._tidal" in message and "is missing" in message, message


@pytest.mark.parametrize("pickler", PICKLERS)
def test_kernel_made_in_exec_pickles_with_its_kept_source(pickler):
    # tidal keeps the source of exec'd strings (tidal/_sources.py).
    namespace = {}
    exec("from tidal import cuda\n"
         "@cuda.jit\n"
         "def made_in_exec(x):\n"
         "    x[0] = 41 + 1\n", namespace)
    kernel = namespace["made_in_exec"]
    rebuild, (kind, _, state, options) = pickler.loads(pickler.dumps(kernel)).__reduce__()
    assert state["lines"][0] == "@cuda.jit\n" and state["first_line"] == 2
    rebuilt = rebuild(kind, ("exec", "identity"), state, options)
    assert rebuilt is not kernel
    x = np.zeros(1)
    rebuilt[1, 1](x)
    if cuda.current_target() == "cpu":
        assert x[0] == 42


def test_kernel_without_source_cannot_pickle():
    import ast
    namespace = {}
    tree = ast.parse("from tidal import cuda\n"
                     "@cuda.jit\n"
                     "def made_from_ast(x):\n"
                     "    x[0] = 1\n")
    exec(compile(tree, "<generated>", "exec"), namespace)
    with pytest.raises(TypeError, match="cannot pickle 'made_from_ast'.*source"):
        pickle.dumps(namespace["made_from_ast"])


def test_kernel_pickled_by_another_python_version_is_refused(user_module):
    # What unpickling runs, with the state a Python 3.99 would have written.
    function, (kind, identity, state, options) = user_module.transform.__reduce__()
    state = dict(state, python="3.99")
    with pytest.raises(ImportError, match=r"pickled by Python 3\.99 and this is Python 3\."):
        function(kind, "another-id", state, options)


def test_rebuilt_kernel_outlives_the_objects_that_held_it(user_module):
    # A worker drops a task's objects after running it; the kernel it
    # rebuilt stays known, with its compiled signatures, for the next task.
    import gc
    from tidal import pickling
    function, (kind, identity, state, options) = user_module.transform.__reduce__()
    fresh_id = identity + "-rebuilt"
    kernel = function(kind, fresh_id, state, options)
    x = np.arange(8, dtype=np.float64)
    _run(kernel, x)
    del kernel
    gc.collect()
    again = function(kind, fresh_id, state, options)
    assert again.signatures, "the rebuilt kernel was collected and rebuilt"
    assert pickling._known[fresh_id] is again


@pytest.mark.parametrize("pickler", PICKLERS)
def test_rebuilt_kernel_keeps_its_declared_signatures(user_module, pickler):
    # Rebuilt as a process that has never seen it would (a fresh identity):
    # it still runs only float32 arrays, as declared.
    rebuild, (kind, _, state, options) = pickler.loads(
        pickler.dumps(user_module.declared)).__reduce__()
    rebuilt = rebuild(kind, ("fresh", "identity"), state, options)
    assert rebuilt is not user_module.declared
    assert rebuilt.declared_signatures == ("void(float32[::1], float32[::1])",)
    x = np.arange(4, dtype=np.float32)
    assert _run(rebuilt, x).tolist() == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(TypeError, match="No matching definition"):
        _run(rebuilt, x.astype(np.float64))


@cuda.jit
def _add_block_size(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += cuda.blockDim.x


def test_a_launch_configuration_pickles_with_its_dimensions(target):
    # Numba's test_serialize pickles kernel[5, 8]: the copy launches with the
    # same configuration.
    config = pickle.loads(pickle.dumps(_add_block_size[(5, 2), 8, 0, 16]))
    assert config.griddim == (5, 2, 1) and config.blockdim == (8, 1, 1)
    assert config.sharedmem == 16 and config.stream == 0
    assert config.dispatcher.py_func.__name__ == "_add_block_size"
    a = np.zeros(4, np.int64)
    config(a)
    # cuda.grid(1) ignores blockIdx.y: both rows of blocks add 8 to each element.
    target.assert_result("_add_block_size", a, [16] * 4)
