"""Runs tests of one module of the copied suite in this process; reports each on a pipe.

    worker.py ROOT EVENT_FD < test ids, one a line     (run them, in order)
    worker.py ROOT EVENT_FD --list MODULE...            (report the ids of the modules)

ROOT is a scratch copy made by rewrite.py. Events are JSON lines written to
EVENT_FD: {"start": id}, then {"id", "outcome", "cause", "detail"} with
outcome one of pass, fail, error, skip. The tests' own output goes to this
process's stdout and stderr. run.py watches the events and the clock: a test
that hangs or kills this process is counted there.
"""

import json
import os
import subprocess
import sys
import traceback
import unittest


class EventWriter:
    def __init__(self, descriptor):
        self._stream = os.fdopen(descriptor, "w", buffering=1)

    def send(self, **event):
        self._stream.write(json.dumps(event) + "\n")
        self._stream.flush()


def failure_cause(error_info):
    """The exception type and the first line of its message: the failure's group."""
    kind, value, _ = error_info
    child_error = getattr(value, "stderr", None) if isinstance(value, subprocess.CalledProcessError) else None
    if child_error:
        # A program the test ran (python -c ...): what that program died of.
        if isinstance(child_error, bytes):
            child_error = child_error.decode(errors="replace")
        last_line = child_error.strip().splitlines()[-1].strip()
        return f"{kind.__name__} (status {value.returncode}): {last_line}"
    message = str(value).strip().splitlines()
    first_line = message[0].strip() if message else ""
    name = kind.__name__ if kind is not None else "Error"
    return f"{name}: {first_line}" if first_line else name


def failure_detail(error_info):
    text = "".join(traceback.format_exception(*error_info))
    return text[-4000:]


class StreamingResult(unittest.TestResult):
    """Sends each test's outcome as it is known."""

    def __init__(self, events):
        super().__init__()
        self.events = events

    def startTest(self, test):
        super().startTest(test)
        self.events.send(start=test.id())

    def _report(self, test, outcome, error_info=None, cause=None):
        event = {"id": test.id(), "outcome": outcome}
        if error_info is not None:
            event["cause"] = failure_cause(error_info)
            event["detail"] = failure_detail(error_info)
        if cause is not None:
            event["cause"] = cause
        self.events.send(**event)

    def addSuccess(self, test):
        self._report(test, "pass")

    def addExpectedFailure(self, test, error_info):
        self._report(test, "pass")

    def addFailure(self, test, error_info):
        self._report(test, "fail", error_info)

    def addError(self, test, error_info):
        # A class or module fixture that fails is reported on a stand-in
        # (unittest's _ErrorHolder); run.py gives its cause to the tests of
        # that class that never started.
        self._report(test, "error", error_info)

    def addSkip(self, test, reason):
        self._report(test, "skip", cause=f"skipped: {reason}")

    def addUnexpectedSuccess(self, test):
        self._report(test, "fail", cause="unexpected success of a test Numba expects to fail")

    def addSubTest(self, test, subtest, error_info):
        if error_info is not None:
            self.events.send(id=test.id(), outcome="subtest-failure",
                             cause=failure_cause(error_info), detail=failure_detail(error_info))


def run_tests(test_ids, events):
    loader = unittest.TestLoader()
    result = StreamingResult(events)
    suite = unittest.TestSuite()
    import_failures = {}
    for test_id in test_ids:
        module = test_id.rsplit(".", 2)[0]
        if module in import_failures:
            events.send(start=test_id)
            events.send(id=test_id, **import_failures[module])
            continue
        try:
            __import__(module)
        except unittest.SkipTest as skip:
            import_failures[module] = {"outcome": "skip", "cause": f"skipped: {skip}"}
        except BaseException:
            error_info = sys.exc_info()
            import_failures[module] = {"outcome": "error",
                                       "cause": "import: " + failure_cause(error_info),
                                       "detail": failure_detail(error_info)}
        if module in import_failures:
            events.send(start=test_id)
            events.send(id=test_id, **import_failures[module])
            continue
        try:
            suite.addTest(loader.loadTestsFromName(test_id))
        except BaseException:
            events.send(start=test_id)
            events.send(id=test_id, outcome="error", cause="not found: " + failure_cause(sys.exc_info()))
    suite.run(result)


def list_tests(modules, events):
    loader = unittest.TestLoader()

    def flatten(suite):
        for item in suite:
            if isinstance(item, unittest.TestSuite):
                yield from flatten(item)
            else:
                yield item.id()

    for module in modules:
        try:
            ids = list(flatten(loader.loadTestsFromName(module)))
        except BaseException:
            events.send(module=module, error=failure_cause(sys.exc_info()))
            continue
        events.send(module=module, ids=ids)


def main():
    root, descriptor = sys.argv[1], int(sys.argv[2])
    sys.path.insert(0, root)
    os.chdir(root)
    events = EventWriter(descriptor)
    if len(sys.argv) > 3 and sys.argv[3] == "--list":
        list_tests(sys.argv[4:], events)
    else:
        run_tests([line.strip() for line in sys.stdin if line.strip()], events)
    events.send(done=True)


if __name__ == "__main__":
    main()
