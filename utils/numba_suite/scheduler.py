"""Runs test modules in worker processes, a few at a time, each test under a timeout.

One worker process runs the tests of a group of modules (worker.py). A test that
runs past the timeout is counted as `timeout`; one that ends the process is
counted as `crash`; either way the worker is killed and a new one runs the
group's remaining tests.
"""

import json
import os
import select
import subprocess
import tempfile
import threading
import time

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")
PYTHON = "/usr/bin/python3"


class WorkerEvents:
    """The JSON lines a worker writes to its event pipe, read with a deadline."""

    def __init__(self, descriptor):
        self._descriptor = descriptor
        self._buffer = b""
        self.closed = False

    def next(self, deadline):
        """The next event; None at the deadline or when the pipe closes."""
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.closed:
                return None
            ready, _, _ = select.select([self._descriptor], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self._descriptor, 65536)
            if not chunk:
                self.closed = True
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)


def _output_tail(log_file, limit=1500):
    log_file.flush()
    log_file.seek(0, os.SEEK_END)
    size = log_file.tell()
    log_file.seek(max(0, size - limit))
    return log_file.read().decode(errors="replace")


def start_worker(root, environment, arguments, log_file, stdin_text=""):
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        [PYTHON, WORKER, root, str(write_end)] + arguments,
        stdin=subprocess.PIPE, stdout=log_file, stderr=subprocess.STDOUT,
        env=environment, pass_fds=(write_end,), start_new_session=True)
    os.close(write_end)
    process.stdin.write(stdin_text.encode())
    process.stdin.close()
    return process, WorkerEvents(read_end), read_end


def stop_worker(process, read_end):
    if process.poll() is None:
        os.killpg(process.pid, 9)
    process.wait()
    os.close(read_end)


def list_tests(root, environment, modules, timeout):
    """{module: [test ids]} or {module: "error"} from one worker."""
    found = {}
    with tempfile.TemporaryFile() as log_file:
        process, events, read_end = start_worker(root, environment, ["--list"] + modules, log_file)
        deadline = time.monotonic() + timeout
        while True:
            event = events.next(deadline)
            if event is None or event.get("done"):
                break
            found[event["module"]] = event.get("ids", event.get("error"))
        stop_worker(process, read_end)
        if len(found) != len(modules):
            raise RuntimeError("listing the tests failed:\n" + _output_tail(log_file))
    return found


def run_tests(root, environment, test_ids, timeout):
    """{test id: {"outcome", "cause", "detail", "seconds"}} for the ids of one or more modules."""
    results = {}
    fixture_errors = []
    remaining = list(test_ids)
    with tempfile.TemporaryFile() as log_file:
        while remaining:
            process, events, read_end = start_worker(
                root, environment, [], log_file, "\n".join(remaining) + "\n")
            current, started_at, subtest_failure = None, time.monotonic(), None
            ended_cleanly = False
            while True:
                event = events.next(started_at + timeout)
                if event is None:
                    break
                if event.get("done"):
                    ended_cleanly = True
                    break
                if "start" in event:
                    if current is not None and current not in results:
                        results[current] = subtest_failure or {"outcome": "error", "cause": "no outcome reported"}
                    current, started_at, subtest_failure = event["start"], time.monotonic(), None
                    continue
                test_id = event["id"]
                if event["outcome"] == "subtest-failure":
                    subtest_failure = {"outcome": "fail", "cause": event["cause"], "detail": event["detail"]}
                    continue
                if test_id not in test_ids:
                    fixture_errors.append(event)
                    continue
                event.pop("id")
                event["seconds"] = round(time.monotonic() - started_at, 2)
                results[test_id] = event
            unfinished = current if current is not None and current not in results else None
            if unfinished is None and not ended_cleanly:
                # Hung or ended between tests (a class fixture, the module's
                # import): the first test not reported takes it, so that the
                # next worker gets further.
                unfinished = next((t for t in remaining if t not in results), None)
            if unfinished is not None:
                if ended_cleanly:
                    if subtest_failure:
                        results[unfinished] = subtest_failure
                elif not events.closed:
                    results[unfinished] = {"outcome": "timeout", "cause": f"timeout: ran past {timeout:g} s",
                                           "seconds": timeout}
                else:
                    process.wait()
                    results[unfinished] = {"outcome": "crash",
                                           "cause": f"crash: the process ended with status {process.returncode}",
                                           "detail": _output_tail(log_file)}
            stop_worker(process, read_end)
            if ended_cleanly:
                break
            remaining = [test_id for test_id in remaining if test_id not in results]
    for test_id in test_ids:
        if test_id not in results:
            class_name = test_id.rsplit(".", 1)[0]
            fixture = next((e for e in fixture_errors if class_name in e["id"] or
                            test_id.rsplit(".", 2)[0] in e["id"]), None)
            if fixture is not None:
                results[test_id] = {"outcome": "error", "cause": "fixture: " + fixture.get("cause", ""),
                                    "detail": fixture.get("detail", "")}
            else:
                results[test_id] = {"outcome": "error", "cause": "not run"}
    return results


def run_all(root, environment, tests_by_module, jobs, timeout, batches, progress=None):
    """Runs every module, `jobs` worker processes at a time; {test id: result}.

    The modules are dealt into `batches` groups, each run by one worker
    process in turn (a fresh interpreter for every module would cost more
    than most modules' tests: it imports Numba and tidal). The workers take
    the next group when they finish one.
    """
    modules = sorted(tests_by_module)
    queue = [modules[start::batches] for start in range(min(batches, len(modules)))]
    results = {}
    lock = threading.Lock()

    def serve():
        while True:
            with lock:
                if not queue:
                    return
                group = queue.pop(0)
            started = time.monotonic()
            test_ids = [test_id for module in group for test_id in tests_by_module[module]]
            group_results = run_tests(root, environment, test_ids, timeout)
            with lock:
                results.update(group_results)
                if progress:
                    progress(group, group_results, time.monotonic() - started)

    threads = [threading.Thread(target=serve) for _ in range(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def worker_environment(mode, tidal_python_path):
    environment = dict(os.environ)
    environment.pop("NUMBA_ENABLE_CUDASIM", None)
    if mode == "simulator":
        environment["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        environment["PYTHONPATH"] = tidal_python_path
        environment["TIDAL_TARGET"] = environment.get("TIDAL_TARGET", "cpu")
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    return environment

