// Faults in block functions on the cpu target (runtime/CpuFaults.cpp): each
// becomes the launch's KernelError of kind Fault, naming the kernel, the
// address and the block, and the pool runs the next launch normally.
#include "CpuThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>

using namespace tidal::runtime;

namespace {

// Params[0]: the linear index of the block that faults; how it faults is
// the block function's.
uint64_t faultingBlock(void **Params) { return *static_cast<uint64_t *>(Params[0]); }

uint64_t linearBlockIndex(const TidalBlockContext &Context) {
  return (uint64_t(Context.block_idx[2]) * Context.grid_dim[1] + Context.block_idx[1]) *
             Context.grid_dim[0] +
         Context.block_idx[0];
}

// Deliberate undefined behaviour: not for UBSan to report (make check-asan).
__attribute__((no_sanitize("undefined"))) void nullDereference(void **Params, TidalBlockContext *Context) {
  if (linearBlockIndex(*Context) == faultingBlock(Params)) {
    volatile int *volatile Null = nullptr;
    *Null = 1;
  }
}

void wildStore(void **Params, TidalBlockContext *Context) {
  if (linearBlockIndex(*Context) == faultingBlock(Params)) {
    auto *volatile Far = reinterpret_cast<volatile int *>(uintptr_t(1) << 44);
    *Far = 1;
  }
}

__attribute__((no_sanitize("undefined"))) void divideByZero(void **Params, TidalBlockContext *Context) {
  if (linearBlockIndex(*Context) == faultingBlock(Params)) {
    volatile int Zero = 0;
    volatile int Result = 7 / Zero;
    (void)Result;
  }
}

void trap(void **Params, TidalBlockContext *Context) {
  if (linearBlockIndex(*Context) == faultingBlock(Params))
    __builtin_trap();
}

// Recursion with a page-sized frame until the stack runs out.
__attribute__((noinline)) uint64_t recurse(volatile uint64_t Depth) {
  volatile char Frame[4096];
  Frame[0] = char(Depth);
  return recurse(Depth + 1) + Frame[0];
}

void stackOverflow(void **Params, TidalBlockContext *Context) {
  if (linearBlockIndex(*Context) == faultingBlock(Params))
    (void)recurse(0);
}

// Params[1]: a counter of the blocks that ran.
void countBlock(void **Params, TidalBlockContext *) {
  static_cast<std::atomic<uint64_t> *>(Params[1])->fetch_add(1);
}

struct Case {
  const char *Name;
  TidalBlockFunction Function;
  const char *Expected; // in the message
};

const Case Cases[] = {
    {"null_dereference", nullDereference, "illegal memory access (SIGSEGV"},
    {"wild_store", wildStore, "illegal memory access (SIGSEGV"},
    {"divide_by_zero", divideByZero, "integer division by zero (SIGFPE)"},
    {"trap", trap, "illegal instruction or trap (SIGILL)"},
    {"stack_overflow", stackOverflow, "stack overflow"},
};

void expectFaultThenNormalLaunch(CpuThreadPool &Pool, const Case &C, Dim3 Grid,
                                 uint64_t FaultingBlock) {
  SCOPED_TRACE(C.Name);
  setBlockFunctionName(C.Function, C.Name);
  uint64_t Block = FaultingBlock;
  std::atomic<uint64_t> Count{0};
  void *Params[] = {&Block, &Count};
  try {
    Pool.launch(C.Function, Grid, {32, 1, 1}, Params, 0);
    ADD_FAILURE() << "no fault reported";
  } catch (const KernelError &E) {
    EXPECT_EQ(E.kind(), KernelError::Kind::Fault);
    const std::string Message = E.what();
    EXPECT_NE(Message.find(std::string("kernel '") + C.Name + "' faulted"), std::string::npos)
        << Message;
    EXPECT_NE(Message.find(C.Expected), std::string::npos) << Message;
    EXPECT_NE(Message.find("at address 0x"), std::string::npos) << Message;
    const Dim3 Expected = {uint32_t(FaultingBlock % Grid[0]),
                           uint32_t(FaultingBlock / Grid[0] % Grid[1]),
                           uint32_t(FaultingBlock / Grid[0] / Grid[1])};
    EXPECT_EQ(E.block(), Expected) << Message;
  }
  forgetBlockFunctionName(C.Function);
  // The next launch runs every block.
  Pool.launch(countBlock, Grid, {32, 1, 1}, Params, 0);
  EXPECT_EQ(Count.load(), uint64_t(Grid[0]) * Grid[1] * Grid[2]);
}

} // namespace

TEST(CpuFaults, OneParticipantRecoversFromEachKindOfFault) {
  CpuThreadPool Pool(1);
  for (const Case &C : Cases)
    expectFaultThenNormalLaunch(Pool, C, {8, 1, 1}, 5);
}

TEST(CpuFaults, WorkersRecoverFromEachKindOfFault) {
  CpuThreadPool Pool(4);
  for (const Case &C : Cases)
    for (uint64_t Block : {uint64_t(0), uint64_t(77), uint64_t(255)})
      expectFaultThenNormalLaunch(Pool, C, {16, 4, 4}, Block);
}

TEST(CpuFaults, RepeatedFaultsOnTheSameThreads) {
  // The handler's signal is unblocked after every jump out of it.
  CpuThreadPool Pool(2);
  for (int I = 0; I < 50; ++I)
    expectFaultThenNormalLaunch(Pool, Cases[I % 5], {4, 1, 1}, uint64_t(I % 4));
}

TEST(CpuFaults, UnnamedBlockFunctionIsDescribedByAddress) {
  CpuThreadPool Pool(1);
  uint64_t Block = 0;
  void *Params[] = {&Block, nullptr};
  try {
    Pool.launch(nullDereference, {1, 1, 1}, {1, 1, 1}, Params, 0);
    ADD_FAILURE() << "no fault reported";
  } catch (const KernelError &E) {
    EXPECT_NE(std::string(E.what()).find("kernel '<block function at 0x"), std::string::npos)
        << E.what();
  }
}
