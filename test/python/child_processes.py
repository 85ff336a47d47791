"""The environment of a Python child process that a test starts: this
process's environment without its tidal settings (TIDAL_*), so that the
child sees only the settings the test gives, with sys.path as PYTHONPATH.
What the sanitizer build needs (LD_PRELOAD, ASAN_OPTIONS, UBSAN_OPTIONS)
passes through, so `make check-asan` checks the children too."""
import os
import sys


def python_environment(**settings):
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith("TIDAL_")}
    environment["PYTHONPATH"] = os.pathsep.join(sys.path)
    environment.update(settings)
    return environment
