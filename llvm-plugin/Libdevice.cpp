// Finding libdevice and keeping its bytes for the life of the process
// (Libdevice.h).

#include "Libdevice.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <cstdlib>
#include <memory>
#include <mutex>

using namespace llvm;

namespace tidal {

namespace {
std::string libdeviceUnder(StringRef Home) {
  SmallString<256> Path(Home);
  sys::path::append(Path, "nvvm", "libdevice", "libdevice.10.bc");
  return std::string(Path);
}

std::string explicitPath(StringRef Value) {
  return Value == "none" ? "" : Value.str();
}
} // namespace

std::string findLibdevice(const std::optional<std::string> &Explicit) {
  if (Explicit)
    return explicitPath(*Explicit);
  if (const char *Override = std::getenv("TIDAL_LIBDEVICE"))
    return explicitPath(Override);
  const char *CudaHome = std::getenv("CUDA_HOME");
  std::string Path = libdeviceUnder(CudaHome && *CudaHome ? CudaHome
                                                           : "/usr/local/cuda");
  return sys::fs::exists(Path) ? Path : "";
}

const MemoryBuffer *getLibdeviceBytes(StringRef Path, std::string &Error) {
  static std::mutex Lock;
  static StringMap<std::unique_ptr<MemoryBuffer>> Cache;
  std::lock_guard<std::mutex> Guard(Lock);
  std::unique_ptr<MemoryBuffer> &Bytes = Cache[Path];
  if (!Bytes) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> File = MemoryBuffer::getFile(Path);
    if (!File) {
      Error = "cannot read libdevice '" + Path.str() +
              "': " + File.getError().message();
      Cache.erase(Path);
      return nullptr;
    }
    Bytes = std::move(*File);
  }
  return Bytes.get();
}

} // namespace tidal
