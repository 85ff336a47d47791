"""CUDA's ptxas, where the toolkit is present ($CUDA_HOME, else
/usr/local/cuda): the check that PTX tidal writes is PTX the GPU's
assembler takes. Without the toolkit the check is skipped, with the reason."""

import os
import subprocess
from pathlib import Path

import pytest


def ptxas_path():
    """ptxas's path, or None where the toolkit is absent."""
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    return path if path.is_file() else None


def assert_ptxas_accepts(ptx, tmp_path, sm):
    """Assemble `ptx` for sm_`sm`; fail with ptxas's message if it refuses.
    Called after a test's other checks: without ptxas the test ends there,
    skipped with the reason."""
    ptxas = ptxas_path()
    if ptxas is None:
        pytest.skip("ptxas not found ($CUDA_HOME/bin or /usr/local/cuda/bin): the PTX was "
                    "checked by tidal's own tests only")
    path = tmp_path / f"compiled_sm{sm}.ptx"
    path.write_text(ptx)
    proc = subprocess.run([str(ptxas), f"-arch=sm_{sm}", "-c", str(path), "-o", os.devnull],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
