"""Numba programs run unchanged on tidal (tidal/numba_mapping.py, docs/ecosystem.md):
`python3 -m tidal run` and tidal.install_as_numba_cuda() make numba.cuda tidal.cuda
in the process and in the processes it starts, while numba.njit stays Numba's;
tidal's warnings and errors are Numba's classes there; cuda.is_available()
answers True whenever tidal runs kernels; NUMBA_CUDA_DRIVER is honoured.

Every program runs in a process of its own, on each target (the cuda target
over the mock driver where no GPU is present: its kernels compute nothing, so
results are checked where the target computes, launches in the mock's log)."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tidal
from child_processes import python_environment
from mock_driver import MOCK

PACKAGE_PARENT = str(Path(tidal.__file__).resolve().parents[1])
NUMBA_SPEC = importlib.util.find_spec("numba")
# Numba's own half of a mapped program; without Numba, test_without_numba_only_numba_cuda.
needs_numba = pytest.mark.skipif(NUMBA_SPEC is None, reason="Numba is not installed")


def target_environment(target, tmp_path, **settings):
    environment = python_environment(TIDAL_TARGET=target.name, **settings)
    environment["PYTHONPATH"] = PACKAGE_PARENT
    if target.mock:
        environment["TIDAL_CUDA_DRIVER"] = str(MOCK)
        environment["TIDAL_MOCK_CUDA_LOG"] = str(tmp_path / "calls.jsonl")
    return environment


def launches(tmp_path):
    log = tmp_path / "calls.jsonl"
    if not log.exists():
        return 0
    return sum(json.loads(line)["call"] == "cuLaunchKernel"
               for line in log.read_text().splitlines())


def run_tidal(arguments, environment, cwd, timeout=180):
    return subprocess.run([sys.executable, "-m", "tidal", "run"] + arguments, cwd=cwd,
                          env=environment, capture_output=True, text=True, timeout=timeout)


def last_json(process):
    assert process.returncode == 0, process.stdout + process.stderr
    return json.loads(process.stdout.strip().splitlines()[-1])


# A program written for Numba: @njit host code and @cuda.jit kernels, numba.cuda
# imported in each of the forms programs use.
MIXED_PROGRAM = """
import json, sys
import numpy as np
import numba
from numba import cuda, njit, float64
import numba.cuda
import numba.cuda.random
from numba.cuda import libdevice
from numba.cuda.cudadrv.devicearray import DeviceNDArray
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32
from numba.core.errors import NumbaPerformanceWarning

@njit
def host_total(values):
    total = 0.0
    for v in values:
        total += v
    return total

@cuda.jit
def roots(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = libdevice.sqrt(float64(i))

@cuda.jit
def uniform(states, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = xoroshiro128p_uniform_float32(states, i)

out = cuda.device_array(64)
roots[2, 32](out)
states = create_xoroshiro128p_states(64, seed=7)
draws = cuda.device_array(64, dtype=np.float32)
uniform[2, 32](states, draws)
import tidal
print(json.dumps({
    "cuda is tidal.cuda": cuda is tidal.cuda and numba.cuda is tidal.cuda,
    "random": numba.cuda.random is tidal.cuda.random,
    "libdevice": libdevice is tidal.cuda.libdevice,
    "DeviceNDArray": isinstance(out, DeviceNDArray),
    "njit": njit.__module__,
    "numba": numba.__file__,
    "total": host_total(out.copy_to_host()),
    "draws in [0, 1)": bool(((draws.copy_to_host() >= 0) & (draws.copy_to_host() < 1)).all()),
    "available": cuda.is_available(),
}))
"""


@needs_numba
def test_a_mixed_program_runs_unchanged(target, tmp_path):
    (tmp_path / "program.py").write_text(MIXED_PROGRAM)
    process = run_tidal(["program.py"], target_environment(target, tmp_path), tmp_path)
    facts = last_json(process)
    assert facts["cuda is tidal.cuda"] and facts["random"] and facts["libdevice"]
    assert facts["DeviceNDArray"] and facts["available"]
    assert facts["njit"].startswith("numba.core"), "njit stays Numba's"
    assert facts["numba"] == NUMBA_SPEC.origin, "numba itself is Numba, not the shim"
    if target.computes:
        assert facts["total"] == pytest.approx(sum(i ** 0.5 for i in range(64)))
        assert facts["draws in [0, 1)"]
    else:
        assert launches(tmp_path) == 2


# numba-cuda's extension API as a library for it registers methods and
# attributes: numba.cuda.extending, Numba's type classes, target "cuda".
EXTENDING_PROGRAM = """
import json
import numpy as np
from numba import cuda, types
from numba.cuda.extending import overload, overload_attribute, overload_method

def clip01(x, low=0.0):
    pass

@overload(clip01)
def clip01_typing(x, low=0.0):
    def impl(x, low=0.0):
        return min(max(x, low), 1.0)
    return impl

@overload_method(types.Array, "first_scaled")
def first_scaled(a, factor=10):
    def impl(a, factor=10):
        return a[0] * factor
    return impl

@overload_attribute(types.Array, "half_size")
def half_size(a):
    return lambda a: a.size // 2

@cuda.jit
def k(a, out):
    out[0] = a.first_scaled() + a.first_scaled(factor=2) + a.half_size + clip01(a[1], low=0.5)

a = np.array([1.5, 0.25, 3.0, 4.0])
out = np.zeros(1)
k[1, 1](a, out)
from numba.cuda.extending import intrinsic  # imports, as a library module would
try:
    @intrinsic
    def never(typingctx, x):
        pass
    refused = ""
except NotImplementedError as error:
    refused = str(error)
print(json.dumps({"out": float(out[0]), "intrinsic": refused}))
"""


@needs_numba
def test_numba_cuda_extending_registers_overloads_for_kernels(target, tmp_path):
    (tmp_path / "program.py").write_text(EXTENDING_PROGRAM)
    process = run_tidal(["program.py"], target_environment(target, tmp_path), tmp_path)
    facts = last_json(process)
    if target.computes:
        assert facts["out"] == 15.0 + 3.0 + 2 + 0.5
    else:
        assert launches(tmp_path) == 1
    assert "numba.cuda.extending.intrinsic is not offered by tidal" in facts["intrinsic"]


@needs_numba
def test_run_passes_the_arguments_and_the_exit_status(target, tmp_path):
    (tmp_path / "program.py").write_text(
        "import sys\nfrom numba import cuda\nprint(sys.argv[1:], cuda.__name__)\nsys.exit(3)\n")
    process = run_tidal(["program.py", "a", "--b"], target_environment(target, tmp_path), tmp_path)
    assert process.returncode == 3, process.stderr
    assert process.stdout.split() == ["['a',", "'--b']", "tidal.cuda"]
    code = run_tidal(["-c", "import numba.cuda, sys; print(numba.cuda.__name__, sys.argv[1])", "x"],
                     target_environment(target, tmp_path), tmp_path)
    assert code.stdout.split() == ["tidal.cuda", "x"], code.stderr


def test_run_without_a_program_says_how(tmp_path):
    process = subprocess.run([sys.executable, "-m", "tidal", "run"], env=python_environment(),
                             capture_output=True, text=True, timeout=60)
    assert process.returncode == 2
    assert process.stderr.startswith("usage: python3 -m tidal run PROGRAM [ARGS]")


@needs_numba
def test_install_in_process_and_in_spawned_workers(target, tmp_path):
    # The program sets the mapping up itself; its multiprocessing workers
    # (spawned: fresh interpreters) and a plain child interpreter have it too.
    (tmp_path / "program.py").write_text(textwrap.dedent("""
        import json, multiprocessing, subprocess, sys
        import tidal
        tidal.install_as_numba_cuda()

        def in_worker(n):
            import numpy as np
            from numba import cuda
            import numba
            @cuda.jit
            def fill(a, v):
                i = cuda.grid(1)
                if i < a.size:
                    a[i] = v
            a = cuda.device_array(n, dtype=np.int64)
            fill[1, n](a, n)
            return [cuda.__name__, numba.njit.__module__, int(a.copy_to_host().sum())]

        if __name__ == "__main__":
            with multiprocessing.get_context("spawn").Pool(2) as pool:
                results = pool.map(in_worker, [4, 8])
            child = subprocess.run([sys.executable, "-c",
                                    "import numba.cuda.cudadrv.devicearray as d; print(d.__name__)"],
                                   capture_output=True, text=True)
            print(json.dumps([results, child.stdout.strip(), child.stderr[-300:]]))
    """))
    environment = target_environment(target, tmp_path)
    process = subprocess.run([sys.executable, "program.py"], cwd=tmp_path, env=environment,
                             capture_output=True, text=True, timeout=180)
    results, child, child_error = last_json(process)
    assert [r[:2] for r in results] == [["tidal.cuda", "numba.core.decorators"]] * 2
    if target.computes:
        assert [r[2] for r in results] == [16, 64]
    assert child == "tidal.cuda.cudadrv.devicearray", child_error


@needs_numba
def test_numbas_vectorize_for_cuda_makes_tidals_ufuncs(target, tmp_path):
    # numba.vectorize/guvectorize(target='cuda') build through numba.cuda.vectorizers,
    # which is tidal's under the mapping; signatures of Numba's own type objects.
    (tmp_path / "program.py").write_text(textwrap.dedent("""
        import json
        import numpy as np
        from numba import float64, guvectorize, int32, vectorize, void

        @vectorize([int32(int32, int32)], target="cuda")
        def add(a, b):
            return a + b

        @guvectorize([void(float64[:], float64[:])], "(n)->()", target="cuda")
        def total(values, out):
            s = 0.0
            for v in values:
                s += v
            out[0] = s

        x = np.arange(6, dtype=np.int32)
        print(json.dumps([type(add).__module__, type(total).__module__,
                          add(x, x).tolist(), total(np.arange(6.0).reshape(2, 3)).tolist()]))
    """))
    process = run_tidal(["program.py"], target_environment(target, tmp_path), tmp_path)
    ufunc_module, gufunc_module, added, totals = last_json(process)
    assert (ufunc_module, gufunc_module) == ("tidal.ufuncs.ufunc", "tidal.ufuncs.gufunc")
    if target.computes:
        assert added == [0, 2, 4, 6, 8, 10] and totals == [3.0, 12.0]
    else:
        assert launches(tmp_path) == 2


# A small library written for numba.cuda, with its own test suite: the package
# gates its GPU code on cuda.is_available() at import, as real libraries do,
# and its tests run kernels in worker processes.
LIBRARY = {
    "rolling/__init__.py": """
        from numba import cuda
        GPU = cuda.is_available()
        if GPU:
            from .kernels import rolling_sum
    """,
    "rolling/kernels.py": """
        import numpy as np
        from numba import cuda, njit

        @cuda.jit
        def _rolling(values, window, out):
            i = cuda.grid(1)
            if i < out.size:
                total = 0.0
                for j in range(window):
                    total += values[i + j]
                out[i] = total

        @njit
        def reference(values, window):
            out = np.empty(values.size - window + 1)
            for i in range(out.size):
                out[i] = values[i:i + window].sum()
            return out

        def rolling_sum(values, window):
            out = cuda.device_array(values.size - window + 1)
            _rolling[(out.size + 63) // 64, 64](cuda.to_device(values), window, out)
            return out.copy_to_host()
    """,
    "tests/conftest.py": """
        import pytest
        from numba import cuda
        def pytest_collection_modifyitems(items):
            if not cuda.is_available():
                for item in items:
                    item.add_marker(pytest.mark.skip(reason="no GPU"))
    """,
    "tests/test_rolling.py": """
        import os, multiprocessing
        import numpy as np
        import numba
        import rolling
        from rolling.kernels import reference, rolling_sum

        def test_gpu_gate():
            assert rolling.GPU
            assert numba.cuda.__name__ == "tidal.cuda"

        def _worker(seed):
            import numba.cuda, rolling
            from rolling.kernels import reference, rolling_sum
            values = np.random.default_rng(seed).random(300)
            got = rolling_sum(values, 5)
            computes = os.environ.get("TIDAL_MOCK_CUDA_LOG") is None
            return [numba.cuda.__name__, (not computes) or bool(np.allclose(got, reference(values, 5)))]

        def test_workers():
            with multiprocessing.get_context("spawn").Pool(2) as pool:
                assert pool.map(_worker, [1, 2, 3]) == [["tidal.cuda", True]] * 3

        def test_in_process():
            values = np.arange(100.0)
            got = rolling_sum(values, 4)
            if os.environ.get("TIDAL_MOCK_CUDA_LOG") is None:
                assert np.array_equal(got, reference(values, 4))
    """,
}


@needs_numba
def test_a_library_test_suite_through_tidal_run_pytest(target, tmp_path):
    for name, text in LIBRARY.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    environment = target_environment(target, tmp_path)
    environment["PYTHONPATH"] += os.pathsep + str(tmp_path)
    process = run_tidal(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], environment,
                        tmp_path, timeout=300)
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    assert "3 passed" in process.stdout and "skipped" not in process.stdout
    if target.mock:
        assert launches(tmp_path) >= 4, "the suite's and its workers' launches reach the driver"


@needs_numba
def test_a_unittest_suite_with_numba_cuda_testing(target, tmp_path):
    # numba.cuda.testing as library suites use it: CUDATestCase turns the
    # performance warnings off for each test (here an error otherwise), the
    # simulator's skips are the compiled target's.
    (tmp_path / "test_lib.py").write_text(textwrap.dedent("""
        import warnings
        import numpy as np
        from numba import cuda
        from numba.core.errors import NumbaPerformanceWarning
        from numba.cuda.testing import (CUDATestCase, cc_X_or_above, skip_on_cudasim,
                                        skip_unless_cudasim, unittest)

        @cuda.jit
        def one(a):
            a[0] = 7

        class TestLib(CUDATestCase):
            @skip_on_cudasim("compiled targets only")
            def test_tiny_grid_without_warnings(self):
                a = cuda.device_array(1, dtype=np.int64)
                with warnings.catch_warnings():
                    warnings.simplefilter("error", NumbaPerformanceWarning)
                    one[1, 1](a)

            @skip_unless_cudasim("the simulator only")
            def test_simulator_only(self):
                raise AssertionError("ran")

            def test_cc(self):
                cc = cuda.get_current_device().compute_capability
                self.assertTrue(cc_X_or_above(*cc))
                self.assertFalse(cc_X_or_above(cc[0] + 1, 0))

        if __name__ == "__main__":
            unittest.main()
    """))
    environment = target_environment(target, tmp_path,
                                     TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS="1")
    environment["PYTHONPATH"] += os.pathsep + str(tmp_path)
    process = run_tidal(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_lib.py"],
                        environment, tmp_path)
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-2000:]
    assert "2 passed, 1 skipped" in process.stdout


@needs_numba
def test_tidal_warnings_and_errors_are_numbas_classes(target, tmp_path):
    (tmp_path / "program.py").write_text(textwrap.dedent("""
        import json, warnings
        import numpy as np
        from numba import cuda
        from numba.core.errors import NumbaPerformanceWarning, NumbaWarning, TypingError
        from numba.core import config
        from numba.cuda.cudadrv.error import CudaSupportError
        import tidal.errors

        @cuda.jit
        def one(a):
            a[0] = 1

        @cuda.jit
        def bad(a):
            a[0] = undefined_name

        a = cuda.device_array(4)
        out = {}
        config.CUDA_LOW_OCCUPANCY_WARNINGS = 1
        with warnings.catch_warnings():
            warnings.simplefilter("error", NumbaPerformanceWarning)
            try:
                one[1, 1](a)
                out["performance"] = None
            except NumbaPerformanceWarning as w:
                out["performance"] = [str(w), isinstance(w, NumbaWarning)]
        try:
            bad[1, 1](a)
        except TypingError as e:
            out["typing"] = [type(e).__name__, isinstance(e, tidal.errors.TypingError),
                             "undefined_name" in str(e), "\\x1b" in str(e), e.line > 0]
        out["support error"] = CudaSupportError is cuda.CudaSupportError
        print(json.dumps(out))
    """))
    process = run_tidal(["program.py"], target_environment(target, tmp_path), tmp_path)
    out = last_json(process)
    assert out["performance"] == [
        "Grid size 1 will likely result in GPU under-utilization due to low occupancy.", True]
    assert out["typing"] == ["TypingError", True, True, False, True], \
        "Numba's class, tidal's message unstyled"
    assert out["support error"]


def test_numba_support_error_when_the_cuda_target_has_no_driver(tmp_path):
    (tmp_path / "program.py").write_text(textwrap.dedent("""
        import json
        from numba import cuda
        from numba.cuda.cudadrv.error import CudaSupportError
        try:
            cuda.device_array(4)
            print(json.dumps(None))
        except CudaSupportError as e:
            print(json.dumps([cuda.is_available(), str(e)]))
    """))
    environment = python_environment(TIDAL_TARGET="cuda",
                                     TIDAL_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    environment["PYTHONPATH"] = PACKAGE_PARENT
    available, message = last_json(run_tidal(["program.py"], environment, tmp_path))
    assert available is False
    assert "cannot open /nonexistent/libcuda.so.1" in message


def test_without_numba_only_numba_cuda(tmp_path):
    # A Python without Numba (no site-packages; NumPy alone put on the path):
    # `numba` holds numba.cuda only.
    site = tmp_path / "site"
    site.mkdir()
    import numpy
    (site / "numpy").symlink_to(Path(numpy.__file__).parent)
    (tmp_path / "program.py").write_text(textwrap.dedent("""
        import json
        import numba
        from numba import cuda
        import numba.cuda.cudadrv.devicearray as devicearray
        import tidal
        try:
            from numba import njit
            njit_found = True
        except ImportError as e:
            njit_found = str(e)
        try:
            import numba.cuda.no_such_module
        except ModuleNotFoundError as e:
            missing = str(e)
        print(json.dumps([cuda is tidal.cuda, devicearray.DeviceNDArray is cuda.DeviceNDArray,
                          njit_found, missing, cuda.is_available()]))
    """))
    environment = python_environment(TIDAL_TARGET="cpu",
                                     PYTHONPATH=os.pathsep.join([str(site), PACKAGE_PARENT]))
    process = subprocess.run([sys.executable, "-S", "-m", "tidal", "run", "-S", "program.py"],
                             cwd=tmp_path, env=environment, capture_output=True, text=True,
                             timeout=120)
    is_tidal, same_class, njit_found, missing, available = last_json(process)
    assert is_tidal and same_class and available
    assert "cannot import name 'njit'" in njit_found
    assert missing == ("No module named 'numba.cuda.no_such_module': numba.cuda is tidal.cuda "
                       "here (tidal.install_as_numba_cuda), and tidal has no "
                       "tidal.cuda.no_such_module")


# --- cuda.is_available(), cuda_available(), NUMBA_CUDA_DRIVER ------------------------------

def _ask(tmp_path, **settings):
    script = ("import json\nfrom tidal import cuda\nfrom tidal.cuda import target\n"
              "print(json.dumps([cuda.is_available(), target.cuda_available(),"
              " cuda.current_target()]))")
    environment = python_environment(**settings)
    process = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=environment,
                             capture_output=True, text=True, timeout=60)
    return last_json(process), process.stderr


def test_is_available_when_kernels_run_on_the_cpu_target(tmp_path):
    no_driver = "/nonexistent/libcuda.so.1"
    assert _ask(tmp_path, TIDAL_TARGET="cpu", TIDAL_CUDA_DRIVER=no_driver)[0] == [True, False, "cpu"]
    # Nothing chosen and no GPU: kernels run on the cpu target.
    (answer, notice) = _ask(tmp_path, TIDAL_CUDA_DRIVER=no_driver)
    assert answer == [True, False, "cpu"]
    assert "kernels run on the cpu target" in notice
    # The cuda target chosen, without a GPU: no kernel runs.
    no_gpu = _ask(tmp_path, TIDAL_TARGET="cuda", TIDAL_CUDA_DRIVER=no_driver)
    assert no_gpu[0][:2] == [False, False]


def test_is_available_with_a_gpu(tmp_path):
    assert _ask(tmp_path, TIDAL_CUDA_DRIVER=str(MOCK))[0] == [True, True, "cuda"]
    assert _ask(tmp_path, TIDAL_TARGET="cpu", TIDAL_CUDA_DRIVER=str(MOCK))[0] == [True, True, "cpu"]


def test_numba_cuda_driver_is_honoured_where_tidal_cuda_driver_is_not_set(tmp_path):
    # Numba's variable names the driver where tidal's is not set ...
    assert _ask(tmp_path, NUMBA_CUDA_DRIVER=str(MOCK))[0] == [True, True, "cuda"]
    # ... tidal's wins where both are set ...
    answer, _ = _ask(tmp_path, TIDAL_CUDA_DRIVER="/nonexistent/libcuda.so.1",
                     NUMBA_CUDA_DRIVER=str(MOCK))
    assert answer == [True, False, "cpu"]
    # ... and 0 switches the driver off, as in Numba.
    script = ("import json\nfrom tidal import _tidal\nprint(json.dumps(_tidal.driver_status()[2]))")
    process = subprocess.run([sys.executable, "-c", script], env=python_environment(
        NUMBA_CUDA_DRIVER="0"), capture_output=True, text=True, timeout=60)
    assert last_json(process) == ("the CUDA driver is switched off (TIDAL_CUDA_DRIVER or "
                                  "NUMBA_CUDA_DRIVER is 0)")


def test_info_says_the_target_and_whether_a_gpu_is_present(tmp_path):
    process = subprocess.run([sys.executable, "-m", "tidal", "info"], env=python_environment(
        TIDAL_TARGET="cpu", TIDAL_CUDA_DRIVER="/nonexistent/libcuda.so.1"),
        capture_output=True, text=True, timeout=60)
    rows = dict(line.split(": ", 1) for line in process.stdout.splitlines() if ": " in line)
    assert rows["target".ljust(26)] == "cpu"
    assert rows["cuda.is_available()".ljust(26)] == "True"
    assert rows["CUDA GPU present".ljust(26)] == "False"
