// The cuda target's caching allocator, streams and events against the mock
// driver (libtidal_mock_cuda.so, opened with CudaDriver::open).
#include "tidal/runtime/CudaIpc.h"
#include "tidal/runtime/CudaMemory.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <dlfcn.h>

using namespace tidal::runtime;

namespace {

int mockCalls(const char *Call) {
  static void *Handle = dlopen(TIDAL_MOCK_CUDA_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  auto Count = reinterpret_cast<int (*)(const char *)>(dlsym(Handle, "tidalMockCallCount"));
  return Count(Call);
}

TEST(CudaMemory, SizeClasses) {
  EXPECT_EQ(CudaAllocator::sizeClass(1), 512u);
  EXPECT_EQ(CudaAllocator::sizeClass(513), 1024u);
  EXPECT_EQ(CudaAllocator::sizeClass(1 << 20), size_t(1) << 20);
  EXPECT_EQ(CudaAllocator::sizeClass((1 << 20) + 1), size_t(2) << 20);
  EXPECT_EQ(CudaAllocator::sizeClass((3 << 20) + 1), size_t(4) << 20);
}

TEST(CudaMemory, FreedBlocksAreReusedAndReleased) {
  CudaDriver Driver = CudaDriver::open(TIDAL_MOCK_CUDA_LIBRARY);
  ASSERT_TRUE(Driver.usable()) << Driver.reason();
  CudaContext Context(Driver, 0);
  int Allocs = mockCalls("cuMemAlloc_v2"), Frees = mockCalls("cuMemFree_v2");
  {
    CudaAllocator Allocator(Context);
    cu::DevicePointer First;
    {
      CudaAllocation A(Allocator, 100, nullptr);
      First = A.pointer();
      EXPECT_EQ(Allocator.stats().BytesInUse, 512u);
    }
    EXPECT_EQ(Allocator.stats().BytesCached, 512u);
    {
      CudaAllocation B(Allocator, 300, nullptr);
      EXPECT_EQ(B.pointer(), First);
      CudaAllocation C(Allocator, 5000, nullptr); // another class: a new block
      EXPECT_NE(C.pointer(), First);
    }
    CudaMemoryStats S = Allocator.stats();
    EXPECT_EQ(S.DriverAllocations, 2u);
    EXPECT_EQ(S.Reuses, 1u);
    EXPECT_EQ(mockCalls("cuMemAlloc_v2") - Allocs, 2);
    Allocator.releaseCached();
    EXPECT_EQ(mockCalls("cuMemFree_v2") - Frees, 2);
    EXPECT_EQ(Allocator.stats().LiveDriverAllocations, 0u);
  }
}

TEST(CudaMemory, PendingBlockWaitsForItsStream) {
  setenv("TIDAL_MOCK_CUDA_EVENTS_PENDING", "1", 1);
  CudaDriver Driver = CudaDriver::open(TIDAL_MOCK_CUDA_LIBRARY);
  ASSERT_TRUE(Driver.usable()) << Driver.reason();
  CudaContext Context(Driver, 0);
  {
    CudaStream Stream(Context);
    CudaAllocator Allocator(Context);
    cu::DevicePointer First;
    {
      CudaAllocation A(Allocator, 64, Stream.handle());
      First = A.pointer();
    }
    EXPECT_EQ(Allocator.stats().BytesPending, 512u);
    {
      CudaAllocation Other(Allocator, 64, nullptr); // another stream: not yet
      EXPECT_NE(Other.pointer(), First);
      CudaAllocation Same(Allocator, 64, Stream.handle()); // same stream: stream order
      EXPECT_EQ(Same.pointer(), First);
    }
    Stream.synchronize();
    CudaEvent Start(Context), End(Context);
    Start.record(Stream.handle());
    End.record(Stream.handle());
    EXPECT_FALSE(End.query());
    End.synchronize();
    Start.synchronize();
    EXPECT_TRUE(End.query());
    EXPECT_FLOAT_EQ(CudaEvent::elapsed(Start, End), 0.5f);
  }
  unsetenv("TIDAL_MOCK_CUDA_EVENTS_PENDING");
}

} // namespace

// CUDA IPC (issue 13): an exported block is given back to the driver when
// freed, never cached for another allocation; a view's export names its
// allocation and the offset in it.
TEST(CudaMemory, ExportedBlocksAreNotCached) {
  CudaDriver Driver = CudaDriver::open(TIDAL_MOCK_CUDA_LIBRARY);
  ASSERT_TRUE(Driver.usable()) << Driver.reason();
  CudaContext Context(Driver, 0);
  CudaAllocator Allocator(Context);
  cu::DevicePointer First;
  int Frees = mockCalls("cuMemFree_v2");
  {
    CudaAllocation A(Allocator, 1000, nullptr);
    First = A.pointer();
    CudaIpcExport Export = cudaIpcExport(Allocator, A.pointer() + 200);
    EXPECT_EQ(Export.Base, A.pointer());
    EXPECT_EQ(Export.Offset, 200u);
    EXPECT_EQ(Export.AllocationBytes, 1024u); // the size class the driver was asked for
    EXPECT_EQ(std::string(Export.Handle.Reserved, 8), "tidalIPC");
    EXPECT_EQ(Allocator.stats().ExportedAllocations, 1u);
  }
  CudaMemoryStats S = Allocator.stats();
  EXPECT_EQ(S.BytesCached, 0u);
  EXPECT_EQ(S.DriverFrees, 1u);
  EXPECT_EQ(S.LiveDriverAllocations, 0u);
  EXPECT_EQ(S.ExportedAllocations, 0u);
  EXPECT_EQ(mockCalls("cuMemFree_v2") - Frees, 1);
  {
    CudaAllocation B(Allocator, 1000, nullptr); // a new block from the driver
    EXPECT_EQ(Allocator.stats().Reuses, 0u);
    EXPECT_EQ(Allocator.stats().DriverAllocations, 2u);
  }
  EXPECT_EQ(Allocator.stats().BytesCached, 1024u); // not exported: cached
  (void)First;
}

// The driver refuses a handle in the process that exported it; the error
// says why.
TEST(CudaMemory, AHandleIsRefusedInItsOwnProcess) {
  CudaDriver Driver = CudaDriver::open(TIDAL_MOCK_CUDA_LIBRARY);
  ASSERT_TRUE(Driver.usable()) << Driver.reason();
  CudaContext Context(Driver, 0);
  CudaAllocator Allocator(Context);
  CudaAllocation A(Allocator, 64, nullptr);
  CudaIpcExport Export = cudaIpcExport(Allocator, A.pointer());
  try {
    CudaIpcMapping Mapping(Context, Export.Handle);
    FAIL() << "opened in its own process";
  } catch (const CudaDriverError &Error) {
    EXPECT_EQ(Error.errorName(), "CUDA_ERROR_INVALID_CONTEXT");
    EXPECT_NE(std::string(Error.what()).find("process that exported it"), std::string::npos)
        << Error.what();
  }
}
