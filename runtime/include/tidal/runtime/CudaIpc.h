// CUDA IPC (issue 13): device memory of one process mapped by another. The
// exporting process names the driver allocation that holds a pointer with a
// 64-byte handle (cuIpcGetMemHandle of the base cuMemGetAddressRange gives)
// and the pointer's offset in it; another process maps the allocation with
// cuIpcOpenMemHandle and unmaps it with cuIpcCloseMemHandle.
#ifndef TIDAL_RUNTIME_CUDAIPC_H
#define TIDAL_RUNTIME_CUDAIPC_H

#include "tidal/runtime/CudaMemory.h"

#include <cstddef>
#include <string>

namespace tidal::runtime {

// What another process needs to map the memory at a pointer.
struct CudaIpcExport {
  cu::IpcMemHandle Handle;       // names the whole driver allocation
  cu::DevicePointer Base = 0;    // the allocation's base in this process
  size_t AllocationBytes = 0;    // its size
  size_t Offset = 0;             // of the pointer from Base
};

// Exports the driver allocation that holds Pointer, memory of Allocator's
// context. When that allocation is a block of Allocator, the block is marked
// exported (CudaAllocator::noteExported): it is never reused for another
// array. Throws CudaDriverError naming the failed call.
CudaIpcExport cudaIpcExport(CudaAllocator &Allocator, cu::DevicePointer Pointer);

// Memory another process exported, mapped in Context (cuIpcOpenMemHandle,
// CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) until close() or destruction
// (cuIpcCloseMemHandle). The driver refuses a handle of this process's own
// memory (CUDA_ERROR_INVALID_CONTEXT).
class CudaIpcMapping {
public:
  CudaIpcMapping(CudaContext &Context, const cu::IpcMemHandle &Handle);
  ~CudaIpcMapping();
  CudaIpcMapping(const CudaIpcMapping &) = delete;
  CudaIpcMapping &operator=(const CudaIpcMapping &) = delete;

  // The allocation's base in this process; 0 once closed.
  cu::DevicePointer pointer() const { return Pointer; }
  bool open() const { return Pointer != 0; }
  CudaContext &context() const { return Context; }
  // Unmaps now, checked; later calls and the destructor do nothing.
  void close();

private:
  CudaContext &Context;
  cu::DevicePointer Pointer = 0;
};

} // namespace tidal::runtime

#endif
