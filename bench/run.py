"""`make bench`: every benchmark of tidal on this machine, side by side with
Numba where it is installed. Writes bench/results/<date>-<host>.json, a
Markdown table (.md) and PNG plots, and prints the table.

    /usr/bin/python3 bench/run.py [--quick] [--only compile,launch,cpu] [--out DIR]

Never fails because a kernel is unsupported: such a kernel is reported as
'unsupported: <first line of the error>' and the run goes on."""

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402



def log(message):
    print(message, flush=True)


def ensure_debian_package(module, package):
    """Installs a Debian package when its module is missing and we are root (tidal never
    depends on it; the benchmark only compares against it)."""
    if importlib.util.find_spec(module) is not None:
        return True
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        log(f"bench: {package} is not installed (and not root): its part is skipped")
        return False
    log(f"bench: installing {package} (apt-get install -y {package})")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    done = subprocess.run(["apt-get", "install", "-y", "-q", package], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        log(f"bench: could not install {package}: {done.stderr.strip().splitlines()[-1:]}")
        return False
    importlib.invalidate_caches()
    return importlib.util.find_spec(module) is not None


def section(name, func, results):
    log(f"== {name}")
    t0 = time.perf_counter()
    try:
        results[name] = func()
    except Exception as error:  # noqa: BLE001 - a broken section must not stop the others
        results[name] = {"error": common.unsupported(error)}
        log(f"  {results[name]['error']}")
    log(f"   ({time.perf_counter() - t0:.1f} s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, short simulator budget")
    parser.add_argument("--only", default="compile,launch,cpu,vs-openmp,soak,reduce,cache,cxx",
                        help="sections to run")
    parser.add_argument("--out", default=os.path.join(common.ROOT, "bench", "results"))
    parser.add_argument("--tag", default="",
                        help="added to the results' names: <date>-<host>-<tag>.{json,md}")
    options = parser.parse_args()
    sections = set(options.only.split(","))

    ensure_debian_package("numba", "python3-numba")
    ensure_debian_package("matplotlib", "python3-matplotlib")

    results = {"machine": common.machine()}
    log(f"bench: {results['machine']['cores']} cores, {results['machine']['cpu_model']}, "
        f"tidal {results['machine']['tidal_commit']}")
    quick = options.quick
    if "compile" in sections:
        import compile_time
        section("compile", lambda: compile_time.measure(
            warm_repeats=3 if quick else 15, cold_repeats=2 if quick else 5,
            llc_repeats=2 if quick else 5, log=log), results)
    if "launch" in sections:
        import launch
        section("launch", lambda: launch.measure(repeats=3 if quick else 9, log=log), results)
        section("launch_cuda_mock", lambda: launch.measure(
            repeats=3 if quick else 9, log=log, target="cuda-mock"), results)
    if "cpu" in sections:
        import cpu_target

        def cpu():
            tidal = cpu_target.measure_tidal(log=log)
            njit = cpu_target.measure_njit(log=log)
            simulator = cpu_target.measure_simulator(budget_s=4 if quick else 20, log=log)
            return {"tidal": tidal, "njit": njit, "simulator": simulator,
                    "speedup": cpu_target.compare(tidal, njit, simulator)}
        section("cpu_target", cpu, results)
    if "vs-openmp" in sections:
        import cpu_vs_openmp
        section("vs_openmp", lambda: cpu_vs_openmp.measure(log=log, quick=quick), results)
    if "soak" in sections:
        import soak
        section("soak", lambda: soak.measure(scale=0.1 if quick else 1.0, log=log), results)
    if "reduce" in sections:
        import reduce as reduction_bench
        section("reduce", lambda: reduction_bench.measure(log, repeats=3 if quick else 9), results)
    if "cache" in sections:
        import disk_cache
        section("disk_cache", lambda: disk_cache.measure(repeats=2 if quick else 5, log=log),
                results)

    if "cxx" in sections:
        import cuda_cpp
        section("cuda_cpp", lambda: cuda_cpp.measure(repeats=3 if quick else 7, log=log), results)

    import report
    os.makedirs(options.out, exist_ok=True)
    stem = time.strftime("%Y-%m-%d") + "-" + results["machine"]["host"] + \
        (f"-{options.tag}" if options.tag else "")
    prefix = os.path.join(options.out, stem)
    results["plots"] = report.plots(results, prefix)
    with open(prefix + ".json", "w") as f:
        json.dump(results, f, indent=1)
    table = report.markdown(results)
    with open(prefix + ".md", "w") as f:
        f.write(table)
    log("")
    log(table)
    log(f"bench: wrote {prefix}.json, {prefix}.md" +
        "".join(f", {os.path.join(options.out, p)}" for p in results["plots"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
