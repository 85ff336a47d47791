"""python3 -m tidal: what tidal finds on this machine, as ``numba -s``.

    python3 -m tidal --version    the version
    python3 -m tidal info         version, LLVM, files, target, driver, toolkit
    python3 -m tidal tidalc ...   the tidalc installed with the package
    python3 -m tidal run PROGRAM [ARGS]       a Numba program, unchanged, on tidal:
    python3 -m tidal run -m MODULE [ARGS]     numba.cuda is tidal.cuda in it and
    python3 -m tidal run -c CODE [ARGS]       in every process it starts

The installed console scripts ``tidal`` and ``tidalc`` are the same.
"""

import os
import platform
import sys

from . import __version__, installation


def _facts():
    """(section, [(name, value)]) of this installation."""
    files = [("package", installation.PACKAGE_DIR),
             ("plugin (TidalPasses.so)", installation.plugin_path() or "not found"),
             ("tidalc", installation.tidalc_path() or "not found"),
             ("headers", installation.include_dir() or "not installed (build tree)"),
             ("libdevice", installation.libdevice_path()
              or "not found (TIDAL_LIBDEVICE, CUDA_HOME, /usr/local/cuda)")]
    system = [("tidal", __version__),
              ("Python", f"{platform.python_version()} ({sys.executable})"),
              ("platform", platform.platform())]
    try:
        from . import _tidal
    except ImportError as error:
        system.append(("extension", f"MISSING: {error}"))
        return [("System", system), ("Files", files)]
    system.append(("extension", _tidal.__file__))
    system.append(("LLVM", installation.llvm_version() or "unknown"))
    from . import cuda
    usable, count, reason, library = _tidal.driver_status()
    target = [("target", cuda.current_target()),
              ("TIDAL_TARGET", os.environ.get("TIDAL_TARGET", "(not set)")),
              ("CUDA driver", library if usable else f"not usable: {reason}"),
              ("CUDA devices", count),
              ("cpu target threads", _tidal.cpu_worker_count()),
              ("cuda.is_available()", cuda.is_available()),
              ("CUDA GPU present", cuda.target.cuda_available())]
    toolkit = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    ptxas = os.path.join(toolkit, "bin", "ptxas")
    target.append(("CUDA toolkit", toolkit if os.path.isdir(toolkit) else "not found"))
    target.append(("ptxas", ptxas if os.path.exists(ptxas) else "not found"))
    return [("System", system), ("Files", files), ("Target", target)]


def info(out=sys.stdout):
    for section, rows in _facts():
        print(f"__{section}__", file=out)
        for name, value in rows:
            print(f"{name:<26}: {value}", file=out)
        print(file=out)


def tidalc(arguments=None):
    """Runs the tidalc program installed with the package."""
    arguments = sys.argv[1:] if arguments is None else arguments
    path = installation.tidalc_path()
    if path is None:
        print(f"tidalc: not installed with the package at {installation.PACKAGE_DIR}",
              file=sys.stderr)
        return 1
    # tidalc embeds CPython: it imports this package from where it is
    # installed (the build tree's tidalc finds build/python by itself).
    site = os.path.dirname(installation.PACKAGE_DIR)
    search_path = [site] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(search_path)
    os.execv(path, [path] + list(arguments))


def run(arguments):
    """Runs a Python program (a file, -m MODULE or -c CODE, with its
    arguments) in this interpreter with numba.cuda mapped to tidal.cuda
    (tidal/numba_mapping.py): through the environment, so the processes it
    starts (multiprocessing, pytest-xdist workers) have the mapping too."""
    if not arguments or (arguments[0] in ("-m", "-c") and len(arguments) < 2):
        print("usage: python3 -m tidal run PROGRAM [ARGS] | -m MODULE [ARGS] | -c CODE [ARGS]",
              file=sys.stderr)
        return 2
    from .numba_mapping import environment
    os.execve(sys.executable, [sys.executable] + list(arguments), environment())


def main(arguments=None):
    arguments = sys.argv[1:] if arguments is None else arguments
    if arguments[:1] in (["--version"], ["-V"]):
        print(f"tidal {__version__}")
        return 0
    if arguments[:1] == ["tidalc"]:
        return tidalc(arguments[1:])
    if arguments[:1] == ["run"]:
        return run(arguments[1:])
    if arguments[:1] in ([], ["info"], ["-s"]):
        info()
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
