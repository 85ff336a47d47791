# lit configuration of tidal: IR through the plugin (plugin/*.ll) and Python
# through tidalc (frontend/*.py). The build is $TIDAL_BUILD_DIR, else build/.
#   TIDAL_BUILD_DIR=build /usr/bin/python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv test/lit
import os
import shutil

import lit.formats

config.name = "tidal"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ll", ".py", ".test"]
# Files in the test folders that are not tests (helpers of tests go in Inputs/).
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "__pycache__"]

config.test_source_root = os.path.dirname(os.path.abspath(__file__))
repo_root = os.path.dirname(os.path.dirname(config.test_source_root))
build_dir = os.path.abspath(
    os.environ.get("TIDAL_BUILD_DIR", os.path.join(repo_root, "build")))
config.test_exec_root = os.path.join(build_dir, "test", "lit")

# LLVM 19's unversioned tools (opt, llc, FileCheck, not, count, split-file)
# come first: the unversioned ones on the default PATH are LLVM 14.
llvm_bin = "/usr/lib/llvm-19/bin"
config.environment["PATH"] = os.pathsep.join(
    [llvm_bin, os.environ.get("PATH", "/usr/bin:/bin")])
for name in ["HOME", "TMPDIR", "CUDA_HOME", "TIDAL_TARGET", "TIDAL_CUDA_DRIVER",
             "LD_LIBRARY_PATH"]:
    if name in os.environ:
        config.environment[name] = os.environ[name]

plugin = os.path.join(build_dir, "lib", "TidalPasses.so")
if not os.path.exists(plugin):
    lit_config.warning(f"{plugin} is not built; plugin tests will fail")

# Longest first: lit replaces in list order, and %python is a prefix of
# %pythonpath.
config.substitutions.append(("%pythonpath", os.path.join(build_dir, "python")))
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%plugin", plugin))
# The research example's plugin (examples/research), which make build builds.
config.substitutions.append(("%research_plugin", os.path.join(
    build_dir, "examples", "research", "CountMemoryAccesses.so")))
config.substitutions.append(("%tidalc", os.path.join(build_dir, "bin", "tidalc")))
config.substitutions.append(("%tidal-bind", os.path.join(build_dir, "bin", "tidal-bind")))

# ptxas from a CUDA toolkit ($CUDA_HOME, then /usr/local/cuda) is optional:
# tests that say `REQUIRES: ptxas` are UNSUPPORTED without it.
cuda_homes = [os.environ.get("CUDA_HOME"), "/usr/local/cuda"]
ptxas = next((os.path.join(home, "bin", "ptxas") for home in cuda_homes
              if home and shutil.which(os.path.join(home, "bin", "ptxas"))),
             None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
else:
    lit_config.note("ptxas not found in $CUDA_HOME/bin or /usr/local/cuda/bin: "
                    "tests that REQUIRE ptxas are UNSUPPORTED")

# libdevice from the same toolkit search (TIDAL_LIBDEVICE, else $CUDA_HOME,
# else /usr/local/cuda, as llvm-plugin/Libdevice.cpp): tests of math through
# libdevice say `REQUIRES: libdevice`.
if "TIDAL_LIBDEVICE" in os.environ:
    config.environment["TIDAL_LIBDEVICE"] = os.environ["TIDAL_LIBDEVICE"]
libdevice_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
libdevice = os.environ.get(
    "TIDAL_LIBDEVICE",
    os.path.join(libdevice_home, "nvvm", "libdevice", "libdevice.10.bc"))
if libdevice != "none" and os.path.isfile(libdevice):
    config.available_features.add("libdevice")
    config.substitutions.append(("%libdevice", libdevice))
else:
    lit_config.note("libdevice not found (TIDAL_LIBDEVICE, $CUDA_HOME or "
                    "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc): tests "
                    "that REQUIRE libdevice are UNSUPPORTED")
