// The devices of the cuda target: what the driver says about each one (name,
// compute capability, memory, UUID, launch limits and any CUdevice_attribute,
// by number or by cuda.h's name), read without creating a context.
#ifndef TIDAL_RUNTIME_CUDADEVICE_H
#define TIDAL_RUNTIME_CUDADEVICE_H

#include "tidal/runtime/CpuTarget.h" // Dim3, RuntimeError
#include "tidal/runtime/CudaDriver.h"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tidal::runtime {

// A device ordinal the driver does not have; the binding turns it into
// ValueError. The message names the ordinal and the device count.
class InvalidDeviceError : public RuntimeError {
public:
  using RuntimeError::RuntimeError;
};

// Throws InvalidDeviceError unless 0 <= Ordinal < Driver.deviceCount();
// RuntimeError with the driver's reason when it is not usable.
void requireDeviceOrdinal(const CudaDriver &Driver, int Ordinal);

// A CUdevice_attribute and the name cuda.h gives it, less
// "CU_DEVICE_ATTRIBUTE_" (numba-cuda's Device attribute names).
struct CudaDeviceAttributeName {
  const char *Name;
  int Number;
};
// Every attribute of CUDA 13's cuda.h, in its order (aliases included).
const std::vector<CudaDeviceAttributeName> &cudaDeviceAttributeNames();
// The number of attribute Name ("MULTIPROCESSOR_COUNT"), or -1.
int cudaDeviceAttributeNumber(std::string_view Name);

// The newest sm LLVM 19's NVPTX backend knows; newer devices JIT sm_90 PTX.
constexpr unsigned MaxPtxSM = 90;

// What a device allows a launch, read with cuDeviceGetAttribute once.
struct CudaDeviceLimits {
  int MaxThreadsPerBlock = 0;
  Dim3 MaxBlockDim{};
  Dim3 MaxGridDim{};
  int MaxSharedPerBlock = 0;      // without opting in (48 KB)
  int MaxSharedPerBlockOptin = 0; // with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  int ComputeMajor = 0, ComputeMinor = 0;

  // The sm PTX is compiled for: the device's, capped to MaxPtxSM.
  unsigned ptxSM() const;
};

// One device of a driver: its facts, read once when the object is made
// (cuDeviceGet, cuDeviceGetName, cuDeviceTotalMem, cuDeviceGetUuid and the
// launch limits); attribute() asks the driver for any other.
class CudaDevice {
public:
  // Throws InvalidDeviceError for an ordinal the driver does not have and
  // CudaDriverError when a query fails. Driver must outlive the device.
  CudaDevice(const CudaDriver &Driver, int Ordinal);

  // The process-wide device Ordinal of CudaDriver::get(), read on first
  // use and never destroyed.
  static const CudaDevice &get(int Ordinal);

  const CudaDriver &driver() const { return *Driver; }
  int ordinal() const { return Ordinal; }
  cu::Device handle() const { return Device; }
  const std::string &name() const { return Name; }
  size_t totalMemory() const { return TotalMemory; }
  const std::array<unsigned char, 16> &uuid() const { return Uuid; }
  // "GPU-1a2b3c4d-...": the UUID as nvidia-smi and numba-cuda write it.
  std::string uuidText() const;
  const CudaDeviceLimits &limits() const { return Limits; }
  int multiprocessorCount() const { return MultiprocessorCount; }
  int warpSize() const { return WarpSize; }

  // cuDeviceGetAttribute of any CUdevice_attribute; a failure throws
  // CudaDriverError naming the attribute and the device.
  int attribute(int Attribute) const;
  // "device 0 (NVIDIA H100 80GB HBM3)"
  std::string describe() const;

private:
  const CudaDriver *Driver;
  int Ordinal;
  cu::Device Device = 0;
  std::string Name;
  size_t TotalMemory = 0;
  std::array<unsigned char, 16> Uuid{};
  CudaDeviceLimits Limits;
  int MultiprocessorCount = 0;
  int WarpSize = 0;
};

} // namespace tidal::runtime

#endif
