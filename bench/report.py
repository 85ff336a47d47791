"""Results -> Markdown tables and PNG plots (Debian's python3-matplotlib)."""

import os

GOAL_WARM_MS = {"saxpy": 5.0}
GOAL_WARM_OTHER_MS = 20.0


def _ms(summary, scale=1e3, digits=2):
    if not summary:
        return "–"
    return (f"{summary['median'] * scale:.{digits}f} "
            f"({summary['min'] * scale:.{digits}f}–{summary['max'] * scale:.{digits}f})")


def _cell(entry, key="error"):
    return entry.get(key, "").replace("|", "\\|")


def machine_lines(machine):
    gpu = ", ".join(machine["gpu"]) if machine.get("gpu") else "none"
    return [f"- host `{machine['host']}`, {machine['cores']} cores, {machine['cpu_model']}",
            f"- GPU: {gpu}",
            f"- {machine['platform']}, Python {machine['python']}",
            f"- tidal commit `{machine['tidal_commit']}`, {machine['date']}"]


def compile_table(results):
    lines = ["## 1. Compile latency, Python source → PTX (sm_75)", "",
             "Milliseconds, median (min–max). Warm: a new dispatcher in a warm process. "
             "Cold: a new process (`import tidal` included; the import alone in its own column). "
             "Floor: `llc-19 -O3` alone on the lowered IR (a whole process).", ""]
    split = {e.get("split") for e in results.values() if "split" in e}
    if "approximate" in split:
        lines += ["The split is **approximate**: the extension has no `compile_ptx_timed` yet, so "
                  "'frontend' is `compile()` (run with `TIDAL_TARGET=cuda`, so that it builds "
                  "nothing for the cpu target; a row marked (cpu) fell back to the cpu target, "
                  "whose `compile()` also JIT-compiles for the host), "
                  "'lowering+optimisation' is `inspect('llvm')` and 'codegen' is "
                  "`inspect('ptx')` less that (it re-runs the lowering).", ""]
    stages = []
    for entry in results.values():
        for stage in entry.get("stages", {}):
            if stage not in stages:
                stages.append(stage)
    head = ["kernel", "warm"] + stages + ["llc floor", "cold to PTX", "cold import",
                                          "cold process", "goal (warm)"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, entry in results.items():
        goal = GOAL_WARM_MS.get(name, GOAL_WARM_OTHER_MS)
        if "error" in entry:
            lines.append(f"| {name} | {_cell(entry)} |" + " |" * (len(head) - 2))
            continue
        met = "met" if entry["warm"]["median"] * 1e3 <= goal else "NOT met"
        floor = entry.get("llc_floor", {})
        cold = entry.get("cold", {})
        label = name + (" (cpu)" if entry.get("target") == "cpu" else "")
        row = [label, _ms(entry["warm"])] + [_ms(entry["stages"].get(s)) for s in stages]
        row += [_ms(floor.get("time")) if "time" in floor else floor.get("error", "–"),
                _ms(cold.get("to_ptx"), digits=1) if cold else entry.get("cold_error", "–"),
                _ms(cold.get("import"), digits=1), _ms(cold.get("process"), digits=1),
                f"≤ {goal:g} ms: {met}"]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Reference (from the issues): numba-cuda needs about 35 ms warm and 520 ms cold "
              "for a vector add.", ""]
    return lines


def _dlpack_cell(entry):
    """'+total (producer p)' µs per DLPack argument over a tidal device array."""
    if "dispatch_dlpack" not in entry:
        return ""
    extra = (entry["dispatch_dlpack"]["median"] - entry["dispatch"]["median"]) / entry["arrays"]
    return f"{extra * 1e6:+.2f} (producer {entry['producer_dlpack']['median'] * 1e6:.2f})"


def launch_mock_table(results):
    lines = ["### 2b. The same on the cuda target over a no-op driver (no GPU)", "",
             "The cuda target with the mock driver (`build/lib/libtidal_mock_cuda.so`, "
             "`TIDAL_MOCK_CUDA_NOOP_LAUNCHES=1`: `cuLaunchKernel` checks its arguments and "
             "returns). **Launch** is tidal's own share of a GPU launch, the driver's work "
             "excluded; on a GPU the driver adds its own (about 1.3 µs for a raw launch from C, "
             "as the runtime issue says). Goals on a GPU: ≤ 3 µs for one array, ≤ 5 µs for "
             "256 scalars, not measurable here.", "",
             "| shape | arguments | dispatch µs | launch µs (no-op driver) | CAI array, +µs per argument | DLPack array, +µs per argument |",
             "|---|---|---|---|---|---|"]
    if "error" in results and len(results) == 1:
        return lines + [f"| {_cell(results)} | | | | | |", ""]
    for name, entry in results.items():
        if "error" in entry:
            lines.append(f"| {name} | {entry.get('args', '')} | {_cell(entry)} | | | |")
            continue
        foreign = ""
        if "dispatch_foreign" in entry:
            extra = (entry["dispatch_foreign"]["median"] - entry["dispatch"]["median"]) / entry["arrays"]
            foreign = f"{extra * 1e6:+.2f}"
        lines.append(f"| {name} | {entry['args']} | {_ms(entry['dispatch'], 1e6)} | "
                     f"{_ms(entry['launch'], 1e6)} | {foreign} | {_dlpack_cell(entry)} |")
    return lines + [""]


def launch_table(results):
    lines = ["## 2. Dispatch and launch overhead (cpu target)", "",
             "Microseconds per call, median (min–max) over repeats of many calls, of an empty "
             "kernel launched as `kernel[1, 1](...)` with the runtime issue's argument shapes "
             "(device arrays of 16 float32, float32 scalars). **Dispatch** is "
             "`kernel[1, 1]._dispatch(...)`: all a launch does (the configuration, the launch "
             "plan, packing the arguments) but running the kernel. **Launch** runs the (empty) "
             "kernel too. **CAI array** is the dispatch cost each `__cuda_array_interface__` "
             "argument adds over a tidal device array; **DLPack array** the same for an object "
             "that speaks DLPack only, with the part of it that is the producer's own "
             "`__dlpack_device__()` and `__dlpack__()` (NumPy's over the same memory) in "
             "brackets.", "",
             "| shape | arguments | dispatch µs | launch µs | CAI array, +µs per argument | DLPack array, +µs per argument | goals |",
             "|---|---|---|---|---|---|---|"]
    for name, entry in results.items():
        label = "saxpy[1, 32] (32 elements, NumPy arrays)" if name == "saxpy_1x32" else name
        if "error" in entry:
            lines.append(f"| {label} | {entry.get('args', '')} | {_cell(entry)} | | | | |")
            continue
        goals = []
        if name == "saxpy_1x32":
            goals.append("launch < 10 µs: " + ("met" if entry["launch"]["median"] < 10e-6 else "NOT met"))
        if name == "3 arrays":
            goals.append("dispatch ≤ 1 µs: " + ("met" if entry["dispatch"]["median"] <= 1e-6 else "NOT met"))
        foreign = ""
        if "dispatch_foreign" in entry:
            extra = (entry["dispatch_foreign"]["median"] - entry["dispatch"]["median"]) / entry["arrays"]
            foreign = f"{extra * 1e6:+.2f}"
            goals.append("CAI ≤ +1 µs: " + ("met" if extra <= 1e-6 else "NOT met"))
        if "dispatch_dlpack" in entry:
            ours = (entry["dispatch_dlpack"]["median"] - entry["dispatch"]["median"]) / entry["arrays"] \
                - entry["producer_dlpack"]["median"]
            goals.append("DLPack less the producer ≤ +1 µs: " + ("met" if ours <= 1e-6 else "NOT met"))
        dispatch = _ms(entry["dispatch"], 1e6) if "dispatch" in entry else ""
        lines.append(f"| {label} | {entry['args']} | {dispatch} | {_ms(entry['launch'], 1e6)} | "
                     f"{foreign} | {_dlpack_cell(entry)} | {'; '.join(goals)} |")
    return lines + [""]


def cpu_table(cpu, cores):
    tidal, njit, sim, speed = cpu["tidal"], cpu["njit"], cpu["simulator"], cpu["speedup"]
    lines = [f"## 3. cpu-target throughput ({cores} cores)", "",
             "tidal's cpu target (all cores) against Numba's @njit of the same loop (serial) and "
             "Numba's CUDA simulator (`NUMBA_ENABLE_CUDASIM=1`). The simulator runs every thread "
             "as a Python thread, so it is timed on a **small** size within a time budget and "
             "compared **per unit** (element, stencil point, or multiply-add for matmul), i.e. its "
             "time is extrapolated linearly to the full size. Milliseconds, median (min–max).", ""]
    for label, part in (("@njit", njit), ("simulator", sim)):
        if isinstance(part, dict) and "error" in part and len(part) == 1:
            lines += [f"{label}: {part['error']}", ""]
    head = ["kernel", "size", "tidal ms", "check", "@njit ms", "tidal vs @njit", "simulator (size): s",
            "simulator extrapolated s", "tidal vs simulator", "goals"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, t in tidal.items():
        n = njit.get(name, {}) if isinstance(njit, dict) else {}
        s = sim.get(name, {}) if isinstance(sim, dict) else {}
        sp = speed.get(name, {})
        size = f"{t['size']}²" if name in ("stencil", "matmul") else str(t["size"])
        njit_cell = _ms(n.get("time"), digits=3) if "time" in n else n.get("error", "–")
        sim_size = f"{s['size']}²" if name in ("stencil", "matmul") and "size" in s else s.get("size", "")
        sim_cell = (f"({sim_size}) {_ms(s['time'], 1, 2)}" if "time" in s else s.get("error", "–"))
        if "error" in t:
            lines.append("| " + " | ".join([name, size, _cell(t), "", njit_cell, "", sim_cell, "", "", ""])
                         + " |")
            continue
        goals = []
        if "vs_simulator" in sp:
            goals.append("≥10000× sim: " + ("met" if sp["vs_simulator"] >= 1e4 else "NOT met"))
        if "vs_njit" in sp:
            need = 1.0 if name in ("saxpy", "stencil") else 0.5
            goals.append(f"≥{need:g}× njit: " + ("met" if sp["vs_njit"] >= need else "NOT met"))
        row = [name, size, _ms(t["time"], digits=3), t.get("check", ""), njit_cell,
               f"{sp['vs_njit']:.2f}×" if "vs_njit" in sp else "–", sim_cell,
               f"{sp['simulator_extrapolated_s']:.1f}" if "simulator_extrapolated_s" in sp else "–",
               f"{sp['vs_simulator']:,.0f}×" if "vs_simulator" in sp else "–", "; ".join(goals)]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "'tidal vs X' is X's time over tidal's (above 1: tidal is faster).", ""]
    return lines


def soak_table(soak):
    """RSS growth after warm-up per soak phase (bench/soak.py; goal 0)."""
    lines = ["## Soak: memory after warm-up (a fresh process per target)", "",
             "| target | phase | count | RSS after warm-up | growth | per item |",
             "|---|---|---|---|---|---|"]
    for r in soak["phases"]:
        lines.append(f"| {r.get('target', 'cpu')} | {r['phase']} | {r['count']} | "
                     f"{r['rss_after_warmup_mib']} MiB | {r['rss_growth_kib']} KiB | "
                     f"{r['growth_per_item_bytes']} B |")
    return lines + ["", "Kernels compiled, launched once and dropped: goal under 1 KiB per "
                        "kernel (cuda-mock: the cuda target over the mock driver).", ""]


def markdown(results):
    m = results["machine"]
    lines = [f"# tidal benchmarks — {m['date']} on {m['host']}", ""] + machine_lines(m) + [""]
    if "compile" in results:
        lines += compile_table(results["compile"])
    if "launch" in results:
        lines += launch_table(results["launch"])
    if "launch_cuda_mock" in results:
        lines += launch_mock_table(results["launch_cuda_mock"])
    if "cpu_target" in results:
        lines += cpu_table(results["cpu_target"], m["cores"])
    if "vs_openmp" in results:
        import cpu_vs_openmp
        lines += cpu_vs_openmp.table(results["vs_openmp"])
    if "soak" in results and "phases" in results["soak"]:
        lines += soak_table(results["soak"])
    if "disk_cache" in results:
        lines += disk_cache_table(results["disk_cache"])
    if "reduce" in results:
        import reduce as reduction_bench
        lines += reduction_bench.table(results["reduce"], m["cores"])
    if "cuda_cpp" in results:
        import cuda_cpp
        lines += cuda_cpp.table(results["cuda_cpp"])
    if results.get("plots"):
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in results["plots"]] + [""]
    return "\n".join(lines)


def disk_cache_table(cache):
    """Section 4: a new process to a launchable kernel, cache hit beside miss."""
    lines = ["## 4. Disk cache", "",
             "A new process: `import tidal`, then the time to the end of the first launch of a "
             "`cache=True` kernel (saxpy[1, 32]); miss = the cold compile, hit = read from the "
             "cache (goal: 2 ms beyond the import); second kernel = a hit in the same process. "
             "Medians (min–max).", "",
             "| target | import tidal | miss: first launch | hit: first launch | "
             "hit: second kernel |", "|---|---|---|---|---|"]
    if "error" in cache:
        return lines + [f"| – | {cache['error']} | | | |", ""]

    def ms(s):
        return f"{s['median'] * 1e3:.2f} ms ({s['min'] * 1e3:.2f}–{s['max'] * 1e3:.2f})" \
            if s else "–"
    for target, entry in cache.items():
        if "error" in entry:
            lines.append(f"| {target} | {entry['error']} | | | |")
            continue
        lines.append(f"| {target} | {ms(entry['hit']['import'])} | {ms(entry['miss']['first'])} | "
                     f"{ms(entry['hit']['first'])} | {ms(entry['hit']['second'])} |")
    return lines + [""]


def plots(results, prefix):
    """Writes the PNGs next to `prefix`; returns their file names (relative)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written = []

    def save(fig, suffix):
        path = f"{prefix}-{suffix}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(os.path.basename(path))

    compile_results = {k: v for k, v in results.get("compile", {}).items() if "stages" in v}
    if compile_results:
        fig, ax = plt.subplots(figsize=(7, 4))
        names = list(compile_results)
        stages = list(next(iter(compile_results.values()))["stages"])
        bottom = [0.0] * len(names)
        for stage in stages:
            values = [compile_results[n]["stages"][stage]["median"] * 1e3 for n in names]
            ax.bar(names, values, bottom=bottom, label=stage)
            bottom = [b + v for b, v in zip(bottom, values)]
        lows = [(compile_results[n]["warm"]["median"] - compile_results[n]["warm"]["min"]) * 1e3
                for n in names]
        highs = [(compile_results[n]["warm"]["max"] - compile_results[n]["warm"]["median"]) * 1e3
                 for n in names]
        ax.errorbar(names, [compile_results[n]["warm"]["median"] * 1e3 for n in names],
                    yerr=[lows, highs], fmt="none", ecolor="black", capsize=3, label="warm total (min–max)")
        floors = [compile_results[n].get("llc_floor", {}).get("time", {}).get("median") for n in names]
        if any(f is not None for f in floors):
            ax.scatter(names, [f * 1e3 if f else float("nan") for f in floors], marker="_", s=400,
                       color="red", label="llc-19 floor (process)")
        ax.set_ylabel("ms (warm, median)")
        ax.set_title("Compile time to PTX per stage")
        ax.legend(fontsize=8)
        save(fig, "compile")

    launch = {k: v for k, v in results.get("launch", {}).items() if "dispatch" in v}
    if launch:
        fig, ax = plt.subplots(figsize=(6.5, 3.5))
        names = list(launch)
        for key, label in (("dispatch", "dispatch (no execution)"), ("launch", "launch (empty kernel)")):
            med = [launch[n][key]["median"] * 1e6 for n in names]
            low = [(launch[n][key]["median"] - launch[n][key]["min"]) * 1e6 for n in names]
            high = [(launch[n][key]["max"] - launch[n][key]["median"]) * 1e6 for n in names]
            ax.errorbar(names, med, yerr=[low, high], marker="o", capsize=3, label=label)
        ax.set_ylabel("µs per call (median, min–max)")
        ax.set_title("Dispatch and launch overhead, kernel[1, 1] (cpu target)")
        ax.legend(fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        save(fig, "launch")

    speed = results.get("cpu_target", {}).get("speedup", {})
    names = [n for n, s in speed.items() if s]
    if names:
        fig, ax = plt.subplots(figsize=(7, 4))
        width = 0.38
        xs = range(len(names))
        sim = [speed[n].get("vs_simulator", float("nan")) for n in names]
        njit = [speed[n].get("vs_njit", float("nan")) for n in names]
        ax.bar([x - width / 2 for x in xs], sim, width, label="vs simulator (per unit)")
        ax.bar([x + width / 2 for x in xs], njit, width, label="vs @njit")
        ax.axhline(1e4, color="gray", linestyle="--", linewidth=0.8)
        ax.axhline(1, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(names)
        ax.set_ylabel("speed-up of tidal's cpu target (×)")
        ax.set_title(f"cpu target speed-ups ({results['machine']['cores']} cores)")
        ax.legend(fontsize=8)
        save(fig, "cpu-speedup")

    if "vs_openmp" in results:
        import cpu_vs_openmp
        cpu_vs_openmp.plot(results["vs_openmp"], save, plt)
    return written
