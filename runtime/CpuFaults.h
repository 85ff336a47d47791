// Kernel faults and Ctrl-C on the cpu target (docs/cpu-target.md, "Faults
// and interrupts"): signal handlers that turn a fault inside a block
// function (SIGSEGV, SIGBUS, SIGFPE, SIGILL, a stack overflow) into a
// siglongjmp back to the pool thread that ran it, and a SIGINT during a
// launch into the launch's interruption. Private to the runtime.
#ifndef TIDAL_RUNTIME_CPUFAULTS_H
#define TIDAL_RUNTIME_CPUFAULTS_H

#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <pthread.h>

namespace tidal::runtime {

// One per pool participant; what the signal handler reads and writes. The
// fields the handler touches are volatile sig_atomic_t or lock-free atomics.
struct FaultRecovery {
  sigjmp_buf Jump;                          // set by the participant's runner
  volatile sig_atomic_t Armed = 0;          // a block function may be running
  volatile sig_atomic_t InRuntimeCall = 0;  // in an entry point that holds a lock
  volatile sig_atomic_t KickPending = 0;    // an interrupt sent to this thread
  volatile sig_atomic_t InterruptDeferred = 0; // arrived in a runtime call
  volatile sig_atomic_t Signal = 0;         // what stopped the block
  volatile sig_atomic_t Code = 0;           // its si_code
  void *volatile Address = nullptr;         // its si_addr
  pthread_t Thread{};                       // who runs the participant now
};

// What SIGINT interrupts: a pool's launch in progress. The handler sets
// Interrupted and sends SIGINT to every armed participant of the pool.
struct InterruptTarget {
  std::atomic<bool> LaunchInProgress{false};
  std::atomic<bool> Interrupted{false};
  FaultRecovery *const *Recoveries = nullptr;
  unsigned RecoveryCount = 0;
};

// Installs the handlers (once per process; chained to those they replace).
void installFaultHandlers();

// SIGINT reaches the launches of a registered target; false when the table
// (64 pools) is full, and the target is then not interruptible.
bool registerInterruptTarget(InterruptTarget *Target);
void unregisterInterruptTarget(InterruptTarget *Target);

// Gives the calling thread an alternate signal stack, so that a stack
// overflow can be handled, unless it has one already. Cheap after the first
// call on a thread.
void ensureAlternateSignalStack();

// The calling thread's participant, read by the handler. Set it (outside a
// signal handler) before arming Recovery.
void setCurrentRecovery(FaultRecovery *Recovery);
FaultRecovery *currentRecovery();

// After a siglongjmp out of the handler: the signal that was being handled
// is still blocked in this thread; unblock it.
void unblockSignal(int Signal);

// "illegal memory access (SIGSEGV, address not mapped)": for the report.
const char *describeFaultSignal(int Signal, int Code);

// True when Address lies in or just below the calling thread's stack (a
// stack overflow); StackBytes receives the stack's size.
bool isStackOverflow(const void *Address, size_t &StackBytes);

// The jump out of a block for an interrupt that arrived in a runtime call.
void leaveForDeferredInterrupt(FaultRecovery &Recovery);

// Marks the calling participant as inside a runtime entry point that holds a
// lock, so that a fault or an interrupt there does not jump out of it.
class RuntimeCallScope {
public:
  explicit RuntimeCallScope(FaultRecovery &Recovery) : Recovery(Recovery) {
    Recovery.InRuntimeCall = 1;
  }
  // Leaves the block here if an interrupt arrived during the call (declare
  // the scope first in the entry point: nothing of it is left to destroy).
  ~RuntimeCallScope() {
    Recovery.InRuntimeCall = 0;
    if (Recovery.InterruptDeferred)
      leaveForDeferredInterrupt(Recovery);
  }
  RuntimeCallScope(const RuntimeCallScope &) = delete;
  RuntimeCallScope &operator=(const RuntimeCallScope &) = delete;

private:
  FaultRecovery &Recovery;
};

} // namespace tidal::runtime

#endif
