// Hand-written host-lowered kernels (include/tidal/HostABI.h) compiled by
// CpuModule and launched with launchOnCpu on the process-wide pool.
#include "tidal/runtime/CpuTarget.h"

#include "llvm/TargetParser/Host.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

using namespace tidal::runtime;

namespace {

// The context struct as tidal-lower-host declares it.
constexpr const char *ContextType = "%TidalBlockContext = type { [3 x i32], [3 "
                                    "x i32], [3 x i32], i32, ptr, i64 }\n";

// y[i] = a * x[i] + y[i] for every i = blockIdx.x * blockDim.x + threadIdx.x
// below n. Parameters: i64 n, float a, ptr x, ptr y.
constexpr const char *SaxpyKernel = R"(
define void @__tidal_block_saxpy(ptr %params, ptr %ctx) {
entry:
  %n.ptr = load ptr, ptr %params
  %n = load i64, ptr %n.ptr
  %a.slot = getelementptr inbounds ptr, ptr %params, i64 1
  %a.ptr = load ptr, ptr %a.slot
  %a = load float, ptr %a.ptr
  %x.slot = getelementptr inbounds ptr, ptr %params, i64 2
  %x.ptr = load ptr, ptr %x.slot
  %x = load ptr, ptr %x.ptr
  %y.slot = getelementptr inbounds ptr, ptr %params, i64 3
  %y.ptr = load ptr, ptr %y.slot
  %y = load ptr, ptr %y.ptr
  %ntid.x.ptr = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 0, i32 0
  %ntid.x.32 = load i32, ptr %ntid.x.ptr
  %ntid.x = zext i32 %ntid.x.32 to i64
  %ctaid.x.ptr = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 2, i32 0
  %ctaid.x.32 = load i32, ptr %ctaid.x.ptr
  %ctaid.x = zext i32 %ctaid.x.32 to i64
  %first = mul i64 %ctaid.x, %ntid.x
  br label %thread

thread:
  %tid = phi i64 [ 0, %entry ], [ %tid.next, %next ]
  %i = add i64 %first, %tid
  %in.range = icmp slt i64 %i, %n
  br i1 %in.range, label %body, label %next

body:
  %xi.ptr = getelementptr inbounds float, ptr %x, i64 %i
  %xi = load float, ptr %xi.ptr
  %yi.ptr = getelementptr inbounds float, ptr %y, i64 %i
  %yi = load float, ptr %yi.ptr
  %axi = fmul float %a, %xi
  %sum = fadd float %axi, %yi
  store float %sum, ptr %yi.ptr
  br label %next

next:
  %tid.next = add i64 %tid, 1
  %more = icmp ult i64 %tid.next, %ntid.x
  br i1 %more, label %thread, label %done

done:
  ret void
}
)";

// Every thread of a 3-D grid of 3-D blocks computes its global coordinates
// (blockIdx * blockDim + threadIdx, per dimension) and their linear index L
// (x fastest) and adds L + 1 to out[L]; each block adds 1 to
// blockVisits[linear block index]. An L outside [0, total) is counted in
// *outOfRange instead. Parameters: ptr out (i64), ptr blockVisits (i32),
// i64 total, ptr outOfRange (i64).
constexpr const char *GlobalIdKernel = R"(
define void @__tidal_block_global_id(ptr %params, ptr %ctx) {
entry:
  %out.ptr = load ptr, ptr %params
  %out = load ptr, ptr %out.ptr
  %visits.slot = getelementptr inbounds ptr, ptr %params, i64 1
  %visits.ptr = load ptr, ptr %visits.slot
  %visits = load ptr, ptr %visits.ptr
  %total.slot = getelementptr inbounds ptr, ptr %params, i64 2
  %total.ptr = load ptr, ptr %total.slot
  %total = load i64, ptr %total.ptr
  %oor.slot = getelementptr inbounds ptr, ptr %params, i64 3
  %oor.ptr = load ptr, ptr %oor.slot
  %oor = load ptr, ptr %oor.ptr

  %ntid.x.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 0, i32 0
  %ntid.y.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 0, i32 1
  %ntid.z.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 0, i32 2
  %nctaid.x.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 1, i32 0
  %nctaid.y.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 1, i32 1
  %ctaid.x.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 2, i32 0
  %ctaid.y.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 2, i32 1
  %ctaid.z.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 2, i32 2
  %ntid.x.32 = load i32, ptr %ntid.x.p
  %ntid.y.32 = load i32, ptr %ntid.y.p
  %ntid.z.32 = load i32, ptr %ntid.z.p
  %nctaid.x.32 = load i32, ptr %nctaid.x.p
  %nctaid.y.32 = load i32, ptr %nctaid.y.p
  %ctaid.x.32 = load i32, ptr %ctaid.x.p
  %ctaid.y.32 = load i32, ptr %ctaid.y.p
  %ctaid.z.32 = load i32, ptr %ctaid.z.p
  %ntid.x = zext i32 %ntid.x.32 to i64
  %ntid.y = zext i32 %ntid.y.32 to i64
  %ntid.z = zext i32 %ntid.z.32 to i64
  %nctaid.x = zext i32 %nctaid.x.32 to i64
  %nctaid.y = zext i32 %nctaid.y.32 to i64
  %ctaid.x = zext i32 %ctaid.x.32 to i64
  %ctaid.y = zext i32 %ctaid.y.32 to i64
  %ctaid.z = zext i32 %ctaid.z.32 to i64

  ; blockVisits[(ctaid.z * nctaid.y + ctaid.y) * nctaid.x + ctaid.x] += 1
  %block.zy = mul i64 %ctaid.z, %nctaid.y
  %block.zy1 = add i64 %block.zy, %ctaid.y
  %block.zyx = mul i64 %block.zy1, %nctaid.x
  %block = add i64 %block.zyx, %ctaid.x
  %visit.p = getelementptr inbounds i32, ptr %visits, i64 %block
  %visit = load i32, ptr %visit.p
  %visit.1 = add i32 %visit, 1
  store i32 %visit.1, ptr %visit.p

  %width = mul i64 %nctaid.x, %ntid.x
  %height = mul i64 %nctaid.y, %ntid.y
  %threads.xy = mul i64 %ntid.x, %ntid.y
  %threads = mul i64 %threads.xy, %ntid.z
  %origin.x = mul i64 %ctaid.x, %ntid.x
  %origin.y = mul i64 %ctaid.y, %ntid.y
  %origin.z = mul i64 %ctaid.z, %ntid.z
  br label %thread

thread:
  %t = phi i64 [ 0, %entry ], [ %t.next, %next ]
  %tid.x = urem i64 %t, %ntid.x
  %t.div.x = udiv i64 %t, %ntid.x
  %tid.y = urem i64 %t.div.x, %ntid.y
  %tid.z = udiv i64 %t, %threads.xy
  %gx = add i64 %origin.x, %tid.x
  %gy = add i64 %origin.y, %tid.y
  %gz = add i64 %origin.z, %tid.z
  %l.z = mul i64 %gz, %height
  %l.zy = add i64 %l.z, %gy
  %l.zyw = mul i64 %l.zy, %width
  %l = add i64 %l.zyw, %gx
  %inside = icmp ult i64 %l, %total
  br i1 %inside, label %write, label %outside

write:
  %slot = getelementptr inbounds i64, ptr %out, i64 %l
  %old = load i64, ptr %slot
  %l.plus.1 = add i64 %l, 1
  %new = add i64 %old, %l.plus.1
  store i64 %new, ptr %slot
  br label %next

outside:
  %ignored = atomicrmw add ptr %oor, i64 1 seq_cst
  br label %next

next:
  %t.next = add i64 %t, 1
  %more = icmp ult i64 %t.next, %threads
  br i1 %more, label %thread, label %done

done:
  ret void
}
)";

// Reverses each block's slice of `in` into `out` through dynamic shared
// memory: thread t stores in[first + t] at shared[t], then (after every
// thread has stored: the thread loop is the barrier) thread t writes
// shared[ntid - 1 - t] to out[first + t]. Block 0 also stores the context's
// dynamic_shared_bytes into *sharedBytes. Parameters: ptr in (i32),
// ptr out (i32), ptr sharedBytes (i64).
constexpr const char *ReverseKernel = R"(
define void @__tidal_block_reverse(ptr %params, ptr %ctx) {
entry:
  %in.ptr = load ptr, ptr %params
  %in = load ptr, ptr %in.ptr
  %out.slot = getelementptr inbounds ptr, ptr %params, i64 1
  %out.ptr = load ptr, ptr %out.slot
  %out = load ptr, ptr %out.ptr
  %bytes.slot = getelementptr inbounds ptr, ptr %params, i64 2
  %bytes.ptr = load ptr, ptr %bytes.slot
  %bytes.out = load ptr, ptr %bytes.ptr
  %shared.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 4
  %shared = load ptr, ptr %shared.p
  %shared.bytes.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 5
  %shared.bytes = load i64, ptr %shared.bytes.p
  %ntid.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 0, i32 0
  %ntid.32 = load i32, ptr %ntid.p
  %ntid = zext i32 %ntid.32 to i64
  %ctaid.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 2, i32 0
  %ctaid.32 = load i32, ptr %ctaid.p
  %ctaid = zext i32 %ctaid.32 to i64
  %first = mul i64 %ctaid, %ntid
  %is.block.0 = icmp eq i64 %ctaid, 0
  br i1 %is.block.0, label %report, label %store.loop

report:
  store i64 %shared.bytes, ptr %bytes.out
  br label %store.loop

store.loop:
  %t = phi i64 [ 0, %entry ], [ 0, %report ], [ %t.next, %store.loop ]
  %i = add i64 %first, %t
  %in.i = getelementptr inbounds i32, ptr %in, i64 %i
  %v = load i32, ptr %in.i
  %shared.t = getelementptr inbounds i32, ptr %shared, i64 %t
  store i32 %v, ptr %shared.t
  %t.next = add i64 %t, 1
  %more = icmp ult i64 %t.next, %ntid
  br i1 %more, label %store.loop, label %load.loop

load.loop:
  %u = phi i64 [ 0, %store.loop ], [ %u.next, %load.loop ]
  %last = sub i64 %ntid, 1
  %mirror = sub i64 %last, %u
  %shared.m = getelementptr inbounds i32, ptr %shared, i64 %mirror
  %w = load i32, ptr %shared.m
  %j = add i64 %first, %u
  %out.j = getelementptr inbounds i32, ptr %out, i64 %j
  store i32 %w, ptr %out.j
  %u.next = add i64 %u, 1
  %again = icmp ult i64 %u.next, %ntid
  br i1 %again, label %load.loop, label %done

done:
  ret void
}
)";

// out[i] = cosf(in[i]) for i = blockIdx.x * blockDim.x + threadIdx.x:
// cosf comes from the process (libm). Parameters: ptr in, ptr out (float).
constexpr const char *LibmKernel = R"(
declare float @cosf(float)

define void @__tidal_block_cosine(ptr %params, ptr %ctx) {
entry:
  %in.ptr = load ptr, ptr %params
  %in = load ptr, ptr %in.ptr
  %out.slot = getelementptr inbounds ptr, ptr %params, i64 1
  %out.ptr = load ptr, ptr %out.slot
  %out = load ptr, ptr %out.ptr
  %ntid.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 0, i32 0
  %ntid.32 = load i32, ptr %ntid.p
  %ntid = zext i32 %ntid.32 to i64
  %ctaid.p = getelementptr inbounds %TidalBlockContext, ptr %ctx, i32 0, i32 2, i32 0
  %ctaid.32 = load i32, ptr %ctaid.p
  %ctaid = zext i32 %ctaid.32 to i64
  %first = mul i64 %ctaid, %ntid
  br label %thread

thread:
  %t = phi i64 [ 0, %entry ], [ %t.next, %thread ]
  %i = add i64 %first, %t
  %in.i = getelementptr inbounds float, ptr %in, i64 %i
  %x = load float, ptr %in.i
  %c = call float @cosf(float %x)
  %out.i = getelementptr inbounds float, ptr %out, i64 %i
  store float %c, ptr %out.i
  %t.next = add i64 %t, 1
  %more = icmp ult i64 %t.next, %ntid
  br i1 %more, label %thread, label %done

done:
  ret void
}
)";

// Stores `value` to *out; two modules define it with different constants.
std::string storeConstantKernel(int Value) {
  return R"(
define void @__tidal_block_store_constant(ptr %params, ptr %ctx) {
  %out.ptr = load ptr, ptr %params
  %out = load ptr, ptr %out.ptr
  store i32 )" +
         std::to_string(Value) + R"(, ptr %out
  ret void
}
)";
}

struct ParsedKernels {
  std::unique_ptr<llvm::LLVMContext> Context; // declared first: outlives Module
  std::unique_ptr<llvm::Module> Module;
};

// Parses IR text (the context type is prepended) and gives it the host's
// data layout and triple, as the frontend does.
ParsedKernels parseKernels(const std::string &Body, const std::string &Name) {
  static const std::unique_ptr<llvm::TargetMachine> Host =
      createHostTargetMachine();
  ParsedKernels Parsed;
  Parsed.Context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic Diagnostic;
  Parsed.Module = llvm::parseAssemblyString(ContextType + Body, Diagnostic,
                                            *Parsed.Context);
  if (!Parsed.Module) {
    std::string Message;
    llvm::raw_string_ostream Stream(Message);
    Diagnostic.print(Name.c_str(), Stream);
    ADD_FAILURE() << "test IR does not parse: " << Stream.str();
    return Parsed;
  }
  Parsed.Module->setModuleIdentifier(Name);
  Parsed.Module->setDataLayout(Host->createDataLayout());
  Parsed.Module->setTargetTriple(Host->getTargetTriple().str());
  return Parsed;
}

std::unique_ptr<CpuModule> compileKernels(const std::string &Body,
                                          const std::string &Name = "test") {
  ParsedKernels Parsed = parseKernels(Body, Name);
  if (!Parsed.Module)
    return nullptr;
  return CpuModule::compile(std::move(Parsed.Module),
                            std::move(Parsed.Context));
}

TEST(CpuLaunch, SaxpyOverPartialLastBlock) {
  std::unique_ptr<CpuModule> Module = compileKernels(SaxpyKernel, "saxpy");
  ASSERT_TRUE(Module);
  TidalBlockFunction Saxpy = Module->blockFunction("saxpy");

  // Values chosen so that a*x+y is exact whether or not a compiler fuses it.
  constexpr int64_t N = 1000;
  constexpr uint32_t BlockSize =
      128; // 8 blocks, the last one 104 threads short
  constexpr size_t Padding = 200;
  const float Sentinel = -12345.0f;
  float A = 2.5f;
  std::vector<float> X(N + Padding), Y(N + Padding, Sentinel), Expected(N);
  for (int64_t I = 0; I < N; ++I) {
    X[I] = float(I) * 0.25f;
    Y[I] = 3.0f - float(I);
    Expected[I] = A * X[I] + Y[I];
  }
  int64_t Count = N;
  float *XData = X.data(), *YData = Y.data();
  void *Params[] = {&Count, &A, &XData, &YData};
  const uint32_t Blocks = (N + BlockSize - 1) / BlockSize;
  launchOnCpu(Saxpy, {Blocks, 1, 1}, {BlockSize, 1, 1}, Params, 0);

  for (int64_t I = 0; I < N; ++I)
    ASSERT_EQ(Y[I], Expected[I]) << "element " << I;
  for (size_t I = N; I < N + Padding; ++I)
    ASSERT_EQ(Y[I], Sentinel) << "element " << I << " past n was written";
}

// Runs the global-id kernel and checks that every thread position of the
// grid was written exactly once and every block ran exactly once.
void checkGlobalIds(CpuModule &Module, Dim3 Grid, Dim3 Block) {
  const uint64_t BlockCount = uint64_t(Grid[0]) * Grid[1] * Grid[2];
  const uint64_t Total = BlockCount * Block[0] * Block[1] * Block[2];
  std::vector<int64_t> Out(Total, 0);
  std::vector<int32_t> Visits(BlockCount, 0);
  int64_t OutOfRange = 0;
  int64_t *OutData = Out.data(), *OutOfRangeData = &OutOfRange;
  int32_t *VisitsData = Visits.data();
  uint64_t TotalThreads = Total;
  void *Params[] = {&OutData, &VisitsData, &TotalThreads, &OutOfRangeData};
  launchOnCpu(Module.blockFunction("global_id"), Grid, Block, Params, 0);

  EXPECT_EQ(OutOfRange, 0);
  for (uint64_t L = 0; L < Total; ++L)
    ASSERT_EQ(Out[L], int64_t(L) + 1)
        << "global thread " << L << " written " << (Out[L] ? "twice" : "never")
        << " or by the wrong thread";
  for (uint64_t B = 0; B < BlockCount; ++B)
    ASSERT_EQ(Visits[B], 1) << "block " << B;
}

TEST(CpuLaunch, ThreeDimensionalGridWiresEveryIndex) {
  std::unique_ptr<CpuModule> Module =
      compileKernels(GlobalIdKernel, "global_id");
  ASSERT_TRUE(Module);
  // Distinct extents in every dimension, so that a swapped or misplaced
  // field of the context breaks the one-to-one mapping; with common factors
  // too, or a wrong decomposition of the linear block index can still be a
  // bijection (3 and 4 are coprime).
  checkGlobalIds(*Module, {3, 4, 5}, {2, 3, 7});
  checkGlobalIds(*Module, {4, 6, 2}, {3, 2, 2});
}

TEST(CpuLaunch, EveryBlockOfALargeGridRunsExactlyOnce) {
  std::unique_ptr<CpuModule> Module =
      compileKernels(GlobalIdKernel, "global_id");
  ASSERT_TRUE(Module);
  checkGlobalIds(*Module, {50, 20, 10}, {8, 2, 1}); // 10000 blocks
  checkGlobalIds(*Module, {10007, 1, 1}, {1, 1, 1});
}

TEST(CpuLaunch, DynamicSharedMemoryReachesTheKernel) {
  std::unique_ptr<CpuModule> Module = compileKernels(ReverseKernel, "reverse");
  ASSERT_TRUE(Module);
  constexpr uint32_t BlockSize = 256, Blocks = 64;
  std::vector<int32_t> In(BlockSize * Blocks), Out(BlockSize * Blocks, -1);
  for (size_t I = 0; I < In.size(); ++I)
    In[I] = int32_t(I * 7 + 1);
  int64_t SharedBytesSeen = 0;
  int32_t *InData = In.data(), *OutData = Out.data();
  int64_t *SharedBytesData = &SharedBytesSeen;
  void *Params[] = {&InData, &OutData, &SharedBytesData};
  const size_t SharedBytes = BlockSize * sizeof(int32_t);
  launchOnCpu(Module->blockFunction("reverse"), {Blocks, 1, 1},
              {BlockSize, 1, 1}, Params, SharedBytes);

  EXPECT_EQ(SharedBytesSeen, int64_t(SharedBytes));
  for (uint32_t B = 0; B < Blocks; ++B)
    for (uint32_t T = 0; T < BlockSize; ++T)
      ASSERT_EQ(Out[B * BlockSize + T], In[B * BlockSize + BlockSize - 1 - T])
          << "block " << B << " thread " << T;
}

TEST(CpuLaunch, KernelsCallLibmFromTheProcess) {
  std::unique_ptr<CpuModule> Module = compileKernels(LibmKernel, "cosine");
  ASSERT_TRUE(Module);
  constexpr uint32_t BlockSize = 32, Blocks = 4;
  std::vector<float> In(BlockSize * Blocks), Out(BlockSize * Blocks, 0.0f);
  for (size_t I = 0; I < In.size(); ++I)
    In[I] = float(I) * 0.37f - 20.0f;
  float *InData = In.data(), *OutData = Out.data();
  void *Params[] = {&InData, &OutData};
  launchOnCpu(Module->blockFunction("cosine"), {Blocks, 1, 1},
              {BlockSize, 1, 1}, Params, 0);
  for (size_t I = 0; I < In.size(); ++I)
    ASSERT_EQ(Out[I], cosf(In[I])) << "element " << I;
}

TEST(CpuModule, MissingKernelNamesTheSymbol) {
  std::unique_ptr<CpuModule> Module = compileKernels(SaxpyKernel, "saxpy");
  ASSERT_TRUE(Module);
  try {
    Module->blockFunction("no_such_kernel");
    FAIL() << "blockFunction of a missing kernel returned";
  } catch (const RuntimeError &E) {
    EXPECT_NE(std::string(E.what()).find("__tidal_block_no_such_kernel"),
              std::string::npos)
        << E.what();
  }
}

TEST(CpuModule, UnresolvedExternalFailsAtCompileNamingIt) {
  const char *Kernel = R"(
declare void @tidal_test_function_nobody_defines()
define void @__tidal_block_calls_nothing(ptr %params, ptr %ctx) {
  call void @tidal_test_function_nobody_defines()
  ret void
}
)";
  try {
    compileKernels(Kernel, "unresolved");
    FAIL() << "a module with an undefined callee compiled";
  } catch (const RuntimeError &E) {
    EXPECT_NE(std::string(E.what()).find("tidal_test_function_nobody_defines"),
              std::string::npos)
        << E.what();
  }
}

TEST(CpuModule, ModuleWithoutBlockFunctionIsRejected) {
  const char *NoKernel = "define i32 @helper() {\n  ret i32 1\n}\n";
  EXPECT_THROW(compileKernels(NoKernel, "no_kernel"), RuntimeError);
}

TEST(CpuModule, BlockFunctionWithoutABodyIsRejectedNamingTheKernel) {
  // What O3 leaves of a kernel with undefined behaviour on every path (the
  // frontend fuzzer's "launch of a null block function"): refused at
  // compile, naming the kernel, not launched into whatever code follows.
  const char *Vanished = "define void @__tidal_block_gone(ptr %p, ptr %c) {\n"
                         "  unreachable\n}\n";
  try {
    compileKernels(Vanished, "vanished");
    ADD_FAILURE() << "a block function of only 'unreachable' was accepted";
  } catch (const RuntimeError &E) {
    EXPECT_NE(std::string(E.what()).find("kernel 'gone' cannot run: LLVM's optimiser found "
                                         "undefined behaviour on every path"),
              std::string::npos)
        << E.what();
  }
}

TEST(CpuModule, ModulesWithTheSameKernelNameStayApart) {
  std::unique_ptr<CpuModule> First =
      compileKernels(storeConstantKernel(1), "first");
  std::unique_ptr<CpuModule> Second =
      compileKernels(storeConstantKernel(2), "second");
  ASSERT_TRUE(First && Second);
  int32_t Value = 0;
  int32_t *ValueData = &Value;
  void *Params[] = {&ValueData};

  launchOnCpu(First->blockFunction("store_constant"), {1, 1, 1}, {1, 1, 1},
              Params, 0);
  EXPECT_EQ(Value, 1);
  launchOnCpu(Second->blockFunction("store_constant"), {1, 1, 1}, {1, 1, 1},
              Params, 0);
  EXPECT_EQ(Value, 2);

  TidalBlockFunction SecondStore = Second->blockFunction("store_constant");
  First.reset(); // releases only the first module's code
  Value = 0;
  launchOnCpu(SecondStore, {1, 1, 1}, {1, 1, 1}, Params, 0);
  EXPECT_EQ(Value, 2);
}

TEST(CpuModule, HiddenBlockFunctionIsFound) {
  std::string Kernel = storeConstantKernel(7);
  Kernel.replace(Kernel.find("define void"), 11, "define hidden void");
  std::unique_ptr<CpuModule> Module = compileKernels(Kernel, "hidden");
  ASSERT_TRUE(Module);
  int32_t Value = 0;
  int32_t *ValueData = &Value;
  void *Params[] = {&ValueData};
  launchOnCpu(Module->blockFunction("store_constant"), {1, 1, 1}, {1, 1, 1},
              Params, 0);
  EXPECT_EQ(Value, 7);
}

TEST(CpuModule, CompileNeedsTheModulesOwnContext) {
  auto Context = std::make_unique<llvm::LLVMContext>();
  auto Other = std::make_unique<llvm::LLVMContext>();
  auto Module = std::make_unique<llvm::Module>("orphan", *Context);
  EXPECT_THROW(CpuModule::compile(std::move(Module), std::move(Other)),
               RuntimeError);
}

// The disk cache's path: an object file, emitted once and linked later
// (twice here, as two processes would), runs as the JIT-compiled module does.
TEST(CpuModule, EmittedObjectLoadsAndRuns) {
  ParsedKernels Parsed = parseKernels(storeConstantKernel(42), "object");
  ASSERT_TRUE(Parsed.Module);
  CpuObject Object =
      CpuModule::emitObject(std::move(Parsed.Module), std::move(Parsed.Context));
  ASSERT_EQ(Object.BlockNames, std::vector<std::string>{"__tidal_block_store_constant"});
  EXPECT_FALSE(Object.Watched);
  EXPECT_EQ(Object.Object.compare(0, 4, "\x7f" "ELF"), 0);
  for (int Load = 0; Load < 2; ++Load) {
    std::unique_ptr<CpuModule> Module = CpuModule::load(Object, "object");
    int32_t Value = 0;
    int32_t *ValueData = &Value;
    void *Params[] = {&ValueData};
    launchOnCpu(Module->blockFunction("store_constant"), {1, 1, 1}, {1, 1, 1}, Params, 0);
    EXPECT_EQ(Value, 42);
  }
}

TEST(CpuModule, ObjectThatDoesNotLinkIsAnError) {
  CpuObject Garbage;
  Garbage.Object = "not an object file";
  Garbage.BlockNames = {"__tidal_block_store_constant"};
  EXPECT_THROW(CpuModule::load(Garbage, "garbage"), RuntimeError);
  CpuObject Nameless;
  EXPECT_THROW(CpuModule::load(Nameless, "nameless"), RuntimeError);
}

TEST(CpuModule, HostDescriptionNamesTripleAndCpu) {
  std::string Host = hostDescription();
  EXPECT_NE(Host.find(llvm::sys::getProcessTriple()), std::string::npos) << Host;
  EXPECT_NE(Host.find(llvm::sys::getHostCPUName().str()), std::string::npos) << Host;
}

TEST(CpuLaunch, InvalidConfigurationThrows) {
  std::unique_ptr<CpuModule> Module = compileKernels(SaxpyKernel, "saxpy");
  ASSERT_TRUE(Module);
  EXPECT_THROW(launchOnCpu(Module->blockFunction("saxpy"), {0, 1, 1},
                           {32, 1, 1}, nullptr, 0),
               RuntimeError);
  EXPECT_THROW(launchOnCpu(Module->blockFunction("saxpy"), {1, 1, 1},
                           {32, 0, 1}, nullptr, 0),
               RuntimeError);
  EXPECT_THROW(launchOnCpu(nullptr, {1, 1, 1}, {1, 1, 1}, nullptr, 0),
               RuntimeError);
}

// CUDA's limits hold on the cpu too (the host lowering relies on them).
TEST(CpuLaunch, LaunchesBeyondCudaLimitsThrowNamingTheLimit) {
  std::unique_ptr<CpuModule> Module = compileKernels(SaxpyKernel, "saxpy");
  ASSERT_TRUE(Module);
  TidalBlockFunction Saxpy = Module->blockFunction("saxpy");
  auto MessageOf = [&](Dim3 Grid, Dim3 Block) -> std::string {
    try {
      launchOnCpu(Saxpy, Grid, Block, nullptr, 0);
    } catch (const RuntimeError &E) {
      return E.what();
    }
    return "";
  };
  EXPECT_NE(MessageOf({1, 1, 1}, {1, 1, 65}).find("beyond CUDA's limits"), std::string::npos);
  EXPECT_NE(MessageOf({1, 65536, 1}, {1, 1, 1}).find("grid (2147483647, 65535, 65535)"),
            std::string::npos);
  EXPECT_NE(MessageOf({1, 1, 1}, {64, 32, 1}).find("more than 1024 threads"),
            std::string::npos);
}

// Prints, never asserts: timings depend on the machine and its load.
TEST(CpuTiming, ReportsCompileAndTinyLaunchCost) {
  using Clock = std::chrono::steady_clock;
  auto Microseconds = [](Clock::duration D) {
    return std::chrono::duration<double, std::micro>(D).count();
  };
  compileKernels(SaxpyKernel, "warm-up");

  std::vector<double> CompileTimes;
  for (int I = 0; I < 21; ++I) {
    ParsedKernels Parsed = parseKernels(SaxpyKernel, "timed");
    ASSERT_TRUE(Parsed.Module);
    const auto Start = Clock::now();
    std::unique_ptr<CpuModule> Module =
        CpuModule::compile(std::move(Parsed.Module), std::move(Parsed.Context));
    CompileTimes.push_back(Microseconds(Clock::now() - Start));
  }
  std::sort(CompileTimes.begin(), CompileTimes.end());

  std::unique_ptr<CpuModule> Module = compileKernels(SaxpyKernel, "saxpy");
  ASSERT_TRUE(Module);
  TidalBlockFunction Saxpy = Module->blockFunction("saxpy");
  std::vector<float> X(32, 1.0f), Y(32, 0.0f);
  int64_t Count = 32;
  float A = 1.0f, *XData = X.data(), *YData = Y.data();
  void *Params[] = {&Count, &A, &XData, &YData};
  constexpr int Launches = 100000;
  for (int I = 0; I < 1000; ++I)
    launchOnCpu(Saxpy, {1, 1, 1}, {32, 1, 1}, Params, 0);
  auto Start = Clock::now();
  for (int I = 0; I < Launches; ++I)
    launchOnCpu(Saxpy, {1, 1, 1}, {32, 1, 1}, Params, 0);
  const double LaunchMicroseconds =
      Microseconds(Clock::now() - Start) / Launches;
  Start = Clock::now();
  TidalBlockContext Context{{32, 1, 1}, {1, 1, 1}, {0, 0, 0}, 0, nullptr, 0};
  for (int I = 0; I < Launches; ++I)
    Saxpy(Params, &Context);
  const double DirectMicroseconds =
      Microseconds(Clock::now() - Start) / Launches;

  std::cout << "[ timing   ] CpuModule::compile of saxpy (median of 21): "
            << CompileTimes[CompileTimes.size() / 2] << " us\n"
            << "[ timing   ] launchOnCpu 1 block x 32 threads: "
            << LaunchMicroseconds
            << " us (calling the block function directly: "
            << DirectMicroseconds << " us), " << cpuWorkerCount()
            << " pool threads\n";
}

} // namespace
