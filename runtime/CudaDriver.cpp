// Opens libcuda with dlopen, resolves the entry points the runtime needs and
// records, in one line, why the driver cannot be used when it cannot.
#include "tidal/runtime/CudaDriver.h"

#include <cstdlib>
#include <type_traits>

#include <dlfcn.h>

namespace tidal::runtime {

namespace {

constexpr const char *DefaultDriverLibrary = "libcuda.so.1";

// The results cuInit and cuDeviceGetCount can give, for drivers that cannot
// name them (the toolkit's stub cannot name any).
struct KnownError {
  int Result;
  const char *Name;
  const char *Description;
};
constexpr KnownError KnownErrors[] = {
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY",
     "CUDA driver is a stub library, not a real driver"},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
     "API call requires a newer CUDA driver"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE",
     "CUDA-capable device(s) busy or unavailable"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM",
     "OS call failed or operation not supported on this OS"},
    {800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "forward compatibility was attempted on non supported HW"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

std::string lastLoaderError() {
  const char *Message = dlerror();
  return Message ? Message : "unknown dynamic loader error";
}

} // namespace

void CudaDriver::LibraryCloser::operator()(void *Handle) const {
  dlclose(Handle);
}

CudaDriver &CudaDriver::get() {
  // Never destroyed: code that runs at exit may still call the driver.
  static CudaDriver *const Driver = [] {
    const char *Override = std::getenv("TIDAL_CUDA_DRIVER");
    return new CudaDriver(Override && *Override ? Override
                                                : DefaultDriverLibrary);
  }();
  return *Driver;
}

CudaDriver CudaDriver::open(const std::string &LibraryPath) {
  return CudaDriver(LibraryPath);
}

CudaDriver::CudaDriver(std::string Path) : LibraryPath(std::move(Path)) {
  dlerror(); // clear a stale message
  Library.reset(dlopen(LibraryPath.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!Library) {
    Reason = "cannot open " + LibraryPath + ": " + lastLoaderError();
    return;
  }

  auto resolve = [this](const char *Name, auto &Entry) {
    dlerror();
    Entry = reinterpret_cast<std::remove_reference_t<decltype(Entry)>>(
        dlsym(Library.get(), Name));
    if (!Entry && Reason.empty())
      Reason = LibraryPath + " has no " + Name + ": " + lastLoaderError();
  };
  resolve("cuInit", CuInit);
  resolve("cuDeviceGetCount", CuDeviceGetCount);
  resolve("cuGetErrorName", CuGetErrorName);
  resolve("cuGetErrorString", CuGetErrorString);
  if (!Reason.empty())
    return;

  if (int Result = CuInit(0)) {
    Reason =
        "cuInit failed: " + describeError(Result) + " [" + LibraryPath + "]";
    return;
  }
  int Count = 0;
  if (int Result = CuDeviceGetCount(&Count)) {
    Reason = "cuDeviceGetCount failed: " + describeError(Result) + " [" +
             LibraryPath + "]";
    return;
  }
  DeviceCount = Count;
  if (DeviceCount < 1) {
    Reason = "no CUDA device [" + LibraryPath + "]";
    return;
  }
  Usable = true;
}

std::string CudaDriver::describeError(int Result) const {
  const char *Name = nullptr;
  const char *Description = nullptr;
  if (CuGetErrorName && CuGetErrorName(Result, &Name) == 0 && Name) {
    std::string Text = Name;
    if (CuGetErrorString && CuGetErrorString(Result, &Description) == 0 &&
        Description)
      Text += std::string(" (") + Description + ")";
    return Text;
  }
  for (const KnownError &Known : KnownErrors)
    if (Known.Result == Result)
      return std::string(Known.Name) + " (" + Known.Description + ")";
  return "CUDA error " + std::to_string(Result);
}

} // namespace tidal::runtime
