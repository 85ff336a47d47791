// The facts of the cuda target's devices, from cuDeviceGet* without a context.
#include "tidal/runtime/CudaDevice.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

namespace tidal::runtime {

void requireDeviceOrdinal(const CudaDriver &Driver, int Ordinal) {
  Driver.requireUsable();
  int Count = Driver.deviceCount();
  if (Ordinal >= 0 && Ordinal < Count)
    return;
  throw InvalidDeviceError("there is no CUDA device " + std::to_string(Ordinal) +
                           ": the driver has " + std::to_string(Count) +
                           (Count == 1 ? " device, id 0"
                                       : " devices, ids 0 to " + std::to_string(Count - 1)));
}

const std::vector<CudaDeviceAttributeName> &cudaDeviceAttributeNames() {
  static const std::vector<CudaDeviceAttributeName> Names = {
#define TIDAL_CUDA_DEVICE_ATTRIBUTE(NAME, NUMBER) {#NAME, NUMBER},
#include "tidal/runtime/CudaDeviceAttributes.def"
  };
  return Names;
}

int cudaDeviceAttributeNumber(std::string_view Name) {
  for (const CudaDeviceAttributeName &A : cudaDeviceAttributeNames())
    if (Name == A.Name)
      return A.Number;
  return -1;
}

unsigned CudaDeviceLimits::ptxSM() const {
  return std::min<unsigned>(static_cast<unsigned>(ComputeMajor * 10 + ComputeMinor), MaxPtxSM);
}

CudaDevice::CudaDevice(const CudaDriver &D, int DeviceOrdinal) : Driver(&D), Ordinal(DeviceOrdinal) {
  requireDeviceOrdinal(D, Ordinal);
  const CudaDriverApi &Api = Driver->api();
  Driver->check(Api.DeviceGet(&Device, Ordinal), "cuDeviceGet", describe());
  char DeviceName[256] = {};
  Driver->check(Api.DeviceGetName(DeviceName, sizeof DeviceName - 1, Device), "cuDeviceGetName",
                describe());
  Name = DeviceName;
  Driver->check(Api.DeviceTotalMem(&TotalMemory, Device), "cuDeviceTotalMem", describe());
  cu::Uuid Id{};
  Driver->check(Api.DeviceGetUuid(&Id, Device), "cuDeviceGetUuid", describe());
  std::copy(std::begin(Id.Bytes), std::end(Id.Bytes), Uuid.begin());

  Limits.MaxThreadsPerBlock = attribute(cu::AttributeMaxThreadsPerBlock);
  for (int Axis = 0; Axis < 3; ++Axis) {
    Limits.MaxBlockDim[Axis] = static_cast<uint32_t>(attribute(cu::AttributeMaxBlockDimX + Axis));
    Limits.MaxGridDim[Axis] = static_cast<uint32_t>(attribute(cu::AttributeMaxGridDimX + Axis));
  }
  Limits.MaxSharedPerBlock = attribute(cu::AttributeMaxSharedMemoryPerBlock);
  Limits.MaxSharedPerBlockOptin =
      std::max(Limits.MaxSharedPerBlock, attribute(cu::AttributeMaxSharedMemoryPerBlockOptin));
  Limits.ComputeMajor = attribute(cu::AttributeComputeCapabilityMajor);
  Limits.ComputeMinor = attribute(cu::AttributeComputeCapabilityMinor);
  MultiprocessorCount = attribute(cu::AttributeMultiprocessorCount);
  WarpSize = attribute(cu::AttributeWarpSize);
}

const CudaDevice &CudaDevice::get(int Ordinal) {
  static std::mutex Lock;
  static std::vector<CudaDevice *> *Devices = new std::vector<CudaDevice *>();
  std::lock_guard<std::mutex> Guard(Lock);
  const CudaDriver &Driver = CudaDriver::get();
  requireDeviceOrdinal(Driver, Ordinal);
  if (Devices->size() < static_cast<size_t>(Driver.deviceCount()))
    Devices->resize(static_cast<size_t>(Driver.deviceCount()), nullptr);
  CudaDevice *&Slot = (*Devices)[static_cast<size_t>(Ordinal)];
  if (!Slot)
    Slot = new CudaDevice(Driver, Ordinal); // never destroyed, as the contexts
  return *Slot;
}

int CudaDevice::attribute(int Attribute) const {
  int Value = 0;
  if (cu::Result Result = Driver->api().DeviceGetAttribute(&Value, Attribute, Device)) {
    std::string What = "attribute " + std::to_string(Attribute);
    for (const CudaDeviceAttributeName &A : cudaDeviceAttributeNames())
      if (A.Number == Attribute) {
        What += " (" + std::string(A.Name) + ")";
        break;
      }
    Driver->fail(Result, "cuDeviceGetAttribute", What + " of " + describe());
  }
  return Value;
}

std::string CudaDevice::uuidText() const {
  // 4-2-2-2-6 bytes, as nvidia-smi -L prints it.
  std::string Text = "GPU-";
  char Byte[3];
  for (size_t I = 0; I < Uuid.size(); ++I) {
    if (I == 4 || I == 6 || I == 8 || I == 10)
      Text += '-';
    std::snprintf(Byte, sizeof Byte, "%02x", Uuid[I]);
    Text += Byte;
  }
  return Text;
}

std::string CudaDevice::describe() const {
  return "device " + std::to_string(Ordinal) + (Name.empty() ? "" : " (" + Name + ")");
}

} // namespace tidal::runtime
