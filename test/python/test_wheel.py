"""pip install: a wheel built from the checkout (setup.py's CMake
build_ext, reusing make's build directory) installs into a fresh virtual
environment and runs an example, tidalc and the plugin from outside the
checkout, with nothing of the build tree on the path."""

import glob
import os
import shutil
import subprocess
import sys

import pytest

import tidal

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# make's CMake build directory: tidal is imported from build/python/tidal.
BUILD_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(tidal.__file__))))
SAXPY_SIGNATURE = "void(float32, float32[::1], float32[::1], float32[::1])"

pytestmark = pytest.mark.skipif(
    not os.path.isfile(os.path.join(BUILD_DIR, "CMakeCache.txt")),
    reason=f"tidal is not imported from a CMake build tree ({tidal.__file__})")


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TIDAL_CMAKE_BUILD_DIR", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def _run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, (f"{' '.join(map(str, command))} failed:\n"
                                    f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh venv (with the system's site-packages, for NumPy) with the
    wheel installed; returns its bin directory."""
    work = tmp_path_factory.mktemp("wheel")
    dist = work / "dist"
    env = _clean_env(TIDAL_CMAKE_BUILD_DIR=BUILD_DIR)
    try:
        import build  # noqa: F401  (Debian's python3-build)
        command = [sys.executable, "-m", "build", "--no-isolation", "--wheel",
                   "--outdir", str(dist), ROOT]
    except ImportError:
        command = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                   "--no-index", "-w", str(dist), ROOT]
    _run(command, env=env, cwd=ROOT)
    (wheel,) = glob.glob(str(dist / "tidal-*.whl"))
    environment = work / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
          str(environment)])
    # The venv has no pip of its own: the system's pip installs into it.
    _run([str(environment / "bin" / "python"), "-m", "pip", "install", "--no-index",
          "--quiet", wheel], env=_clean_env(), cwd=work)
    return environment / "bin"


def test_installed_package_runs_saxpy_outside_the_checkout(venv, tmp_path):
    example = tmp_path / "saxpy.py"
    shutil.copy(os.path.join(ROOT, "examples", "saxpy.py"), example)
    env = _clean_env(TIDAL_TARGET="cpu")
    where = _run([str(venv / "python"), "-c", "import tidal; print(tidal.__file__)"],
                 env=env, cwd=tmp_path)
    assert where.startswith(str(venv.parent)), where
    output = _run([str(venv / "python"), str(example)], env=env, cwd=tmp_path)
    assert "check against NumPy: OK" in output, output


def test_version_and_info_name_the_installed_files(venv, tmp_path):
    env = _clean_env(TIDAL_TARGET="cpu")
    version = _run([str(venv / "python"), "-m", "tidal", "--version"], env=env, cwd=tmp_path)
    assert version.strip() == f"tidal {tidal.__version__}"
    info = _run([str(venv / "tidal"), "info"], env=env, cwd=tmp_path)
    package = os.path.join(str(venv.parent), "lib")
    for line in ("plugin (TidalPasses.so)", "tidalc", "extension", "headers"):
        (row,) = [r for r in info.splitlines() if r.startswith(line)]
        assert package in row, info
    assert "LLVM                      : 19." in info, info
    assert "target                    : cpu" in info, info


def test_installed_tidalc_and_plugin(venv, tmp_path):
    example = tmp_path / "saxpy.py"
    shutil.copy(os.path.join(ROOT, "examples", "saxpy.py"), example)
    env = _clean_env(TIDAL_TARGET="cpu")
    markers = _run([str(venv / "tidalc"), str(example), "--kernel", "saxpy", "--sig",
                    SAXPY_SIGNATURE, "--emit=markers"], env=env, cwd=tmp_path)
    assert "@tidal.tid.x()" in markers, markers[:2000]
    opt = shutil.which("opt-19") or "/usr/lib/llvm-19/bin/opt"
    plugin = _run([str(venv / "python"), "-c",
                   "from tidal import installation; print(installation.plugin_path())"],
                  env=env, cwd=tmp_path).strip()
    assert plugin.startswith(str(venv.parent)), plugin
    lowered = subprocess.run([opt, f"-load-pass-plugin={plugin}", "-passes=tidal-nvptx", "-S"],
                             input=markers, capture_output=True, text=True)
    assert lowered.returncode == 0, lowered.stderr
    assert "llvm.nvvm.read.ptx.sreg.tid.x" in lowered.stdout, lowered.stdout[:2000]


def test_installed_plugin_headers_compile_on_their_own(venv, tmp_path):
    # A researcher's pass includes tidal/Passes.h from the installed package:
    # every header it includes must be installed beside it.
    env = _clean_env(TIDAL_TARGET="cpu")
    include = _run([str(venv / "python"), "-c",
                    "from tidal import installation; print(installation.include_dir())"],
                   env=env, cwd=tmp_path).strip()
    assert include.startswith(str(venv.parent)), include
    source = tmp_path / "uses_tidal.cpp"
    source.write_text('#include "tidal/Passes.h"\n#include "tidal/Contract.h"\n')
    llvm_include = subprocess.run(["llvm-config-19", "--includedir"], capture_output=True,
                                  text=True).stdout.strip() or "/usr/lib/llvm-19/include"
    _run(["g++", "-std=c++17", "-fsyntax-only", f"-I{include}", f"-I{llvm_include}",
          str(source)], cwd=tmp_path)


def test_build_without_llvm_19_names_the_debian_packages(tmp_path):
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "setup.py"), "build_ext",
         "--build-temp", str(tmp_path / "temp"), "--build-lib", str(tmp_path / "lib")],
        env=_clean_env(TIDAL_LLVM_DIR=str(tmp_path / "no-llvm")), cwd=ROOT,
        capture_output=True, text=True)
    assert result.returncode != 0
    assert "tidal needs LLVM 19" in result.stderr, result.stderr
    assert "apt-get install" in result.stderr and "llvm-19-dev" in result.stderr, result.stderr


def test_installed_cmake_package_builds_the_research_example(venv, tmp_path):
    # docs/research.md's example, built against the installed package's
    # TidalConfig.cmake, loads into the installed tidal and runs.
    env = _clean_env(TIDAL_TARGET="cpu")
    cmake_dir = _run([str(venv / "python"), "-c",
                      "import tidal.compiler as c; print(c.cmake_dir())"], env=env,
                     cwd=tmp_path).strip()
    assert cmake_dir.startswith(str(venv.parent)), cmake_dir
    build = tmp_path / "research"
    _run(["cmake", "-S", os.path.join(ROOT, "examples", "research"), "-B", str(build),
          f"-DTidal_DIR={cmake_dir}", "-DCMAKE_BUILD_TYPE=Release"], env=env)
    _run(["cmake", "--build", str(build)], env=env)
    script = (
        "import numpy as np, tidal.compiler\n"
        "from tidal import cuda\n"
        f"tidal.compiler.load_pass_plugin({str(build / 'CountMemoryAccesses.so')!r})\n"
        "@cuda.jit(passes={'after-frontend': 'count-memory-accesses'})\n"
        "def copy(a, b, counts):\n"
        "    i = cuda.grid(1)\n"
        "    if i < a.size:\n"
        "        b[i] = a[i]\n"
        "counts = np.zeros(64, np.int64)\n"
        "copy[1, 32](np.ones(32), np.zeros(32), counts)\n"
        "print(counts.reshape(-1, 2).sum(axis=0).tolist())\n")
    out = _run([str(venv / "python"), "-c", script], env=env, cwd=tmp_path)
    assert out.strip().splitlines()[-1] == "[32, 32]", out
