"""The researcher's workbench (docs/research.md): extra passes at the named
points of each target's pipeline, pass plugins loaded in process, every
stage visible, dumps, LLVM's own switches, and the disk cache's key."""

import os
import re
import textwrap

import numpy as np
import pytest

from tidal import cuda
import tidal.compiler as compiler
from tidal.cuda.target import use_target

from build_tree import BUILD

TEST_PLUGIN = BUILD / "lib" / "TidalTestPassPlugin.so"
POINTS = ("after-frontend", "after-lowering", "before-optimisation", "after-optimisation",
          "before-codegen")


def double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * 2.0


SIG = "void(float32[::1])"


def test_the_points_and_stages_come_from_the_cpp_table():
    assert tuple(p for p, _, _ in compiler.pipeline_points()) == POINTS
    assert compiler.stages() == ("markers", "lowered", "prepared", "optimised", "final", "asm")
    # The steps of each target between the points, in order.
    assert compiler.pipeline_text("cuda", "sm_80") == \
        "tidal-lower-nvptx<sm=80>,tidal-internalize-non-kernels,default<O3>"
    assert compiler.pipeline_text("cpu") == "tidal-lower-host,default<O3>"
    # Extra passes go to their point, as opt -passes= takes them.
    text = compiler.pipeline_text("cuda", passes={"before-codegen": "instcount",
                                                  "after-frontend": ["strip-dead-prototypes", "verify"]})
    assert text == ("strip-dead-prototypes,verify,tidal-lower-nvptx<sm=75>,tidal-internalize-non-kernels,"
                    "default<O3>,instcount")
    assert compiler.pipeline_text("cpu", passes={"after-lowering": "loop-rotate"}) == \
        "tidal-lower-host,loop-rotate,default<O3>"


def test_a_kernels_passes_run_at_their_point_on_both_pipelines(target):
    # instnamer names every unnamed value %i...: seen from after-lowering on.
    named = cuda.jit(passes={"after-lowering": "function(instnamer)"})(double)
    plain = cuda.jit(double)
    a = np.arange(64, dtype=np.float32)
    named[1, 64](a)
    target.assert_result("double", a, np.arange(64, dtype=np.float32) * 2)
    for pipeline in ("cuda", "cpu"):
        markers = named.inspect_llvm(SIG, stage="markers", target=pipeline)
        lowered = named.inspect_llvm(SIG, stage="lowered", target=pipeline)
        assert "%0 = " in markers and "%i = " not in markers
        assert "%0 = " not in lowered and "%i = " in lowered
        plain.compile(SIG)
        assert "%0 = " in plain.inspect_llvm(SIG, stage="lowered", target=pipeline)


def test_every_stage_of_each_target_is_visible(target):
    kernel = cuda.jit(double)
    kernel.compile(SIG)
    nvptx = {s: kernel.inspect_llvm(SIG, stage=s, target="cuda") for s in compiler.stages()[:-1]}
    host = {s: kernel.inspect_llvm(SIG, stage=s, target="cpu") for s in compiler.stages()[:-1]}
    for stages in (nvptx, host):
        assert "@tidal.tid.x()" in stages["markers"]
        assert "@tidal.tid.x()" not in stages["lowered"]
    assert "@llvm.nvvm.read.ptx.sreg.tid.x()" in nvptx["lowered"]
    assert "__tidal_block_double" in host["lowered"]
    # O3 ran between prepared and optimised; nothing more runs before codegen.
    assert nvptx["prepared"] != nvptx["optimised"] and nvptx["optimised"] == nvptx["final"]
    assert host["prepared"] != host["optimised"] and host["optimised"] == host["final"]
    # The default view is the final IR of the cuda target, as before.
    assert kernel.inspect_llvm(SIG) == nvptx["final"]
    assert ".entry double" in kernel.inspect_asm(SIG)
    assert kernel.inspect_asm(SIG, target="cuda") == kernel.inspect_asm(SIG)
    host_asm = kernel.inspect_asm(SIG, target="cpu")
    assert "__tidal_block_double:" in host_asm and ".entry" not in host_asm


def test_unknown_points_stages_and_passes_are_named(target):
    with pytest.raises(ValueError, match=r"unknown pipeline point 'after-everything'.*"
                                         r"after-frontend, after-lowering"):
        cuda.jit(passes={"after-everything": "instcount"})(double)
    with pytest.raises(TypeError, match=r"must be pipeline text"):
        cuda.jit(passes={"after-lowering": ""})(double)
    # passes= as a str in TIDAL_PASSES' syntax is checked at the decorator
    # too (found by the frontend fuzzer, seed 32: passes='abc'.upper() was a
    # TypeError at the first launch, without a line of the user's).
    with pytest.raises(ValueError, match=r"passes: 'ABC' is not point=passes: the points are "
                                         r"after-frontend, after-lowering"):
        cuda.jit(passes="ABC")(double)
    with pytest.raises(ValueError, match=r"passes: no passes given for after-lowering"):
        cuda.jit(passes="after-lowering=")(double)
    named = cuda.jit(passes="after-lowering=function(instnamer)")(double)
    values = np.arange(32, dtype=np.float32)
    named[1, 32](values)
    target.assert_result("double", values, 2 * np.arange(32, dtype=np.float32))
    assert "%i = " in named.inspect_llvm(SIG, stage="lowered")
    kernel = cuda.jit(passes={"after-lowering": "no-such-pass"})(double)
    # Located at the kernel's first line (its decorator's), where passes= is written.
    where = re.escape(f"{__file__}:{double.__code__.co_firstlineno}: ")
    with pytest.raises(RuntimeError, match=where + r".*kernel 'double.*pass pipeline "
                                           r"'no-such-pass' at after-lowering \(from the "
                                           r"kernel's passes=\): unknown .*no-such-pass"):
        kernel[1, 32](np.zeros(32, np.float32))
    plain = cuda.jit(double)
    plain.compile(SIG)
    with pytest.raises(ValueError, match=r"unknown stage 'raw'.*markers, lowered"):
        plain.inspect_llvm(SIG, stage="raw")
    with pytest.raises(ValueError, match=r"target must be 'cuda' or 'cpu'"):
        plain.inspect_llvm(SIG, stage="final", target="rocm")


def test_a_plugin_that_cannot_load_is_an_oserror_naming_it(tmp_path):
    missing = tmp_path / "nowhere.so"
    with pytest.raises(OSError, match=re.escape(str(missing))):
        compiler.load_pass_plugin(missing)
    not_a_plugin = tmp_path / "empty.so"
    not_a_plugin.write_bytes(b"")
    with pytest.raises(OSError, match=r"cannot load pass plugin '.*empty\.so'"):
        compiler.load_pass_plugin(not_a_plugin)
    # A shared library that is no pass plugin (libm, already in the process).
    with pytest.raises(OSError, match=r"cannot load pass plugin 'libm\.so\.6': Plugin entry "
                                      r"point not found"):
        compiler.load_pass_plugin("libm.so.6")
    assert str(missing) not in compiler.loaded_pass_plugins()
    assert "libm.so.6" not in compiler.loaded_pass_plugins()


def test_stages_are_dumped_per_kernel_and_signature(target, tmp_path, monkeypatch):
    pipeline = target.name  # a kernel is dumped for the target it is compiled for
    monkeypatch.setenv("TIDAL_DUMP_DIR", str(tmp_path))
    kernel = cuda.jit(double)
    a = np.ones(32, np.float32)
    kernel[1, 32](a)
    target.assert_result("double", a, np.full(32, 2, np.float32))
    # <kernel>.<signature>.<target>.<N>-<stage>
    stem = r"double\.array_float32_1d_C\." + (r"cuda_sm\d+" if pipeline == "cuda" else "cpu")
    names = sorted(p.name for p in tmp_path.iterdir())
    expected = [f"{i + 1}-{s}.ll" for i, s in enumerate(compiler.stages()[:-1])]
    expected.append("6-asm." + ("ptx" if pipeline == "cuda" else "s"))
    assert [re.sub("^" + stem + r"\.", "", n) for n in names] == expected
    markers = next(tmp_path.glob("*.1-markers.ll")).read_text()
    assert markers == kernel.inspect_llvm(kernel.signatures[0], stage="markers", target=pipeline)


def test_extra_passes_and_plugins_are_in_the_disk_cache_key(target, tmp_path, monkeypatch):
    monkeypatch.setenv("TIDAL_CACHE_DIR", str(tmp_path))
    plain = cuda.jit(cache=True)(double)
    again = cuda.jit(cache=True)(double)
    other = cuda.jit(cache=True, passes={"after-lowering": "function(instnamer)"})(double)
    for k in (plain, again, other):
        k.compile(SIG)
    kind = "cpu" if target.name == "cpu" else "cuda"
    key = plain._cache.key(kind, plain.signatures[0])
    assert again._cache.key(kind, again.signatures[0]) == key
    assert other._cache.key(kind, other.signatures[0]) != key
    # The process's settings too: a loaded plugin (its path, size, time).
    options = plain._tidal_options(kind)
    assert options["pipeline"][0] == "" and options["passes"] == ""
    assert other._tidal_options(kind)["passes"] == "after-lowering=function(instnamer)"


def _script_env(monkeypatch, **variables):
    for name, value in variables.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("how", ["load_pass_plugin", "TIDAL_PASS_PLUGINS"])
@pytest.mark.parametrize("name", ["cpu", "cuda"])
def test_a_plugin_runs_in_process_on_both_targets(mock_script, monkeypatch, how, name):
    if not TEST_PLUGIN.is_file():
        pytest.fail(f"{TEST_PLUGIN} is not built (make build)")
    if how == "TIDAL_PASS_PLUGINS":
        monkeypatch.setenv("TIDAL_PASS_PLUGINS", f"{TEST_PLUGIN}:{TEST_PLUGIN}")
    run = mock_script(f"""
        import tidal.compiler
        def double(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = a[i] * 2.0
        if {how == "load_pass_plugin"}:
            tidal.compiler.load_pass_plugin({str(TEST_PLUGIN)!r})
        marked = cuda.jit(passes={{"after-lowering": "test-mark-module"}})(double)
        a = np.ones(32, np.float32)
        marked[1, 32](a)
        sig = marked.signatures[0]
        out = {{}}
        for t in ("cuda", "cpu"):
            out[t] = [marked.inspect_llvm(sig, stage=s, target=t)
                      for s in ("markers", "lowered", "optimised")]
        # A plugin's function pass: nested in function(...) in the printed text.
        functions = cuda.jit(passes={{"after-lowering": "test-mark-function"}})(double)
        functions.compile("void(float32[::1])")
        fsig = functions.signatures[0]
        out["function_pass"] = [functions.inspect_llvm(fsig, stage="lowered", target={name!r}),
                                tidal.compiler.pipeline_text({name!r}, passes=functions.options["passes"])]
        broken = cuda.jit(passes={{"before-optimisation": "test-break-module"}})(double)
        try:
            broken[1, 32](a)
            error = None
        except RuntimeError as e:
            error = str(e)
        print(json.dumps({{"stages": out, "error": error, "plugins": tidal.compiler.loaded_pass_plugins()}}))
        """, target=name)
    result = run.result
    assert result["plugins"] == [str(TEST_PLUGIN)]
    lowered, text = result["stages"].pop("function_pass")
    assert '"test-marked"' in lowered
    assert "function(test-mark-function)" in text
    for pipeline, (markers, lowered, optimised) in result["stages"].items():
        # its pipeline-parsing callback: test-mark-module at after-lowering;
        # its extension-point callback: optimizer-last, inside default<O3>.
        assert "test-mark-module" not in markers and "optimizer-last" not in markers
        assert '!{!"test-mark-module"}' in lowered and "optimizer-last" not in lowered
        assert '!{!"test-mark-module"}' in optimised and '!{!"optimizer-last"}' in optimised
    assert result["error"] is not None
    assert re.search(r"kernel 'double.*': the IR is broken after pass pipeline 'test-break-module' "
                     r"at before-optimisation \(from the kernel's passes=\): .*terminator",
                     result["error"], re.S), result["error"]


@pytest.mark.parametrize("name", ["cpu", "cuda"])
def test_tidal_passes_and_llvm_args_reach_the_in_process_pipelines(mock_script, monkeypatch, name):
    monkeypatch.setenv("TIDAL_PASSES", "after-lowering=function(instnamer),before-codegen=verify")
    monkeypatch.setenv("TIDAL_LLVM_ARGS",
                       "-print-after=tidal-lower-exceptions,tidal-lower-host "
                       "-filter-print-funcs=double,__tidal_block_double -pass-remarks=inline "
                       "-time-passes")
    run = mock_script("""
        import tidal.compiler
        @cuda.jit(device=True)
        def twice(x):
            return x * 2.0
        @cuda.jit(lineinfo=True)
        def double(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = twice(a[i])
        a = np.ones(32, np.float32)
        double[1, 32](a)
        sig = double.signatures[0]
        print(json.dumps({"lowered": double.inspect_llvm(sig, stage="lowered", target="%s"),
                          "process": tidal.compiler.pipeline_text("%s")}))
        """ % (name, name), target=name)
    result = run.result
    assert "%0 = " not in result["lowered"] and "%i = " in result["lowered"]
    assert "function(instnamer)" in result["process"] and result["process"].endswith(",verify")
    # -print-after of a tidal pass, for the kernel only
    assert re.search(r"IR Dump After (tidal-lower-exceptions|tidal-lower-host)", run.stderr), \
        run.stderr[-2000:]
    assert "define" in run.stderr
    # -time-passes: a report per compile
    assert "Pass execution timing report" in run.stderr
    # -pass-remarks at the Python line of the call (lineinfo=True)
    assert re.search(r"remark: <string>:13:\d+: 'twice[^']*' inlined into '(double|__tidal_block_double)'", run.stderr), \
        run.stderr[-2000:]


def test_a_bad_tidal_llvm_args_or_tidal_passes_is_an_error(mock_script, monkeypatch):
    monkeypatch.setenv("TIDAL_LLVM_ARGS", "-no-such-llvm-option")
    run = mock_script("""
        try:
            cuda.jit(lambda a: None)[1, 1](np.ones(1))
        except RuntimeError as e:
            print("ERROR", e)
        """, target="cpu")
    assert "ERROR" in run.stdout and "no-such-llvm-option" in run.stdout, run.stdout + run.stderr
    monkeypatch.delenv("TIDAL_LLVM_ARGS")
    monkeypatch.setenv("TIDAL_PASSES", "after-lunch=instcount")
    run = mock_script("""
        try:
            cuda.jit(lambda a: None)[1, 1](np.ones(1))
        except RuntimeError as e:
            print("ERROR", e)
        """, target="cpu")
    assert "TIDAL_PASSES: 'after-lunch=instcount' is not point=passes" in run.stdout, run.stdout
    monkeypatch.delenv("TIDAL_PASSES")
    monkeypatch.setenv("TIDAL_PASS_PLUGINS", f"/nonexistent-first.so:{TEST_PLUGIN}")
    run = mock_script("""
        try:
            cuda.jit(lambda a: None)[1, 1](np.ones(1))
        except RuntimeError as e:
            print("ERROR", e)
        """, target="cpu")
    assert ("TIDAL_PASS_PLUGINS: cannot load pass plugin '/nonexistent-first.so': Could not load "
            "library") in run.stdout, run.stdout + run.stderr
