"""pip's build of tidal: the C++ parts through CMake, then the package.

    pip install --no-build-isolation .          # builds the C++ from scratch
    python3 -m build --no-isolation --wheel     # a wheel in dist/

build_ext configures and builds the CMake project (the targets _tidal,
TidalPasses and tidalc only) in a directory of its own, then puts into the
package: the extension, lib/TidalPasses.so, bin/tidalc, include/ (the
headers of the plugin's host ABI and passes), lib/cmake/tidal/
(TidalConfig.cmake, for out-of-tree pass plugins) and docs/ (markers.md,
plugin.md). With TIDAL_CMAKE_BUILD_DIR naming an existing CMake build
directory (make build's build/), it builds there instead, which costs
nothing when that build is up to date.
"""

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
# tidal_intrinsic_table: tidal/_intrinsic_table.py, generated from the
# frontend's table of the names kernels use.
TARGETS = ["_tidal", "TidalPasses", "tidalc", "tidal_intrinsic_table"]
DEBIAN_PACKAGES = ("cmake ninja-build g++ llvm-19-dev llvm-19-tools clang-19 libclang-19-dev libclang-cpp19-dev "
                   "python3-dev python3-numpy")


def _llvm_cmake_dir():
    """LLVM 19's CMake package, or a SystemExit that says what to install."""
    directory = os.environ.get("TIDAL_LLVM_DIR", "/usr/lib/llvm-19/lib/cmake/llvm")
    if not os.path.isfile(os.path.join(directory, "LLVMConfig.cmake")):
        raise SystemExit(
            f"tidal needs LLVM 19 to build, and {directory}/LLVMConfig.cmake is missing.\n"
            f"On Debian 12: apt-get install {DEBIAN_PACKAGES}\n"
            f"(or set TIDAL_LLVM_DIR to the lib/cmake/llvm directory of an LLVM 19)")
    if shutil.which("cmake") is None:
        raise SystemExit(f"tidal needs cmake to build. On Debian 12: apt-get install "
                         f"{DEBIAN_PACKAGES}")
    return directory


def _run(command, cwd=None):
    print(" ".join(command), flush=True)
    subprocess.run(command, cwd=cwd, check=True)


class CMakeBuild(build_ext):
    """Builds the C++ parts with CMake and copies them into the package."""

    def build_extension(self, extension):
        build_dir = os.environ.get("TIDAL_CMAKE_BUILD_DIR")
        if build_dir:
            build_dir = os.path.abspath(build_dir)
            if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
                raise SystemExit(f"TIDAL_CMAKE_BUILD_DIR={build_dir} is not a configured "
                                 f"CMake build directory (run 'make build' first)")
        else:
            build_dir = os.path.join(os.path.abspath(self.build_temp), "cmake")
            self._configure(build_dir)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        _run(["cmake", "--build", build_dir, "--parallel", jobs, "--target"] + TARGETS)
        self._install(build_dir, extension)

    def _configure(self, build_dir):
        llvm = _llvm_cmake_dir()
        os.makedirs(build_dir, exist_ok=True)
        command = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                   f"-DPython3_EXECUTABLE={sys.executable}", f"-DLLVM_DIR={llvm}",
                   "-DTIDAL_BUILD_TESTS=OFF"]
        if shutil.which("ninja"):
            command += ["-G", "Ninja"]
        if shutil.which("ccache"):
            command.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        _run(command)

    def _install(self, build_dir, extension):
        """The built files into the package in build_lib."""
        package = os.path.join(os.path.abspath(self.build_lib), "tidal")
        built_extension = os.path.join(build_dir, "python", "tidal",
                                       os.path.basename(self.get_ext_filename("_tidal")))
        target = self.get_ext_fullpath(extension.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(built_extension, target)
        copies = [(os.path.join(build_dir, "python", "tidal", "_intrinsic_table.py"), ""),
                  (os.path.join(build_dir, "lib", "TidalPasses.so"), "lib"),
                  (os.path.join(build_dir, "bin", "tidalc"), "bin"),
                  (os.path.join(ROOT, "include", "tidal", "HostABI.h"), "include/tidal"),
                  (os.path.join(ROOT, "include", "tidal", "Contract.h"), "include/tidal"),
                  (os.path.join(ROOT, "llvm-plugin", "include", "tidal", "Markers.def"),
                   "include/tidal"),
                  (os.path.join(ROOT, "llvm-plugin", "include", "tidal", "Passes.h"),
                   "include/tidal"),
                  (os.path.join(ROOT, "llvm-plugin", "include", "tidal", "Pipeline.h"),
                   "include/tidal"),
                  (os.path.join(ROOT, "llvm-plugin", "include", "tidal", "Pipeline.def"),
                   "include/tidal"),
                  (os.path.join(ROOT, "docs", "markers.md"), "docs"),
                  (os.path.join(ROOT, "docs", "plugin.md"), "docs")]
        for source, folder in copies:
            os.makedirs(os.path.join(package, folder), exist_ok=True)
            shutil.copy2(source, os.path.join(package, folder))
        # TidalConfig.cmake for out-of-tree pass plugins (docs/research.md),
        # from the build tree's template, with paths relative to itself.
        with open(os.path.join(ROOT, "cmake", "TidalConfig.cmake.in")) as file:
            config = file.read()
        config = config.replace("@TIDAL_CONFIG_INCLUDE_DIRS@",
                                '"${CMAKE_CURRENT_LIST_DIR}/../../../include"')
        config = config.replace("@TIDAL_CONFIG_PASS_PLUGIN@",
                                "${CMAKE_CURRENT_LIST_DIR}/../../TidalPasses.so")
        os.makedirs(os.path.join(package, "lib", "cmake", "tidal"), exist_ok=True)
        with open(os.path.join(package, "lib", "cmake", "tidal", "TidalConfig.cmake"), "w") as file:
            file.write(config)


# setuptools' own build and egg-info directories, apart from make's build/.
os.makedirs(os.path.join(ROOT, "build-pip"), exist_ok=True)
setup(
    package_dir={"": "python"},
    packages=["tidal", "tidal.cuda", "tidal.cuda.cudadrv", "tidal.cuda.kernels", "tidal.ufuncs",
              "tidal._numba_shim.numba",
              "tidal.cuda._internal",
              "tidal.cuda.np"],
    ext_modules=[Extension("tidal._tidal", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip"},
             "egg_info": {"egg_base": "build-pip"}},
    zip_safe=False,
)
