"""The worked example of docs/research.md (examples/research): a pass plugin
built out of tree with CMake against the build tree's TidalConfig.cmake,
loaded into a Python program's kernels on both targets, where it changes
what the kernel computes: each thread counts its loads and stores."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import tidal.compiler

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "research"


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """examples/research built as a researcher builds it, in a folder of its own."""
    cmake = shutil.which("cmake")
    assert cmake, "cmake is missing (a build dependency of tidal)"
    build = tmp_path_factory.mktemp("research-build")
    configure = [cmake, "-S", str(EXAMPLE), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                 f"-DTidal_DIR={tidal.compiler.cmake_dir()}"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    if shutil.which("ccache"):
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    for command in (configure, [cmake, "--build", str(build)]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
    library = build / "CountMemoryAccesses.so"
    assert library.is_file()
    return library


SCRIPT = """
import tidal.compiler
tidal.compiler.load_pass_plugin(%r)

def add_three_times(a, b, counts):
    i = cuda.grid(1)
    if i < a.size:
        for j in range(3):
            b[i] += a[i]

counted = cuda.jit(passes={"after-frontend": "count-memory-accesses"})(add_three_times)
plain = cuda.jit(add_three_times)
a = np.arange(100, dtype=np.float32)
b = np.zeros_like(a)
counts = np.zeros(2 * 128, np.int64)
counted[2, 64](a, b, counts)
sig = counted.signatures[0]
plain.compile(sig)
print(json.dumps({
    "b": b.tolist(), "counts": counts.tolist(),
    "markers": counted.inspect_llvm(sig, stage="markers", target="%s"),
    "ptx": counted.inspect_asm(sig), "plain_ptx": plain.inspect_asm(sig)}))
"""


@pytest.mark.parametrize("name", ["cpu", "cuda"])
def test_the_example_plugin_counts_each_threads_accesses(plugin, mock_script, name):
    run = mock_script(SCRIPT % (str(plugin), name), target=name)
    result = run.result
    # The pass ran at after-frontend: the thread's counters in the marker IR.
    assert "%count.slots = select" in result["markers"]
    assert "call i32 @tidal.ctaid.x()" in result["markers"]
    # In the PTX: the 64-bit counters' global loads and stores.
    assert "st.global.u64" in result["ptx"] and "st.global.u64" not in result["plain_ptx"]
    if name == "cpu":
        # 3 loads of b[i] and 3 of a[i], 3 stores of b[i] per thread in range;
        # threads 100..127 of the grid count nothing.
        assert result["b"] == [3.0 * i for i in range(100)]
        assert result["counts"] == [6, 3] * 100 + [0, 0] * 28
    else:  # the mock runs no kernel: the launch reached the driver
        assert [c["kernel"] for c in run.named("cuLaunchKernel")] == ["add_three_times"]


def test_the_build_tree_exports_its_cmake_package():
    config = Path(tidal.compiler.cmake_dir()) / "TidalConfig.cmake"
    text = config.read_text()
    assert "tidal_add_pass_plugin" in text
    for header in ("tidal/Markers.def", "tidal/Contract.h", "tidal/Passes.h", "tidal/Pipeline.h"):
        folders = [f.strip('"') for f in
                   text.split("set(TIDAL_INCLUDE_DIRS ", 1)[1].split(")", 1)[0].split()]
        assert any(os.path.isfile(os.path.join(f, header)) for f in folders), header


def test_the_example_program_runs_as_written(plugin):
    # examples/research/count_accesses.py, as docs/research.md runs it.
    import sys
    env = dict(os.environ, TIDAL_TARGET="cpu",
               PYTHONPATH=str(Path(tidal.compiler.__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, str(EXAMPLE / "count_accesses.py"), str(plugin)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # thread 0 and 999 copy (1 load, 1 store), thread 1 averages 3 loads;
    # thread 1000 is past the array: nothing.
    assert "[[1 1]\n [3 1]\n [1 1]\n [0 0]]" in done.stdout
    assert "total: 2996 loads, 1000 stores" in done.stdout
    assert "the kernel's result: OK" in done.stdout
