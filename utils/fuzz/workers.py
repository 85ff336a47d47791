"""The frontend fuzzer's workers: processes forked from the fuzzer (which has
imported tidal but never compiled), each running one input after another
(as AFL's persistent mode) while they end cleanly (serve says so: for the
frontend fuzzer, while no kernel has run); then it is replaced by a fresh
fork. Several run at once (--jobs). Time limits per input: SIGINT
after launch_seconds (a kernel's endless loop stops with KeyboardInterrupt),
SIGKILL answer_seconds later (a hang). An input may have two phases: with
compile_seconds, the limit runs from the request until the worker says
progress(phase="launch") (its compile is done), then launch_seconds from
there: a compile may take long on a loaded machine, a kernel on a small
grid ends in milliseconds, and an endless one costs only launch_seconds.

The parent waits on the workers' result pipes with select(), so an input's
end is seen at once (no polling)."""
import json
import os
import select
import signal
import time

# A worker is replaced after this many inputs, to bound what compiled
# kernels and their modules accumulate.
INPUTS_PER_WORKER = 200
# Outcomes after which the worker is replaced: its state may be damaged.
REPLACE_AFTER = ("interrupted", "fault", "fuzzer error", "unlocated")
# The exit status of a worker that a SIGINT reached while it waited for an
# input (the parent's interrupt for an input it had answered as the deadline
# passed): no crash; an input sent to it meanwhile is run again elsewhere.
LATE_INTERRUPT = 4

# In a worker: its result pipe, for progress() (None in the fuzzer itself).
_results = None


def progress(**fields):
    """Tells the parent how far the input has come (a worker only; elsewhere
    nothing): phase="launch" starts the input's launch_seconds; the other
    fields (seconds of each step) are kept for the timings."""
    if _results is not None:
        os.write(_results, (json.dumps({"progress": fields}) + "\n").encode())


class Worker:
    def __init__(self, serve, inherited):
        """Forks a worker that runs serve(request) -> (outcome, text, clean)
        for each request; inherited: the other workers' pipe ends, closed in it."""
        request_read, self.requests = os.pipe()
        self.results, result_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.requests)
            os.close(self.results)
            for descriptor in inherited:
                os.close(descriptor)
            _serve_forever(serve, request_read, result_write)
        os.close(request_read)
        os.close(result_write)
        self.buffer = b""
        self.current = None       # the item it is running
        self.last = None          # the item it answered last
        self.deadline = None
        self.interrupted = False
        self.served = 0
        self.status = None        # its exit status, once stopped
        self.steps = {}           # the current input's progress fields
        self.launched = None      # when its launch began (progress phase="launch")
        self.launch_cpu = 0.0     # its CPU seconds then

    def send(self, item, request, seconds):
        self.current = item
        self.request = request
        self.sent = time.monotonic()
        self.deadline = self.sent + seconds
        self.interrupted = False
        self.steps = {}
        self.launched = None
        os.write(self.requests, (json.dumps(request) + "\n").encode())

    def launch_cpu_seconds(self):
        """CPU seconds its process (all its threads) has used since its
        launch began (0 if unknown)."""
        used = _cpu_seconds(self.pid)
        return used - self.launch_cpu if used is not None else 0.0

    def retire(self, graceful_seconds):
        """Closes its request pipe, after which a worker that answered leaves
        by itself: it is reaped later (reap), or killed graceful_seconds
        from now, so that the fuzzer need not wait for it."""
        if self.requests is not None:
            os.close(self.requests)
            self.requests = None
        self.retire_deadline = time.monotonic() + graceful_seconds
        try:
            self.exit_descriptor = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # no pidfd: reap polls
            self.exit_descriptor = None

    def reap(self, wait=False):
        """Its exit status once it has ended (or, after its retire deadline,
        or with wait once that deadline passes, been killed), else None."""
        if self.status is not None:
            return self.status
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() >= self.retire_deadline:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                _, status = os.waitpid(self.pid, 0)
                break
            if not wait:
                return None
            time.sleep(0.002)
        self.status = status
        os.close(self.results)
        if self.exit_descriptor is not None:
            os.close(self.exit_descriptor)
        return status

    def stop(self, graceful_seconds=0.0):
        """Reaps it (once) and returns its exit status: first, for up to
        graceful_seconds, as it leaves by itself once its request pipe is
        closed (so that a crash after its last answer, such as an abort in
        free() over a heap a kernel corrupted, is seen), then killed."""
        if self.status is None:
            if self.requests is not None:
                self.retire(graceful_seconds)
            self.reap(wait=True)
        return self.status

    def descriptors(self):
        """Its pipe ends held by the fuzzer (closed in a new worker)."""
        if self.status is not None:
            return []
        return [d for d in (self.requests, self.results, getattr(self, "exit_descriptor", None))
                if d is not None]


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds(pid):
    """User and system CPU seconds of process pid, all its threads (None
    where /proc cannot tell)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime
    except (OSError, IndexError, ValueError):
        return None


def _serve_forever(serve, request_read, result_write):
    """The worker's loop (never returns)."""
    # A crash is told by the signal and kept as a reproducer; the Python stack
    # dump that faulthandler (pytest enables it) would print is noise there.
    import faulthandler
    faulthandler.disable()
    global _results
    _results = result_write
    status = 0
    try:
        requests = os.fdopen(request_read, "r")
        for line in requests:
            outcome, text, clean = serve(json.loads(line))
            os.write(result_write, (json.dumps({"outcome": outcome, "text": text[:2000],
                                                "clean": clean}) + "\n").encode())
    except KeyboardInterrupt:  # between inputs: see LATE_INTERRUPT
        status = LATE_INTERRUPT
    except BaseException:  # noqa: BLE001 - the fuzzer's own failure, reported
        import traceback
        try:
            os.write(result_write, (json.dumps({"outcome": "fuzzer error",
                                                "text": traceback.format_exc()[-2000:],
                                                "clean": False})
                                    + "\n").encode())
        except OSError:
            pass
        status = 3
    os._exit(status)


class Timings:
    """Where a run's time goes (--timings): per outcome, the inputs, their
    seconds from request to answer (wall), the steps the worker told
    (progress fields: load, compile; launch: from phase="launch" to the
    answer), how many were a fresh worker's first input, and the parent's
    seconds replacing workers (stop and fork)."""

    def __init__(self):
        self.outcomes = {}
        self.replaced = 0
        self.replace_seconds = 0.0
        self.start = time.monotonic()

    def add(self, outcome, fresh, wall, steps):
        totals = self.outcomes.setdefault(outcome, {"inputs": 0, "fresh": 0, "wall": 0.0})
        totals["inputs"] += 1
        totals["fresh"] += fresh
        totals["wall"] += wall
        for step, seconds in steps.items():
            if isinstance(seconds, (int, float)):
                totals[step] = totals.get(step, 0.0) + seconds

    def report(self, jobs):
        """The table, as lines of text."""
        elapsed = time.monotonic() - self.start
        lines = [f"timings: {elapsed:.1f} s elapsed, {jobs} workers; per outcome: inputs "
                 f"(of them a fresh worker's first), seconds in all and per input"]
        for outcome, totals in sorted(self.outcomes.items(), key=lambda kv: -kv[1]["wall"]):
            n = totals["inputs"]
            steps = ", ".join(f"{step} {totals[step]:.1f} ({1000 * totals[step] / n:.0f} ms)"
                              for step in ("load", "compile", "launch", "load cpu",
                                           "compile cpu", "launch cpu") if step in totals)
            lines.append(f"  {outcome:14} {n:6} ({totals['fresh']} fresh): wall "
                         f"{totals['wall']:.1f} s ({1000 * totals['wall'] / n:.0f} ms)"
                         + (f"; {steps}" if steps else ""))
        lines.append(f"  workers replaced {self.replaced}: {self.replace_seconds:.1f} s in the "
                     f"parent (stop and fork)")
        own, children = os.times()[:2], os.times()[2:4]
        attributed = sum(t.get(step, 0.0) for t in self.outcomes.values()
                         for step in ("load cpu", "compile cpu", "launch cpu"))
        lines.append(f"  CPU seconds: fuzzer {sum(own):.1f}, workers {sum(children):.1f} (of "
                     f"them in inputs' steps {attributed:.1f}; the rest: starting and "
                     f"ending workers, waiting for inputs)")
        return lines


def run(items, serve, jobs, launch_seconds, answer_seconds, on_result, compile_seconds=None,
        launch_cpu_seconds=None, timings=None):
    """Runs every (item, request) of items on `jobs` workers; on_result(item,
    outcome, text) for each, in the order they end. compile_seconds: the
    limit until the worker's progress(phase="launch"), launch_seconds from
    there (None: launch_seconds from the request); launch_cpu_seconds: also
    SIGINT a launch once its process has used this much CPU time since it
    began (its threads together: an endless kernel's cost to the machine,
    whatever the load; None: no such limit). timings: a Timings to fill.

    A replaced worker that answered retires: it leaves by itself, and is
    reaped while the others run (up to 5 s, then killed), so that a crash on
    its way out is still told (of its last input), without the fuzzer
    waiting for it."""
    workers = []
    retiring = []
    again = []  # inputs to run again: their worker left on a late interrupt
    first_limit = launch_seconds if compile_seconds is None else compile_seconds
    poll = 0.02  # seconds between looks at a launch's CPU time

    def open_descriptors():
        return [d for w in workers + retiring for d in w.descriptors()]

    def late_interrupt(status):
        return os.WIFEXITED(status) and os.WEXITSTATUS(status) == LATE_INTERRUPT

    def ended(worker, status):
        """A retired worker's exit: a crash of its last input if it died of
        something other than its kill."""
        if late_interrupt(status):
            return
        if worker.last is not None and (
                os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL
                or os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0):
            how = (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                   else f"exit status {os.WEXITSTATUS(status)}")
            on_result(worker.last, "crash", f"died after answering, of {how}")

    def reap_retired(wait=False):
        for worker in list(retiring):
            status = worker.reap(wait)
            if status is not None:
                retiring.remove(worker)
                ended(worker, status)

    def replace(worker):
        started = time.monotonic()
        workers.remove(worker)
        if worker.status is not None:  # already reaped (it left on a late interrupt)
            pass
        elif worker.current is None:  # it answered: it leaves by itself
            worker.retire(graceful_seconds=5.0)
            retiring.append(worker)
        else:  # it died or hangs: its input was answered for it
            worker.stop()
        workers.append(Worker(serve, open_descriptors()))
        if timings is not None:
            timings.replaced += 1
            timings.replace_seconds += time.monotonic() - started

    def result(worker, item, outcome, text):
        if timings is not None:
            timings.add(outcome, worker.served == 0, time.monotonic() - worker.sent,
                        worker.steps)
        on_result(item, outcome, text)

    def launching(worker):
        worker.launched = time.monotonic()
        if compile_seconds is not None and not worker.interrupted:
            worker.deadline = worker.launched + launch_seconds
        if launch_cpu_seconds is not None:
            worker.launch_cpu = _cpu_seconds(worker.pid) or 0.0

    def interrupt(worker, now):
        os.kill(worker.pid, signal.SIGINT)
        worker.interrupted = True
        worker.deadline = now + answer_seconds

    for _ in range(max(1, jobs)):
        workers.append(Worker(serve, open_descriptors()))
    items = iter(items)
    exhausted = False
    try:
        while True:
            for worker in list(workers):
                if exhausted or worker.current is not None:
                    continue
                pair = again.pop() if again else next(items, None)
                if pair is None:
                    exhausted = True
                    break
                item, request = pair
                try:
                    worker.send(item, request, first_limit)
                except BrokenPipeError:  # it ended between inputs
                    status = worker.stop()
                    if late_interrupt(status):
                        again.append(pair)
                    else:
                        on_result(item, "crash", f"worker gone before the input (status {status})")
                    workers.remove(worker)
                    workers.append(Worker(serve, open_descriptors()))
            busy = [w for w in workers if w.current is not None]
            if not busy:
                if again or not exhausted:  # a worker was replaced before it took an input
                    continue
                break
            now = time.monotonic()
            wait = max(0.0, min(w.deadline for w in busy) - now)
            watched = [w for w in busy if w.launched is not None and not w.interrupted]
            if launch_cpu_seconds is not None and watched:
                wait = min(wait, poll)
            exits = {w.exit_descriptor: w for w in retiring if w.exit_descriptor is not None}
            if len(exits) < len(retiring):  # no pidfd: look now and then
                wait = min(wait, poll)
            if retiring:  # one that does not leave is killed at its deadline
                wait = max(0.0, min(wait, min(w.retire_deadline for w in retiring) - now))
            ready, _, _ = select.select([w.results for w in busy] + list(exits), [], [], wait)
            for descriptor in ready:
                if descriptor in exits:
                    continue
                worker = next(w for w in busy if w.results == descriptor)
                _read_result(worker, result, replace, again, late_interrupt, launching)
            if retiring:
                reap_retired()
            now = time.monotonic()
            for worker in [w for w in workers if w.current is not None]:
                over_cpu = (launch_cpu_seconds is not None and worker.launched is not None
                            and not worker.interrupted
                            and worker.launch_cpu_seconds() >= launch_cpu_seconds)
                if worker.deadline > now and not over_cpu:
                    continue
                if select.select([worker.results], [], [], 0)[0]:
                    continue  # its answer came as the limit passed: read it first
                if not worker.interrupted:
                    interrupt(worker, now)
                else:
                    phase = "launch" if worker.launched is not None else "request"
                    result(worker, worker.current, "hang",
                           f"no answer in {launch_seconds if phase == 'launch' else first_limit}"
                           f" s after its {phase}, nor to SIGINT")
                    replace(worker)
    finally:
        for worker in workers:
            worker.stop()
        reap_retired(wait=True)


def _read_result(worker, result, replace, again, late_interrupt, launching):
    chunk = os.read(worker.results, 65536)
    if not chunk:  # it died during the input
        item, request = worker.current, worker.request
        status = worker.stop()
        if late_interrupt(status):
            if worker.interrupted:  # this input's own interrupt, outside serve()
                result(worker, item, "interrupted", "interrupted between the kernel and its answer")
            else:  # a late one, before it read the input: run it elsewhere
                again.append((item, request))
            worker.current = None
            replace(worker)
            return
        if os.WIFSIGNALED(status):
            outcome, text = "crash", f"killed by signal {os.WTERMSIG(status)}"
        else:
            outcome, text = "crash", f"exit status {os.WEXITSTATUS(status)} without a report"
        result(worker, item, outcome, text)
        replace(worker)
        return
    worker.buffer += chunk
    while b"\n" in worker.buffer:
        line, worker.buffer = worker.buffer.split(b"\n", 1)
        answer = json.loads(line)
        if "progress" in answer:
            worker.steps.update(answer["progress"])
            if answer["progress"].get("phase") == "launch":
                launching(worker)
            continue
        if worker.launched is not None:
            worker.steps["launch"] = time.monotonic() - worker.launched
        item, worker.current = worker.current, None
        worker.last = item
        result(worker, item, answer["outcome"], answer["text"])
        worker.served += 1
        if worker.interrupted or not answer["clean"] or answer["outcome"] in REPLACE_AFTER \
                or worker.served >= INPUTS_PER_WORKER:
            replace(worker)
        return
