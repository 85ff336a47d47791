"""tidalc --print-pipeline gives the text that reproduces, with opt-19 and
llc-19, the PTX tidal makes in process, byte for byte (docs/research.md):

    tidalc k.py --kernel K --sig S --emit=markers > k.ll
    opt-19 -load-pass-plugin=build/lib/TidalPasses.so -mtriple=nvptx64-nvidia-cuda -mcpu=sm_75 \\
        -passes="$(tidalc --print-pipeline --arch sm_75 k.py --kernel K)" k.ll |
    llc-19 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_75 -O3 -fp-contract=fast -asm-verbose=false
"""

import importlib.util
import os
import re
import shutil
import sys
import subprocess
from pathlib import Path

import pytest

from build_tree import BUILD

TIDALC = BUILD / "bin" / "tidalc"
PLUGIN = BUILD / "lib" / "TidalPasses.so"
LIBDEVICE = Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda") / "nvvm/libdevice/libdevice.10.bc"

KERNELS = '''
import math
from tidal import cuda, float32


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def block_sum(values, sums):
    partial = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    partial[t] = values[cuda.grid(1)]
    cuda.syncthreads()
    step = 64
    while step > 0:
        if t < step:
            partial[t] += partial[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        cuda.atomic.add(sums, 0, partial[0])


@cuda.jit(passes={"after-lowering": "function(instnamer)", "before-codegen": "globaldce"})
def with_passes(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * 3


@cuda.jit
def with_libdevice(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.sin(x[i]) + math.exp(x[i])
'''

CASES = [
    ("saxpy", "void(float32, float32[::1], float32[::1], float32[::1])", "sm_75"),
    ("block_sum", "void(float32[::1], float32[::1])", "sm_80"),
    ("with_passes", "void(int64[::1])", "sm_90"),
    ("with_libdevice", "void(float64[::1], float64[::1])", "sm_75"),
]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reproduce")
    source = folder / "research_kernels.py"
    source.write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("research_kernels", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return source, module


def _tool(name):
    path = shutil.which(name) or f"/usr/lib/llvm-19/bin/{name.split('-')[0]}"
    assert os.path.exists(path), f"{name} (llvm-19-tools) is missing"
    return path


@pytest.mark.parametrize("kernel, signature, arch", CASES, ids=[c[0] for c in CASES])
def test_opt_and_llc_reproduce_the_in_process_ptx(kernels, kernel, signature, arch):
    if kernel == "with_libdevice" and not LIBDEVICE.is_file():
        pytest.skip(f"no libdevice at {LIBDEVICE} (a CUDA toolkit is optional)")
    source, module = kernels
    dispatcher = getattr(module, kernel)
    in_this_process = dispatcher.inspect_asm(dispatcher.compile(signature), arch=arch)

    def tidalc(*args):
        return subprocess.run([str(TIDALC), *args], check=True, capture_output=True,
                              text=True).stdout

    # The PTX of a new Python process (its first kernel), as a launch makes it.
    script = (f"import sys; sys.path.insert(0, {str(source.parent)!r})\n"
              f"import research_kernels as m\n"
              f"k = m.{kernel}\n"
              f"print(k.inspect_asm(k.compile({signature!r}), arch={arch!r}), end='')\n")
    in_process = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                                text=True, env=dict(os.environ, TIDAL_TARGET="cpu",
                                                     PYTHONPATH=str(BUILD / "python"))).stdout

    markers = tidalc(str(source), "--kernel", kernel, "--sig", signature, "--emit=markers")
    pipeline = tidalc("--print-pipeline", "--arch", arch, str(source), "--kernel", kernel).strip()
    assert pipeline == __import__("tidal.compiler").compiler.pipeline_text(
        "cuda", arch, dispatcher.options.get("passes"))
    target = ["-mtriple=nvptx64-nvidia-cuda", f"-mcpu={arch}"]
    optimised = subprocess.run(
        [_tool("opt-19"), f"-load-pass-plugin={PLUGIN}", *target, f"-passes={pipeline}", "-"],
        input=markers.encode(), check=True, capture_output=True).stdout
    ptx = subprocess.run(
        [_tool("llc-19"), *target, "-O3", "-fp-contract=fast", "-asm-verbose=false", "-"],
        input=optimised, check=True, capture_output=True).stdout.decode()
    assert ptx == in_process
    assert ptx == tidalc(str(source), "--kernel", kernel, "--sig", signature, "--emit=ptx",
                         "--arch", arch)
    assert f".entry {kernel}" in ptx
    # A process that compiled calls before numbers its call sites on: LLVM's
    # NVPTX backend counts them process-wide (// callseq N, prototype_N).
    assert _call_sites_renumbered(in_this_process) == _call_sites_renumbered(ptx)


def _call_sites_renumbered(ptx):
    return re.sub(r"(callseq |prototype_)\d+", r"\1N", ptx)
