"""The checked-in lists: tests expected to fail (with reasons), the simulator's passing set.

expected_failures.txt: one test a line, `<test id>  <reason>`; `#` starts a comment.
simulator_passing.txt: one test id a line.
"""

import os

FOLDER = os.path.dirname(os.path.abspath(__file__))
EXPECTED_FAILURES = os.path.join(FOLDER, "expected_failures.txt")
SIMULATOR_PASSING = os.path.join(FOLDER, "simulator_passing.txt")

EXPECTED_HEADER = """\
# Numba's CUDA tests that fail against tidal (cpu target), one a line:
#   <test id>  <why: a missing feature, a Numba internal, a GPU-only check>
# `make numba-suite` (and `make check`) fails when a test leaves this list's
# expectation: a test not listed that fails, or a listed test that passes.
# `make numba-suite UPDATE=1` rewrites the list from a run, keeping the
# reasons written here; a new entry gets its failure cause as its reason.
"""

SIMULATOR_HEADER = """\
# Numba's CUDA tests that Numba's own simulator passes (NUMBA_ENABLE_CUDASIM=1,
# Numba's imports): the denominator of issue 12's goal.
# Regenerate: make numba-suite-simulator
"""


def read_expected_failures(path=EXPECTED_FAILURES):
    """{test id: reason}"""
    expected = {}
    if not os.path.exists(path):
        return expected
    with open(path) as stream:
        for line in stream:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            test_id, _, reason = line.partition(" ")
            expected[test_id] = reason.strip()
    return expected


def write_expected_failures(results, reason_for, path=EXPECTED_FAILURES, partial=False):
    """Lists every test of `results` that neither passes nor skips. With
    `partial` (a run of some modules), the listed tests that the run did not
    cover keep their lines."""
    previous = read_expected_failures(path)
    reasons = {t: r for t, r in previous.items() if partial and t not in results}
    for test_id, result in results.items():
        if result["outcome"] not in ("pass", "skip"):
            reasons[test_id] = previous.get(test_id) or reason_for(test_id, result)
    with open(path, "w") as stream:
        stream.write(EXPECTED_HEADER)
        for test_id in sorted(reasons):
            stream.write(f"{test_id}  {reasons[test_id]}\n")
    return len(reasons)


def read_simulator_passing(path=SIMULATOR_PASSING):
    if not os.path.exists(path):
        return None
    with open(path) as stream:
        return [line.strip() for line in stream if line.strip() and not line.startswith("#")]


def write_simulator_passing(results, path=SIMULATOR_PASSING):
    passing = sorted(t for t, r in results.items() if r["outcome"] == "pass")
    with open(path, "w") as stream:
        stream.write(SIMULATOR_HEADER)
        stream.write("".join(t + "\n" for t in passing))
    return len(passing)


def compare(results, expected):
    """(regressions, newly passing): the tests that leave the list's expectation."""
    regressions = sorted(t for t, r in results.items()
                         if r["outcome"] not in ("pass", "skip") and t not in expected)
    newly_passing = sorted(t for t, r in results.items() if r["outcome"] == "pass" and t in expected)
    return regressions, newly_passing
