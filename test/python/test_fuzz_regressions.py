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

from build_tree import BUILD

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
    first = [fuzz_frontend.mutate(source, random.Random(7)) for source, *_ in corpus.KERNELS]
    second = [fuzz_frontend.mutate(source, random.Random(7)) for source, *_ in corpus.KERNELS]
    assert first == second
    for mutant in first:
        if mutant is not None:
            compile(mutant, "<mutant>", "exec")


def test_marker_ir_outcomes(tmp_path):
    plugin = str(BUILD / "lib" / "TidalPasses.so")
    if not os.path.exists(plugin):
        pytest.skip("build/lib/TidalPasses.so is not built")
    good = tmp_path / "good.ll"
    good.write_text("define void @kernel(ptr %out) {\n  ret void\n}\n"
                    "!tidal.kernels = !{!0}\n!0 = !{ptr @kernel}\n")
    assert fuzz_markers.run_opt(plugin, "tidal-lower-host", str(good))[0] == "ok"
    bad = tmp_path / "bad.ll"
    bad.write_text("define void @kernel( {\n")
    assert fuzz_markers.run_opt(plugin, "tidal-lower-host", str(bad))[0] == "rejected"


# --- the frontend fuzzer's workers (utils/fuzz/workers.py) -------------------

def run_requests(requests, serve, launch_seconds=5.0, answer_seconds=5.0, jobs=1):
    import workers
    answers = {}
    workers.run([(name, name) for name in requests], serve, jobs, launch_seconds,
                answer_seconds, lambda name, outcome, text: answers.__setitem__(
                    name, (outcome, text)))
    return answers


def serve_by_name(name):
    """A worker's answer to a request named after what it should do."""
    import signal
    import time
    if name.startswith("ok"):
        return "ok", str(os.getpid()), True
    if name.startswith("ran"):  # not clean: the worker is not reused
        return "ok", str(os.getpid()), False
    if name == "abort":
        os.abort()
    if name == "aborts-after-answering":  # as free() over a corrupted heap did
        os._exit = lambda status: os.abort()
        return "ok", str(os.getpid()), False
    if name == "interrupted-when-idle":  # the parent's SIGINT, just after the answer
        import threading
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
        return "ok", str(os.getpid()), True
    if name == "endless":  # stops at SIGINT, as a kernel does
        try:
            while True:
                time.sleep(0.01)
        except KeyboardInterrupt:
            return "interrupted", "", True
    if name == "slow-compile":  # its launch begins late, then ends at once
        time.sleep(0.6)
        import workers
        workers.progress(phase="launch")
        return "ok", str(os.getpid()), True
    if name in ("endless-launch", "spinning-launch"):  # stops at SIGINT, as a kernel does
        import workers
        workers.progress(phase="launch")
        try:
            while True:
                if name == "endless-launch":
                    time.sleep(0.01)
        except KeyboardInterrupt:
            return "interrupted", "", True
    if name == "deaf":  # ignores SIGINT too: a hang
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        while True:
            time.sleep(0.01)
    raise AssertionError(name)


def test_a_worker_runs_inputs_one_after_another_until_one_crashes():
    answers = run_requests(["ok1", "ok2", "abort", "ok3", "ok4"], serve_by_name)
    assert answers["abort"][0] == "crash", answers
    assert answers["ok1"] == answers["ok2"]  # one worker (its pid) served both
    assert answers["ok3"] == answers["ok4"]
    assert answers["ok2"] != answers["ok3"]  # replaced after the crash


def test_a_crash_after_the_answer_is_a_crash_of_that_input():
    # The frontend fuzzer's 10^5 run printed "corrupted size vs. prev_size"
    # and counted no crash: the worker aborted after its answer, and was
    # killed without a look at how it had ended.
    crashes = []
    import workers
    workers.run([(n, n) for n in ["ok1", "aborts-after-answering", "ok2"]], serve_by_name, 1,
                5.0, 5.0, lambda name, outcome, text: crashes.append((name, outcome, text))
                if outcome == "crash" else None)
    assert crashes == [("aborts-after-answering", "crash", "died after answering, of signal 6")]


def test_an_interrupt_that_comes_after_the_answer_is_not_a_crash():
    # The frontend fuzzer's 10^5 run counted input 48649 as a crash ("died
    # after answering, of exit status 3"): the parent's SIGINT for a late
    # deadline reached the worker after its answer, while it waited for the
    # next input, and the KeyboardInterrupt ended it as a fuzzer error.
    import time
    import workers

    def items():  # the next input comes late: the worker waits, idle, when SIGINT comes
        yield "interrupted-when-idle", "interrupted-when-idle"
        time.sleep(0.5)
        yield "ok1", "ok1"
        yield "ok2", "ok2"

    outcomes = []
    workers.run(items(), serve_by_name, 1, 5.0, 5.0,
                lambda name, outcome, text: outcomes.append((name, outcome)))
    assert outcomes == [("interrupted-when-idle", "ok"), ("ok1", "ok"), ("ok2", "ok")]


def test_a_worker_is_not_reused_after_an_input_that_is_not_clean():
    answers = run_requests(["ok1", "ran1", "ok2"], serve_by_name)
    assert answers["ok1"] == answers["ran1"]
    assert answers["ran1"] != answers["ok2"]


def test_a_kernel_that_ran_leaves_its_worker_unclean(tmp_path):
    ran = write(tmp_path, "ran.py", """
@cuda.jit
def kernel(x):
    x[cuda.grid(1)] = 2.0
""")
    refused = write(tmp_path, "refused.py", """
@cuda.jit
def kernel(x):
    x[0] = undefined_name
""")
    assert fuzz_frontend.run_kernel_file(ran, ones)[::2] == ("ok", False)
    assert fuzz_frontend.run_kernel_file(refused, ones)[::2] == ("rejected", True)


def test_a_worker_interrupted_or_deaf_is_replaced():
    answers = run_requests(["ok1", "endless", "ok2", "deaf", "ok3"], serve_by_name,
                           launch_seconds=0.3, answer_seconds=0.3)
    assert answers["endless"][0] == "interrupted", answers
    assert answers["deaf"][0] == "hang", answers
    assert len({answers[n][1] for n in ("ok1", "ok2", "ok3")}) == 3
    for name in ("ok1", "ok2", "ok3"):
        assert answers[name][0] == "ok"


def test_a_pytest_run_that_starts_with_sigint_ignored_still_interrupts_kernels():
    # A shell's background job starts with SIGINT ignored. After a cpu launch
    # (tidal's handler installed, chained to what it found), an endless
    # kernel in a fuzz worker forked from this process must still be
    # interrupted: conftest.py puts Python's handler back first.
    import signal
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    tests = [os.path.join(here, "test_cpu_fitted_blocks.py") + "::"
             "test_a_launch_that_does_not_fit_builds_nothing_and_runs_the_checks",
             os.path.join(here, "test_fuzz_regressions.py") + "::"
             "test_an_endless_kernel_is_interrupted_not_a_hang"]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          *tests],
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
                         capture_output=True, text=True, timeout=300, cwd=here)
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout[-3000:]


def test_the_launch_limit_runs_from_the_launch():
    # A compile slower than the launch limit is not interrupted (the 10^5 run
    # of the last round counted kernels that compiled slowly on a loaded
    # machine as endless); a launch that does not end is, launch_seconds
    # after it began.
    import time
    import workers
    answers = {}
    started = time.monotonic()
    workers.run([(n, n) for n in ["slow-compile", "endless-launch"]], serve_by_name, 1, 0.3,
                5.0, lambda name, outcome, text: answers.__setitem__(name, outcome),
                compile_seconds=5.0)
    assert answers == {"slow-compile": "ok", "endless-launch": "interrupted"}
    assert time.monotonic() - started < 4.0


def test_a_launch_is_interrupted_at_its_cpu_limit():
    # An endless kernel spins the cpu target's threads: its CPU time, not the
    # wall clock (long on a loaded machine), is what it costs.
    import time
    import workers
    answers = {}
    started = time.monotonic()
    workers.run([("spinning-launch", "spinning-launch")], serve_by_name, 1, 60.0, 5.0,
                lambda name, outcome, text: answers.__setitem__(name, outcome),
                compile_seconds=5.0, launch_cpu_seconds=0.2)
    assert answers == {"spinning-launch": "interrupted"}
    assert time.monotonic() - started < 30.0


def test_timings_count_each_outcome():
    import workers
    timings = workers.Timings()
    workers.run([(n, n) for n in ["ok1", "ran1", "abort"]], serve_by_name, 1, 5.0, 5.0,
                lambda *_: None, timings=timings)
    assert {k: v["inputs"] for k, v in timings.outcomes.items()} == {"ok": 2, "crash": 1}
    assert timings.replaced == 2  # after the kernel that ran, and after the crash
    assert "workers replaced 2" in "\n".join(timings.report(1))


def test_the_corpus_kernels_run_as_they_are(tmp_path):
    # Each unmutated kernel of the corpus compiles and runs on the cpu target:
    # a corpus kernel that does not would only ever give rejected mutants.
    import numpy as np
    from tidal.cuda.target import use_target
    with use_target("cpu"):
        for number, (source, arguments, *_) in enumerate(corpus.KERNELS):
            path = write(tmp_path, f"corpus_{number}.py", source)
            outcome, text, _ = fuzz_frontend.run_kernel_file(path, arguments)
            assert outcome == "ok", (number, text)


def test_a_kernels_bad_passes_text_is_rejected_not_unlocated(tmp_path):
    path = write(tmp_path, "passes.py", """
@cuda.jit(passes={'after-lowering': 'no-such-pass'})
def kernel(x):
    x[cuda.grid(1)] = 2.0
""")
    outcome, text = fuzz_frontend.run_one(path, ones)
    # Located at the decorator, where passes= is written (file.py:line).
    assert outcome == "rejected" and "no-such-pass" in text and "passes.py:" in text, text


def test_a_kernels_malformed_passes_str_is_rejected_at_the_decorator(tmp_path):
    # Seed 32, input 79035: passes='abc'.upper() was a TypeError at the
    # first launch, with no line of the user's.
    path = write(tmp_path, "passes_str.py", """
@cuda.jit(passes='abc'.upper())
def kernel(x):
    x[cuda.grid(1)] = 2.0
""")
    outcome, text, _ = fuzz_frontend.run_kernel_file(path, ones)
    assert outcome == "rejected" and "'ABC' is not point=passes" in text, text


def test_a_kernel_compiled_by_its_decorator_is_classified_as_a_launch_would_be(tmp_path):
    # Declared signatures compile in the decorator, while the mutant's module
    # loads: the body's errors must still be located (not counted as "not a
    # kernel", which the fuzzer's first runs of CPointer kernels did), and a
    # check of the decorator's own arguments is located by its traceback.
    body_error = write(tmp_path, "declared.py", """
@cuda.jit("void(float32[::1])")
def kernel(x):
    x[0] = undefined_name
""")
    outcome, text, clean = fuzz_frontend.run_kernel_file(body_error, ones)
    assert (outcome, clean) == ("rejected", True) and "declared.py:" in text, text
    bad_argument = write(tmp_path, "argument.py", """
@cuda.jit(-1)
def kernel(x):
    x[0] = 1.0
""")
    outcome, text, _ = fuzz_frontend.run_kernel_file(bad_argument, ones)
    assert outcome == "rejected" and "is not a type" in text, text
    # A signature that does not parse fails inside the decorator's compile
    # (Dispatcher._declare), yet is the decorator's argument (seed 30, 6245).
    bad_signature = write(tmp_path, "signature.py", """
@cuda.jit('text')
def kernel(x):
    x[0] = 1.0
""")
    outcome, text, _ = fuzz_frontend.run_kernel_file(bad_signature, ones)
    assert outcome == "rejected" and "invalid signature 'text'" in text, text
    python_error = write(tmp_path, "python.py", "1 / 0\n")
    assert fuzz_frontend.run_kernel_file(python_error, ones)[0] == "not a kernel"


def test_workers_run_at_once_and_answer_every_input():
    answers = run_requests([f"ok{i}" for i in range(12)] + ["abort"], serve_by_name, jobs=3)
    assert len(answers) == 13
    assert answers["abort"][0] == "crash"
    assert 2 <= len({answers[f"ok{i}"][1] for i in range(12)}) <= 4


# --- the marker fuzzer's runner (build/bin/tidal-fuzz-lower) -----------------

DRIVER = str(BUILD / "bin" / "tidal-fuzz-lower")
GOOD_IR = ("define void @kernel(ptr %out) {\n  ret void\n}\n"
           "!tidal.kernels = !{!0}\n!0 = !{ptr @kernel}\n")


def run_driver(requests, *options):
    import subprocess
    if not os.path.exists(DRIVER):
        pytest.skip("build/bin/tidal-fuzz-lower is not built")
    text = "".join(f"{number}\t{pipeline}\t{path}\n"
                   for number, (pipeline, path) in enumerate(requests))
    done = subprocess.run([DRIVER, *options], input=text, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    answers = {}
    for line in done.stdout.splitlines():
        number, outcome, detail = line.split("\t", 2)
        answers[int(number)] = (outcome, detail)
    assert sorted(answers) == list(range(len(requests)))
    return [answers[n] for n in range(len(requests))]


def test_the_runner_agrees_with_opt_on_accepted_and_rejected_ir(tmp_path):
    good, bad, broken = tmp_path / "good.ll", tmp_path / "bad.ll", tmp_path / "broken.ll"
    good.write_text(GOOD_IR)
    bad.write_text("define void @kernel( {\n")
    broken.write_text("define i32 @kernel() {\n  ret void\n}\n")
    answers = run_driver([("tidal-lower-host", good), ("tidal-lower-nvptx", good),
                          ("tidal-lower-host", bad), ("tidal-lower-nvptx", broken),
                          ("no-such-pipeline", good)], "--jobs", "2")
    assert [outcome for outcome, _ in answers] == ["ok", "ok", "rejected", "rejected",
                                                   "rejected"]
    assert "expected type" in answers[2][1] or "error" in answers[2][1]
    assert "unknown pass name 'no-such-pipeline'" in answers[4][1]


def test_the_runner_reports_an_abort_and_a_fatal_error_as_crashes(tmp_path):
    good = tmp_path / "good.ll"
    good.write_text(GOOD_IR)
    answers = run_driver([("tidal-fuzz-self-test-abort", good),
                          ("tidal-fuzz-self-test-fatal-error", good),
                          ("tidal-lower-host", good)], "--self-test", "--jobs", "2")
    assert answers[0][0] == "crash" and "signal 6" in answers[0][1], answers
    assert answers[1] == ("crash", "LLVM ERROR: tidal-fuzz-lower self-test")
    assert answers[2][0] == "ok"
    # Without --self-test, those pipelines do not exist.
    assert run_driver([("tidal-fuzz-self-test-abort", good)])[0][0] == "rejected"


def test_the_runner_kills_a_hang_at_its_timeout(tmp_path):
    good = tmp_path / "good.ll"
    good.write_text(GOOD_IR)
    answers = run_driver([("tidal-fuzz-self-test-hang", good), ("tidal-lower-host", good)],
                         "--self-test", "--jobs", "2", "--timeout", "0.5")
    assert answers[0][0] == "hang" and "0.5 s" in answers[0][1], answers
    assert answers[1][0] == "ok"


def test_a_fatal_error_in_llvms_own_parser_is_told_apart_from_a_crash(tmp_path):
    # Found by `make fuzz` (seed 11, input 964: a mutant of lower-print.ll with its
    # !llvm.module.flags line duplicated): LLParser's debug-info upgrade verifies the
    # module and calls report_fatal_error on the duplicated flag before any tidal
    # pass runs, in opt-19 too. tidal never parses IR text inside a user's process.
    duplicated = tmp_path / "duplicated_flags.ll"
    duplicated.write_text(GOOD_IR + '!llvm.module.flags = !{!1}\n!llvm.module.flags = !{!1}\n'
                          '!1 = !{i32 2, !"Debug Info Version", i32 3}\n')
    outcome, detail = run_driver([("tidal-lower-host", duplicated)])[0]
    assert outcome == "llvm-parser-fatal", detail
    assert "module flag identifiers must be unique" in detail


# --- inputs the frontend fuzzer found ------------------------------------------

def test_instcombine_in_a_kernels_passes_does_not_stop_the_process(target):
    # Found by the frontend fuzzer (seed 5, input 350: the corpus kernel with
    # extra passes, its loop's bound mutated to range(False)): `instcombine`
    # in -passes text is LLVM's instcombine<verify-fixpoint>, which ended the
    # interpreter with "LLVM ERROR: Instruction Combining did not reach a
    # fixpoint after 1 iterations". A user's instcombine runs without that check.
    import numpy as np
    from tidal import cuda
    import tidal.compiler as compiler

    @cuda.jit(passes={"after-lowering": "instcombine"})
    def kernel(x, out):
        i = cuda.grid(1)
        if i < x.size:
            acc = 0.0
            for k in range(False):
                acc += x[(i + k) % x.size] * k
            out[i] = acc + 1.0

    out = np.full(64, -1.0)
    kernel[2, 32](np.arange(64.0), out)
    target.assert_result("kernel", out, np.ones(64))
    text = compiler.pipeline_text(target.name, passes={
        "after-lowering": "function(instcombine,instcombine<max-iterations=2>)"})
    assert "function(instcombine<no-verify-fixpoint>,instcombine<no-verify-fixpoint;" \
           "max-iterations=2>)" in text
    # A name that only contains it is left alone.
    assert "aggressive-instcombine," in compiler.pipeline_text(
        target.name, passes={"after-lowering": "aggressive-instcombine"}) + ","
    # Asking for the check is an error, not the end of the process.
    checked = cuda.jit(passes={"after-lowering": "instcombine<verify-fixpoint>"})(kernel.py_func)
    with pytest.raises(RuntimeError, match=r"instcombine<verify-fixpoint> ends the process"):
        checked[2, 32](np.arange(64.0), out)


def test_a_marker_retyped_to_float16_is_an_unknown_marker_not_bad_ir(tmp_path):
    # The marker fuzzer's float16 form of a float marker's call (cuda.fp16's
    # functions are float32 markers): IR that parses and verifies, refused by
    # the plugin's marker check, on both lowerings.
    inputs = dict(fuzz_markers.lit_inputs())
    text = next(fuzz_markers.retype_marker(inputs["lower-math-libdevice.ll"], random.Random(seed))
                for seed in range(100)
                if ".f16(half" in fuzz_markers.retype_marker(inputs["lower-math-libdevice.ll"],
                                                             random.Random(seed)))
    path = tmp_path / "half.ll"
    path.write_text(text)
    answers = run_driver([("tidal-lower-host", path), ("tidal-lower-nvptx", path)])
    for outcome, detail in answers:
        assert outcome == "rejected" and "unknown marker 'tidal.math." in detail, detail
        assert ".f16'" in detail


def test_split_file_lit_tests_give_one_seed_per_module(tmp_path):
    # lower-math.ll (every math marker) is cut by split-file into modules
    # whose definitions clash as one file: whole, it never parsed, and the
    # marker fuzzer's mutants of it were all rejected by LLVM's parser.
    inputs = dict(fuzz_markers.lit_inputs())
    assert "lower-math.ll" not in inputs
    native = tmp_path / "native.ll"
    native.write_text(inputs["lower-math.ll:native.ll"])
    assert run_driver([("tidal-lower-host", native)])[0][0] == "ok"
    assert "lower-cache-hints.ll" in inputs and "lower-host-cache-hints.ll" in inputs


def test_a_code_object_of_bad_data_is_refused_where_it_is_made(target):
    # Found by the frontend fuzzer (seed 28, input 4611: link=[cuda.CUSource(1e+308)]):
    # the TypeError came from the launch, with no line of the user's to show.
    from tidal import cuda
    for kind in (cuda.CUSource, cuda.PTXSource):
        with pytest.raises(TypeError, match=rf"{kind.__name__} data must be str or bytes "
                                            r"\(or a StringIO/BytesIO\), not float"):
            kind(1e308)
    assert cuda.CUSource(b"int x;").data == b"int x;"


def test_a_link_entry_of_the_wrong_type_is_refused_at_the_decorator(target):
    # Found by the frontend fuzzer (seed 29, input 91186: @cuda.jit(link=[np.logaddexp(1.0,
    # 2.0)])): the TypeError came from the first launch, with no line of the user's to
    # show. cuda.jit checks the entries' types now; the files are still read at compile.
    import traceback
    from tidal import cuda
    with pytest.raises(TypeError, match=r"link takes file paths \(str or os.PathLike\) and "
                                        r"code objects .*not float: 2.5") as error:
        @cuda.jit(link=[cuda.CUSource("int x;"), 2.5])
        def kernel(x):
            x[0] = 1
    frames = traceback.extract_tb(error.tb)
    assert any(frame.filename == __file__ and "cuda.jit(link=" in frame.line for frame in frames)

    @cuda.jit(link=["not_made_yet.cu"])  # a path is read when the kernel compiles
    def later(x):
        x[0] = 1

    with pytest.raises(Exception, match="not_made_yet.cu"):
        later[1, 1](numpy.zeros(1, numpy.int32))
    # A suffix tidal does not link is known without the file: refused at the
    # decorator too (seed 30, input 70783: link=['abc'.upper()]).
    with pytest.raises(ValueError, match=r"cannot link 'ABC': .*not 'no suffix'") as error:
        @cuda.jit(link=["abc".upper()])
        def no_suffix(x):
            x[0] = 1
    frames = traceback.extract_tb(error.tb)
    assert any(frame.filename == __file__ and "cuda.jit(link=" in frame.line for frame in frames)


def test_an_error_in_linked_cuda_cpp_is_located_there(tmp_path):
    # The frontend fuzzer (seed 28, input 45079: link=[cuda.CUSource(b'bytes')])
    # counted Clang's error, located in the CUSource ("<unnamed-cu>:1:1: CUDA
    # C++: unknown type name 'bytes'"), as unlocated: it looked for a .py line.
    path = write(tmp_path, "cusource.py", """
@cuda.jit(link=[cuda.CUSource(b'bytes')])
def kernel(x):
    x[cuda.grid(1)] = twice(1)


twice = cuda.declare_device('twice', 'int32(int32)')
""")
    outcome, text = fuzz_frontend.run_one(path, ones)
    assert outcome == "rejected" and "<unnamed-cu>:1:1: CUDA C++" in text, text


def test_host_inputs_get_the_fitted_flag_so_the_fitted_lowering_is_fuzzed(tmp_path):
    # The lit inputs that build fitted and coarsened block functions carry
    # the flag in a comment only (FITTED-FLAG: lines for sed): their mutants
    # reached the fitted lowering (folded checks and guards, the split of a
    # coarsened x loop) only if the fuzzer adds the flag, which it does to
    # about half of the host inputs that have no module flags.
    inputs = dict(fuzz_markers.lit_inputs())
    text, origin = fuzz_markers.with_fitted_flag(inputs["lower-host-coarsen.ll"], random.Random(1))
    assert "tidal.host.fitted" in origin
    path = tmp_path / "fitted.ll"
    path.write_text(text)
    assert run_driver([("tidal-lower-host", path)])[0][0] == "ok"
    flagged = text + '\n!llvm.module.flags = !{!7}\n!7 = !{i32 1, !"other", i32 1}\n'
    assert fuzz_markers.with_fitted_flag(flagged, random.Random(1)) == (flagged, "")
    seeds = fuzz_markers.lit_inputs()
    markers = sorted({m for _, seed in seeds for m in fuzz_markers.MARKER_CALL.findall(seed)})
    host = [origin for _, origin, _, pipeline in fuzz_markers.generate(
        type("Options", (), {"count": 400})(), random.Random(5), seeds, markers)
        if pipeline == "tidal-lower-host"]
    fitted = sum("tidal.host.fitted" in origin for origin in host)
    assert 0.25 * len(host) < fitted < 0.75 * len(host)
