"""The researcher's view of tidal's compiler (docs/research.md): the points
of each target's in-process pipeline and the stages of the IR seen there
(read from the C++ table, tidal/Pipeline.def), LLVM pass plugins loaded
into those pipelines, extra passes at the points, and the exact pipeline
text each target runs.

    import tidal.compiler
    tidal.compiler.load_pass_plugin("build/examples/research/CountMemoryAccesses.so")
    print(tidal.compiler.pipeline_text("cuda", passes={"after-frontend": "count-memory-accesses"}))
"""

import os

from . import _tidal as _native

__all__ = ["pipeline_points", "stages", "load_pass_plugin", "loaded_pass_plugins",
           "pipeline_text", "passes_text", "cmake_dir"]


def pipeline_points():
    """The points of the pipelines, in order: a tuple of (point, stage,
    description). Extra passes given for a point run there; the stage is
    the IR after them."""
    return _native.pipeline_points()


def stages():
    """The stages kernel.inspect_llvm(stage=...) shows, in pipeline order,
    then "asm" (PTX, or the host's assembly), which inspect_asm shows."""
    return tuple(stage for _, stage, _ in pipeline_points()) + ("asm",)


def load_pass_plugin(path):
    """Loads an LLVM 19 pass plugin (the .so that opt-19 -load-pass-plugin=
    takes) into every pipeline that runs after this call, on both targets:
    its pipeline-parsing callbacks make its passes names for passes=... and
    TIDAL_PASSES, and its extension-point callbacks run inside default<O3>,
    as under clang -fpass-plugin. OSError, naming the plugin, if it cannot
    be loaded. Kernels compiled before keep their code."""
    _native.load_pass_plugin(os.fspath(path))


def loaded_pass_plugins():
    """The paths of the loaded plugins, TIDAL_PASS_PLUGINS' first."""
    return _native.loaded_pass_plugins()


def passes_text(passes, where="passes"):
    """cuda.jit's passes= option in TIDAL_PASSES' syntax ('point=text;...'):
    a dict of point -> pipeline text (or a list of them, run in order), or a
    str already in that syntax. ValueError names an unknown point, or says
    what is wrong with the str's syntax."""
    if passes is None:
        return ""
    if isinstance(passes, str):
        try:
            _native.check_passes(passes)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
        return passes
    if not isinstance(passes, dict):
        raise TypeError(f"{where} must be a dict of point -> pipeline text, "
                        f"not {type(passes).__name__}")
    points = [point for point, _, _ in pipeline_points()]
    entries = []
    for point, text in passes.items():
        if point not in points:
            raise ValueError(f"{where}: unknown pipeline point {point!r}; the points are "
                             f"{', '.join(points)}")
        texts = [text] if isinstance(text, str) else list(text)
        if not texts or not all(isinstance(t, str) and t.strip() for t in texts):
            raise TypeError(f"{where}[{point!r}] must be pipeline text (a non-empty str, or "
                            f"a list of them), not {text!r}")
        entries.append((points.index(point), point, ",".join(t.strip() for t in texts)))
    return ";".join(f"{point}={text}" for _, point, text in sorted(entries))


def pipeline_text(target="cuda", arch="sm_75", passes=None):
    """The exact pipeline text `target` ("cuda" or "cpu") runs, with
    TIDAL_PASSES and `passes` (as cuda.jit's passes=) at their points: what
    tidalc --print-pipeline prints and opt-19 -passes= takes."""
    sm = int(str(arch).replace("sm_", ""))
    return _native.pipeline_text(target, sm, passes_text(passes))


def cmake_dir():
    """The folder of TidalConfig.cmake, for an out-of-tree pass plugin's
    cmake -DTidal_DIR=... (tidal.installation.cmake_dir)."""
    from .installation import cmake_dir as folder
    return folder()


def _fingerprint():
    """What of the process's pipeline settings a kernel's code depends on,
    for the disk cache's key: TIDAL_PASSES as read, TIDAL_LLVM_ARGS, and each
    loaded plugin's path, size and modification time."""
    plugins = []
    try:
        loaded = loaded_pass_plugins()
    except RuntimeError:  # a bad TIDAL_PASS_PLUGINS: the compile says so
        loaded = (os.environ.get("TIDAL_PASS_PLUGINS", ""),)
    for path in loaded:
        try:
            status = os.stat(path)
            plugins.append((path, status.st_size, status.st_mtime_ns))
        except OSError:
            plugins.append((path, None, None))
    return (_native.process_passes(), os.environ.get("TIDAL_LLVM_ARGS", ""), tuple(plugins))
