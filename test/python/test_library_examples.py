"""The library's examples (examples/monte_carlo_pi.py: cuda.random and
cuda.reduce; examples/reduction.py) run as a user runs them, on the cpu
target, and their own checks against NumPy and pi pass; so do the Python
blocks of docs/library.md."""

import os
import subprocess
import sys

import pytest

from build_tree import BUILD

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_PYTHON = str(BUILD / "python")


@pytest.mark.parametrize("example, says", [
    ("monte_carlo_pi.py", "pi on the cpu target from 8,192,000 points"),
    ("reduction.py", "sum into a device array"),
])
def test_example_runs_and_checks_itself(example, says):
    env = dict(os.environ, TIDAL_TARGET="cpu")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (BUILD_PYTHON, env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, os.path.join(ROOT, "examples", example)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert says in done.stdout and "MISMATCH" not in done.stdout


def test_the_docs_python_blocks_run(tmp_path):
    # docs/library.md's examples run as written (from a file: tidal reads
    # kernels' source).
    import re
    with open(os.path.join(ROOT, "docs", "library.md")) as page:
        blocks = re.findall(r"```python\n(.*?)```", page.read(), re.S)
    assert len(blocks) == 3
    env = dict(os.environ, TIDAL_TARGET="cpu")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (BUILD_PYTHON, env.get("PYTHONPATH")) if p)
    for number, block in enumerate(blocks):
        script = tmp_path / f"library_block_{number}.py"
        script.write_text(block)
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              env=env, timeout=300)
        assert done.returncode == 0, block + done.stdout + done.stderr
