"""The frontend fuzzer's workers: processes forked from the fuzzer (which has
imported tidal but never compiled), each running one input after another
(as AFL's persistent mode) while they end cleanly (serve says so: for the
frontend fuzzer, while no kernel has run); then it is replaced by a fresh
fork. Several run at once (--jobs). Time limits per input: SIGINT
after launch_seconds (a kernel's endless loop stops with KeyboardInterrupt),
SIGKILL answer_seconds later (a hang).

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

    def send(self, item, request, launch_seconds):
        self.current = item
        self.request = request
        self.deadline = time.monotonic() + launch_seconds
        self.interrupted = False
        os.write(self.requests, (json.dumps(request) + "\n").encode())

    def stop(self, graceful_seconds=0.0):
        """Reaps it (once) and returns its exit status: first, for up to
        graceful_seconds, as it leaves by itself once its request pipe is
        closed (so that a crash after its last answer, such as an abort in
        free() over a heap a kernel corrupted, is seen), then killed."""
        if self.status is None:
            os.close(self.requests)
            deadline = time.monotonic() + graceful_seconds
            while True:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self.status = status
                    break
                if time.monotonic() >= deadline:
                    try:
                        os.kill(self.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    _, self.status = os.waitpid(self.pid, 0)
                    break
                time.sleep(0.002)
            os.close(self.results)
        return self.status


def _serve_forever(serve, request_read, result_write):
    """The worker's loop (never returns)."""
    # A crash is told by the signal and kept as a reproducer; the Python stack
    # dump that faulthandler (pytest enables it) would print is noise there.
    import faulthandler
    faulthandler.disable()
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


def run(items, serve, jobs, launch_seconds, answer_seconds, on_result):
    """Runs every (item, request) of items on `jobs` workers; on_result(item,
    outcome, text) for each, in the order they end."""
    workers = []
    again = []  # inputs to run again: their worker left on a late interrupt

    def open_descriptors():
        return [d for w in workers for d in (w.requests, w.results)]

    def late_interrupt(status):
        return os.WIFEXITED(status) and os.WEXITSTATUS(status) == LATE_INTERRUPT

    def replace(worker):
        # A worker that answered leaves by itself; one that died on the way
        # out crashed after its answer, of what its last input did.
        status = worker.stop(graceful_seconds=0.0 if worker.current is not None else 5.0)
        if late_interrupt(status):
            pass
        elif worker.current is None and worker.last is not None and (
                os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL
                or os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0):
            how = (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                   else f"exit status {os.WEXITSTATUS(status)}")
            on_result(worker.last, "crash", f"died after answering, of {how}")
        workers.remove(worker)
        workers.append(Worker(serve, open_descriptors()))

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
                    worker.send(item, request, launch_seconds)
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
            wait = max(0.0, min(w.deadline for w in busy) - time.monotonic())
            ready, _, _ = select.select([w.results for w in busy], [], [], wait)
            for descriptor in ready:
                worker = next(w for w in busy if w.results == descriptor)
                _read_result(worker, on_result, replace, again, late_interrupt)
            now = time.monotonic()
            for worker in [w for w in workers if w.current is not None and w.deadline <= now]:
                if select.select([worker.results], [], [], 0)[0]:
                    continue  # its answer came as the deadline passed: read it first
                if not worker.interrupted:
                    os.kill(worker.pid, signal.SIGINT)
                    worker.interrupted = True
                    worker.deadline = now + answer_seconds
                else:
                    on_result(worker.current, "hang",
                              f"no answer in {launch_seconds} s, nor to SIGINT")
                    replace(worker)
    finally:
        for worker in workers:
            worker.stop()


def _read_result(worker, on_result, replace, again, late_interrupt):
    chunk = os.read(worker.results, 65536)
    if not chunk:  # it died during the input
        item, request = worker.current, worker.request
        status = worker.stop()
        if late_interrupt(status):
            if worker.interrupted:  # this input's own interrupt, outside serve()
                on_result(item, "interrupted", "interrupted between the kernel and its answer")
            else:  # a late one, before it read the input: run it elsewhere
                again.append((item, request))
            worker.current = None
            replace(worker)
            return
        if os.WIFSIGNALED(status):
            outcome, text = "crash", f"killed by signal {os.WTERMSIG(status)}"
        else:
            outcome, text = "crash", f"exit status {os.WEXITSTATUS(status)} without a report"
        on_result(item, outcome, text)
        replace(worker)
        return
    worker.buffer += chunk
    if b"\n" not in worker.buffer:
        return
    line, worker.buffer = worker.buffer.split(b"\n", 1)
    answer = json.loads(line)
    item, worker.current = worker.current, None
    worker.last = item
    worker.served += 1
    on_result(item, answer["outcome"], answer["text"])
    if worker.interrupted or not answer["clean"] or answer["outcome"] in REPLACE_AFTER \
            or worker.served >= INPUTS_PER_WORKER:
        replace(worker)
