"""What every test module shares: the package from the build tree, the `rng`
fixture, the `gpu` marker, and the `target` fixture.

`target` runs a test once per target: 'cpu' always, and 'cuda', over the real
driver where a GPU is present (those cases are marked `gpu`) and over the mock
driver (build/lib/libtidal_mock_cuda.so, test/mock_driver) everywhere else.
The mock runs no kernels (device memory is host memory, copies are real, a
launch is checked and logged): a test reads `target.computes` to know whether
a kernel's results can be checked, and `target.driver_calls()` for what the
mock saw.

A process runs kernels on one target (TIDAL_TARGET, or the GPU when there is
one). The cases for that target run in the process itself; the cases for the
other target run together, in one child pytest process started with that
target's environment, and each reports the child's outcome here.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# The package is imported from the build tree (PYTHONPATH=build/python); make
# `pytest test/python` work without it too.
_BUILD_PYTHON = os.path.join(os.path.dirname(__file__), "..", "..", "build", "python")
if os.path.isdir(_BUILD_PYTHON) and _BUILD_PYTHON not in sys.path:
    sys.path.append(os.path.abspath(_BUILD_PYTHON))  # after PYTHONPATH, never before

import tidal  # noqa: E402  (after the path above)

# mock_script: a script in a process of its own over the mock driver.
from mock_driver import mock_script  # noqa: E402,F401  (mock_script is a fixture)
from targets import (CHILD_REPORT_VARIABLE, MOCK_LIBRARY, PROCESS_TARGET, Target,  # noqa: E402
                     cuda_is_mock, target_params)


@pytest.fixture(params=target_params())
def target(request):
    name = request.param
    mock = name == "cuda" and cuda_is_mock()
    if mock and name == PROCESS_TARGET:
        # In the child process: each test sees only its own calls in the log.
        log = os.environ.get("TIDAL_MOCK_CUDA_LOG")
        if log and os.path.exists(log):
            os.truncate(log, 0)
    return Target(name, mock)


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(1234)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA GPU (run on a lent GPU machine by utils/gpu-kit/run.sh)")


# --- cases of the other target, run in one child process ---------------------


def _target_of(item):
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("target") if callspec is not None else None


def _child_environment(target_name, report):
    env = dict(os.environ)
    env[CHILD_REPORT_VARIABLE] = report
    env["TIDAL_TARGET"] = target_name
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(tidal.__file__).resolve().parents[1])]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    if target_name == "cuda" and cuda_is_mock():
        for name in list(env):
            if name.startswith("TIDAL_MOCK_CUDA_"):
                del env[name]
        env["TIDAL_CUDA_DRIVER"] = str(MOCK_LIBRARY)
        env["TIDAL_MOCK_CUDA_LOG"] = report + ".calls.jsonl"
    return env


def _run_child(session, target_name):
    """Runs every selected case of `target_name` in one child pytest; returns
    {nodeid: [report, ...]} and the child's output."""
    items = [i for i in session.items if _target_of(i) == target_name]
    folder = tempfile.mkdtemp(prefix=f"tidal-{target_name}-")
    report = os.path.join(folder, "reports.jsonl")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
         str(session.config.rootpath)] + [i.nodeid for i in items],
        cwd=str(session.config.rootpath), env=_child_environment(target_name, report),
        capture_output=True, text=True, timeout=900)
    outcomes = {}
    if os.path.exists(report):
        for line in Path(report).read_text().splitlines():
            entry = json.loads(line)
            outcomes.setdefault(entry["nodeid"], []).append(entry)
    shutil.rmtree(folder, ignore_errors=True)
    return outcomes, proc.stdout + proc.stderr


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    target_name = _target_of(pyfuncitem)
    if target_name is None or target_name == PROCESS_TARGET or os.environ.get(CHILD_REPORT_VARIABLE):
        return None  # run here, as usual
    session = pyfuncitem.session
    children = session.__dict__.setdefault("tidal_children", {})
    if target_name not in children:
        children[target_name] = _run_child(session, target_name)
    outcomes, output = children[target_name]
    reports = outcomes.get(pyfuncitem.nodeid)
    where = f"on the {target_name} target, in a child process (TIDAL_TARGET={target_name})"
    if not reports:
        pytest.fail(f"{where}: the child reported nothing for this case; its output:\n"
                    + output[-4000:], pytrace=False)
    for entry in reports:
        if entry["outcome"] == "failed":
            pytest.fail(f"{where}, {entry['when']} failed:\n{entry['longrepr']}", pytrace=False)
    for entry in reports:
        if entry["outcome"] == "skipped":
            pytest.skip(f"{where}: {entry['longrepr']}")
    return True


def pytest_runtest_logreport(report):
    path = os.environ.get(CHILD_REPORT_VARIABLE)
    if not path:
        return
    if report.when != "call" and report.outcome == "passed":
        return
    longrepr = report.longreprtext if report.outcome != "skipped" else (
        report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr))
    with open(path, "a") as out:
        out.write(json.dumps({"nodeid": report.nodeid, "when": report.when,
                              "outcome": report.outcome, "longrepr": longrepr}) + "\n")
