// The cpu target: host-lowered kernels JIT-compiled with ORC and launched
// over the grid on a pool of worker threads (blocks in parallel, a block's
// threads run by the block function that tidal-lower-host generated).
#ifndef TIDAL_RUNTIME_CPUTARGET_H
#define TIDAL_RUNTIME_CPUTARGET_H

#include "tidal/HostABI.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace tidal::runtime {

// Raised for every runtime failure; the binding turns it into a Python error.
class RuntimeError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

using Dim3 = std::array<uint32_t, 3>;

// A launch configuration the device cannot run (threads per block, block or
// grid dimensions, dynamic shared memory); thrown before anything is launched.
// The binding turns it into ValueError.
class LaunchConfigError : public RuntimeError {
public:
  using RuntimeError::RuntimeError;
};

// The check of a launch's dynamic shared memory that both targets make, with
// one message: DynamicBytes, with the kernel's StaticBytes, must fit the
// device's PerBlockOptin bytes of shared memory per block. Throws
// LaunchConfigError naming Kernel, Device ("device 0 (...)", "the cpu
// target"), the bytes asked and the limit.
void checkDynamicSharedMemory(const std::string &Kernel, const std::string &Device,
                              uint64_t StaticBytes, uint64_t DynamicBytes,
                              uint64_t PerBlockOptin);

// A failure inside a kernel, thrown by launchOnCpu once the launch has
// stopped (the first failure of the launch; the blocks not yet started are
// abandoned). The binding turns Bounds into IndexError, Assert into
// AssertionError, Barrier into RuntimeError. what() is the whole message:
//   Bounds:  "index 12 is out of bounds for axis 0 with size 10 in <where>,
//             thread (12, 0, 0) of block (0, 0, 0)"  (<where> is the
//             tidal.bounds.error string, e.g. "kernel 'k' at f.py:7, array 'x'")
//   Assert:  "<message> (thread (1, 0, 0) of block (2, 0, 0))"
//   Barrier: "threads of block (0, 0, 0) of kernel 'k' reached different
//             barriers: threads (0, 0, 0)..(15, 0, 0) at syncthreads at
//             f.py:9:5; threads (16, 0, 0)..(31, 0, 0) finished"
//   Fault:   "kernel 'k' faulted: illegal memory access (SIGSEGV, address not
//             mapped) at address 0x10, in block (3, 0, 0) (the thread is not
//             known). The process continues; ..." (a wild access, a null
//             dereference, a stack overflow, an integer division by zero)
//   Interrupted: "launch of kernel 'k' interrupted (SIGINT); ..." (Ctrl-C
//             during the launch; the binding raises KeyboardInterrupt)
// detail() is the message without the thread/block suffix (Bounds, Assert:
// the part before ", thread"/" (thread"; Fault: the part before ", in
// block"; Barrier, Interrupted: the whole message).
class KernelError : public RuntimeError {
public:
  enum class Kind { Bounds, Assert, Barrier, Fault, Interrupted };
  KernelError(Kind K, const std::string &Message, std::string Detail,
              Dim3 Block, Dim3 Thread)
      : RuntimeError(Message), ErrorKind(K), DetailText(std::move(Detail)),
        BlockIndex(Block), ThreadIndex(Thread) {}
  Kind kind() const { return ErrorKind; }
  const std::string &detail() const { return DetailText; }
  // The failing thread (Bounds, Assert; for Barrier and Fault: the block
  // only, the thread is (0, 0, 0)).
  Dim3 block() const { return BlockIndex; }
  Dim3 thread() const { return ThreadIndex; }

private:
  Kind ErrorKind;
  std::string DetailText;
  Dim3 BlockIndex, ThreadIndex;
};

// The errors of a failed check in a kernel, worded alike on both targets:
// the cpu runtime's hooks make them as the kernel fails, the binding after a
// cuda launch from the module's exception slot (tidal/Contract.h).
// tidal.bounds.error: an index out of range (Where names the kernel, the
// file:line and the array).
KernelError boundsError(const char *Where, int64_t Index, int64_t Extent, int32_t Axis,
                        Dim3 Block, Dim3 Thread);
// tidal.assert.fail: a failed assert or a raise (whose message carries the
// exception, pyfrontend/KernelExceptions.cpp).
KernelError assertFailure(const char *Message, Dim3 Block, Dim3 Thread);

// A TargetMachine for this host, with the same settings the JIT uses, so
// that the optimisation pipeline and the JIT agree (data layout, CPU, features).
std::unique_ptr<llvm::TargetMachine> createHostTargetMachine();

// "<triple> <cpu> <features>" of this host, as the JIT compiles for it: the
// part of a disk cache key that says which machine code runs here.
std::string hostDescription();

// A condition under which every thread of a block of a kernel passes some
// of its checks (the lowering's !tidal.block.conditions): the launch's
// ntid[Dimension] <= Extent, or, with a Parameter, (ctaid[Dimension] + 1) *
// ntid[Dimension] <= that (flattened) i64 parameter. Such a kernel has a fitted block function,
// which CpuModule::addFitted compiles (docs/cpu-target.md, "Blocks that
// pass their checks").
struct CpuBlockCondition {
  std::string BlockName; // TIDAL_BLOCK_PREFIX<kernel>
  uint32_t Dimension = 0;
  uint64_t Extent = 0;
  int32_t Parameter = -1; // -1: a constant extent; else params[Parameter] is the extent
};

// Whether a launch of blocks of Block threads meets every condition of
// Conditions (all of one kernel's), as its first block: the launches for
// which the fitted block function is worth having. Params as launchOnCpu's.
bool blockConditionsHold(const std::vector<CpuBlockCondition> &Conditions, Dim3 Block,
                         void **Params);

// A host-lowered module compiled to an object file for this host, with what
// loading it needs to know (the disk cache stores these; docs/cache.md).
struct CpuObject {
  std::string Object;                  // ELF relocatable object
  std::vector<std::string> BlockNames; // TIDAL_BLOCK_PREFIX<kernel> symbols
  std::vector<std::string> AloneNames; // block functions that run alone
  // Of those, the ones whose atomics may be privatised, one line each
  // (runtime/CpuPrivateAtomics.h).
  std::vector<std::string> PrivateAtomics;
  bool Watched = false;                // debug mode: launches are watched
  std::string DataLayout;              // the module's (the host's); empty: unknown
  std::vector<CpuBlockCondition> Conditions; // of every kernel, in the module's order
};

// Owns one compiled module: a JITDylib of the process-wide LLJIT, released
// when the CpuModule is destroyed. Symbols stay valid while it lives.
class CpuModule {
public:
  // Codegen only: an optimised, host-lowered module (as compile() takes it)
  // to an object file. Throws RuntimeError on failure.
  static CpuObject emitObject(std::unique_ptr<llvm::Module> M,
                              std::unique_ptr<llvm::LLVMContext> Context);
  // Links an object of emitObject() (from this process or, through the disk
  // cache, from an earlier one on the same host) into the JIT. Throws
  // RuntimeError when it does not load or lacks a block function.
  static std::unique_ptr<CpuModule> load(const CpuObject &Object,
                                         const std::string &Name);

  // Takes an optimised, host-lowered module (its data layout and triple set
  // from createHostTargetMachine()). Throws RuntimeError on failure.
  static std::unique_ptr<CpuModule>
  compile(std::unique_ptr<llvm::Module> M,
          std::unique_ptr<llvm::LLVMContext> Context);
  ~CpuModule();

  // The block function TIDAL_BLOCK_PREFIX + KernelName. Throws RuntimeError
  // naming the symbol when it is missing.
  TidalBlockFunction blockFunction(const std::string &KernelName) const;
  // The static shared bytes of a block of KernelName (0 when the module
  // does not say: modules written by hand).
  uint64_t staticSharedBytes(const std::string &KernelName) const;
  // KernelName's block conditions (none: it has no fitted block function).
  std::vector<CpuBlockCondition> blockConditions(const std::string &KernelName) const;
  // Compiles M, the kernels' module lowered again with the module flag
  // tidal.host.fitted (its data layout and triple as compile()'s), into a
  // JITDylib of its own that links against this module's, and returns
  // KernelName's fitted block function (TIDAL_FITTED_BLOCK_PREFIX), known to
  // the pool as the kernel's block function is (name, watchdog, alone).
  // A kernel may have several (one per block shape, tidal.host.fitted.shape).
  // Released with this module. Not thread-safe against itself for one
  // module: the caller builds each kernel's one at a time. Throws
  // RuntimeError.
  TidalBlockFunction addFitted(std::unique_ptr<llvm::Module> M,
                               std::unique_ptr<llvm::LLVMContext> Context,
                               const std::string &KernelName);

  struct Impl; // the JITDylib and its block functions (CpuTarget.cpp)

private:
  explicit CpuModule(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> I;
};

// How many CpuModules live now (their code is in the JIT): a debug
// counter, which tests read to see that dropped kernels free their code.
uint64_t liveCpuModuleCount();
// How many fitted block functions (CpuModule::addFitted) live now.
uint64_t liveFittedBlockFunctionCount();
// How many of them have a coarsened block function beside them, and how
// many blocks those ran since the process started (docs/cpu-target.md).
uint64_t liveCoarseBlockFunctionCount();
uint64_t cpuCoarsenedBlockCount();
// How many launches ran with private copies of their atomics' arrays
// (docs/cpu-target.md, "Privatised atomics") since the process started.
uint64_t privatisedLaunchCount();

// Runs `Fn` for every block of `Grid`, blocks spread over the worker pool
// (TIDAL_CPU_THREADS workers, default one per core; 1 runs blocks in order
// on the calling thread). Returns when every block has finished. Throws
// KernelError when a thread of the launch failed (bounds check, assert,
// divergent barrier, a fault) or the launch was interrupted (SIGINT),
// RuntimeError for an invalid launch. Later launches run normally.
void launchOnCpu(TidalBlockFunction Fn, Dim3 Grid, Dim3 Block,
                 void **Params, size_t DynamicSharedBytes);

// A cooperative launch (a kernel that uses cuda.cg.this_grid()): every block
// at once, each on its own host thread, so that grid.sync() completes
// (docs/cpu-target.md, "Grid barriers"). Throws as launchOnCpu, and
// CudaDriverError (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, as the driver's
// cuLaunchCooperativeKernel) for more blocks than cpuMaxCooperativeBlocks.
void launchCooperativeOnCpu(TidalBlockFunction Fn, Dim3 Grid, Dim3 Block, void **Params,
                            size_t DynamicSharedBytes);

// The most blocks of ThreadsPerBlock threads a cooperative launch may have
// on the cpu target: 65536 threads in all, at most 1024 blocks, at least 1.
uint64_t cpuMaxCooperativeBlocks(uint64_t ThreadsPerBlock);

// Number of threads that run blocks: the launching thread and
// cpuWorkerCount() - 1 pool threads (TIDAL_CPU_THREADS, read once).
unsigned cpuWorkerCount();

} // namespace tidal::runtime

#endif
