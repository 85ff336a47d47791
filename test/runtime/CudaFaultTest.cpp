// Kernel faults on the cuda target against the mock driver: a kernel that
// faults asynchronously is reported by whichever call observes the fault
// (a synchronisation, a copy, an allocation, the next launch, a module
// load), always naming the kernels launched since the last successful
// synchronisation and marking the context unusable. The mock's
// TIDAL_MOCK_CUDA_FAULT_KERNEL makes every call after the faulting launch
// fail with CUDA_ERROR_ILLEGAL_ADDRESS, as a real driver does.
#include "tidal/runtime/CudaMemory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>

#include <dlfcn.h>

using namespace tidal::runtime;

namespace {

void *mockLibrary() {
  static void *Handle = dlopen(TIDAL_MOCK_CUDA_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  return Handle;
}

// How many calls the mock answered with the fault's error.
int mockFaultReturns() {
  return reinterpret_cast<int (*)()>(dlsym(mockLibrary(), "tidalMockFaultReturns"))();
}

// Forgets the mock's fault (it is process-wide) and its call counts.
void resetMock() { reinterpret_cast<void (*)()>(dlsym(mockLibrary(), "tidalMockReset"))(); }

// Two kernels of one int32 array (data pointer, shape, stride).
const char *KernelsPTX = R"(//
.version 7.8
.target sm_90
.address_size 64

.visible .entry faulty_kernel(
	.param .u64 faulty_kernel_param_0,
	.param .u64 faulty_kernel_param_1,
	.param .u64 faulty_kernel_param_2
)
{
	ret;
}

.visible .entry other_kernel(
	.param .u64 other_kernel_param_0,
	.param .u64 other_kernel_param_1,
	.param .u64 other_kernel_param_2
)
{
	ret;
}
)";

// What a report for one asynchronous kernel starts with.
const char *FaultyKernelReport =
    "kernel 'faulty_kernel' (launched asynchronously, griddim (2, 1, 1), blockdim (32, 1, 1)) "
    "failed on device 0 (tidal mock GPU 0): reported by ";
const char *UnusableContext = ": CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
                              "encountered). The CUDA context is no longer usable: every later "
                              "CUDA call in this process fails; restart the process";

bool contains(const std::string &Text, const std::string &Part) {
  return Text.find(Part) != std::string::npos;
}

// The CudaDriverError Work throws; fails the test when it throws nothing.
CudaDriverError errorOf(const std::function<void()> &Work) {
  try {
    Work();
  } catch (const CudaDriverError &E) {
    return E;
  }
  ADD_FAILURE() << "no CudaDriverError was thrown";
  return CudaDriverError("", "", 0, "");
}

class CudaFault : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_NE(mockLibrary(), nullptr) << dlerror();
    resetMock();
    setenv("TIDAL_MOCK_CUDA_FAULT_KERNEL", "faulty", 1);
  }
  void TearDown() override {
    unsetenv("TIDAL_MOCK_CUDA_FAULT_KERNEL");
    unsetenv("TIDAL_MOCK_CUDA_OUT_OF_RESOURCES_KERNEL");
    resetMock();
  }

  // Launches Kernel over Buffer (asynchronously, as a launch of device
  // arrays does).
  void launch(CudaFunction &Kernel, const CudaDeviceBuffer &Buffer, Dim3 Grid, Dim3 Block,
              cu::Stream Stream = nullptr) {
    uint64_t Data = Buffer.pointer(), Shape = Buffer.size() / 4, Stride = 4;
    void *Params[] = {&Data, &Shape, &Stride};
    Kernel.launch(Grid, Block, 0, Stream, Params);
  }

  CudaDriver Driver = CudaDriver::open(TIDAL_MOCK_CUDA_LIBRARY);
};

TEST_F(CudaFault, StickyErrorsAreThoseThatMakeTheContextUnusable) {
  for (int Result : {700, 702, 710, 714, 715, 716, 717, 718, 719, 721})
    EXPECT_TRUE(CudaDriver::isStickyError(Result)) << Result;
  // Out of resources (701), a bad value, not ready, memory already registered.
  for (int Result : {0, 1, 2, 600, 701, 703, 712, 720, 999})
    EXPECT_FALSE(CudaDriver::isStickyError(Result)) << Result;
}

// A context with the two test kernels loaded and a buffer for them.
struct Loaded {
  CudaContext Context;
  CudaModule Module;
  CudaFunction Faulty, Other;
  CudaDeviceBuffer Buffer;

  explicit Loaded(const CudaDriver &Driver)
      : Context(Driver, 0), Module(Context, KernelsPTX),
        Faulty(Module.function("faulty_kernel")), Other(Module.function("other_kernel")),
        Buffer(Driver, 16) {}
};

// What a call that observes a fault may use, made before the fault.
struct Objects {
  CudaContext &Context;
  CudaModule &Module;
  CudaFunction &Other; // loaded: launching it is the observing call
  CudaDeviceBuffer &Buffer;
  CudaStream &Stream;
  CudaEvent &Event; // recorded before the fault
};

TEST_F(CudaFault, WhicheverCallObservesTheFaultNamesTheKernel) {
  int32_t Host[4] = {};
  const std::pair<const char *, std::function<void(Objects &)>> Observers[] = {
      {"cuCtxSynchronize", [](Objects &O) { O.Context.synchronize(); }},
      {"cuStreamSynchronize", [](Objects &O) { O.Stream.synchronize(); }},
      {"cuEventSynchronize", [](Objects &O) { O.Event.synchronize(); }},
      {"cuEventQuery", [](Objects &O) { O.Event.query(); }},
      {"cuEventElapsedTime", [](Objects &O) { CudaEvent::elapsed(O.Event, O.Event); }},
      {"cuStreamWaitEvent", [](Objects &O) { O.Event.waitOn(O.Stream.handle()); }},
      {"cuMemcpyDtoH", [&](Objects &O) { O.Buffer.copyToHost(Host, sizeof Host); }},
      {"cuMemcpyDtoHAsync",
       [&](Objects &O) {
         cudaCopyToHost(Driver, Host, O.Buffer.pointer(), sizeof Host, O.Stream.handle());
       }},
      {"cuMemcpyHtoD",
       [&](Objects &O) { cudaCopyToDevice(Driver, O.Buffer.pointer(), Host, sizeof Host, nullptr); }},
      {"cuMemAlloc",
       [](Objects &O) {
         CudaAllocator Allocator(O.Context);
         CudaAllocation More(Allocator, 64, nullptr);
       }},
      {"cuStreamCreate", [](Objects &O) { CudaStream Another(O.Context); }},
      {"cuLaunchKernel", [this](Objects &O) { launch(O.Other, O.Buffer, {1, 1, 1}, {1, 1, 1}); }},
      {"cuModuleLoadDataEx", [](Objects &O) { CudaModule Again(O.Context, KernelsPTX); }},
      {"cuModuleGetFunction", [](Objects &O) { O.Module.function("other_kernel"); }},
  };
  for (const auto &[Call, Observe] : Observers) {
    SCOPED_TRACE(Call);
    resetMock();
    Loaded L(Driver);
    auto &[Context, Module, Faulty, Other, Buffer] = L;
    CudaStream Stream(Context);
    CudaEvent Event(Context);
    Event.record(nullptr);
    Objects O{Context, Module, Other, Buffer, Stream, Event};

    launch(Faulty, Buffer, {2, 1, 1}, {32, 1, 1});
    EXPECT_FALSE(Context.faulted()) << "the launch itself succeeds";
    CudaDriverError E = errorOf([&] { Observe(O); });
    EXPECT_EQ(E.call(), Call);
    EXPECT_EQ(E.errorName(), "CUDA_ERROR_ILLEGAL_ADDRESS");
    EXPECT_EQ(E.result(), 700);
    EXPECT_EQ(std::string(E.what()), FaultyKernelReport + std::string(Call) + UnusableContext);
    EXPECT_TRUE(Context.faulted());
  }
}

TEST_F(CudaFault, LaterCallsRaiseTheSameReportAtOnce) {
  Loaded L(Driver);
  auto &[Context, Module, Faulty, Other, Buffer] = L;
  CudaStream Stream(Context);
  CudaAllocator Allocator(Context);
  CudaEvent Event(Context);
  launch(Faulty, Buffer, {2, 1, 1}, {32, 1, 1});
  int32_t Host[4];
  CudaDriverError First = errorOf([&] { Buffer.copyToHost(Host, sizeof Host); });
  EXPECT_EQ(First.call(), "cuMemcpyDtoH");

  // At once: none of these reaches the driver.
  int FaultReturns = mockFaultReturns();
  for (const std::function<void()> &Later : std::initializer_list<std::function<void()>>{
           [&] { Context.synchronize(); },
           [&] { Stream.synchronize(); },
           [&] { CudaAllocation More(Allocator, 64, nullptr); },
           [&] { launch(Faulty, Buffer, {1, 1, 1}, {1, 1, 1}); },
           [&] { CudaEvent Event(Context); },
           [&] { CudaStream Another(Context); },
           [&] { CudaModule Again(Context, KernelsPTX); },
           [&] { Event.record(nullptr); },
           [&] { Event.synchronize(); },
           [&] { Event.query(); },
           [&] { CudaEvent::elapsed(Event, Event); },
       }) {
    CudaDriverError E = errorOf(Later);
    EXPECT_EQ(std::string(E.what()), First.what());
    EXPECT_EQ(E.call(), "cuMemcpyDtoH") << "the call that observed the fault";
    EXPECT_EQ(E.errorName(), "CUDA_ERROR_ILLEGAL_ADDRESS");
  }
  EXPECT_EQ(mockFaultReturns(), FaultReturns);
  // A call that reaches the driver fails again: the same report.
  CudaDriverError Again = errorOf([&] { Buffer.copyToHost(Host, sizeof Host); });
  EXPECT_EQ(std::string(Again.what()), First.what());
  EXPECT_EQ(Again.call(), "cuMemcpyDtoH");
  EXPECT_EQ(mockFaultReturns(), FaultReturns + 1);
}

TEST_F(CudaFault, EveryKernelSinceTheLastSynchronisationIsNamed) {
  Loaded L(Driver);
  auto &[Context, Module, Faulty, Other, Buffer] = L;
  CudaStream Stream(Context);
  launch(Other, Buffer, {1, 1, 1}, {64, 1, 1});
  launch(Faulty, Buffer, {2, 1, 1}, {32, 1, 1}, Stream.handle());
  CudaDriverError E = errorOf([&] { Context.synchronize(); });
  char StreamText[32];
  std::snprintf(StreamText, sizeof StreamText, "%#llx",
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(Stream.handle())));
  EXPECT_EQ(std::string(E.what()),
            "a kernel failed on device 0 (tidal mock GPU 0), one of the kernels launched since "
            "the last synchronisation: 'other_kernel' (griddim (1, 1, 1), blockdim (64, 1, 1)), "
            "'faulty_kernel' (griddim (2, 1, 1), blockdim (32, 1, 1), stream " +
                std::string(StreamText) + "): reported by cuCtxSynchronize" + UnusableContext);
}

TEST_F(CudaFault, TheRecordKeepsTheNewestLaunchesAndCountsTheRest) {
  Loaded L(Driver);
  auto &[Context, Module, Faulty, Other, Buffer] = L;
  const unsigned Earlier = CudaContext::RecentLaunchCapacity + 2;
  for (unsigned I = 1; I <= Earlier; ++I)
    launch(Other, Buffer, {I, 1, 1}, {1, 1, 1});
  launch(Faulty, Buffer, {2, 1, 1}, {32, 1, 1});
  std::string Message = errorOf([&] { Context.synchronize(); }).what();
  // The newest RecentLaunchCapacity: Other's last capacity - 1 and Faulty.
  EXPECT_FALSE(contains(Message, "griddim (3, 1, 1)")) << Message;
  EXPECT_TRUE(contains(Message, "since the last synchronisation: 'other_kernel' (griddim (4, 1, 1)"))
      << Message;
  EXPECT_TRUE(contains(Message, "'faulty_kernel' (griddim (2, 1, 1), blockdim (32, 1, 1)), and 3 "
                                "launched before them: reported by cuCtxSynchronize"))
      << Message;
}

TEST_F(CudaFault, ASuccessfulSynchronisationForgetsEarlierLaunches) {
  Loaded L(Driver);
  auto &[Context, Module, Faulty, Other, Buffer] = L;
  launch(Other, Buffer, {1, 1, 1}, {64, 1, 1});
  Context.synchronize();
  launch(Other, Buffer, {1, 1, 1}, {64, 1, 1});
  Other.synchronize(); // a launch that waits for its kernel synchronises too
  launch(Faulty, Buffer, {2, 1, 1}, {32, 1, 1});
  int32_t Host[4];
  std::string Message = errorOf([&] { Buffer.copyToHost(Host, sizeof Host); }).what();
  EXPECT_EQ(Message, FaultyKernelReport + std::string("cuMemcpyDtoH") + UnusableContext);
}

TEST_F(CudaFault, ALaunchThatWaitsForItsKernelIsNotCalledAsynchronous) {
  Loaded L(Driver);
  auto &[Context, Module, Faulty, Other, Buffer] = L;
  launch(Faulty, Buffer, {2, 1, 1}, {32, 1, 1});
  CudaDriverError E = errorOf([&] { Faulty.synchronize(); });
  EXPECT_EQ(E.call(), "cuCtxSynchronize");
  EXPECT_EQ(std::string(E.what()),
            "kernel 'faulty_kernel' (griddim (2, 1, 1), blockdim (32, 1, 1)) failed on device 0 "
            "(tidal mock GPU 0): reported by cuCtxSynchronize" +
                std::string(UnusableContext));
}

TEST_F(CudaFault, ANonStickyLaunchErrorIsNotAFault) {
  setenv("TIDAL_MOCK_CUDA_OUT_OF_RESOURCES_KERNEL", "other", 1);
  Loaded L(Driver);
  auto &[Context, Module, Faulty, Other, Buffer] = L;
  CudaDriverError E = errorOf([&] { launch(Other, Buffer, {1, 1, 1}, {1024, 1, 1}); });
  EXPECT_EQ(E.call(), "cuLaunchKernel");
  EXPECT_EQ(E.errorName(), "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  EXPECT_EQ(std::string(E.what()),
            "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources "
            "requested for launch): kernel 'other_kernel', griddim (1, 1, 1), blockdim "
            "(1024, 1, 1)");
  EXPECT_FALSE(Context.faulted());
  Context.synchronize(); // still usable
  int32_t Host[4];
  Buffer.copyToHost(Host, sizeof Host);
}

TEST_F(CudaFault, NoLaunchSinceTheLastSynchronisationIsSaid) {
  // A fault tidal launched nothing for (another library's kernel, say).
  Loaded L(Driver);
  auto &[Context, Module, Faulty, Other, Buffer] = L;
  launch(Faulty, Buffer, {2, 1, 1}, {32, 1, 1});
  Context.forgetLaunches(Context.launchesSoFar());
  EXPECT_EQ(std::string(errorOf([&] { Context.synchronize(); }).what()),
            "a kernel failed on device 0 (tidal mock GPU 0) (tidal launched none there since "
            "the last synchronisation): reported by cuCtxSynchronize" +
                std::string(UnusableContext));
}

TEST_F(CudaFault, ACallWithNoContextCurrentStillSaysTheContextIsUnusable) {
  Loaded L(Driver);
  auto &[Context, Module, Faulty, Other, Buffer] = L;
  launch(Faulty, Buffer, {2, 1, 1}, {32, 1, 1});
  Driver.api().CtxSetCurrent(nullptr);
  int32_t Host[4];
  CudaDriverError E = errorOf([&] { Buffer.copyToHost(Host, sizeof Host); });
  EXPECT_EQ(E.call(), "cuMemcpyDtoH");
  EXPECT_EQ(std::string(E.what()),
            "a kernel failed: reported by cuMemcpyDtoH" + std::string(UnusableContext));
}

// A stream's synchronisation reports the fault of the stream's context, not
// of the thread's current one.
class CudaFaultTwoDevices : public CudaFault {
protected:
  static void SetUpTestSuite() { setenv("TIDAL_MOCK_CUDA_DEVICES", "2", 1); }
  static void TearDownTestSuite() { unsetenv("TIDAL_MOCK_CUDA_DEVICES"); }
};

TEST_F(CudaFaultTwoDevices, AStreamReportsTheFaultOfItsOwnContext) {
  ASSERT_EQ(Driver.deviceCount(), 2);
  CudaContext Zero(Driver, 0);
  CudaContext One(Driver, 1); // current now
  CudaModule Module(One, KernelsPTX);
  CudaFunction Faulty = Module.function("faulty_kernel");
  CudaDeviceBuffer Buffer(Driver, 16);
  CudaStream Stream(One);
  launch(Faulty, Buffer, {2, 1, 1}, {32, 1, 1}, Stream.handle());
  Zero.makeCurrent();
  std::string Message = errorOf([&] { Stream.synchronize(); }).what();
  EXPECT_TRUE(contains(Message, "kernel 'faulty_kernel' (launched asynchronously, griddim "
                                "(2, 1, 1), blockdim (32, 1, 1), stream 0x"))
      << Message;
  EXPECT_TRUE(contains(Message, "failed on device 1 (tidal mock GPU 1): reported by "
                                "cuStreamSynchronize"))
      << Message;
  EXPECT_TRUE(One.faulted());
  EXPECT_FALSE(Zero.faulted());
}

} // namespace
