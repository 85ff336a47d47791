"""Numba's own CUDA tests as tidal's yardstick (docs/numba-suite.md).

    run.py [--build build] [--jobs 2] [--batches 8] [--timeout 60] [--update]
    run.py --simulator [--update]          (Numba's unchanged tests on its simulator)

Copies numba/cuda/tests/{cudapy,doc_examples} of the installed python3-numba
into <build>/numba-suite/, rewrites the imports of one copy for tidal, runs
every test under a per-test timeout in `--jobs` worker processes (the
modules dealt into `--batches` groups, one worker process each), prints a
table per module and per failure cause and writes <build>/numba-suite/<mode>.json.

Against tidal, the exit status is 1 when a test leaves the expectation of
expected_failures.txt (a test not listed that fails, a listed test that
passes); --update rewrites that list instead. With --simulator, --update
rewrites simulator_passing.txt.
"""

import argparse
import glob
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import expectations  # noqa: E402
import report  # noqa: E402
import rewrite  # noqa: E402
import scheduler  # noqa: E402
from reasons import reason_for  # noqa: E402


def test_modules(root):
    modules = []
    for package in rewrite.PACKAGES:
        for path in sorted(glob.glob(os.path.join(root, package, "test_*.py"))):
            modules.append(f"{package}.{os.path.basename(path)[:-3]}")
    return modules


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build", help="tidal's build folder")
    parser.add_argument("--scratch", help="where the copies go (default: <build>/numba-suite)")
    parser.add_argument("--simulator", action="store_true",
                        help="run Numba's unchanged tests on Numba's simulator")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--batches", type=int, default=8,
                        help="groups of modules, each run in one worker process")
    parser.add_argument("--timeout", type=float, default=60, help="seconds a test may take")
    parser.add_argument("--update", action="store_true", help="rewrite the checked-in list")
    parser.add_argument("--only", nargs="*", help="module names (cudapy.test_x) to run")
    parser.add_argument("--results", help="take the results of an earlier run's JSON instead of running")
    arguments = parser.parse_args()

    started = time.monotonic()
    build = os.path.abspath(arguments.build)
    scratch = os.path.abspath(arguments.scratch or os.path.join(build, "numba-suite"))
    mode = "simulator" if arguments.simulator else "tidal"
    if arguments.results:
        with open(arguments.results) as stream:
            results = json.load(stream)["tests"]
    else:
        results = run_suite(arguments, build, scratch, mode)
    seconds = time.monotonic() - started
    return report_and_check(arguments, scratch, mode, results, seconds)


def run_suite(arguments, build, scratch, mode):
    numba_copy = rewrite.copy_suite(os.path.join(scratch, "numba"), for_tidal=False)
    root = numba_copy if arguments.simulator else rewrite.copy_suite(
        os.path.join(scratch, "tidal"), for_tidal=True)

    # The tests are those Numba's copy defines: a module that fails to import
    # against tidal still counts every one of its tests.
    modules = arguments.only or test_modules(numba_copy)
    listed = scheduler.list_tests(numba_copy, scheduler.worker_environment("simulator", ""),
                                  modules, timeout=300)
    tests_by_module = {m: ids for m, ids in listed.items() if isinstance(ids, list) and ids}
    for module, ids in listed.items():
        if not isinstance(ids, list):
            print(f"numba-suite: {module} does not load even on Numba's simulator: {ids}")

    def progress(group, results, seconds):
        print(f"  {len(group)} modules, {len(results)} tests: {seconds:.1f} s", flush=True)
        for module in group:
            ids = tests_by_module[module]
            passed = sum(1 for test_id in ids if results[test_id]["outcome"] == "pass")
            print(f"    {module:<45} {passed:>4}/{len(ids):<4} passed", flush=True)

    print(f"numba-suite: {sum(map(len, tests_by_module.values()))} tests in {len(tests_by_module)} "
          f"modules, on {'Numba simulator' if arguments.simulator else 'tidal'}, "
          f"{arguments.jobs} workers, {arguments.timeout:g} s per test", flush=True)
    environment = scheduler.worker_environment(mode, os.path.join(build, "python"))
    return scheduler.run_all(root, environment, tests_by_module, arguments.jobs,
                             arguments.timeout, arguments.batches, progress)


def report_and_check(arguments, scratch, mode, results, seconds):
    simulator_passing = None if arguments.simulator else expectations.read_simulator_passing()
    summary = report.summarize(results, simulator_passing)
    print()
    report.print_tables(results, summary)
    os.makedirs(scratch, exist_ok=True)
    json_path = os.path.join(scratch, f"{mode}.json")
    report.write_json(json_path, mode, results, summary, seconds)
    print(f"numba-suite: {seconds:.0f} s; results in {json_path}")

    if arguments.simulator:
        if arguments.update:
            count = expectations.write_simulator_passing(results)
            print(f"numba-suite: wrote {count} tests to {expectations.SIMULATOR_PASSING}")
        return 0
    if arguments.update:
        # With --only (or --results of such a run), only the modules run change.
        count = expectations.write_expected_failures(results, reason_for,
                                                     partial=bool(arguments.only) or
                                                     bool(arguments.results))
        print(f"numba-suite: wrote {count} expected failures to {expectations.EXPECTED_FAILURES}")
        return 0
    expected = expectations.read_expected_failures()
    regressions, newly_passing = expectations.compare(results, expected)
    for test_id in regressions:
        print(f"REGRESSION  {test_id}: {results[test_id].get('cause')}")
    for test_id in newly_passing:
        print(f"NOW PASSES  {test_id} (listed as: {expected[test_id]}); "
              f"take it off the list: make numba-suite UPDATE=1")
    if regressions or newly_passing:
        print(f"numba-suite: {len(regressions)} regressions, {len(newly_passing)} newly passing "
              f"tests still listed in {os.path.relpath(expectations.EXPECTED_FAILURES)}")
        return 1
    print(f"numba-suite: as expected ({len(expected)} listed failures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
