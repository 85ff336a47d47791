// Page-locked, mapped and managed host memory of the cuda target against the
// mock driver (libtidal_mock_cuda.so, opened with CudaDriver::open): which
// driver calls each owner makes, with which flags, and that each gives its
// memory back. The mock's mapped device pointer is another view of the same
// bytes at a different address, so the tests can tell the two apart.
#include "tidal/runtime/CudaMemory.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <dlfcn.h>

using namespace tidal::runtime;

namespace {

void *mockLibrary() {
  static void *Handle = dlopen(TIDAL_MOCK_CUDA_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  return Handle;
}

int mockCalls(const char *Call) {
  auto Count =
      reinterpret_cast<int (*)(const char *)>(dlsym(mockLibrary(), "tidalMockCallCount"));
  return Count(Call);
}

int liveHostRanges() {
  auto Count = reinterpret_cast<int (*)()>(dlsym(mockLibrary(), "tidalMockLiveHostRanges"));
  return Count();
}

// The mock's JSON log of the calls made while it lives.
class CallLog {
public:
  CallLog() : Path(testing::TempDir() + "tidal_host_memory_calls.jsonl") {
    std::remove(Path.c_str());
    setenv("TIDAL_MOCK_CUDA_LOG", Path.c_str(), 1);
  }
  ~CallLog() {
    unsetenv("TIDAL_MOCK_CUDA_LOG");
    std::remove(Path.c_str());
  }
  // The logged lines of Call, in order.
  std::vector<std::string> lines(const std::string &Call) const {
    std::vector<std::string> Found;
    std::ifstream In(Path);
    for (std::string Line; std::getline(In, Line);)
      if (Line.find("\"call\": \"" + Call + "\"") != std::string::npos)
        Found.push_back(Line);
    return Found;
  }

private:
  std::string Path;
};

class CudaHostMemory : public testing::Test {
protected:
  void SetUp() override { ASSERT_TRUE(Driver.usable()) << Driver.reason(); }

  CudaDriver Driver = CudaDriver::open(TIDAL_MOCK_CUDA_LIBRARY);
};

TEST_F(CudaHostMemory, EntryPointsComeFromTheDriver) {
  const CudaDriverApi &Api = Driver.api();
  EXPECT_TRUE(Api.MemHostAlloc && Api.MemFreeHost && Api.MemHostGetDevicePointer &&
              Api.MemHostRegister && Api.MemHostUnregister && Api.MemAllocManaged);
  EXPECT_TRUE(Driver.resolvedWithProcAddress());
}

TEST_F(CudaHostMemory, PinnedAllocationIsFreedWithCuMemFreeHost) {
  CudaContext Context(Driver, 0);
  CallLog Log;
  int Frees = mockCalls("cuMemFreeHost"), Ranges = liveHostRanges();
  {
    CudaHostAllocation Pinned(Context, 4096, {});
    ASSERT_NE(Pinned.host(), nullptr);
    EXPECT_EQ(Pinned.device(), 0u); // not mapped: no device pointer asked for
    EXPECT_EQ(Pinned.flags(), 0u);
    std::memset(Pinned.host(), 0x5a, Pinned.size()); // host memory, writable
    EXPECT_EQ(liveHostRanges(), Ranges + 1);
  }
  EXPECT_EQ(mockCalls("cuMemFreeHost"), Frees + 1);
  EXPECT_EQ(liveHostRanges(), Ranges);
  ASSERT_EQ(Log.lines("cuMemHostAlloc").size(), 1u);
  EXPECT_NE(Log.lines("cuMemHostAlloc")[0].find("\"bytes\": 4096, \"flags\": 0"),
            std::string::npos);
  EXPECT_TRUE(Log.lines("cuMemHostGetDevicePointer_v2").empty());
}

TEST_F(CudaHostMemory, MappedAllocationHasADevicePointerToTheSameBytes) {
  CudaContext Context(Driver, 0);
  CallLog Log;
  CudaHostAllocation::Options Opts;
  Opts.Mapped = Opts.Portable = Opts.WriteCombined = true;
  {
    CudaHostAllocation Mapped(Context, 64, Opts);
    EXPECT_EQ(Mapped.flags(), cu::HostAllocDeviceMap | cu::HostAllocPortable |
                                  cu::HostAllocWriteCombined);
    ASSERT_NE(Mapped.device(), 0u);
    EXPECT_NE(Mapped.device(), reinterpret_cast<uintptr_t>(Mapped.host()));
    // What the host writes, the device pointer reads (a device-to-host copy).
    std::memcpy(Mapped.host(), "mapped!", 8);
    char Back[8] = {};
    Driver.check(Driver.api().MemcpyDtoH(Back, Mapped.device(), 8), "cuMemcpyDtoH");
    EXPECT_STREQ(Back, "mapped!");
  }
  ASSERT_EQ(Log.lines("cuMemHostAlloc").size(), 1u);
  EXPECT_NE(Log.lines("cuMemHostAlloc")[0].find("\"flags\": 7"), std::string::npos);
  EXPECT_EQ(Log.lines("cuMemHostGetDevicePointer_v2").size(), 1u);
  EXPECT_EQ(Log.lines("cuMemFreeHost").size(), 1u);
}

TEST_F(CudaHostMemory, FlagsFollowTheOptions) {
  CudaHostAllocation::Options Opts;
  EXPECT_EQ(CudaHostAllocation::flagsOf(Opts), 0u);
  Opts.Portable = true;
  EXPECT_EQ(CudaHostAllocation::flagsOf(Opts), 1u);
  Opts.Portable = false;
  Opts.Mapped = true;
  EXPECT_EQ(CudaHostAllocation::flagsOf(Opts), 2u);
  Opts.Mapped = false;
  Opts.WriteCombined = true;
  EXPECT_EQ(CudaHostAllocation::flagsOf(Opts), 4u);
}

TEST_F(CudaHostMemory, RegistrationLastsUntilReleased) {
  CudaContext Context(Driver, 0);
  std::vector<double> Buffer(100, 1.5);
  int Unregisters = mockCalls("cuMemHostUnregister");
  {
    CudaHostRegistration Mapped(Context, Buffer.data(), Buffer.size() * sizeof(double), true);
    ASSERT_TRUE(Mapped.registered());
    // The mock maps registered memory at its own address, as devices that can
    // use the host pointer do.
    EXPECT_EQ(Mapped.device(), reinterpret_cast<uintptr_t>(Buffer.data()));
    Mapped.release();
    EXPECT_FALSE(Mapped.registered());
    EXPECT_EQ(Mapped.device(), 0u);
    EXPECT_EQ(mockCalls("cuMemHostUnregister"), Unregisters + 1);
    Mapped.release(); // nothing left to release
  }
  EXPECT_EQ(mockCalls("cuMemHostUnregister"), Unregisters + 1); // not twice
  {
    CudaHostRegistration Pinned(Context, Buffer.data(), 800, false);
    EXPECT_EQ(Pinned.device(), 0u);
  }
  EXPECT_EQ(mockCalls("cuMemHostUnregister"), Unregisters + 2); // by the destructor
}

TEST_F(CudaHostMemory, RegisteringPinnedMemoryAgainRaisesTheDriversError) {
  CudaContext Context(Driver, 0);
  std::vector<char> Buffer(256);
  CudaHostRegistration First(Context, Buffer.data(), Buffer.size(), false);
  try {
    CudaHostRegistration Overlapping(Context, Buffer.data() + 16, 16, true);
    FAIL() << "registered an overlapping range";
  } catch (const CudaDriverError &E) {
    EXPECT_EQ(E.call(), "cuMemHostRegister");
    EXPECT_EQ(E.errorName(), "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED");
    EXPECT_NE(std::string(E.what()).find("cuMemHostRegister failed: "
                                         "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"),
              std::string::npos);
  }
  CudaHostAllocation Pinned(Context, 64, {});
  EXPECT_THROW(CudaHostRegistration(Context, Pinned.host(), 64, false), CudaDriverError);
}

TEST_F(CudaHostMemory, ManagedMemoryIsOneAddressFreedWithCuMemFree) {
  CudaContext Context(Driver, 0);
  CallLog Log;
  int Frees = mockCalls("cuMemFree_v2");
  {
    CudaManagedAllocation Global(Context, 32, true);
    CudaManagedAllocation HostAttached(Context, 32, false);
    ASSERT_NE(Global.pointer(), 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(Global.host()), Global.pointer());
    std::memset(Global.host(), 1, 32); // the host uses it directly
    // Kernels use it at the same address: a copy from it as device memory.
    char Back[32] = {};
    Driver.check(Driver.api().MemcpyDtoH(Back, Global.pointer(), 32), "cuMemcpyDtoH");
    EXPECT_EQ(Back[31], 1);
  }
  EXPECT_EQ(mockCalls("cuMemFree_v2"), Frees + 2);
  std::vector<std::string> Allocs = Log.lines("cuMemAllocManaged");
  ASSERT_EQ(Allocs.size(), 2u);
  EXPECT_NE(Allocs[0].find("\"flags\": 1"), std::string::npos); // CU_MEM_ATTACH_GLOBAL
  EXPECT_NE(Allocs[1].find("\"flags\": 2"), std::string::npos); // CU_MEM_ATTACH_HOST
}

TEST_F(CudaHostMemory, ZeroBytesAllocateNothing) {
  CudaContext Context(Driver, 0);
  int Allocs = mockCalls("cuMemHostAlloc"), Managed = mockCalls("cuMemAllocManaged");
  int Registers = mockCalls("cuMemHostRegister_v2");
  CudaHostAllocation::Options Mapped;
  Mapped.Mapped = true;
  CudaHostAllocation Host(Context, 0, Mapped);
  CudaManagedAllocation Unified(Context, 0, true);
  CudaHostRegistration Registration(Context, &Allocs, 0, true);
  EXPECT_EQ(Host.host(), nullptr);
  EXPECT_EQ(Host.device(), 0u);
  EXPECT_EQ(Unified.pointer(), 0u);
  EXPECT_FALSE(Registration.registered());
  EXPECT_EQ(mockCalls("cuMemHostAlloc"), Allocs);
  EXPECT_EQ(mockCalls("cuMemAllocManaged"), Managed);
  EXPECT_EQ(mockCalls("cuMemHostRegister_v2"), Registers);
}

// The mock refuses what the driver refuses, so that a wrong call of ours shows.
TEST_F(CudaHostMemory, MockRefusesWhatTheDriverRefuses) {
  CudaContext Context(Driver, 0);
  const CudaDriverApi &Api = Driver.api();
  cu::DevicePointer Device = 0;
  CudaHostAllocation Pinned(Context, 64, {}); // not mapped: no device pointer
  EXPECT_EQ(Api.MemHostGetDevicePointer(&Device, Pinned.host(), 0), cu::ErrorInvalidValue);
  std::vector<char> Buffer(64);
  EXPECT_EQ(Api.MemHostUnregister(Buffer.data()), 713); // HOST_MEMORY_NOT_REGISTERED
  EXPECT_EQ(Api.MemFreeHost(Buffer.data()), cu::ErrorInvalidValue);
  EXPECT_EQ(Api.MemHostRegister(Buffer.data(), 0, 0), cu::ErrorInvalidValue);
  EXPECT_EQ(Api.MemAllocManaged(&Device, 64, 4), cu::ErrorInvalidValue); // ATTACH_SINGLE
  void *Host = nullptr;
  EXPECT_EQ(Api.MemHostAlloc(&Host, 64, 8), cu::ErrorInvalidValue); // unknown flag
}

} // namespace
