"""The suite's tables (per module, per failure cause) and its JSON."""

import collections
import json
import re

PASSING = ("pass",)
NOT_COUNTED = ("skip",)


def group_cause(cause):
    """A failure cause with the parts that differ between tests taken out."""
    cause = re.sub(r"(/[\w.+-]+)+\.py", "FILE.py", cause or "")
    cause = re.sub(r"FILE\.py:\d+(:\d+)?", "FILE.py:LINE", cause)
    cause = re.sub(r"<string>:\d+(:\d+)?", "<string>:LINE", cause)
    cause = re.sub(r"line \d+", "line N", cause)
    # The names of the test's own kernels, functions and arguments.
    cause = re.sub(r"\b(function|of|kernel|argument|field|source of) '\w+'", r"\1 '…'", cause)
    cause = re.sub(r"0x[0-9a-f]+", "0x…", cause)
    return cause[:160]


def module_of(test_id):
    return test_id.rsplit(".", 2)[0]


def summarize(results, simulator_passing=None):
    counts = collections.Counter(result["outcome"] for result in results.values())
    summary = {
        "tests": len(results),
        "passed": counts["pass"],
        "skipped": counts["skip"],
        "failed": len(results) - counts["pass"] - counts["skip"],
        "outcomes": dict(sorted(counts.items())),
    }
    if simulator_passing is not None:
        in_simulator_set = [t for t in simulator_passing if t in results]
        summary["simulator_passing"] = len(in_simulator_set)
        summary["passed_of_simulator_passing"] = sum(
            1 for t in in_simulator_set if results[t]["outcome"] == "pass")
    return summary


def by_module(results):
    table = collections.defaultdict(collections.Counter)
    for test_id, result in results.items():
        outcome = result["outcome"]
        kind = "pass" if outcome in PASSING else "skip" if outcome in NOT_COUNTED else "fail"
        table[module_of(test_id)][kind] += 1
    return {module: dict(counts) for module, counts in sorted(table.items())}


def by_cause(results):
    groups = collections.defaultdict(list)
    for test_id, result in results.items():
        if result["outcome"] not in PASSING + NOT_COUNTED:
            groups[group_cause(result.get("cause"))].append(test_id)
    return dict(sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])))


def print_tables(results, summary, causes_shown=40):
    modules = by_module(results)
    width = max(len(m) for m in modules) if modules else 10
    print(f"{'module':<{width}}  {'tests':>5}  {'pass':>5}  {'fail':>5}  {'skip':>5}")
    for module, counts in modules.items():
        total = sum(counts.values())
        print(f"{module:<{width}}  {total:>5}  {counts.get('pass', 0):>5}  "
              f"{counts.get('fail', 0):>5}  {counts.get('skip', 0):>5}")
    causes = by_cause(results)
    print(f"\nfailure causes ({len(causes)} groups; the {min(causes_shown, len(causes))} largest):")
    for cause, tests in list(causes.items())[:causes_shown]:
        print(f"{len(tests):>5}  {cause}")
    print()
    line = (f"tests: {summary['tests']}, passed: {summary['passed']}, "
            f"failed: {summary['failed']}, skipped: {summary['skipped']}")
    if "simulator_passing" in summary:
        line += (f"; of the {summary['simulator_passing']} the simulator passes: "
                 f"{summary['passed_of_simulator_passing']} pass")
    print(line + f"  ({', '.join(f'{k} {v}' for k, v in summary['outcomes'].items())})")


def write_json(path, mode, results, summary, seconds):
    document = {
        "mode": mode,
        "seconds": round(seconds, 1),
        "summary": summary,
        "modules": by_module(results),
        "causes": {cause: len(tests) for cause, tests in by_cause(results).items()},
        "tests": dict(sorted(results.items())),
    }
    with open(path, "w") as stream:
        json.dump(document, stream, indent=1)
