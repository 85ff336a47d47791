"""LLVM IR a user links (cuda.declare_device(..., link=[...]) of a .ll or
.bc file) that does not verify is a CompileError naming the file, never an
abort or a crash (issue 27 §2): LLVM's readers verify a module that has
debug info and stop the process on a broken one ("Broken module found,
compilation aborted!"), and broken IR without debug info crashed a later
pass (SIGSEGV). Each case runs in a child process, so that a regression
shows as its exit status."""

import subprocess
import sys

import pytest

from child_processes import python_environment
from mock_driver import MOCK

# %y uses %z before it is defined: parses, does not verify.
BROKEN = """
define float @twice(float %x) {
entry:
  br label %next
next:
  %y = fadd float %z, %x
  %z = fadd float %x, %x
  ret float %y
}
"""

# The same with debug info: the reader's upgrade verifies it and called
# report_fatal_error.
BROKEN_WITH_DEBUG_INFO = BROKEN + """
!llvm.module.flags = !{!0}
!0 = !{i32 2, !"Debug Info Version", i32 3}
"""

GOOD = """
define float @twice(float %x) {
  %y = fadd float %x, %x
  ret float %y
}
!llvm.module.flags = !{!0}
!0 = !{i32 2, !"Debug Info Version", i32 3}
"""

SCRIPT = r'''
import sys
import warnings
import numpy as np
from tidal import cuda
from tidal.errors import CompileError

warnings.simplefilter("ignore")
twice = cuda.declare_device("twice", "float32(float32)", link=[sys.argv[1]], abi="c")


@cuda.jit
def kernel(x):
    x[0] = twice(x[0])


x = np.full(1, 1.5, np.float32)
try:
    kernel[1, 1](x)
except CompileError as error:
    print("CompileError:", error)
else:
    print("ran", float(x[0]))
'''


def run(target, path):
    environment = python_environment(TIDAL_TARGET=target.name)
    if target.mock:
        environment["TIDAL_CUDA_DRIVER"] = str(MOCK)
    return subprocess.run([sys.executable, "-c", SCRIPT, str(path)], env=environment,
                          capture_output=True, text=True, timeout=120)


def write(tmp_path, text, kind):
    path = tmp_path / f"twice.{kind}"
    if kind == "ll":
        path.write_text(text)
    else:  # bitcode of IR that does not verify: llvm-as without its verifier
        source = tmp_path / "twice-source.ll"
        source.write_text(text)
        subprocess.run(["llvm-as-19", "-disable-verify", str(source), "-o", str(path)],
                       check=True)
    return path


@pytest.mark.parametrize("kind", ["ll", "bc"])
@pytest.mark.parametrize("text", [BROKEN, BROKEN_WITH_DEBUG_INFO],
                         ids=["broken", "broken-with-debug-info"])
def test_linked_ir_that_does_not_verify_is_a_compile_error(target, tmp_path, kind, text):
    path = write(tmp_path, text, kind)
    done = run(target, path)
    assert done.returncode == 0, done.stderr
    assert "LLVM ERROR" not in done.stderr
    assert f"CompileError: LLVM IR of {path} does not verify: Instruction does not dominate " \
           f"all uses!" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("kind", ["ll", "bc"])
def test_linked_ir_with_debug_info_that_verifies_links(target, tmp_path, kind):
    done = run(target, write(tmp_path, GOOD, kind))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ran"), done.stdout
    if target.computes:
        assert done.stdout.strip() == "ran 3.0"


# What the NVPTX backend cannot compile is a diagnostic, which LLVM's
# default handler answers with exit(1): the process ended.
UNCOMPILABLE = {
    "exp10": ("define float @twice(float %x) {\n"
              "  %r = call float @llvm.exp10.f32(float %x)\n  ret float %r\n}\n"
              "declare float @llvm.exp10.f32(float)\n",
              None, "no libcall available for fexp10"),
}

PTX_SCRIPT = r'''
import sys
from tidal import cuda, float32
twice = cuda.declare_device("twice", "float32(float32)", link=[sys.argv[1]], abi="c")


def kernel(x):
    x[0] = twice(x[0])


cc = eval(sys.argv[2])
try:
    cuda.compile_ptx(kernel, (float32[::1],), cc=cc)
except Exception as error:
    print(type(error).__name__, error)
print("alive")
'''


@pytest.mark.parametrize("case", sorted(UNCOMPILABLE))
def test_what_the_nvptx_backend_cannot_compile_is_an_error(target, tmp_path, case):
    text, cc, message = UNCOMPILABLE[case]
    path = write(tmp_path, text, "ll")
    environment = python_environment(TIDAL_TARGET=target.name)
    if target.mock:
        environment["TIDAL_CUDA_DRIVER"] = str(MOCK)
    done = subprocess.run([sys.executable, "-c", PTX_SCRIPT, str(path), repr(cc)],
                          env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    sm = f"sm_{cc[0]}{cc[1]}" if cc else "sm_75"
    assert f"the NVPTX backend cannot compile this for {sm}: " in done.stdout, \
        done.stdout + done.stderr
    assert message in done.stdout and done.stdout.strip().endswith("alive")
