// The runtime entry points of host-lowered code (HostABI.h): shared memory
// and frames, the failure hooks of bounds checks, assertions, barriers and
// warps, and printf. Split from CpuThreadPool.cpp, whose participants they
// reach through TidalBlockContext::runtime (CpuParticipant.h).
#include "CpuParticipant.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

// The runtime entry points of host-lowered code (HostABI.h). They are called
// from JIT-compiled code: nothing may throw out of them.
namespace tidal::runtime {
namespace {

CpuThreadPool::Participant &participantOf(TidalBlockContext *Context) {
  return *static_cast<CpuThreadPool::Participant *>(Context->runtime);
}

Dim3 blockIndexOf(const TidalBlockContext *Context) {
  return {Context->block_idx[0], Context->block_idx[1], Context->block_idx[2]};
}

std::string describeThread(Dim3 Thread, Dim3 Block) {
  return "thread " + describeDims(Thread) + " of block " + describeDims(Block);
}

void *reserveOrDie(SharedMemoryBuffer &Buffer, uint64_t Bytes, const char *What) {
  try {
    Buffer.reserve(Bytes);
  } catch (const std::exception &E) {
    std::fprintf(stderr, "tidal: cannot allocate %s: %s\n", What, E.what());
    std::abort();
  }
  return Buffer.data();
}

} // namespace

KernelError boundsError(const char *Where, int64_t Index, int64_t Extent, int32_t Axis,
                        Dim3 Block, Dim3 Thread) {
  std::string Detail = "index " + std::to_string(Index) + " is out of bounds for axis " +
                       std::to_string(Axis) + " with size " + std::to_string(Extent) +
                       " in " + (Where && *Where ? Where : "a kernel");
  return KernelError(KernelError::Kind::Bounds, Detail + ", " + describeThread(Thread, Block),
                     Detail, Block, Thread);
}

KernelError assertFailure(const char *Message, Dim3 Block, Dim3 Thread) {
  std::string Detail = Message && *Message ? Message : "assertion failed";
  return KernelError(KernelError::Kind::Assert,
                     Detail + " (" + describeThread(Thread, Block) + ")", Detail, Block, Thread);
}


void recordKernelFailure(TidalBlockContext *Context,
                         const std::function<KernelError()> &Make) {
  CpuThreadPool::LaunchFailure &Failure = *participantOf(Context).Failure;
  if (Failure.Failed.load(std::memory_order_relaxed))
    return;
  RuntimeCallScope InRuntime(participantOf(Context).Recovery); // holds a lock
  std::lock_guard<std::mutex> Lock(Failure.Mutex);
  if (Failure.Failed.load(std::memory_order_relaxed))
    return;
  try {
    Failure.Error = std::make_unique<KernelError>(Make());
  } catch (...) {
    Failure.Error.reset();
  }
  Failure.Failed.store(true, std::memory_order_release);
}

} // namespace tidal::runtime

using namespace tidal::runtime;

extern "C" void *__tidal_cpu_shared(TidalBlockContext *Context,
                                    uint64_t StaticBytes, int32_t Poison) {
  RuntimeCallScope InRuntime(participantOf(Context).Recovery); // may allocate
  const uint64_t Bytes = StaticBytes + Context->dynamic_shared_bytes;
  void *Memory = reserveOrDie(participantOf(Context).Shared, Bytes,
                              "shared memory");
  if (Poison)
    std::memset(Memory, 0xFF, Bytes);
  return Memory;
}

extern "C" void *__tidal_cpu_frame(TidalBlockContext *Context, uint64_t Bytes) {
  RuntimeCallScope InRuntime(participantOf(Context).Recovery); // may allocate
  return reserveOrDie(participantOf(Context).Frame, Bytes,
                      "the frame of a block's threads");
}

extern "C" void __tidal_cpu_bounds_error(TidalBlockContext *Context,
                                         const char *Where, int64_t Index,
                                         int64_t Extent, int32_t Axis,
                                         int32_t X, int32_t Y, int32_t Z) {
  recordKernelFailure(Context, [&] {
    return boundsError(Where, Index, Extent, Axis, blockIndexOf(Context),
                       {uint32_t(X), uint32_t(Y), uint32_t(Z)});
  });
}

extern "C" void __tidal_cpu_assert_fail(TidalBlockContext *Context,
                                        const char *Message, int32_t X,
                                        int32_t Y, int32_t Z) {
  recordKernelFailure(Context, [&] {
    return assertFailure(Message, blockIndexOf(Context),
                         {uint32_t(X), uint32_t(Y), uint32_t(Z)});
  });
}

extern "C" void __tidal_cpu_barrier_error(TidalBlockContext *Context,
                                          const char *Kernel,
                                          const int32_t *States,
                                          uint32_t ThreadCount,
                                          const char *const *Names,
                                          uint32_t NameCount) {
  recordKernelFailure(Context, [&] {
    const Dim3 Block = blockIndexOf(Context);
    const uint32_t DimX = Context->block_dim[0], DimY = Context->block_dim[1];
    auto ThreadAt = [&](uint32_t Linear) {
      return describeDims({Linear % DimX, Linear / DimX % DimY,
                           Linear / DimX / DimY});
    };
    auto StateName = [&](int32_t State) -> std::string {
      if (State == TIDAL_THREAD_FINISHED)
        return "finished";
      if (State >= 0 && uint32_t(State) < NameCount)
        return std::string("at ") + Names[State];
      return "stopped";
    };
    std::string Message = "threads of block " + describeDims(Block) +
                          " of kernel '" + (Kernel ? Kernel : "?") +
                          "' reached different barriers (every thread of a "
                          "block must reach the same syncthreads or warp "
                          "collective): ";
    // Runs of consecutive threads in the same state, at most 16.
    unsigned Runs = 0;
    for (uint32_t First = 0; First < ThreadCount;) {
      uint32_t Last = First;
      while (Last + 1 < ThreadCount && States[Last + 1] == States[First])
        ++Last;
      if (Runs == 16) {
        Message += "; ...";
        break;
      }
      if (Runs++)
        Message += "; ";
      Message += First == Last ? "thread " + ThreadAt(First)
                               : "threads " + ThreadAt(First) + ".." +
                                     ThreadAt(Last);
      Message += " " + StateName(States[First]);
      First = Last + 1;
    }
    return KernelError(KernelError::Kind::Barrier, Message, Message, Block,
                       Dim3{0, 0, 0});
  });
}

namespace {

// The lanes of a warp (bits) whose state is `State`.
uint32_t lanesAt(const int32_t *States, uint32_t Lanes, int32_t State) {
  uint32_t Bits = 0;
  for (uint32_t Lane = 0; Lane < Lanes; ++Lane)
    Bits |= uint32_t(States[Lane] == State) << Lane;
  return Bits;
}

// Debug mode's syncwarp (TIDAL_SYNC_WARP_CHECKED): the lowest such point
// where lanes wait whose masks name a lane that finished, with those
// lanes (Waiting) and the finished ones named (Exited); -1 if none.
int32_t findSyncwarpPastExitedLanes(const int32_t *States, uint32_t Lanes,
                                    const uint32_t *Masks, const uint8_t *Kinds,
                                    uint32_t &Waiting, uint32_t &Exited) {
  const uint32_t Finished = lanesAt(States, Lanes, TIDAL_THREAD_FINISHED);
  const uint32_t Existing = Lanes >= 32 ? ~0u : (1u << Lanes) - 1;
  int32_t Found = -1;
  for (uint32_t Lane = 0; Lane < Lanes; ++Lane) {
    const int32_t Point = States[Lane];
    if (Point < 1 || Kinds[Point] != TIDAL_SYNC_WARP_CHECKED ||
        !(Masks[Lane] & Existing & Finished) || (Found >= 0 && Point >= Found))
      continue;
    Found = Point;
  }
  if (Found < 0)
    return -1;
  Waiting = lanesAt(States, Lanes, Found);
  Exited = 0;
  for (uint32_t Bits = Waiting; Bits; Bits &= Bits - 1)
    Exited |= Masks[__builtin_ctz(Bits)] & Existing & Finished;
  return Found;
}

// "thread (1, 0, 0)" or "threads (0, 0, 0)..(7, 0, 0)" for each run of
// consecutive lanes in Bits (of the warp whose first thread is WarpBase).
std::string describeLanes(uint32_t Bits, uint32_t WarpBase, const TidalBlockContext *Context) {
  const uint32_t DimX = Context->block_dim[0], DimY = Context->block_dim[1];
  auto ThreadAt = [&](uint32_t Lane) {
    const uint32_t Linear = WarpBase + Lane;
    return describeDims({Linear % DimX, Linear / DimX % DimY, Linear / DimX / DimY});
  };
  std::string Text;
  for (uint32_t Lane = 0; Lane < 32;) {
    if (!(Bits >> Lane & 1)) {
      ++Lane;
      continue;
    }
    uint32_t Last = Lane;
    while (Last + 1 < 32 && (Bits >> (Last + 1) & 1))
      ++Last;
    if (!Text.empty())
      Text += ", ";
    Text += Lane == Last ? "thread " + ThreadAt(Lane)
                         : "threads " + ThreadAt(Lane) + ".." + ThreadAt(Last);
    Lane = Last + 1;
  }
  return Text;
}

} // namespace

extern "C" void __tidal_cpu_warp_exit_error(TidalBlockContext *Context, const char *Kernel,
                                            const int32_t *States, uint32_t Lanes,
                                            uint32_t WarpBase, const uint32_t *Masks,
                                            const uint8_t *Kinds, const char *const *Names,
                                            uint32_t NameCount) {
  recordKernelFailure(Context, [&] {
    const Dim3 Block = blockIndexOf(Context);
    uint32_t Waiting = 0, Exited = 0;
    const int32_t Point =
        findSyncwarpPastExitedLanes(States, Lanes, Masks, Kinds, Waiting, Exited);
    char Mask[16];
    std::snprintf(Mask, sizeof Mask, "0x%08x",
                  Waiting ? Masks[__builtin_ctz(Waiting)] : 0u);
    std::string Message =
        describeLanes(Waiting, WarpBase, Context) + " of block " + describeDims(Block) +
        " of kernel '" + (Kernel ? Kernel : "?") + "' wait at " +
        (Point >= 0 && uint32_t(Point) < NameCount ? Names[Point] : "syncwarp") +
        " with mask " + Mask + ", which names " + describeLanes(Exited, WarpBase, Context) +
        ", finished (debug mode: every thread a syncwarp mask names must reach it; "
        "without debug=True finished threads do not hold syncwarp up)";
    return KernelError(KernelError::Kind::Barrier, Message, Message, Block,
                       Dim3{0, 0, 0});
  });
}

extern "C" int32_t __tidal_cpu_warp_step(int32_t *States, uint32_t Lanes,
                                         const uint32_t *Masks,
                                         const uint64_t *Written, uint64_t *Read,
                                         const uint8_t *Kinds) {
  // One pass: failed lanes, finished lanes, lanes at warp points.
  uint32_t Finished = 0, Waiting = 0;
  bool Checked = false;
  for (uint32_t Lane = 0; Lane < Lanes; ++Lane) {
    const int32_t State = States[Lane];
    if (State == TIDAL_THREAD_FAILED)
      return TIDAL_WARP_STEP_FAILED;
    Finished |= uint32_t(State == TIDAL_THREAD_FINISHED) << Lane;
    Waiting |= uint32_t(State >= 1 && Kinds[State] != TIDAL_SYNC_BLOCK) << Lane;
    Checked |= State >= 1 && Kinds[State] == TIDAL_SYNC_WARP_CHECKED;
  }
  if (!Waiting)
    return 0;
  uint32_t Ignored;
  if (Checked && Finished &&
      findSyncwarpPastExitedLanes(States, Lanes, Masks, Kinds, Ignored, Ignored) >= 0)
    return TIDAL_WARP_STEP_EXITED;
  const uint32_t Existing = Lanes >= 32 ? ~0u : (1u << Lanes) - 1;
  // Of the groups that can complete, the one at the lowest sync point (the
  // lowering numbers them in reverse post-order): lanes behind catch up first,
  // so that lanes split by a branch meet again after it (activemask is then
  // the whole warp there, as on a GPU that reconverged).
  uint32_t Chosen = 0;
  int32_t ChosenPoint = -1;
  for (uint32_t Left = Waiting; Left;) {
    const int32_t Point = States[__builtin_ctz(Left)];
    uint32_t Group = 0, Needed = 0;
    for (uint32_t Bits = Left; Bits; Bits &= Bits - 1) {
      const uint32_t Lane = __builtin_ctz(Bits);
      if (States[Lane] == Point) {
        Group |= 1u << Lane;
        Needed |= Masks[Lane];
      }
    }
    Left &= ~Group;
    // A collective waits for every lane of its mask that exists and has
    // not finished (lanes past the block's last thread, or finished, do not
    // hold up the others: their bits read as 0).
    if ((Kinds[Point] == TIDAL_SYNC_WARP || Kinds[Point] == TIDAL_SYNC_WARP_CHECKED) &&
        (Needed & Existing & ~Finished & ~Group))
      continue;
    if (ChosenPoint < 0 || Point < ChosenPoint) {
      ChosenPoint = Point;
      Chosen = Group;
    }
  }
  if (ChosenPoint < 0)
    return 0;
  const bool Mask = Kinds[ChosenPoint] == TIDAL_SYNC_ACTIVEMASK;
  for (uint32_t Lane = 0; Lane < Lanes; ++Lane) {
    const bool In = Chosen >> Lane & 1;
    Read[Lane] = !In ? 0 : Mask ? uint64_t(Chosen) : Written[Lane];
    if (In)
      States[Lane] = ChosenPoint + TIDAL_SYNC_RELEASED;
  }
  return ChosenPoint + TIDAL_SYNC_RELEASED;
}

extern "C" void __tidal_cpu_print(const char *Format, ...) {
  // A fault or Ctrl-C while it allocates or holds the lock must not jump
  // out of here (declared first: see RuntimeCallScope).
  FaultRecovery *Recovery = currentRecovery();
  std::optional<RuntimeCallScope> InRuntime;
  if (Recovery && Recovery->Armed)
    InRuntime.emplace(*Recovery);
  static std::mutex PrintMutex;
  char Small[512];
  va_list Arguments;
  va_start(Arguments, Format);
  va_list Again;
  va_copy(Again, Arguments);
  const int Length = std::vsnprintf(Small, sizeof Small, Format, Arguments);
  va_end(Arguments);
  std::string Large;
  const char *Text = Small;
  if (Length >= int(sizeof Small)) {
    Large.resize(size_t(Length) + 1);
    std::vsnprintf(Large.data(), Large.size(), Format, Again);
    Text = Large.data();
  }
  va_end(Again);
  if (Length < 0)
    return;
  std::lock_guard<std::mutex> Lock(PrintMutex);
  std::fwrite(Text, 1, size_t(Length), stdout);
  std::fflush(stdout);
}
