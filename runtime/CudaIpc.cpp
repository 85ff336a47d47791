// CUDA IPC: exporting a driver allocation (handle and offset) and mapping
// another process's (issue 13).
#include "tidal/runtime/CudaIpc.h"

#include <utility>

namespace tidal::runtime {

CudaIpcExport cudaIpcExport(CudaAllocator &Allocator, cu::DevicePointer Pointer) {
  CudaContext &Context = Allocator.context();
  Context.requireUsable();
  ScopedCurrentContext Current(Context);
  const CudaDriverApi &Api = Context.driver().api();
  CudaIpcExport Export{};
  Context.check(Api.MemGetAddressRange(&Export.Base, &Export.AllocationBytes, Pointer),
                "cuMemGetAddressRange", "of device pointer " + std::to_string(Pointer));
  Export.Offset = static_cast<size_t>(Pointer - Export.Base);
  Context.check(Api.IpcGetMemHandle(&Export.Handle, Export.Base), "cuIpcGetMemHandle",
                "of the allocation at " + std::to_string(Export.Base) + " (" +
                    std::to_string(Export.AllocationBytes) + " bytes)");
  Allocator.noteExported(Export.Base);
  return Export;
}

CudaIpcMapping::CudaIpcMapping(CudaContext &Ctx, const cu::IpcMemHandle &Handle)
    : Context(Ctx) {
  Context.requireUsable();
  ScopedCurrentContext Current(Context);
  cu::Result Result = Context.driver().api().IpcOpenMemHandle(&Pointer, Handle,
                                                              cu::IpcMemLazyEnablePeerAccess);
  if (Result == cu::Success)
    return;
  Pointer = 0;
  constexpr cu::Result InvalidContext = 201; // what the driver answers the exporter itself
  Context.fail(Result, "cuIpcOpenMemHandle",
               "in " + Context.describe() +
                   (Result == InvalidContext
                        ? " (a handle cannot be opened in the process that exported it)"
                        : ""));
}

CudaIpcMapping::~CudaIpcMapping() {
  if (!Pointer)
    return;
  ScopedCurrentContext Current(Context);
  Context.driver().api().IpcCloseMemHandle(Pointer); // errors ignored, as other owners do
}

void CudaIpcMapping::close() {
  if (!Pointer)
    return;
  cu::DevicePointer Mapped = std::exchange(Pointer, 0);
  ScopedCurrentContext Current(Context);
  Context.check(Context.driver().api().IpcCloseMemHandle(Mapped), "cuIpcCloseMemHandle");
}

} // namespace tidal::runtime
