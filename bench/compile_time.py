"""Compile latency, Python source -> PTX, per kernel: warm (a new dispatcher
in a warm process), cold (a new process, import included) and the floor
(`llc-19` alone on the lowered IR).

The split into frontend / lowering / optimisation / codegen comes from
`tidal._tidal.compile_ptx_timed` when the extension has it; without it the
stages are approximated from the dispatcher's own steps (see `to_ptx`)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import kernels  # noqa: E402

SM = 75
STAGES = ("frontend", "lowering", "optimisation", "codegen")


def to_ptx(cuda, dispatcher, signature):
    """Compiles a fresh copy of `dispatcher` for `signature` down to PTX.
    Returns {'total': s, 'stages': {...}, 'split': 'exact'|'approximate', 'ptx': str}."""
    from tidal import _tidal
    fresh = cuda.jit(dispatcher.py_func)
    if hasattr(_tidal, "compile_ptx_timed"):
        t0 = time.perf_counter()
        ptx, timings = _tidal.compile_ptx_timed(fresh.py_func, signature, SM)
        total = time.perf_counter() - t0
        return {"total": total, "stages": {k: float(timings.get(k, 0.0)) for k in STAGES},
                "split": "exact", "ptx": ptx}
    # Without the timed entry point: compile() is the frontend (and, on the
    # cpu target, its own lowering and JIT); 'llvm' re-lowers the marker IR for
    # NVPTX and optimises it; 'ptx' does that again and runs the backend.
    t0 = time.perf_counter()
    text = fresh.compile(signature)
    t1 = time.perf_counter()
    fresh._inspect(text, "llvm", SM)
    t2 = time.perf_counter()
    ptx = fresh._inspect(text, "ptx", SM)
    t3 = time.perf_counter()
    lowered = t2 - t1
    return {"total": (t1 - t0) + (t3 - t2),
            "stages": {"frontend": t1 - t0, "lowering+optimisation": lowered,
                       "codegen": max(0.0, (t3 - t2) - lowered)},
            "split": "approximate", "ptx": ptx}


def _cold_child(name):
    """Runs in a new process: import tidal, define the kernels, compile one to PTX."""
    t0 = time.perf_counter()
    from tidal import cuda
    t1 = time.perf_counter()
    namespace = kernels.define(cuda)
    result = to_ptx(cuda, kernels.kernel(namespace, name), kernels.SIGNATURES[name])
    t2 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "to_ptx": t2 - t0, "compile": result["total"]}))


def llc_floor(ir_text, repeats):
    llc = shutil.which("llc-19") or "/usr/lib/llvm-19/bin/llc"
    if not os.path.exists(llc):
        return {"error": "llc-19 not found"}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.ll")
        with open(path, "w") as f:
            f.write(ir_text)
        command = [llc, "-march=nvptx64", f"-mcpu=sm_{SM}", "-O3", path, "-o", os.devnull]

        def once():
            subprocess.run(command, check=True, capture_output=True)
        try:
            once()
        except subprocess.CalledProcessError as e:
            return {"error": common.unsupported(e.stderr.decode() or e)}
        return {"time": common.summary(common.repeat(once, repeats))}


def measure_warm(name, warm_repeats, llc_repeats):
    """In this process: warm compile times of one kernel, and the llc floor."""
    from tidal import cuda
    namespace = kernels.define(cuda)
    signature = kernels.SIGNATURES[name]
    dispatcher = kernels.kernel(namespace, name)
    entry = {"signature": signature}
    try:
        first = to_ptx(cuda, dispatcher, signature)  # warms the process up
    except Exception as error:  # noqa: BLE001 - any compile error is reported
        entry["error"] = common.unsupported(error)
        return entry
    runs = [to_ptx(cuda, dispatcher, signature) for _ in range(warm_repeats)]
    entry["split"] = first["split"]
    entry["warm"] = common.summary([r["total"] for r in runs])
    entry["stages"] = {stage: common.summary([r["stages"][stage] for r in runs])
                       for stage in runs[0]["stages"]}
    fresh = cuda.jit(dispatcher.py_func)
    text = fresh.compile(signature)
    entry["llc_floor"] = llc_floor(fresh.inspect_llvm(text), llc_repeats)
    return entry


def measure(warm_repeats=10, cold_repeats=5, llc_repeats=5, log=print):
    """Every kernel, each in processes of its own (a compiler crash costs one row)."""
    results = {}
    for name, signature in kernels.SIGNATURES.items():
        # TIDAL_TARGET=cuda: compile() then builds nothing for the cpu target (PTX
        # needs no GPU); should that fail, the cpu target is measured instead.
        for target in ("cuda", "cpu"):
            try:
                entry = common.tidal_child("compile_time.py", ["--warm", name, str(warm_repeats),
                                                               str(llc_repeats)], target=target)
            except Exception as error:  # noqa: BLE001
                entry = {"signature": signature, "error": common.unsupported(error)}
            entry["target"] = target
            if "error" not in entry:
                break
        results[name] = entry
        if "error" in entry:
            log(f"  {name}: {entry['error']}")
            continue
        cold = {"import": [], "to_ptx": [], "process": []}
        for _ in range(cold_repeats):
            t0 = time.perf_counter()
            try:
                child = common.tidal_child("compile_time.py", ["--cold", name], target=entry["target"])
            except Exception as error:  # noqa: BLE001
                entry["cold_error"] = common.unsupported(error)
                break
            cold["process"].append(time.perf_counter() - t0)
            cold["import"].append(child["import"])
            cold["to_ptx"].append(child["to_ptx"])
        entry["cold"] = {k: common.summary(v) for k, v in cold.items() if v}
        log(f"  {name}: warm {entry['warm']['median'] * 1e3:.2f} ms, cold "
            f"{entry['cold'].get('to_ptx', {}).get('median', float('nan')) * 1e3:.1f} ms")
    return results


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--cold":
        _cold_child(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "--warm":
        print(json.dumps(measure_warm(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
    else:
        print(json.dumps(measure(), indent=1))
