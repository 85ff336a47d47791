// The cuda target's devices against libtidal_mock_cuda.so with two devices
// whose facts differ: device facts and attributes, bad ordinals, and the
// current device of each thread, which allocations, memory queries and
// launches follow (checked through the mock's record of the context each
// call ran in).
#include "tidal/runtime/CudaMemory.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <dlfcn.h>

using namespace tidal::runtime;

namespace {

// The mock's own view, through its test-only entry points.
void *mockLibrary() {
  static void *Handle = dlopen(TIDAL_MOCK_CUDA_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  return Handle;
}
template <typename F> F mockEntry(const char *Name) {
  return reinterpret_cast<F>(dlsym(mockLibrary(), Name));
}
int mockCurrentDevice() { return mockEntry<int (*)()>("tidalMockCurrentDevice")(); }
int mockAllocationDevice(cu::DevicePointer Pointer) {
  return mockEntry<int (*)(unsigned long long)>("tidalMockAllocationDevice")(Pointer);
}
int mockCalls(const char *Call) { return mockEntry<int (*)(const char *)>("tidalMockCallCount")(Call); }

bool contains(const std::string &Text, const std::string &Part) {
  return Text.find(Part) != std::string::npos;
}

// A driver of its own over the mock with two devices.
class CudaDevices : public testing::Test {
protected:
  static void SetUpTestSuite() { setenv("TIDAL_MOCK_CUDA_DEVICES", "2", 1); }
  static void TearDownTestSuite() { unsetenv("TIDAL_MOCK_CUDA_DEVICES"); }
  void SetUp() override {
    ASSERT_NE(mockLibrary(), nullptr) << dlerror();
    ASSERT_TRUE(Driver.usable()) << Driver.reason();
  }

  CudaDriver Driver = CudaDriver::open(TIDAL_MOCK_CUDA_LIBRARY);
};

TEST_F(CudaDevices, AttributeNamesAreCudaHs) {
  EXPECT_EQ(cudaDeviceAttributeNumber("MAX_THREADS_PER_BLOCK"), 1);
  EXPECT_EQ(cudaDeviceAttributeNumber("WARP_SIZE"), 10);
  EXPECT_EQ(cudaDeviceAttributeNumber("MULTIPROCESSOR_COUNT"), 16);
  EXPECT_EQ(cudaDeviceAttributeNumber("PCI_BUS_ID"), 33);
  EXPECT_EQ(cudaDeviceAttributeNumber("COMPUTE_CAPABILITY_MAJOR"), 75);
  EXPECT_EQ(cudaDeviceAttributeNumber("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"), 97);
  // Aliases share a number.
  EXPECT_EQ(cudaDeviceAttributeNumber("SHARED_MEMORY_PER_BLOCK"),
            cudaDeviceAttributeNumber("MAX_SHARED_MEMORY_PER_BLOCK"));
  EXPECT_EQ(cudaDeviceAttributeNumber("NO_SUCH_ATTRIBUTE"), -1);
  EXPECT_EQ(cudaDeviceAttributeNumber("CU_DEVICE_ATTRIBUTE_WARP_SIZE"), -1)
      << "names are without the prefix, as numba-cuda's";
  std::set<std::string> Names;
  for (const CudaDeviceAttributeName &A : cudaDeviceAttributeNames()) {
    EXPECT_TRUE(Names.insert(A.Name).second) << A.Name << " twice";
    EXPECT_EQ(cudaDeviceAttributeNumber(A.Name), A.Number) << A.Name;
  }
  EXPECT_GT(Names.size(), 140u);
}

TEST_F(CudaDevices, FactsDifferByDevice) {
  CudaDevice First(Driver, 0), Second(Driver, 1);
  EXPECT_EQ(First.name(), "tidal mock GPU 0");
  EXPECT_EQ(Second.name(), "tidal mock GPU 1");
  EXPECT_EQ(Second.describe(), "device 1 (tidal mock GPU 1)");
  EXPECT_EQ(First.multiprocessorCount(), 132);
  EXPECT_EQ(Second.multiprocessorCount(), 134);
  EXPECT_EQ(First.totalMemory(), size_t(1) << 30);
  EXPECT_EQ(Second.totalMemory(), size_t(2) << 30);
  EXPECT_EQ(First.warpSize(), 32);
  EXPECT_EQ(Second.attribute(cudaDeviceAttributeNumber("PCI_BUS_ID")), 0x11);
  EXPECT_EQ(Second.attribute(16), Second.multiprocessorCount());
  EXPECT_EQ(First.limits().MaxThreadsPerBlock, 1024);
  EXPECT_EQ(First.limits().MaxBlockDim, (Dim3{1024, 1024, 64}));
  EXPECT_EQ(First.limits().MaxSharedPerBlockOptin, 232448);
  EXPECT_EQ(First.uuidText(), "GPU-7a1da100-5eed-4011-9c0d-deadbeef0000");
  EXPECT_EQ(Second.uuidText(), "GPU-7a1da100-5eed-4011-9c0d-deadbeef0001");
  EXPECT_EQ(Second.uuid()[15], 1);
}

TEST_F(CudaDevices, ComputeCapabilityPerDevice) {
  setenv("TIDAL_MOCK_CUDA_CC", "8.6,7.0", 1);
  CudaDevice First(Driver, 0), Second(Driver, 1);
  unsetenv("TIDAL_MOCK_CUDA_CC");
  EXPECT_EQ(First.limits().ComputeMajor * 10 + First.limits().ComputeMinor, 86);
  EXPECT_EQ(Second.limits().ptxSM(), 70u);
}

TEST_F(CudaDevices, BadOrdinalNamesTheCount) {
  for (int Ordinal : {2, -1}) {
    try {
      CudaDevice Device(Driver, Ordinal);
      FAIL() << "device " << Ordinal << " of 2";
    } catch (const InvalidDeviceError &E) {
      EXPECT_EQ(std::string(E.what()), "there is no CUDA device " + std::to_string(Ordinal) +
                                           ": the driver has 2 devices, ids 0 to 1");
    }
  }
  EXPECT_THROW(CudaContext(Driver, 2), InvalidDeviceError);
}

TEST_F(CudaDevices, FailedAttributeNamesTheAttributeAndTheDevice) {
  CudaDevice Device(Driver, 1);
  try {
    Device.attribute(9999);
    FAIL() << "the mock knows no attribute 9999";
  } catch (const CudaDriverError &E) {
    EXPECT_EQ(E.call(), "cuDeviceGetAttribute");
    EXPECT_EQ(E.errorName(), "CUDA_ERROR_INVALID_VALUE");
    EXPECT_TRUE(contains(E.what(), "attribute 9999 of device 1 (tidal mock GPU 1)")) << E.what();
  }
}

TEST_F(CudaDevices, ScopedCurrentContextRestoresTheCurrentOne) {
  CudaContext First(Driver, 0);
  CudaContext Second(Driver, 1); // made current last
  EXPECT_EQ(mockCurrentDevice(), 1);
  {
    ScopedCurrentContext Guard(First);
    EXPECT_EQ(mockCurrentDevice(), 0);
  }
  EXPECT_EQ(mockCurrentDevice(), 1);
  int Switches = mockCalls("cuCtxSetCurrent");
  {
    ScopedCurrentContext Guard(Second); // already current: nothing to switch
  }
  EXPECT_EQ(mockCalls("cuCtxSetCurrent"), Switches);
}

TEST_F(CudaDevices, MemoryInfoIsTheContextsDevice) {
  CudaContext First(Driver, 0);
  CudaContext Second(Driver, 1);
  CudaAllocator Allocator(Second);
  CudaAllocation A(Allocator, 4096, nullptr);
  EXPECT_EQ(mockAllocationDevice(A.pointer()), 1);
  First.makeCurrent();
  size_t Free = 0, Total = 0;
  Second.memoryInfo(Free, Total);
  EXPECT_EQ(Total, size_t(2) << 30);
  EXPECT_EQ(Free, Total - 4096);
  First.memoryInfo(Free, Total);
  EXPECT_EQ(Total, size_t(1) << 30);
  EXPECT_EQ(Free, Total);
  EXPECT_EQ(mockCurrentDevice(), 0) << "the thread's current context is restored";
}

TEST_F(CudaDevices, AllocationKnowsItsContext) {
  CudaContext First(Driver, 0);
  CudaContext Second(Driver, 1);
  CudaAllocator Allocator(Second);
  CudaAllocation A(Allocator, 100, nullptr);
  EXPECT_EQ(&A.context(), &Second);
  EXPECT_NO_THROW(A.requireContext(Second, "k", 0));
  try {
    A.requireContext(First, "scale", 2);
    FAIL() << "memory of device 1 passed to a launch on device 0";
  } catch (const LaunchConfigError &E) {
    EXPECT_EQ(std::string(E.what()),
              "cannot launch kernel 'scale' on device 0 (tidal mock GPU 0): argument 2 is device "
              "memory of device 1 (tidal mock GPU 1); launch it under `with cuda.gpus[1]:` or "
              "copy the array to device 0");
  }
}

TEST_F(CudaDevices, FreeRecordsItsEventInTheAllocatorsContext) {
  // A pending event shows that cuEventRecord succeeded: the event must be
  // made in the context of the stream that used the memory (device 1's),
  // not in the one current when the memory is freed.
  setenv("TIDAL_MOCK_CUDA_EVENTS_PENDING", "1", 1);
  CudaContext Second(Driver, 1);
  CudaStream Stream(Second);
  CudaContext First(Driver, 0); // current from here on
  CudaAllocator Allocator(Second);
  { CudaAllocation A(Allocator, 100, Stream.handle()); }
  unsetenv("TIDAL_MOCK_CUDA_EVENTS_PENDING");
  EXPECT_EQ(Allocator.stats().BytesPending, 512u);
  EXPECT_EQ(mockCurrentDevice(), 0);
  Allocator.releaseCached();
  EXPECT_EQ(Allocator.stats().LiveDriverAllocations, 0u);
}

// --- the process-wide driver and the current device: each test in a fresh
// process, since CudaDriver::get() reads TIDAL_CUDA_DRIVER once -----------------

// Runs Check with the process-wide driver on the two-device mock and exits
// 0, or 1 after printing what Check returned.
[[noreturn]] void runWithProcessDriver(const std::function<std::string()> &Check) {
  setenv("TIDAL_CUDA_DRIVER", TIDAL_MOCK_CUDA_LIBRARY, 1);
  setenv("TIDAL_MOCK_CUDA_DEVICES", "2", 1);
  std::string Failure;
  try {
    Failure = Check();
  } catch (const std::exception &E) {
    Failure = std::string("unexpected exception: ") + E.what();
  }
  if (!Failure.empty()) {
    std::fprintf(stderr, "%s\n", Failure.c_str());
    std::exit(1);
  }
  std::exit(0);
}

#define REQUIRE(Condition)                                                           \
  do {                                                                               \
    if (!(Condition))                                                                \
      return std::string("line ") + std::to_string(__LINE__) + ": " #Condition;     \
  } while (0)

std::string selectionIsPerThread() {
  REQUIRE(currentDeviceOrdinal() == 0 && selectedDeviceOrdinal() == -1);
  selectDevice(1);
  REQUIRE(currentDeviceOrdinal() == 1 && selectedDeviceOrdinal() == 1);
  REQUIRE(mockCurrentDevice() == 1);
  REQUIRE(currentContext().ordinal() == 1);
  int OtherThreadDevice = -2, OtherThreadMock = -2;
  std::thread([&] {
    // A new thread starts on device 0.
    OtherThreadDevice = currentContext().ordinal();
    OtherThreadMock = mockCurrentDevice();
  }).join();
  REQUIRE(OtherThreadDevice == 0 && OtherThreadMock == 0);
  REQUIRE(currentDeviceOrdinal() == 1 && mockCurrentDevice() == 1);
  deselectDevice();
  REQUIRE(currentDeviceOrdinal() == 0 && selectedDeviceOrdinal() == -1);
  REQUIRE(mockCurrentDevice() == -1);
  return "";
}

TEST(CudaDeviceSelectionDeathTest, SelectionIsPerThread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runWithProcessDriver(selectionIsPerThread), testing::ExitedWithCode(0), "");
}

std::string badSelectionKeepsTheCurrentDevice() {
  selectDevice(1);
  try {
    selectDevice(2);
    return "selected device 2 of 2";
  } catch (const InvalidDeviceError &E) {
    REQUIRE(std::string(E.what()) == "there is no CUDA device 2: the driver has 2 devices, "
                                     "ids 0 to 1");
  }
  REQUIRE(currentDeviceOrdinal() == 1 && mockCurrentDevice() == 1);
  return "";
}

TEST(CudaDeviceSelectionDeathTest, BadSelectionKeepsTheCurrentDevice) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runWithProcessDriver(badSelectionKeepsTheCurrentDevice),
              testing::ExitedWithCode(0), "");
}

std::string allocationsFollowTheCurrentDevice() {
  auto allocateOnCurrent = [] {
    return std::make_unique<CudaAllocation>(CudaAllocator::forDevice(currentDeviceOrdinal()), 64,
                                            nullptr);
  };
  auto OnZero = allocateOnCurrent();
  selectDevice(1);
  auto OnOne = allocateOnCurrent();
  REQUIRE(mockAllocationDevice(OnZero->pointer()) == 0);
  REQUIRE(mockAllocationDevice(OnOne->pointer()) == 1);
  REQUIRE(&OnOne->context() == &CudaContext::forDevice(1));
  REQUIRE(CudaAllocator::forDevice(1).stats().BytesInUse == 512);
  REQUIRE(CudaAllocator::forDevice(0).stats().BytesInUse == 512);
  OnZero.reset(); // freed while device 1 is current
  REQUIRE(mockCurrentDevice() == 1);
  REQUIRE(CudaAllocator::forDevice(0).stats().BytesCached == 512);
  REQUIRE(CudaContext::existing(0) == &CudaContext::forDevice(0));
  return "";
}

TEST(CudaDeviceSelectionDeathTest, AllocationsFollowTheCurrentDevice) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runWithProcessDriver(allocationsFollowTheCurrentDevice),
              testing::ExitedWithCode(0), "");
}

std::string contextsAreCreatedOnUse() {
  REQUIRE(CudaContext::existing(0) == nullptr && CudaContext::existing(1) == nullptr);
  selectDevice(1);
  REQUIRE(CudaContext::existing(0) == nullptr);
  REQUIRE(CudaContext::existing(1) != nullptr);
  REQUIRE(CudaContext::existing(7) == nullptr);
  REQUIRE(&CudaDevice::get(1) == &CudaDevice::get(1));
  REQUIRE(CudaDevice::get(0).name() == "tidal mock GPU 0");
  REQUIRE(CudaContext::existing(0) == nullptr); // facts need no context
  return "";
}

TEST(CudaDeviceSelectionDeathTest, ContextsAreCreatedOnUse) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runWithProcessDriver(contextsAreCreatedOnUse), testing::ExitedWithCode(0), "");
}

} // namespace
