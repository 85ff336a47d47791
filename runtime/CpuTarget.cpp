// The cpu target's compiler half: one process-wide ORC LLJIT, one JITDylib
// per CpuModule. Modules arrive optimised, so the JIT only runs codegen.
#include "tidal/runtime/CpuTarget.h"
#include "CpuCompilerBuiltins.h"
#include "CpuPerfMap.h"
#include "CpuThreadPool.h"
#include "tidal/Contract.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/TaskDispatch.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <vector>

namespace tidal::runtime {

namespace orc = llvm::orc;

namespace {

// The name of the static shared bytes of the kernel whose block function is
// BlockName (HostABI.h).
std::string staticSharedSymbol(const std::string &BlockName) {
  return TIDAL_STATIC_SHARED_PREFIX + BlockName.substr(sizeof(TIDAL_BLOCK_PREFIX) - 1);
}

[[noreturn]] void throwJitError(const std::string &What, llvm::Error E) {
  throw RuntimeError(What + ": " + llvm::toString(std::move(E)));
}

template <typename T>
T takeOrThrow(llvm::Expected<T> Value, const std::string &What) {
  if (!Value)
    throwJitError(What, Value.takeError());
  return std::move(*Value);
}

void initialiseNativeTarget() {
  static const bool Initialised = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)Initialised;
}

// The host as JITTargetMachineBuilder::detectHost reads it (the process's
// triple, the CPU's name and features), read once: each reading is dozens of
// cpuid instructions, which a virtual machine traps (about 100 µs).
struct HostFacts {
  std::string Triple, CPU;
  llvm::SubtargetFeatures Features;
};

const HostFacts &hostFacts() {
  static const HostFacts Facts = [] {
    HostFacts F;
    F.Triple = llvm::sys::getProcessTriple();
    F.CPU = llvm::sys::getHostCPUName().str();
    for (const auto &Feature : llvm::sys::getHostCPUFeatures())
      F.Features.AddFeature(Feature.first(), Feature.second);
    // bfloat16 rounds as the GPU's cvt.rn.bf16.f32 does, subnormals kept:
    // AVX512-BF16's and AVX-NE-CONVERT's vcvtneps2bf16 flushes them to zero.
    F.Features.AddFeature("avx512bf16", false);
    F.Features.AddFeature("avxneconvert", false);
    return F;
  }();
  return Facts;
}

// The one description of the host that both the optimisation pipeline
// (createHostTargetMachine) and the JIT are built from. PIC and the small
// code model are what LLJIT forces for JITLink; setting them here keeps the
// two TargetMachines identical.
orc::JITTargetMachineBuilder hostMachineBuilder() {
  const HostFacts &Facts = hostFacts();
  orc::JITTargetMachineBuilder Builder{llvm::Triple(Facts.Triple)};
  Builder.setCPU(Facts.CPU);
  Builder.addFeatures(Facts.Features.getFeatures());
  Builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  Builder.setRelocationModel(llvm::Reloc::PIC_);
  Builder.setCodeModel(llvm::CodeModel::Small);
  return Builder;
}

// A TargetMachine for the host (the native target registered first).
std::unique_ptr<llvm::TargetMachine> createHostMachine() {
  initialiseNativeTarget();
  return takeOrThrow(hostMachineBuilder().createTargetMachine(),
                     "cannot create a TargetMachine for the host");
}

// The JIT's compiler of IR modules, whose TargetMachine is made at its first
// compile: a process whose kernels all come from the disk cache as object
// files never makes one (nor registers the native target).
class HostIRCompiler : public orc::IRCompileLayer::IRCompiler {
public:
  explicit HostIRCompiler(orc::JITTargetMachineBuilder Builder)
      : IRCompiler(orc::irManglingOptionsFromTargetOptions(Builder.getOptions())) {}

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module &M) override {
    // The JIT compiles one module at a time (HostJit's CompileMutex).
    if (!Compiler) {
      Machine = createHostMachine();
      Compiler = std::make_unique<orc::SimpleCompiler>(*Machine);
    }
    return (*Compiler)(M);
  }

private:
  std::unique_ptr<llvm::TargetMachine> Machine;
  std::unique_ptr<orc::SimpleCompiler> Compiler;
};

// The process-wide JIT. Compiles are serialised: the JIT has one
// SimpleCompiler (one TargetMachine) and materialises in place on the thread
// that looks a symbol up, so holding CompileMutex also makes the session's
// error reports belong to the compile in progress.
class HostJit {
public:
  // DataLayout: the host's data layout where the caller knows it (an object
  // file's entry in the disk cache records it), which spares the JIT's
  // creation a TargetMachine made only to compute it; used by the first call.
  static HostJit &get(const std::string &DataLayout = "") {
    // Never destroyed, like the pool: modules and compiles may outlive
    // static destruction at exit.
    static HostJit *const Instance = new HostJit(DataLayout);
    return *Instance;
  }

  const llvm::DataLayout &dataLayout() const { return Jit->getDataLayout(); }

  // Adds M to a new JITDylib and compiles it, returning the dylib and the
  // addresses of BlockNames.
  // LinksAgainst: a JITDylib whose definitions M's declarations may name
  // (a fitted block function's module, CpuModule::addFitted).
  orc::JITDylib &compile(orc::ThreadSafeModule Module,
                         const std::vector<std::string> &BlockNames,
                         llvm::StringMap<TidalBlockFunction> &Addresses,
                         llvm::StringMap<uint64_t> &StaticShared,
                         orc::JITDylib *LinksAgainst = nullptr) {
    const std::string ModuleName = Module.withModuleDo(
        [](llvm::Module &M) { return M.getModuleIdentifier(); });
    return link(
        ModuleName,
        [&](orc::JITDylib &Dylib) {
          if (LinksAgainst)
            Dylib.addToLinkOrder(*LinksAgainst);
          return Jit->addIRModule(Dylib, std::move(Module));
        },
        BlockNames, Addresses, StaticShared);
  }

  // Adds an object file (of emitObject) to a new JITDylib and links it.
  orc::JITDylib &load(const std::string &Object, const std::string &ModuleName,
                      const std::vector<std::string> &BlockNames,
                      llvm::StringMap<TidalBlockFunction> &Addresses,
                      llvm::StringMap<uint64_t> &StaticShared) {
    return link(
        ModuleName,
        [&](orc::JITDylib &Dylib) {
          return Jit->addObjectFile(
              Dylib, llvm::MemoryBuffer::getMemBufferCopy(Object, ModuleName));
        },
        BlockNames, Addresses, StaticShared);
  }

  // The object file of an optimised module, made by the same TargetMachine
  // settings as the JIT's own compiles (hostMachineBuilder).
  std::string emitObject(llvm::Module &M) {
    std::lock_guard<std::mutex> Lock(CompileMutex);
    if (!ObjectMachine)
      ObjectMachine = createHostMachine();
    llvm::SmallVector<char, 0> Buffer;
    llvm::raw_svector_ostream Stream(Buffer);
    llvm::legacy::PassManager Passes;
    llvm::MCContext *MC = nullptr;
    if (ObjectMachine->addPassesToEmitMC(Passes, MC, Stream))
      throw RuntimeError("the host's TargetMachine cannot emit object files");
    Passes.run(M);
    return std::string(Buffer.begin(), Buffer.end());
  }

private:
  // Makes a JITDylib, adds code to it with Add and links it now.
  orc::JITDylib &link(const std::string &ModuleName,
                      llvm::function_ref<llvm::Error(orc::JITDylib &)> Add,
                      const std::vector<std::string> &BlockNames,
                      llvm::StringMap<TidalBlockFunction> &Addresses,
                      llvm::StringMap<uint64_t> &StaticShared) {
    std::lock_guard<std::mutex> Lock(CompileMutex);
    SessionErrors.clear();
    auto CreatedDylib = Jit->createJITDylib("tidal.module." +
                                            std::to_string(NextDylibNumber++));
    if (!CreatedDylib)
      throwJitError("cannot create a JITDylib for module '" + ModuleName + "'",
                    CreatedDylib.takeError());
    orc::JITDylib &Dylib = *CreatedDylib;
    try {
      if (llvm::Error E = Add(Dylib))
        throwJitError("cannot add module '" + ModuleName + "' to the JIT",
                      std::move(E));

      // Looking the block functions up compiles and links the whole module
      // now, so that unresolved symbols are reported here, not at launch.
      orc::SymbolLookupSet Lookup;
      for (const std::string &Name : BlockNames)
        Lookup.add(Jit->mangleAndIntern(Name));
      // Each kernel's static shared bytes (HostABI.h); absent from modules
      // written by hand. (Not for a fitted module's entries, whose names
      // would map to one symbol, which a lookup set must not hold twice.)
      for (const std::string &Name : BlockNames)
        if (llvm::StringRef(Name).starts_with(TIDAL_BLOCK_PREFIX))
          Lookup.add(Jit->mangleAndIntern(staticSharedSymbol(Name)),
                     orc::SymbolLookupFlags::WeaklyReferencedSymbol);
      auto Symbols = Jit->getExecutionSession().lookup(
          orc::makeJITDylibSearchOrder(
              &Dylib, orc::JITDylibLookupFlags::MatchAllSymbols),
          std::move(Lookup));
      if (!Symbols) {
        // The session's report (e.g. "Symbols not found: [ f ]") is the
        // cause; the lookup's error only says which symbols it could not get.
        std::string Cause = SessionErrors.empty() ? "" : SessionErrors + "; ";
        throw RuntimeError("JIT compilation of module '" + ModuleName +
                           "' failed: " + Cause +
                           llvm::toString(Symbols.takeError()));
      }
      for (const std::string &Name : BlockNames) {
        Addresses[Name] = (*Symbols)[Jit->mangleAndIntern(Name)]
                              .getAddress()
                              .toPtr<TidalBlockFunction>();
        auto Static = Symbols->find(Jit->mangleAndIntern(staticSharedSymbol(Name)));
        if (Static != Symbols->end())
          StaticShared[Name] = *Static->second.getAddress().toPtr<const uint64_t *>();
      }
    } catch (...) {
      removeLocked(Dylib);
      throw;
    }
    return Dylib;
  }

public:
  void remove(orc::JITDylib &Dylib) {
    std::lock_guard<std::mutex> Lock(CompileMutex);
    removeLocked(Dylib);
  }

private:
  explicit HostJit(const std::string &KnownDataLayout) {
    auto ProcessControl = takeOrThrow(
        orc::SelfExecutorProcessControl::Create(
            nullptr, std::make_unique<orc::InPlaceTaskDispatcher>()),
        "cannot create the JIT's process control");
    std::optional<llvm::DataLayout> Layout;
    if (!KnownDataLayout.empty())
      Layout.emplace(KnownDataLayout);
    else
      initialiseNativeTarget(); // LLJIT makes a TargetMachine for the layout
    Jit = takeOrThrow(orc::LLJITBuilder()
                          .setJITTargetMachineBuilder(hostMachineBuilder())
                          .setDataLayout(std::move(Layout))
                          .setCompileFunctionCreator(
                              [](orc::JITTargetMachineBuilder Builder)
                                  -> llvm::Expected<
                                      std::unique_ptr<orc::IRCompileLayer::IRCompiler>> {
                                return std::make_unique<HostIRCompiler>(std::move(Builder));
                              })
                          .setExecutorProcessControl(std::move(ProcessControl))
                          .setSupportConcurrentCompilation(false)
                          // Kernels have no static initialisers to run.
                          .setPlatformSetUp(orc::setUpInactivePlatform)
                          .setProcessSymbolsJITDylibSetup(addProcessSymbols)
                          .create(),
                      "cannot create the ORC JIT");
    if (perfMapRequested())
      addPerfMapPlugin(*Jit);
    // Called during materialisation, under CompileMutex (see class comment).
    Jit->getExecutionSession().setErrorReporter([this](llvm::Error E) {
      if (!SessionErrors.empty())
        SessionErrors += "; ";
      SessionErrors += llvm::toString(std::move(E));
    });
  }

  // libm and everything else the process has loaded, linked after each
  // module's own definitions.
  static llvm::Expected<orc::JITDylibSP> addProcessSymbols(orc::LLJIT &J) {
    auto Generator = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        J.getDataLayout().getGlobalPrefix());
    if (!Generator)
      return Generator.takeError();
    orc::JITDylib &Process =
        J.getExecutionSession().createBareJITDylib("<Process>");
    Process.addGenerator(std::move(*Generator));
    // The runtime's entry points (HostABI.h), by address: a static library
    // inside a Python extension is not visible to dlsym.
    orc::SymbolMap Hooks;
    auto Add = [&](const char *Name, auto *Function) {
      Hooks[J.mangleAndIntern(Name)] = {
          orc::ExecutorAddr::fromPtr(Function),
          llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    };
    Add(CpuSharedHook, &__tidal_cpu_shared);
    Add(CpuFrameHook, &__tidal_cpu_frame);
    Add(CpuBoundsErrorHook, &__tidal_cpu_bounds_error);
    Add(CpuAssertFailHook, &__tidal_cpu_assert_fail);
    Add(CpuBarrierErrorHook, &__tidal_cpu_barrier_error);
    Add(CpuPrintHook, &__tidal_cpu_print);
    Add(CpuWarpStepHook, &__tidal_cpu_warp_step);
    Add(CpuWarpExitErrorHook, &__tidal_cpu_warp_exit_error);
    Add(CpuGridSyncHook, &__tidal_cpu_grid_sync);
    // Compiler helpers (half-precision conversions, ...) that the process
    // does not export.
    for (const CompilerBuiltin &Builtin : compilerBuiltins())
      Hooks[J.mangleAndIntern(Builtin.Name)] = {
          orc::ExecutorAddr::fromPtr(Builtin.Address),
          llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    if (llvm::Error E = Process.define(orc::absoluteSymbols(std::move(Hooks))))
      return std::move(E);
    return &Process;
  }

  void removeLocked(orc::JITDylib &Dylib) {
    if (llvm::Error E = Jit->getExecutionSession().removeJITDylib(Dylib))
      llvm::logAllUnhandledErrors(std::move(E), llvm::errs(),
                                  "tidal: cannot release a JIT module: ");
  }

  std::mutex CompileMutex;
  std::string SessionErrors;
  uint64_t NextDylibNumber = 0;
  std::unique_ptr<orc::LLJIT> Jit;
  std::unique_ptr<llvm::TargetMachine> ObjectMachine; // emitObject's, made on first use
};

} // namespace

std::unique_ptr<llvm::TargetMachine> createHostTargetMachine() { return createHostMachine(); }

namespace {
std::atomic<uint64_t> LiveCpuModules{0};
std::atomic<uint64_t> LiveFittedBlockFunctions{0};
std::atomic<uint64_t> LiveCoarseBlockFunctions{0};
} // namespace

uint64_t liveCpuModuleCount() { return LiveCpuModules.load(std::memory_order_relaxed); }
uint64_t liveFittedBlockFunctionCount() {
  return LiveFittedBlockFunctions.load(std::memory_order_relaxed);
}

uint64_t liveCoarseBlockFunctionCount() {
  return LiveCoarseBlockFunctions.load(std::memory_order_relaxed);
}

bool blockConditionsHold(const std::vector<CpuBlockCondition> &Conditions, Dim3 Block,
                         void **Params) {
  for (const CpuBlockCondition &C : Conditions) {
    // a parameter signed, as the fitted entry tests it (a guard's n < 0)
    int64_t Extent = C.Parameter < 0 ? int64_t(C.Extent)
                                     : *static_cast<const int64_t *>(Params[C.Parameter]);
    if (C.Dimension > 2 || int64_t(Block[C.Dimension]) > Extent)
      return false;
  }
  return !Conditions.empty();
}

struct CpuModule::Impl {
  orc::JITDylib *Dylib = nullptr;
  llvm::StringMap<TidalBlockFunction> BlockFunctions;
  llvm::StringMap<uint64_t> StaticSharedBytes; // by block function name
  std::vector<TidalBlockFunction> RunAlone; // registered with the pool
  // Those of RunAlone whose atomics may be privatised, with their plans.
  std::vector<std::pair<TidalBlockFunction, CpuPrivatePlan>> PrivatePlans;
  bool Watched = false; // debug mode: the pool's watchdog watches its launches
  std::vector<CpuBlockCondition> Conditions;
  // The fitted block functions built so far (addFitted), each in a JITDylib
  // of its own that links against Dylib.
  std::vector<orc::JITDylib *> FittedDylibs;
  // One per block shape that a fitted function was built for (the same
  // symbol, each in its own JITDylib).
  std::vector<TidalBlockFunction> FittedFunctions;
  uint64_t CoarseCount = 0; // of the fitted ones, those with a coarsened one

  ~Impl() {
    for (TidalBlockFunction Fitted : FittedFunctions) {
      forgetBlockFunctionName(Fitted);
      CpuThreadPool::process().setRunsAlone(Fitted, false);
      CpuThreadPool::process().setPrivatised(Fitted, std::nullopt);
      CpuThreadPool::process().setWatched(Fitted, false);
      CpuThreadPool::process().setCoarse(Fitted, nullptr);
    }
    LiveCoarseBlockFunctions.fetch_sub(CoarseCount, std::memory_order_relaxed);
    for (orc::JITDylib *Fitted : FittedDylibs) {
      HostJit::get().remove(*Fitted);
      LiveFittedBlockFunctions.fetch_sub(1, std::memory_order_relaxed);
    }
    for (const auto &Entry : BlockFunctions)
      forgetBlockFunctionName(Entry.second);
    for (TidalBlockFunction Fn : RunAlone) {
      CpuThreadPool::process().setRunsAlone(Fn, false);
      CpuThreadPool::process().setPrivatised(Fn, std::nullopt);
    }
    if (Watched)
      for (const auto &Entry : BlockFunctions)
        CpuThreadPool::process().setWatched(Entry.second, false);
    if (Dylib)
      HostJit::get().remove(*Dylib);
  }
};

CpuModule::CpuModule(std::unique_ptr<Impl> I) : I(std::move(I)) {
  LiveCpuModules.fetch_add(1, std::memory_order_relaxed);
}
CpuModule::~CpuModule() { LiveCpuModules.fetch_sub(1, std::memory_order_relaxed); }

void checkDynamicSharedMemory(const std::string &Kernel, const std::string &Device,
                              uint64_t StaticBytes, uint64_t DynamicBytes,
                              uint64_t PerBlockOptin) {
  uint64_t Most = PerBlockOptin > StaticBytes ? PerBlockOptin - StaticBytes : 0;
  if (DynamicBytes > Most)
    throw LaunchConfigError("cannot launch kernel '" + Kernel + "' on " + Device + ": " +
                            std::to_string(DynamicBytes) +
                            " bytes of dynamic shared memory asked, the device allows at most " +
                            std::to_string(Most) + " (" + std::to_string(PerBlockOptin) +
                            " per block less the kernel's " + std::to_string(StaticBytes) +
                            " static bytes)");
}

std::string hostDescription() {
  // What JITTargetMachineBuilder::detectHost reads, without initialising the
  // native target (milliseconds that a cache hit should not pay).
  const HostFacts &Facts = hostFacts();
  return Facts.Triple + " " + Facts.CPU + " " + Facts.Features.getString();
}

namespace {

// fneg, fabs and copysign only touch the sign bit, NaN payloads included,
// as on the GPU (neg.f16, abs.f16, neg.bf16). LLVM 19's x86 backend without
// AVX512-FP16 promotes them on half (and always on bfloat) to float and
// back, which quiets a signalling NaN. So just before codegen (after InstCombine, which would
// fold them back) they become integer bit operations on half values.
void makeHalfSignOperationsExact(llvm::Function &F) {
  llvm::SmallVector<llvm::Instruction *, 8> Rewritten;
  for (llvm::Instruction &I : llvm::instructions(F)) {
    if (!I.getType()->getScalarType()->isHalfTy() && !I.getType()->getScalarType()->isBFloatTy())
      continue;
    auto *Call = llvm::dyn_cast<llvm::IntrinsicInst>(&I);
    llvm::Intrinsic::ID Id = Call ? Call->getIntrinsicID() : llvm::Intrinsic::not_intrinsic;
    if (I.getOpcode() == llvm::Instruction::FNeg || Id == llvm::Intrinsic::fabs ||
        Id == llvm::Intrinsic::copysign)
      Rewritten.push_back(&I);
  }
  for (llvm::Instruction *I : Rewritten) {
    llvm::IRBuilder<> Builder(I);
    llvm::Type *Bits = Builder.getInt16Ty(); // i16, or <n x i16>
    if (auto *Vector = llvm::dyn_cast<llvm::VectorType>(I->getType()))
      Bits = llvm::VectorType::get(Bits, Vector->getElementCount());
    llvm::Constant *Sign = llvm::ConstantInt::get(Bits, 0x8000);
    llvm::Constant *Magnitude = llvm::ConstantInt::get(Bits, 0x7FFF);
    llvm::Value *X = Builder.CreateBitCast(I->getOperand(0), Bits);
    llvm::Value *Result;
    if (I->getOpcode() == llvm::Instruction::FNeg)
      Result = Builder.CreateXor(X, Sign);
    else if (llvm::cast<llvm::IntrinsicInst>(I)->getIntrinsicID() == llvm::Intrinsic::fabs)
      Result = Builder.CreateAnd(X, Magnitude);
    else
      Result = Builder.CreateOr(
          Builder.CreateAnd(X, Magnitude),
          Builder.CreateAnd(Builder.CreateBitCast(I->getOperand(1), Bits), Sign));
    I->replaceAllUsesWith(Builder.CreateBitCast(Result, I->getType()));
    I->eraseFromParent();
  }
}

// What every module gets before codegen: it verifies, and every large frame
// probes the stack.
void prepareCode(llvm::Module &M) {
  const std::string ModuleName = M.getModuleIdentifier();
  std::string VerifierMessage;
  llvm::raw_string_ostream VerifierStream(VerifierMessage);
  if (llvm::verifyModule(M, &VerifierStream))
    throw RuntimeError("module '" + ModuleName +
                       "' is not valid IR: " + VerifierStream.str());

  // Stack probes in every frame larger than a page, so that a thread whose
  // local arrays overflow the worker's stack faults on its guard page (a
  // reported fault) instead of writing past it into other memory.
  for (llvm::Function &F : M)
    if (!F.isDeclaration() && !F.hasFnAttribute("probe-stack"))
      F.addFnAttr("probe-stack", "inline-asm");
  for (llvm::Function &F : M)
    makeHalfSignOperationsExact(F);
}

// What compile() and emitObject() check and note about a module before
// codegen: prepareCode, and its block functions, those that run alone,
// their block conditions and its debug flag are read.
CpuObject prepareModule(llvm::Module &M) {
  const std::string ModuleName = M.getModuleIdentifier();
  prepareCode(M);

  CpuObject Prepared;
  for (const llvm::Function &F : M)
    if (!F.isDeclaration() && F.hasExternalLinkage() &&
        F.getName().starts_with(TIDAL_BLOCK_PREFIX)) {
      // A body that is only `unreachable`: the optimiser proved that every
      // path through the kernel has undefined behaviour. Its code would be
      // empty, and a launch would run into whatever follows it.
      const llvm::Instruction &First = F.getEntryBlock().front();
      if (llvm::isa<llvm::UnreachableInst>(First))
        throw RuntimeError(
            "kernel '" + F.getName().drop_front(sizeof(TIDAL_BLOCK_PREFIX) - 1).str() +
            "' cannot run: LLVM's optimiser found undefined behaviour on every path "
            "through it and removed its body (a null or undefined pointer used, a "
            "value read before it is defined); debug=True checks more of it");
      Prepared.BlockNames.push_back(F.getName().str());
    }
  if (Prepared.BlockNames.empty())
    throw RuntimeError("module '" + ModuleName +
                       "' defines no block function (" TIDAL_BLOCK_PREFIX
                       "<kernel>)");

  // Kernels the lowering marked to run on one host thread (their global
  // atomics then become plain read-modify-writes; docs/cpu-target.md).
  if (llvm::NamedMDNode *Alone = M.getNamedMetadata(RunAloneMetadataName))
    for (llvm::MDNode *Entry : Alone->operands())
      if (auto *F = llvm::mdconst::dyn_extract_or_null<llvm::Function>(
              Entry->getOperand(0)))
        Prepared.AloneNames.push_back(F->getName().str());
  Prepared.PrivateAtomics = privateAtomicsLines(M);

  // Kernels with a fitted block function, built at a launch (addFitted).
  if (llvm::NamedMDNode *Table = M.getNamedMetadata(BlockConditionsMetadataName))
    for (llvm::MDNode *Entry : Table->operands()) {
      auto *Block = Entry->getNumOperands() == 4
                        ? llvm::dyn_cast<llvm::MDString>(Entry->getOperand(0)) : nullptr;
      auto *Dimension = Block ? llvm::mdconst::dyn_extract<llvm::ConstantInt>(
                                    Entry->getOperand(1)) : nullptr;
      auto *Extent = Block ? llvm::mdconst::dyn_extract<llvm::ConstantInt>(
                                 Entry->getOperand(2)) : nullptr;
      auto *Parameter = Block ? llvm::mdconst::dyn_extract<llvm::ConstantInt>(
                                    Entry->getOperand(3)) : nullptr;
      if (!Dimension || !Extent || !Parameter)
        throw RuntimeError("module '" + ModuleName + "' has a malformed !" +
                           BlockConditionsMetadataName + " entry");
      Prepared.Conditions.push_back({Block->getString().str(),
                                     uint32_t(Dimension->getZExtValue()),
                                     Extent->getZExtValue(),
                                     int32_t(Parameter->getSExtValue())});
    }

  // Debug mode (the frontend's module flag): launches are watched.
  const auto *Debug =
      llvm::mdconst::extract_or_null<llvm::ConstantInt>(M.getModuleFlag("tidal.debug"));
  Prepared.Watched = Debug && !Debug->isZero();
  return Prepared;
}

// Registers the linked block functions with the pool (names for reports,
// watched launches, kernels that run alone).
void registerBlockFunctions(CpuModule::Impl &State, const CpuObject &Prepared) {
  State.Watched = Prepared.Watched;
  for (const auto &Entry : State.BlockFunctions) {
    setBlockFunctionName(Entry.second,
                         Entry.first().drop_front(sizeof(TIDAL_BLOCK_PREFIX) - 1).str());
    if (Prepared.Watched)
      CpuThreadPool::process().setWatched(Entry.second, true);
  }
  for (const std::string &Name : Prepared.AloneNames)
    if (auto Found = State.BlockFunctions.find(Name); Found != State.BlockFunctions.end()) {
      CpuThreadPool::process().setRunsAlone(Found->second, true);
      State.RunAlone.push_back(Found->second);
    }
  for (const std::string &Line : Prepared.PrivateAtomics)
    if (auto Plan = parsePrivateAtomicsLine(Line))
      if (auto Found = State.BlockFunctions.find(Plan->first);
          Found != State.BlockFunctions.end() &&
          std::find(State.RunAlone.begin(), State.RunAlone.end(), Found->second) !=
              State.RunAlone.end()) {
        CpuThreadPool::process().setPrivatised(Found->second, Plan->second);
        State.PrivatePlans.emplace_back(Found->second, Plan->second);
      }
}

} // namespace

std::unique_ptr<CpuModule>
CpuModule::compile(std::unique_ptr<llvm::Module> M,
                   std::unique_ptr<llvm::LLVMContext> Context) {
  if (!M || !Context || &M->getContext() != Context.get())
    throw RuntimeError("CpuModule::compile needs a module and the context "
                       "that owns it");
  CpuObject Prepared = prepareModule(*M);
  auto State = std::make_unique<Impl>();
  State->Dylib = &HostJit::get().compile(
      orc::ThreadSafeModule(std::move(M), std::move(Context)), Prepared.BlockNames,
      State->BlockFunctions, State->StaticSharedBytes);
  State->Conditions = Prepared.Conditions;
  registerBlockFunctions(*State, Prepared);
  return std::unique_ptr<CpuModule>(new CpuModule(std::move(State)));
}

CpuObject CpuModule::emitObject(std::unique_ptr<llvm::Module> M,
                                std::unique_ptr<llvm::LLVMContext> Context) {
  if (!M || !Context || &M->getContext() != Context.get())
    throw RuntimeError("CpuModule::emitObject needs a module and the context "
                       "that owns it");
  CpuObject Out = prepareModule(*M);
  Out.Object = HostJit::get().emitObject(*M);
  Out.DataLayout = M->getDataLayoutStr();
  return Out;
}

std::unique_ptr<CpuModule> CpuModule::load(const CpuObject &Object,
                                           const std::string &Name) {
  if (Object.BlockNames.empty())
    throw RuntimeError("object '" + Name + "' names no block function");
  auto State = std::make_unique<Impl>();
  HostJit &Jit = HostJit::get(Object.DataLayout);
  if (!Object.DataLayout.empty() &&
      Jit.dataLayout().getStringRepresentation() != Object.DataLayout)
    throw RuntimeError("object '" + Name + "' was compiled for the data layout '" +
                       Object.DataLayout + "', and the JIT's is '" +
                       Jit.dataLayout().getStringRepresentation() + "'");
  State->Dylib = &Jit.load(Object.Object, Name, Object.BlockNames, State->BlockFunctions,
                           State->StaticSharedBytes);
  State->Conditions = Object.Conditions;
  registerBlockFunctions(*State, Object);
  return std::unique_ptr<CpuModule>(new CpuModule(std::move(State)));
}

std::vector<CpuBlockCondition>
CpuModule::blockConditions(const std::string &KernelName) const {
  std::vector<CpuBlockCondition> Out;
  for (const CpuBlockCondition &C : I->Conditions)
    if (C.BlockName == TIDAL_BLOCK_PREFIX + KernelName)
      Out.push_back(C);
  return Out;
}

TidalBlockFunction CpuModule::addFitted(std::unique_ptr<llvm::Module> M,
                                        std::unique_ptr<llvm::LLVMContext> Context,
                                        const std::string &KernelName) {
  if (!M || !Context || &M->getContext() != Context.get())
    throw RuntimeError("CpuModule::addFitted needs a module and the context that owns it");
  const std::string Symbol = TIDAL_FITTED_BLOCK_PREFIX + KernelName;
  TidalBlockFunction General = blockFunction(KernelName);
  const llvm::Function *Defined = M->getFunction(Symbol);
  if (!Defined || Defined->isDeclaration())
    throw RuntimeError("the fitted module of kernel '" + KernelName + "' defines no '" +
                       Symbol + "'");
  // The coarsened block function beside it, where the kernel has one.
  const std::string CoarseSymbol = TIDAL_COARSE_BLOCK_PREFIX + KernelName;
  const llvm::Function *CoarseDefined = M->getFunction(CoarseSymbol);
  std::vector<std::string> Symbols{Symbol};
  if (CoarseDefined && !CoarseDefined->isDeclaration())
    Symbols.push_back(CoarseSymbol);
  prepareCode(*M);
  llvm::StringMap<TidalBlockFunction> Addresses;
  llvm::StringMap<uint64_t> Unused;
  orc::JITDylib &Dylib =
      HostJit::get().compile(orc::ThreadSafeModule(std::move(M), std::move(Context)),
                             Symbols, Addresses, Unused, I->Dylib);
  I->FittedDylibs.push_back(&Dylib);
  LiveFittedBlockFunctions.fetch_add(1, std::memory_order_relaxed);
  TidalBlockFunction Fitted = Addresses[Symbol];
  I->FittedFunctions.push_back(Fitted);
  // Known to the pool as the kernel's own block function is.
  setBlockFunctionName(Fitted, KernelName);
  if (I->Watched)
    CpuThreadPool::process().setWatched(Fitted, true);
  if (std::find(I->RunAlone.begin(), I->RunAlone.end(), General) != I->RunAlone.end())
    CpuThreadPool::process().setRunsAlone(Fitted, true);
  if (Symbols.size() > 1) {
    CpuThreadPool::process().setCoarse(
        Fitted, reinterpret_cast<TidalCoarseBlockFunction>(Addresses[CoarseSymbol]));
    LiveCoarseBlockFunctions.fetch_add(1, std::memory_order_relaxed);
    I->CoarseCount += 1;
  }
  for (const auto &[Function, Plan] : I->PrivatePlans)
    if (Function == General)
      CpuThreadPool::process().setPrivatised(Fitted, Plan);
  return Fitted;
}

uint64_t CpuModule::staticSharedBytes(const std::string &KernelName) const {
  auto Found = I->StaticSharedBytes.find(TIDAL_BLOCK_PREFIX + KernelName);
  return Found == I->StaticSharedBytes.end() ? 0 : Found->second;
}

TidalBlockFunction
CpuModule::blockFunction(const std::string &KernelName) const {
  const std::string Symbol = TIDAL_BLOCK_PREFIX + KernelName;
  auto Found = I->BlockFunctions.find(Symbol);
  if (Found == I->BlockFunctions.end())
    throw RuntimeError("no block function '" + Symbol +
                       "' in the compiled module");
  return Found->second;
}

} // namespace tidal::runtime
