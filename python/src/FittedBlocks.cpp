// The cpu target's fitted block functions (docs/cpu-speed.md, "Blocks that
// pass their checks"): a kernel whose lowering recorded block conditions
// gets, at its first launch that meets them, its marker IR lowered again
// with the module flag tidal.host.fitted and JIT-compiled beside its block
// function; that launch and the later ones that meet the conditions run it.
// compile() builds only the block function, so a kernel that is compiled
// and never launched (or never with a fitting block) pays nothing for it.
#include "FittedBlocks.h"

#include "Compiler.h"
#include "Errors.h"

#include "tidal/Contract.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace tidal::binding {

namespace {

// Fitted block functions specialised to a block shape, per kernel: a kernel
// launched with more shapes runs the others' blocks with its block function.
constexpr size_t MaxFittedShapes = 4;

// The shape a fitted function for Block is specialised to: Block itself if
// it has more than one row, where the thread loops along x are short and
// their trip counts as constants pay (the 16x16 tiled matmul, one thread:
// 8.5-13.4 -> 7.0-7.7 ms side by side), else {0, 0, 0}, not specialised
// (1-D blocks' loops are long; the 1-D convolution's thread nest ran 8x
// slower with its 256 a constant; docs/cpu-speed.md).
runtime::Dim3 fittedShapeFor(const runtime::Dim3 &Block) {
  if (Block[1] > 1 || Block[2] > 1)
    return Block;
  return {0, 0, 0};
}

// The fitted block function of S for blocks of Shape ({0, 0, 0}: any),
// built now (S.MarkerIR, lowered as compile() lowers it, with the
// dispatcher's passes).
TidalBlockFunction buildFitted(const DispatcherState &D, Specialization &S,
                               const runtime::Dim3 &Shape) {
  auto Context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic Diagnostic;
  std::unique_ptr<llvm::Module> M = llvm::parseAssemblyString(S.MarkerIR, Diagnostic, *Context);
  if (!M)
    throw std::runtime_error("internal error: cannot re-read marker IR: " +
                             Diagnostic.getMessage().str());
  M->setModuleIdentifier(S.KernelName + ".fitted");
  M->addModuleFlag(llvm::Module::Error, HostFittedFlag, 1);
  if (Shape[0]) {
    llvm::Type *I32 = llvm::Type::getInt32Ty(*Context);
    llvm::Metadata *Dims[3];
    for (unsigned D = 0; D < 3; ++D)
      Dims[D] = llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(I32, Shape[D]));
    M->addModuleFlag(llvm::Module::Error, HostFittedShapeFlag, llvm::MDNode::get(*Context, Dims));
  }
  frontend::lowerForHost(*M, &D.Passes);
  return S.Cpu->addFitted(std::move(M), std::move(Context), S.KernelName);
}

} // namespace

uint64_t fittedBlockThreshold() {
  const char *Text = std::getenv("TIDAL_CPU_FITTED_THREADS");
  if (!Text || !*Text)
    return uint64_t(1) << 20;
  char *End = nullptr;
  unsigned long long Value = std::strtoull(Text, &End, 10);
  if (*End || Text[0] == '-')
    throw std::invalid_argument("TIDAL_CPU_FITTED_THREADS must be a number of threads (0 or "
                                "more), not '" + std::string(Text) + "'");
  return Value;
}

TidalBlockFunction cpuBlockFunctionFor(const DispatcherState &D, Specialization &S,
                                       const runtime::Dim3 &Grid, const runtime::Dim3 &Block,
                                       void **Params) {
  if (S.FitConditions.empty() || S.FittedFailed ||
      !runtime::blockConditionsHold(S.FitConditions, Block, Params))
    return S.Block;
  const runtime::Dim3 Shape = fittedShapeFor(Block);
  for (const auto &[Built, Function] : S.Fitted)
    if (Built == Shape)
      return Function;
  if (Shape[0] && std::count_if(S.Fitted.begin(), S.Fitted.end(), [](const auto &Entry) {
                    return Entry.first[0] != 0;
                  }) >= MaxFittedShapes)
    return S.Block;
  uint64_t Threads = uint64_t(Grid[0]) * Grid[1] * Grid[2] * Block[0] * Block[1] * Block[2];
  S.FittingThreads += Threads;
  if (S.FittingThreads < S.FittedAfterThreads)
    return S.Block;
  // Built with the GIL held, as compile() compiles: a launch of this kernel
  // on another thread waits for it; launches already running are not held.
  try {
    S.Fitted.emplace_back(Shape, buildFitted(D, S, Shape));
  } catch (const std::exception &Error) {
    // The block function runs every block correctly: this launch and the
    // later ones use it, and the failure is said once.
    S.FittedFailed = true;
    if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                         "tidal: kernel '%s' runs without its fitted block function on the "
                         "cpu target, whose compile failed: %s",
                         D.Name.c_str(), Error.what()) < 0)
      throw frontend::PythonErrorSet();
    return S.Block;
  }
  return S.Fitted.back().second;
}

} // namespace tidal::binding
