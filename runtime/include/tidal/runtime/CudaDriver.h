// The CUDA driver, opened with dlopen so that nothing needs a GPU or the
// CUDA toolkit to build or start. TIDAL_CUDA_DRIVER overrides the library.
#ifndef TIDAL_RUNTIME_CUDADRIVER_H
#define TIDAL_RUNTIME_CUDADRIVER_H

#include <memory>
#include <string>

namespace tidal::runtime {

class CudaDriver {
public:
  // The process-wide driver; opened and cuInit'ed on first use, from
  // TIDAL_CUDA_DRIVER when set, else libcuda.so.1. It stays loaded until
  // the process exits.
  static CudaDriver &get();

  // A driver of its own, opened from LibraryPath (a name for the dynamic
  // loader or a path); the library is closed when it is destroyed. For
  // tests and tools: the runtime uses get().
  static CudaDriver open(const std::string &LibraryPath);

  // True when libcuda was opened, cuInit succeeded and there is a device.
  bool usable() const { return Usable; }
  // Why it is not usable (library path and dlerror, or the cuInit error
  // name), empty when usable.
  const std::string &reason() const { return Reason; }
  int deviceCount() const { return DeviceCount; }
  const std::string &libraryPath() const { return LibraryPath; }

  // "CUDA_ERROR_NAME (description)" for a CUresult: the driver's own words
  // when it gives them, a built-in table otherwise (the toolkit's stub
  // library answers every call, cuGetErrorName included, with
  // CUDA_ERROR_STUB_LIBRARY).
  std::string describeError(int Result) const;

private:
  explicit CudaDriver(std::string LibraryPath);

  struct LibraryCloser {
    void operator()(void *Handle) const;
  };
  // CUresult is an int-sized enum; these match cuda.h's prototypes.
  using CuInitFunction = int (*)(unsigned Flags);
  using CuDeviceGetCountFunction = int (*)(int *Count);
  using CuGetErrorTextFunction = int (*)(int Result, const char **Text);

  bool Usable = false;
  int DeviceCount = 0;
  std::string Reason;
  std::string LibraryPath;
  std::unique_ptr<void, LibraryCloser> Library;
  CuInitFunction CuInit = nullptr;
  CuDeviceGetCountFunction CuDeviceGetCount = nullptr;
  CuGetErrorTextFunction CuGetErrorName = nullptr;
  CuGetErrorTextFunction CuGetErrorString = nullptr;
};

} // namespace tidal::runtime

#endif
