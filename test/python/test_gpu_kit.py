"""The GPU kit (utils/gpu-kit): packing it here, and running what it carries
as far as this machine allows: its own Python 3.11 (unpacked with dpkg -x, in
a clean environment) runs examples/saxpy.py on the cpu target with the build
it carries, and every library that the carried binaries load resolves inside
the kit or is one that any Ubuntu-like base image has."""

import glob
import json
import os
import shutil
import subprocess
import tarfile

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACK = os.path.join(ROOT, "utils", "gpu-kit", "pack.py")
DEB_CACHE = os.path.join(ROOT, "build", "gpu-kit-debs")  # kept between runs: no re-download
LIMIT_BYTES = 64 * 1024 * 1024
ARCH_LIB = "x86_64-linux-gnu"
# Libraries every Ubuntu-like base image has (the kit leaves them out on purpose).
BASE_LIBRARIES = {
    "linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libdl.so.2",
    "libpthread.so.0", "librt.so.1", "libutil.so.1", "libstdc++.so.6", "libgcc_s.so.1",
    "libz.so.1", "libzstd.so.1", "liblzma.so.5", "libbz2.so.1.0", "libtinfo.so.6",
    "libuuid.so.1", "libcrypt.so.1",
    # OpenSSL 3: the GPU machine's Python 3.12 (with pip) needs it too
    "libcrypto.so.3", "libssl.so.3",
}


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    if not shutil.which("dpkg") or not shutil.which("apt-get"):
        pytest.skip("the kit is packed on Debian (needs apt-get and dpkg)")
    if not glob.glob(os.path.join(ROOT, "build", "python", "tidal", "_tidal*.so")):
        pytest.skip("no build in build/ (run make build)")
    out = tmp_path_factory.mktemp("gpu-kit") / "gpu-kit"
    done = subprocess.run(["/usr/bin/python3", PACK, "--out", str(out), "--deb-cache", DEB_CACHE],
                          capture_output=True, text=True, timeout=900)
    if done.returncode == 2:
        pytest.skip(f"cannot reach the Debian package registry: {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def unpacked(kit, tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    done = subprocess.run(["bash", str(kit / "run.sh"), "--unpack-only"], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "TIDAL_KIT_PREFIX": str(prefix)}, timeout=600)
    assert done.returncode == 0, done.stderr
    return prefix


def kit_python(kit, prefix, args, cwd):
    """The kit's interpreter through run.sh, from a clean environment."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(prefix), "TIDAL_KIT_PREFIX": str(prefix),
           "TIDAL_TARGET": "cpu"}
    return subprocess.run(["bash", str(kit / "run.sh"), "python"] + args, capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300)


def test_kit_holds_the_build_the_sources_and_the_packages(kit):
    for rel in ("run.sh", "MANIFEST.json", "build.tar.xz", "src/bench/gpu.py",
                "src/bench/kernels.py", "src/bench/kernel_source.py",
                "src/test/python/conftest.py", "src/examples/saxpy.py"):
        assert (kit / rel).is_file(), rel
    with tarfile.open(kit / "build.tar.xz") as archive:
        members = set(archive.getnames())
    for rel in ("build/bin/tidalc", "build/lib/TidalPasses.so", "build/python/tidal/__init__.py",
                "build/python/tidal/cuda/dispatcher.py"):
        assert rel in members, rel
    assert [m for m in members if m.startswith("build/python/tidal/_tidal") and m.endswith(".so")]
    assert not (kit / "build").exists()  # only the archive travels
    manifest = json.loads((kit / "MANIFEST.json").read_text())
    for package in ("libllvm19", "python3.11-minimal", "libpython3.11-stdlib", "python3-numpy",
                    "python3-pytest", "libz3-4", "libicu72"):
        assert (kit / "debs" / manifest["debs"][package]).is_file(), package
    assert not list(kit.rglob("__pycache__"))


def test_kit_is_at_most_64_mib(kit):
    total = sum(p.stat().st_size for p in kit.rglob("*") if p.is_file() and not p.is_symlink())
    assert total <= LIMIT_BYTES, f"the kit is {total / 2**20:.1f} MiB"


def test_kit_python_runs_saxpy_on_the_cpu_target(kit, unpacked, tmp_path):
    done = kit_python(kit, unpacked, [str(kit / "src" / "examples" / "saxpy.py")], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "check against NumPy: OK" in done.stdout


def test_kit_python_imports_only_from_the_kit(kit, unpacked, tmp_path):
    probe = (
        "import json, sys, numpy, pytest, tidal, tidal._tidal\n"
        "maps = [l.split()[-1] for l in open('/proc/self/maps') if '.so' in l]\n"
        "print(json.dumps({'executable': sys.executable, 'prefix': sys.prefix, 'numpy': numpy.__file__,\n"
        "  'pytest': pytest.__file__, 'tidal': tidal.__file__, 'maps': sorted(set(maps))}))\n")
    done = kit_python(kit, unpacked, ["-c", probe], tmp_path)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    for key in ("executable", "prefix", "numpy", "pytest"):
        assert seen[key].startswith(str(unpacked)), (key, seen[key])
    assert seen["tidal"].startswith(str(unpacked / "build")), seen["tidal"]
    llvm = [m for m in seen["maps"] if "libLLVM" in m]
    assert llvm and all(m.startswith(str(unpacked)) for m in llvm), llvm
    base_stems = {name.split(".so")[0] for name in BASE_LIBRARIES}
    outside = {os.path.basename(m) for m in seen["maps"]
               if not m.startswith((str(unpacked), str(kit)))}
    assert {name for name in outside if name.split(".so")[0] not in base_stems} == set()


def test_carried_binaries_resolve_their_libraries_in_the_kit(kit, unpacked):
    libs = [unpacked / "usr" / "lib" / ARCH_LIB, unpacked / "lib" / ARCH_LIB,
            unpacked / "usr" / "lib" / "llvm-19" / "lib", unpacked / "usr" / "lib" / ARCH_LIB / "blas",
            unpacked / "usr" / "lib" / ARCH_LIB / "lapack"]
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": ":".join(map(str, libs))}
    build = unpacked / "build"
    binaries = [unpacked / "usr" / "bin" / "python3.11", build / "bin" / "tidalc",
                build / "lib" / "TidalPasses.so"]
    binaries += [p for p in (build / "python" / "tidal").glob("_tidal*.so")]
    assert len(binaries) == 4, binaries
    binaries += list((unpacked / "usr" / "lib" / "python3" / "dist-packages" / "numpy").rglob("*.so"))
    for name in ("_ctypes", "_decimal", "pyexpat", "_struct", "math"):
        binaries += list((unpacked / "usr" / "lib" / "python3.11" / "lib-dynload").glob(f"{name}.*.so"))
    problems = []
    for binary in binaries:
        out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, env=env).stdout
        for line in out.splitlines():
            parts = line.split()
            if not parts or "statically linked" in line:
                continue
            name = parts[0]
            where = parts[2] if len(parts) > 2 and parts[1] == "=>" else parts[0]
            if "not found" in line:
                problems.append(f"{binary.name}: {name} not found")
            elif where.startswith(str(unpacked)) or name in BASE_LIBRARIES or \
                    os.path.basename(where) in BASE_LIBRARIES:
                continue
            else:
                problems.append(f"{binary.name}: {name} from {where}, outside the kit")
    assert not problems, "\n".join(problems)
