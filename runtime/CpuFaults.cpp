// Signal handling for the cpu target's pool (CpuFaults.h). The handlers do
// only async-signal-safe work: they read and write volatile sig_atomic_t
// fields and lock-free atomics, call sigaction, pthread_kill, raise and
// siglongjmp, and the handlers they replaced.
#include "CpuFaults.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tidal::runtime {
namespace {

constexpr int FaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
constexpr unsigned FaultSignalCount = sizeof(FaultSignals) / sizeof(FaultSignals[0]);
struct sigaction PreviousFaultActions[FaultSignalCount];
struct sigaction PreviousInterruptAction;

constexpr unsigned MaxInterruptTargets = 64;
std::atomic<InterruptTarget *> InterruptTargets[MaxInterruptTargets];

// Initial-exec: reading it in a handler never allocates (a global-dynamic
// thread_local of a dlopen'd library may, on first use in a thread).
__attribute__((tls_model("initial-exec"))) thread_local FaultRecovery *CurrentRecovery =
    nullptr;

unsigned faultSignalIndex(int Signal) {
  for (unsigned I = 0; I < FaultSignalCount; ++I)
    if (FaultSignals[I] == Signal)
      return I;
  return 0;
}

// Hands the signal to the disposition we replaced. A default (or ignored)
// fault gets the default action: the handler is reset and the signal
// raised again, delivered when this handler returns.
void chainTo(const struct sigaction &Previous, int Signal, siginfo_t *Info, void *Context,
             bool IsFault) {
  if (Previous.sa_flags & SA_SIGINFO) {
    if (Previous.sa_sigaction)
      Previous.sa_sigaction(Signal, Info, Context);
    return;
  }
  if (Previous.sa_handler == SIG_IGN && !IsFault)
    return;
  if (Previous.sa_handler == SIG_DFL || Previous.sa_handler == SIG_IGN) {
    struct sigaction Default;
    std::memset(&Default, 0, sizeof Default);
    Default.sa_handler = SIG_DFL;
    sigemptyset(&Default.sa_mask);
    sigaction(Signal, &Default, nullptr);
    raise(Signal);
    return;
  }
  Previous.sa_handler(Signal);
}

[[noreturn]] void jumpOut(FaultRecovery &Recovery, int Signal, int Code, void *Address) {
  Recovery.Armed = 0;
  Recovery.Signal = Signal;
  Recovery.Code = Code;
  Recovery.Address = Address;
  siglongjmp(Recovery.Jump, 1);
}

void onFault(int Signal, siginfo_t *Info, void *Context) {
  FaultRecovery *Recovery = CurrentRecovery;
  if (Recovery && Recovery->Armed && !Recovery->InRuntimeCall)
    jumpOut(*Recovery, Signal, Info->si_code, Info->si_addr);
  // Not in a block function (or inside the runtime, holding a lock): a
  // crash that is not the kernel's, for the handler that was there before.
  chainTo(PreviousFaultActions[faultSignalIndex(Signal)], Signal, Info, Context,
          /*IsFault=*/true);
}

void onInterrupt(int Signal, siginfo_t *Info, void *Context) {
  const int SavedErrno = errno;
  FaultRecovery *Self = CurrentRecovery;
  // An interrupt that another participant's handler sent to this thread.
  if (Self && Self->KickPending) {
    Self->KickPending = 0;
    if (Self->Armed && !Self->InRuntimeCall)
      jumpOut(*Self, Signal, Info->si_code, nullptr);
    if (Self->Armed)
      Self->InterruptDeferred = 1;
    errno = SavedErrno;
    return;
  }
  // Python's handler (it raises KeyboardInterrupt in the main thread later),
  // or whatever was there before.
  const struct sigaction &Previous = PreviousInterruptAction;
  if (!(Previous.sa_flags & SA_SIGINFO) && Previous.sa_handler == SIG_IGN)
    return;
  chainTo(Previous, Signal, Info, Context, /*IsFault=*/false);
  // Every launch in progress stops: its participants leave the block they
  // run (sent SIGINT) and take no further block.
  for (std::atomic<InterruptTarget *> &Slot : InterruptTargets) {
    InterruptTarget *Target = Slot.load(std::memory_order_acquire);
    if (!Target || !Target->LaunchInProgress.load(std::memory_order_acquire))
      continue;
    Target->Interrupted.store(true, std::memory_order_release);
    for (unsigned I = 0; I < Target->RecoveryCount; ++I) {
      FaultRecovery *Other = Target->Recoveries[I];
      if (Other == Self || !Other->Armed)
        continue;
      Other->KickPending = 1;
      pthread_kill(Other->Thread, SIGINT);
    }
  }
  errno = SavedErrno;
  if (Self && Self->Armed && !Self->InRuntimeCall)
    jumpOut(*Self, Signal, Info->si_code, nullptr);
  if (Self && Self->Armed)
    Self->InterruptDeferred = 1;
}

void install(int Signal, void (*Handler)(int, siginfo_t *, void *), struct sigaction &Previous) {
  struct sigaction Action;
  std::memset(&Action, 0, sizeof Action);
  Action.sa_sigaction = Handler;
  Action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&Action.sa_mask);
  sigaction(Signal, &Action, &Previous);
}

struct AlternateStack {
  void *Memory = nullptr;
  ~AlternateStack() {
    if (!Memory)
      return;
    stack_t Disable;
    std::memset(&Disable, 0, sizeof Disable);
    Disable.ss_flags = SS_DISABLE;
    sigaltstack(&Disable, nullptr);
    std::free(Memory);
  }
};

} // namespace

void leaveForDeferredInterrupt(FaultRecovery &Recovery) {
  Recovery.InterruptDeferred = 0;
  if (!Recovery.Armed)
    return;
  Recovery.Armed = 0;
  Recovery.Signal = SIGINT;
  Recovery.Code = 0;
  Recovery.Address = nullptr;
  siglongjmp(Recovery.Jump, 2); // SIGINT is not blocked here: unblocking it is harmless
}

void installFaultHandlers() {
  static const bool Installed = [] {
    for (unsigned I = 0; I < FaultSignalCount; ++I)
      install(FaultSignals[I], onFault, PreviousFaultActions[I]);
    install(SIGINT, onInterrupt, PreviousInterruptAction);
    return true;
  }();
  (void)Installed;
}

bool registerInterruptTarget(InterruptTarget *Target) {
  for (std::atomic<InterruptTarget *> &Slot : InterruptTargets) {
    InterruptTarget *Empty = nullptr;
    if (Slot.compare_exchange_strong(Empty, Target))
      return true;
  }
  return false;
}

void unregisterInterruptTarget(InterruptTarget *Target) {
  for (std::atomic<InterruptTarget *> &Slot : InterruptTargets) {
    InterruptTarget *Expected = Target;
    Slot.compare_exchange_strong(Expected, nullptr);
  }
}

void ensureAlternateSignalStack() {
  // Read at every launch: initial-exec, so that it is one load and not a
  // call of __tls_get_addr (the stack itself is made once per thread).
  __attribute__((tls_model("initial-exec"))) static thread_local bool Ready = false;
  static thread_local AlternateStack Owned;
  if (Ready)
    return;
  Ready = true;
  const size_t Bytes = 64 * 1024;
  stack_t Current;
  if (sigaltstack(nullptr, &Current) == 0 && !(Current.ss_flags & SS_DISABLE) &&
      Current.ss_size >= 8 * 1024)
    return; // the thread's own (Python's faulthandler sets one up, say)
  Owned.Memory = std::malloc(Bytes);
  if (!Owned.Memory)
    return;
  stack_t Stack;
  std::memset(&Stack, 0, sizeof Stack);
  Stack.ss_sp = Owned.Memory;
  Stack.ss_size = Bytes;
  if (sigaltstack(&Stack, nullptr) != 0) {
    std::free(Owned.Memory);
    Owned.Memory = nullptr;
  }
}

void setCurrentRecovery(FaultRecovery *Recovery) { CurrentRecovery = Recovery; }
FaultRecovery *currentRecovery() { return CurrentRecovery; }

void unblockSignal(int Signal) {
  sigset_t Set;
  sigemptyset(&Set);
  sigaddset(&Set, Signal);
  pthread_sigmask(SIG_UNBLOCK, &Set, nullptr);
}

const char *describeFaultSignal(int Signal, int Code) {
  switch (Signal) {
  case SIGSEGV:
    return Code == SEGV_ACCERR ? "illegal memory access (SIGSEGV, no permission at the address)"
                               : "illegal memory access (SIGSEGV, address not mapped)";
  case SIGBUS:
    return "illegal memory access (SIGBUS)";
  case SIGFPE:
    return Code == FPE_INTDIV   ? "integer division by zero (SIGFPE)"
           : Code == FPE_INTOVF ? "integer overflow (SIGFPE)"
                                : "arithmetic fault (SIGFPE)";
  case SIGILL:
    return "illegal instruction or trap (SIGILL)";
  default:
    return "fault";
  }
}

bool isStackOverflow(const void *Address, size_t &StackBytes) {
  pthread_attr_t Attributes;
  if (pthread_getattr_np(pthread_self(), &Attributes) != 0)
    return false;
  void *Low = nullptr;
  size_t Size = 0;
  const bool Known = pthread_attr_getstack(&Attributes, &Low, &Size) == 0;
  pthread_attr_destroy(&Attributes);
  if (!Known)
    return false;
  StackBytes = Size;
  // The guard area below the stack (and a page or so above its low end,
  // where the main thread's stack stops growing).
  const uintptr_t Bottom = reinterpret_cast<uintptr_t>(Low);
  const uintptr_t At = reinterpret_cast<uintptr_t>(Address);
  const uintptr_t Margin = 256 * 1024;
  return At + Margin >= Bottom && At < Bottom + Margin;
}

} // namespace tidal::runtime
