"""The fuzzers' own behaviour (utils/fuzz/): each outcome is recognised, so
that `make check`'s fuzz round can fail; and inputs the fuzzers found that
once crashed or hung, kept as regressions (the cpu target's faults are in
test_cpu_faults.py, float16 in test_cpu_float16.py)."""
import os
import random
import sys

import numpy  # noqa: F401 - imported before the fuzzer's forks, as the fuzzer does
import pytest
import tidal.cuda  # noqa: F401
import tidal.errors  # noqa: F401

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "utils", "fuzz"))

import corpus  # noqa: E402
import fuzz_frontend  # noqa: E402
import fuzz_markers  # noqa: E402


def write(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(corpus.PRELUDE + body)
    return str(path)


def ones(np):
    return (np.zeros(64),)


def test_a_child_killed_by_a_signal_is_a_crash(tmp_path):
    path = write(tmp_path, "crashes.py", """
import os, signal
@cuda.jit
def kernel(x):
    x[0] = 1
os.kill(os.getpid(), signal.SIGSEGV)
""")
    assert fuzz_frontend.run_one(path, ones)[0] == "crash"


def test_an_endless_kernel_is_interrupted_not_a_hang(tmp_path, monkeypatch):
    monkeypatch.setattr(fuzz_frontend, "LAUNCH_SECONDS", 5)
    path = write(tmp_path, "endless.py", """
@cuda.jit
def kernel(x):
    while x[0] == 0:
        x[1] += 1.0
""")
    outcome, text = fuzz_frontend.run_one(path, ones)
    assert outcome == "interrupted", text


def test_located_and_unlocated_errors(tmp_path):
    path = write(tmp_path, "located.py", """
@cuda.jit
def kernel(x):
    x[0] = undefined_name
""")
    outcome, text = fuzz_frontend.run_one(path, ones)
    assert outcome == "rejected", text
    path = write(tmp_path, "runs.py", """
@cuda.jit
def kernel(x):
    x[cuda.grid(1)] = 2.0
""")
    assert fuzz_frontend.run_one(path, ones)[0] == "ok"


def test_mutants_are_python_and_deterministic():
    first = [fuzz_frontend.mutate(source, random.Random(7)) for source, _ in corpus.KERNELS]
    second = [fuzz_frontend.mutate(source, random.Random(7)) for source, _ in corpus.KERNELS]
    assert first == second
    for mutant in first:
        if mutant is not None:
            compile(mutant, "<mutant>", "exec")


def test_marker_ir_outcomes(tmp_path):
    plugin = os.path.join(ROOT, "build", "lib", "TidalPasses.so")
    if not os.path.exists(plugin):
        pytest.skip("build/lib/TidalPasses.so is not built")
    good = tmp_path / "good.ll"
    good.write_text("define void @kernel(ptr %out) {\n  ret void\n}\n"
                    "!tidal.kernels = !{!0}\n!0 = !{ptr @kernel}\n")
    assert fuzz_markers.run_opt(plugin, "tidal-lower-host", str(good))[0] == "ok"
    bad = tmp_path / "bad.ll"
    bad.write_text("define void @kernel( {\n")
    assert fuzz_markers.run_opt(plugin, "tidal-lower-host", str(bad))[0] == "rejected"
