"""The MPI example (examples/mpi_stencil.py) under mpirun: a 2-D stencil
split over ranks with halo exchanges equals the single-process run."""

import os
import shutil
import subprocess
import sys

import pytest

import tidal

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
PACKAGE_PARENT = os.path.dirname(os.path.dirname(tidal.__file__))


def _mpirun():
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun is not installed (Debian's openmpi-bin)")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py is not installed (Debian's python3-mpi4py)")
    return mpirun


@pytest.mark.parametrize("ranks", [2, 3])
def test_mpi_stencil_equals_single_process(ranks):
    command = [_mpirun(), "-n", str(ranks), "--oversubscribe"]
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT, TIDAL_TARGET="cpu",
               TIDAL_CPU_THREADS="1")
    if os.geteuid() == 0:  # OpenMPI refuses root without both of these
        command.append("--allow-run-as-root")
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    command += [sys.executable, os.path.join(ROOT, "examples", "mpi_stencil.py")]
    result = subprocess.run(command, env=env, capture_output=True, timeout=300)
    output = result.stdout.decode()
    assert result.returncode == 0, output + result.stderr.decode()[-3000:]
    assert f"mpi: {ranks} ranks" in output and "equals the single-process run" in output, output
