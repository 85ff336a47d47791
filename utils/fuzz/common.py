"""What both fuzzers share: the command line (FUZZ_COUNT, FUZZ_SECONDS,
FUZZ_SEED, FUZZ_JOBS and their flags), the tally of outcomes, and the summary that
fails the run on a crash or a hang."""
import argparse
import collections
import os
import sys
import time

# Outcomes that fail a run: the process died of a signal, or did not answer.
FAILING = ("crash", "hang")
# A line of counts so far after this many inputs (long runs: a log to follow,
# and counts that an interrupted run leaves).
PROGRESS_EVERY = 5000


def parse_arguments(description, default_count, extra=None):
    """The shared options; extra(parser) adds a fuzzer's own."""
    parser = argparse.ArgumentParser(description=description)
    if extra:
        extra(parser)
    parser.add_argument("--count", type=int,
                        default=int(os.environ.get("FUZZ_COUNT") or default_count),
                        help="inputs to run (FUZZ_COUNT)")
    parser.add_argument("--seconds", type=float,
                        default=float(os.environ.get("FUZZ_SECONDS") or 0),
                        help="stop after this long, whatever the count (FUZZ_SECONDS; 0: no limit)")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED") or 1),
                        help="random seed (FUZZ_SEED)")
    parser.add_argument("--out", default=os.environ.get("FUZZ_OUT", "build/fuzz"),
                        help="where reproducers of crashes and hangs are written")
    parser.add_argument("--build", default=os.environ.get("TIDAL_BUILD_DIR", "build"))
    parser.add_argument("--jobs", type=int,
                        default=int(os.environ.get("FUZZ_JOBS") or os.cpu_count() or 1),
                        help="inputs run at once (FUZZ_JOBS; default: the cores)")
    parser.add_argument("--strict", action="store_true",
                        help="fail the run on errors without a source location too")
    return parser.parse_args()


class Tally:
    def __init__(self, name, options):
        self.name = name
        self.options = options
        self.counts = collections.Counter()
        self.examples = {}
        self.start = time.monotonic()
        os.makedirs(options.out, exist_ok=True)
        Tally.current = self

    current = None  # the run's tally, for main_guard
    def out_of_time(self):
        return self.options.seconds and time.monotonic() - self.start >= self.options.seconds

    def record(self, outcome, index, text, reproducer, suffix):
        """Counts an outcome; writes the reproducer of a failing one (or an
        unlocated error) to the output folder."""
        self.counts[outcome] += 1
        total = sum(self.counts.values())
        if total % PROGRESS_EVERY == 0 and total < self.options.count:
            print(f"{self.name}: {self.summary()}", flush=True)
        if outcome in FAILING or outcome == "unlocated":
            path = os.path.join(self.options.out,
                                f"{self.name}-{outcome}-seed{self.options.seed}-{index}{suffix}")
            with open(path, "w") as f:
                f.write(reproducer)
            self.examples.setdefault(outcome, []).append((path, text))
            print(f"{self.name}: {outcome} on input {index}: {text[:300]} ({path})", flush=True)

    def summary(self):
        seconds = time.monotonic() - self.start
        total = sum(self.counts.values())
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        return f"{total} inputs in {seconds:.1f} s (seed {self.options.seed}): {parts}"

    def finish(self, stopped=False):
        """Prints the summary; the exit status is 1 on a crash or a hang (and,
        with --strict, on an unlocated error). stopped: the run was
        interrupted (Ctrl-C) before its end."""
        print(f"{self.name}: {self.summary()}" + (" (stopped by SIGINT)" if stopped else ""),
              flush=True)
        failing = [k for k in FAILING if self.counts[k]]
        if self.counts["unlocated"] and self.options.strict:
            failing.append("unlocated")
        if failing:
            print(f"{self.name}: FAILED ({', '.join(failing)}); reproducers in {self.options.out}",
                  flush=True)
            return 1
        return 0


def main_guard(main):
    """Runs main; on Ctrl-C, the counts so far are printed, then exit 130."""
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        if Tally.current is not None:
            Tally.current.finish(stopped=True)
        sys.exit(130)
