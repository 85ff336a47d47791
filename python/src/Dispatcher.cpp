// The C++ half of tidal.cuda's dispatcher: a kernel's specialisations per
// target, compiled on demand, and their inspection. kernel[...] is in
// LaunchConfig.cpp, the launch plans in LaunchPlan.cpp.
#include "Dispatcher.h"

#include "ArgumentTyping.h"
#include "Compiler.h"
#include "DispatcherCache.h"
#include "Errors.h"
#include "FittedBlocks.h"
#include "ForeignLinking.h"
#include "LaunchConfig.h"
#include "LaunchPlan.h"

#include "tidal/Contract.h"
#include "tidal/Passes.h"
#include "tidal/runtime/CudaDriver.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdlib>

#include <utility>

namespace tidal::binding {

using namespace tidal::frontend;

std::string signatureText(const std::vector<Type> &Types) {
  std::string S = "(";
  for (size_t I = 0; I < Types.size(); ++I)
    S += (I ? ", " : "") + Types[I].str();
  return S + ")";
}

namespace {

// Re-reads marker IR into a fresh context (for the NVPTX views of a kernel
// that was compiled for the cpu).
std::unique_ptr<llvm::Module> parseIR(const std::string &Text, llvm::LLVMContext &Ctx) {
  llvm::SMDiagnostic Diag;
  std::unique_ptr<llvm::Module> M = llvm::parseAssemblyString(Text, Diag, Ctx);
  if (!M)
    throw std::runtime_error("internal error: cannot re-read marker IR: " +
                             Diag.getMessage().str());
  return M;
}

// What inspect_types() prints, in Numba's shape: the signature, the
// source with its line numbers, then each local variable and its type.
std::string typesText(const std::string &Name, const KernelModule &KM) {
  std::string Out = Name + " " + signatureText(KM.ParamTypes) + "\n" + std::string(80, '-') + "\n";
  Out += "# File: " + KM.SourceFile + "\n";
  for (size_t I = 0; I < KM.SourceLines.size(); ++I) {
    std::string Line = KM.SourceLines[I];
    while (!Line.empty() && (Line.back() == '\n' || Line.back() == '\r'))
      Line.pop_back();
    Out +=
        "# --- LINE " + std::to_string(KM.FirstLine + static_cast<int>(I)) + " ---\n" + Line + "\n";
  }
  Out += "\n# variables:\n";
  for (const auto &[Variable, Type] : KM.VariableTypes)
    Out += "#   " + Variable + " = " + Type + "\n";
  return Out + std::string(80, '=') + "\n";
}

// Name as a file name's part: letters, digits and '_', other runs as one '_'.
std::string fileNamePart(const std::string &Name) {
  std::string Out;
  for (char C : Name) {
    bool Plain = std::isalnum(static_cast<unsigned char>(C)) || C == '_';
    if (Plain)
      Out += C;
    else if (!Out.empty() && Out.back() != '_')
      Out += '_';
  }
  while (!Out.empty() && Out.back() == '_')
    Out.pop_back();
  return Out;
}

// The IR of a specialisation at every stage of a target's pipeline
// (tidal/Pipeline.def), and the assembly it ends in (PTX for sm_<SM>, or
// the host's), from its marker IR with the kernel's passes.
struct StageViews {
  PipelineStages IR;
  std::string Assembly;
};

// Runs a lowering (Lower) of a kernel: an error of the kernel's passes=
// text (PipelineRunner.cpp names it "from the kernel's passes=") is raised
// located at the kernel's decorator, where the text is written.
template <typename Lowering> void lowerLocated(const DispatcherState &D, Lowering &&Lower) {
  try {
    Lower();
  } catch (const std::runtime_error &E) {
    if (D.PassesWhere.empty() ||
        !llvm::StringRef(E.what()).contains("(from the kernel's passes=)"))
      throw;
    throw std::runtime_error(D.PassesWhere + ": " + E.what());
  }
}

StageViews stageViews(const DispatcherState &D, const Specialization &S, bool Cuda, unsigned SM) {
  llvm::LLVMContext Ctx;
  std::unique_ptr<llvm::Module> M = parseIR(S.MarkerIR, Ctx);
  StageViews Views;
  if (Cuda) {
    lowerLocated(D, [&] { lowerForNVPTX(*M, SM, nullptr, &D.Passes, &Views.IR); });
    Views.Assembly = emitPTX(*M, SM);
  } else {
    lowerLocated(D, [&] { lowerForHost(*M, &D.Passes, &Views.IR); });
    Views.Assembly = emitHostAssembly(*M);
  }
  return Views;
}

// TIDAL_DUMP_DIR=dir: a compiled specialisation's stages, one file each,
// <kernel>.<signature>.<target>.<N>-<stage>.ll, then .<N>-asm.ptx or .s.
void dumpStages(const DispatcherState &D, const Specialization &S, bool Cuda, unsigned SM) {
  const char *Directory = std::getenv("TIDAL_DUMP_DIR");
  if (!Directory || !*Directory)
    return;
  if (std::error_code E = llvm::sys::fs::create_directories(Directory))
    throw std::runtime_error(std::string("TIDAL_DUMP_DIR: cannot create '") + Directory +
                             "': " + E.message());
  StageViews Views = stageViews(D, S, Cuda, SM);
  std::string Stem = std::string(Directory) + "/" + fileNamePart(D.Name) + "." +
                     fileNamePart(signatureText(S.ArgTypes)) + "." +
                     (Cuda ? "cuda_sm" + std::to_string(SM) : std::string("cpu")) + ".";
  auto Write = [&](const std::string &Path, const std::string &Text) {
    std::error_code E;
    llvm::raw_fd_ostream Out(Path, E);
    if (!E)
      Out << Text;
    if (E || Out.has_error())
      throw std::runtime_error("TIDAL_DUMP_DIR: cannot write '" + Path + "'" +
                               (E ? ": " + E.message() : std::string()));
  };
  for (unsigned I = 0; I < PipelinePointCount; ++I)
    Write(Stem + std::to_string(I + 1) + "-" +
              pipelinePointInfo(static_cast<PipelinePoint>(I)).Stage + ".ll",
          Views.IR[I]);
  Write(Stem + std::to_string(PipelinePointCount + 1) + "-asm." + (Cuda ? "ptx" : "s"),
        Views.Assembly);
}

} // namespace

Specialization *DispatcherState::find(const std::vector<Type> &Types) {
  for (auto &S : Specializations)
    if (S->ArgTypes == Types)
      return S.get();
  return nullptr;
}

Specialization &DispatcherState::compile(const std::vector<Type> &Types) {
  if (Specialization *S = find(Types))
    return *S;
  if (std::unique_ptr<Specialization> Cached = loadCachedSpecialization(*this, Types)) {
    Specializations.push_back(std::move(Cached));
    return *Specializations.back();
  }
  KernelModule KM =
      Raw ? emitRawKernel(*Raw, ParamNames, Types) : emitKernel(Function.get(), Types, Options);
  if (MaxClusterRank)
    if (llvm::Function *Kernel = KM.Module->getFunction(KM.KernelName))
      Kernel->addFnAttr(MaxClusterRankAttribute, std::to_string(MaxClusterRank));
  std::vector<ForeignLink> PtxLinks;
  bool Linked = !Raw && linkForeignCode(*KM.Module, Links, Target, &PtxLinks);
  auto Spec = std::make_unique<Specialization>();
  Spec->LinksForeignCode = Linked;
  Spec->PtxLinks = std::move(PtxLinks);
  Spec->ArgTypes = Types;
  Spec->KernelName = KM.KernelName;
  Spec->MarkerIR = moduleText(*KM.Module);
  Spec->Cooperative = usesGridGroup(Spec->MarkerIR);
  Spec->TypesText = typesText(Name, KM);
  for (const Type &T : Types)
    Spec->ParamCount += flattenedParameterSizes(T).size();
  std::optional<runtime::CpuObject> Object;
  if (Target == TargetKind::Cpu) {
    lowerLocated(*this, [&] { lowerForHost(*KM.Module, &Passes); });
    if (Cache && !Cache.isNone()) {
      // Through an object file, which the cache keeps and a later process
      // links without codegen.
      Object = runtime::CpuModule::emitObject(std::move(KM.Module), std::move(KM.Context));
      Spec->Cpu = runtime::CpuModule::load(*Object, KM.KernelName);
    } else {
      Spec->Cpu = runtime::CpuModule::compile(std::move(KM.Module), std::move(KM.Context));
    }
    Spec->Block = Spec->Cpu->blockFunction(Spec->KernelName);
    Spec->CpuStaticSharedBytes = Spec->Cpu->staticSharedBytes(Spec->KernelName);
    Spec->FitConditions = Spec->Cpu->blockConditions(Spec->KernelName);
    Spec->FittedAfterThreads = fittedBlockThreshold();
    dumpStages(*this, *Spec, /*Cuda=*/false, 0);
  }
  saveSpecialization(*this, *Spec, Object ? &*Object : nullptr);
  Specializations.push_back(std::move(Spec));
  return *Specializations.back();
}

namespace {

// True when every value of scalar type From is a value of To (Numba's safe
// and promoting conversions).
bool keepsEveryValue(Scalar From, Scalar To) {
  if (From == Scalar::Bool)
    return true;
  if (To == Scalar::Bool)
    return false;
  unsigned FromBits = bitWidth(From), ToBits = bitWidth(To);
  if (isInteger(From)) {
    if (isInteger(To))
      return isSigned(From) == isSigned(To) ? FromBits <= ToBits
                                              : !isSigned(From) && FromBits < ToBits;
    // To a float: exact below its significand's width; Numba counts every
    // integer as safe in float64.
    if (To == Scalar::Float64 || To == Scalar::Complex128)
      return true;
    unsigned Significand = To == Scalar::Float16 ? 11 : 24;
    return FromBits < Significand;
  }
  if (isFloat(From))
    return isFloat(To) ? FromBits <= ToBits : isComplex(To) && FromBits <= ToBits / 2;
  return To == Scalar::Complex128; // complex64 -> complex128
}

} // namespace

int conversionCost(const Type &From, const Type &To) {
  if (From == To)
    return 0;
  // A complex number never converts to a real type (Numba has no such
  // conversion, safe or unsafe).
  if (From.isScalar() && To.isScalar() && isComplex(From.Dtype) && !isComplex(To.Dtype))
    return -1;
  if (From.isScalar() && To.isScalar())
    return keepsEveryValue(From.Dtype, To.Dtype) ? 1 : 2;
  // A pointer parameter (CPointer, voidptr) takes an address as an integer,
  // as numba-cuda's launch does.
  if (To.isPointer() && (From.isIntegerScalar() || From.isVoidPointer()))
    return 1;
  if (From.isTuple() && To.isTuple()) { // element by element
    if (From.Elements.size() != To.Elements.size())
      return -1;
    int Cost = 0;
    for (size_t I = 0; I < From.Elements.size(); ++I) {
      int One = conversionCost(From.Elements[I], To.Elements[I]);
      if (One < 0)
        return -1;
      Cost += One;
    }
    return Cost;
  }
  if (!From.isArray() || !To.isArray() || From.NDim != To.NDim || From.Dtype != To.Dtype ||
      (From.Record == nullptr) != (To.Record == nullptr) || (From.Record && !(*From.Record == *To.Record)))
    return -1;
  bool LayoutFits = To.ArrayLayout == Layout::A || To.ArrayLayout == From.ArrayLayout;
  bool WritesFit = To.ReadOnly || !From.ReadOnly;
  return LayoutFits && WritesFit ? 1 : -1;
}

Specialization &DispatcherState::forArguments(const std::vector<Type> &ArgumentTypes) {
  if (DeclaredSignatures.empty())
    return compile(ArgumentTypes);
  const std::vector<Type> *Best = nullptr;
  int BestCost = 0;
  for (const std::vector<Type> &Declared : DeclaredSignatures) {
    if (Declared.size() != ArgumentTypes.size())
      continue;
    int Cost = 0;
    for (size_t I = 0; I < Declared.size() && Cost >= 0; ++I) {
      int One = conversionCost(ArgumentTypes[I], Declared[I]);
      Cost = One < 0 ? -1 : Cost + One;
    }
    if (Cost >= 0 && (!Best || Cost < BestCost)) {
      Best = &Declared;
      BestCost = Cost;
    }
  }
  if (!Best) {
    std::string Declared;
    for (const std::vector<Type> &Signature : DeclaredSignatures)
      Declared += (Declared.empty() ? "" : ", ") + signatureText(Signature);
    throw std::invalid_argument("No matching definition for argument type(s) " +
                                signatureText(ArgumentTypes) + " of kernel '" + Name +
                                "': it was compiled for " + Declared +
                                " only, and arrays are never converted, nor complex numbers to "
                                "real types (pass an array of the declared dtype, dimensions "
                                "and layout)");
  }
  return compile(*Best);
}

namespace {

// The Python object: a half per target (PyType_GenericNew zeroes them until
// __init__).
struct DispatcherObject {
  PyObject_HEAD DispatcherState *States[TargetCount]; // indexed by TargetKind
};

// Dispatcher(function): the Python dispatcher (tidal.cuda.dispatcher.Dispatcher)
// subclasses this type and gives the options through _tidal_options().
// Dispatcher(function) or Dispatcher(raw=(code, file_name, options, symbol,
// name, parameter types, parameter names[, RawModule])), a CUDA C++ kernel
// (RawKernels.h).
int Dispatcher_init(PyObject *Self, PyObject *Args, PyObject *Kwargs) {
  static const char *Keywords[] = {"function", "raw", nullptr};
  PyObject *Function = Py_None, *RawSpec = nullptr;
  if (!PyArg_ParseTupleAndKeywords(Args, Kwargs, "|OO", const_cast<char **>(Keywords), &Function,
                                   &RawSpec))
    return -1;
  if (!RawSpec && !PyFunction_Check(Function)) {
    PyErr_Format(PyExc_TypeError, "a kernel must be a Python function, not '%s'",
                 Py_TYPE(Function)->tp_name);
    return -1;
  }
  try {
    std::shared_ptr<RawKernelSource> Raw;
    std::vector<std::string> RawParamNames;
    if (RawSpec) {
      const char *Code, *FileName, *Symbol, *Name;
      PyObject *Options, *ParamTypes, *ParamNames, *Module = Py_None;
      if (!PyArg_ParseTuple(RawSpec, "ssOssOO|O", &Code, &FileName, &Options, &Symbol, &Name,
                            &ParamTypes, &ParamNames, &Module))
        return -1;
      Raw = std::make_shared<RawKernelSource>();
      Raw->Code = Code;
      Raw->FileName = FileName;
      Raw->Symbol = Symbol;
      Raw->Name = Name;
      Raw->Module = PyRef::borrow(Module);
      auto Strings = [](PyObject *Sequence, std::vector<std::string> &Out) {
        PyRef Items = PyRef::check(PySequence_Fast(Sequence, "expected a sequence of str"));
        for (Py_ssize_t I = 0; I < PySequence_Fast_GET_SIZE(Items.get()); ++I)
          Out.push_back(PyRef::borrow(PySequence_Fast_GET_ITEM(Items.get(), I)).str());
      };
      Strings(Options, Raw->Options);
      Strings(ParamTypes, Raw->ParameterTypes);
      Strings(ParamNames, RawParamNames);
      // RawModule(link=[...]): what the module's kernels call from other code.
      if (Module != Py_None && PyObject_HasAttrString(Module, "_link_items")) {
        PyRef Links = PyRef::check(PyObject_GetAttrString(Module, "_link_items"));
        Raw->Links = foreignLinksFromPython(Links.get());
      }
    }
    std::unique_ptr<DispatcherState> States[TargetCount];
    for (int T = 0; T < TargetCount; ++T) {
      States[T] = std::make_unique<DispatcherState>();
      States[T]->Target = static_cast<TargetKind>(T);
      if (Raw) {
        States[T]->Raw = Raw;
        States[T]->Name = Raw->Name;
        States[T]->ParamNames = RawParamNames;
        continue;
      }
      States[T]->Function = PyRef::borrow(Function);
      States[T]->Name = PyRef::borrow(Function).attr("__name__").str();
      States[T]->ParamNames = parameterNames(Function);
    }
    auto *D = reinterpret_cast<DispatcherObject *>(Self);
    for (int T = 0; T < TargetCount; ++T) {
      delete D->States[T];
      D->States[T] = States[T].release();
    }
  } catch (...) {
    raisePythonError();
    return -1;
  }
  return 0;
}

// The Python objects the halves hold, for the cycle collector: a kernel's
// function refers to its module's globals, which refer to the kernel, so a
// kernel defined by exec() or in a module that is dropped is only ever freed
// as a cycle, and the collector must see the references the C++ half holds.
int Dispatcher_traverse(PyObject *Self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(Self)); // a heap type: its instances hold a reference
  auto *D = reinterpret_cast<DispatcherObject *>(Self);
  const RawKernelSource *RawSeen = nullptr; // the halves share one
  for (DispatcherState *State : D->States) {
    if (!State)
      continue;
    Py_VISIT(State->Function.get());
    Py_VISIT(State->Cache.get());
    Py_VISIT(State->Extensions.get());
    if (State->Raw && State->Raw.get() != RawSeen) {
      RawSeen = State->Raw.get();
      Py_VISIT(State->Raw->Module.get());
    }
    for (const std::shared_ptr<LaunchPlan> &Plan : State->Plans) {
      for (const PyRef &Ref : Plan->PyTypes)
        Py_VISIT(Ref.get());
      for (const PyRef &Ref : Plan->RecordDescrs)
        Py_VISIT(Ref.get());
      for (const PyRef &Ref : Plan->Classes)
        Py_VISIT(Ref.get());
    }
  }
  return 0;
}

// Frees both halves, their code included (CpuModule: the JIT's dylib;
// CudaModule: cuModuleUnload once the context has finished the work
// launched before), and the Python objects they hold. The collector calls
// it only for a dispatcher that nothing outside its cycle refers to, so no
// launch is in flight: a launch holds its LaunchConfiguration, which holds
// the dispatcher. A dispatcher used after it (from a finaliser of its
// cycle) raises "used before __init__".
int Dispatcher_clear(PyObject *Self) {
  auto *D = reinterpret_cast<DispatcherObject *>(Self);
  // While the interpreter exits, the process's code goes with it: nothing
  // is unloaded or waited for (a cuModuleUnload after a launch would wait
  // for the context), and the halves are left as they are.
  bool Exiting = _Py_IsFinalizing();
  for (DispatcherState *&State : D->States) {
    DispatcherState *Dropped = std::exchange(State, nullptr);
    if (!Exiting)
      delete Dropped;
  }
  return 0;
}

void Dispatcher_dealloc(PyObject *Self) {
  PyObject_GC_UnTrack(Self);
  Dispatcher_clear(Self);
  PyTypeObject *Type = Py_TYPE(Self); // a heap type: its instances hold a reference
  Type->tp_free(Self);
  Py_DECREF(Type);
}

// The dispatcher's half for the selected target.
DispatcherState &state(PyObject *Self) {
  TargetKind Target = selectedTarget();
  DispatcherState *S = reinterpret_cast<DispatcherObject *>(Self)->States[static_cast<int>(Target)];
  if (!S)
    throw std::runtime_error("tidal Dispatcher used before __init__");
  return *S;
}

} // namespace

// The dispatcher's half for the selected target with its options read
// (self._tidal_options(target): a dict of debug, lineinfo, fastmath,
// max_registers, max_threads and min_blocks), as everything that compiles
// needs it.
// "file.py:line" of a Python function's first line (its decorator's, when
// it has one); empty when it has no code object.
std::string sourceLine(PyObject *Function) {
  PyRef Code = PyRef::borrow(Function).attrOrNull("__code__");
  if (!Code)
    return "";
  PyRef File = Code.attrOrNull("co_filename");
  PyRef Line = Code.attrOrNull("co_firstlineno");
  if (!File || !Line)
    return "";
  return File.str() + ":" + Line.str();
}

DispatcherState &configuredState(PyObject *Self) {
  DispatcherState &D = state(Self);
  if (D.Configured)
    return D;
  static PyObject *Method = PyUnicode_InternFromString("_tidal_options");
  PyRef TargetName = PyRef::check(PyUnicode_FromString(targetName(D.Target)));
  PyRef Options = PyRef::check(PyObject_CallMethodOneArg(Self, Method, TargetName.get()));
  auto Item = [&](const char *Key) {
    PyObject *Value = PyDict_GetItemString(Options.get(), Key);
    if (!Value)
      throw std::runtime_error(std::string("internal error: _tidal_options() has no ") + Key);
    return PyRef::borrow(Value);
  };
  auto Flag = [&](const char *Key) {
    int Value = PyObject_IsTrue(Item(Key).get());
    if (Value < 0)
      throw PythonErrorSet();
    return Value == 1;
  };
  D.Options.Debug = Flag("debug");
  D.Options.LineInfo = Flag("lineinfo");
  D.Options.FastMath = Flag("fastmath");
  D.Options.MaxRegisters = static_cast<unsigned>(Item("max_registers").asLong());
  D.Options.MaxThreadsPerBlock = static_cast<unsigned>(Item("max_threads").asLong());
  D.Options.MinBlocksPerSM = static_cast<unsigned>(Item("min_blocks").asLong());
  if (PyObject *Rank = PyDict_GetItemString(Options.get(), "max_cluster_rank"))
    D.MaxClusterRank = static_cast<unsigned>(PyRef::borrow(Rank).asLong());
  // The disk cache (cache=True), when the options have one.
  if (PyObject *Cache = PyDict_GetItemString(Options.get(), "cache"))
    D.Cache = PyRef::borrow(Cache);
  if (PyObject *Links = PyDict_GetItemString(Options.get(), "link"))
    D.Links = foreignLinksFromPython(Links);
  if (PyObject *Extensions = PyDict_GetItemString(Options.get(), "extensions"))
    if (PyList_Check(Extensions))
      D.Extensions = PyRef::borrow(Extensions);
  D.PerformanceWarnings = Flag("performance_warnings");
  if (PyObject *Carveout = PyDict_GetItemString(Options.get(), "shared_memory_carveout"))
    if (Carveout != Py_None)
      D.SharedMemoryCarveout = static_cast<int>(PyRef::borrow(Carveout).asLong());
  if (PyObject *Passes = PyDict_GetItemString(Options.get(), "passes"))
    D.Passes = extraPassesFromText(PyRef::borrow(Passes).str());
  if (!D.Passes.empty() && D.Function && D.Function.get() != Py_None)
    D.PassesWhere = sourceLine(D.Function.get());
  D.Configured = true;
  return D;
}

// The kernel of S loaded on device Ordinal: compiled to PTX for the device's
// sm (capped to what LLVM 19 knows) and loaded on first use, with its
// module's exception slot when the marker IR has raise sites.
Specialization::CudaLoaded &cudaKernelOf(const DispatcherState &D, Specialization &S,
                                         int Ordinal) {
  for (auto &Loaded : S.Cuda)
    if (Loaded.Context->ordinal() == Ordinal)
      return Loaded;
  const runtime::CudaDriver &Driver = runtime::CudaDriver::get();
  if (!Driver.usable())
    throw runtime::RuntimeError("kernel '" + D.Name +
                                "' cannot run on the cuda target: the CUDA driver is not usable: " +
                                Driver.reason() + " (TIDAL_TARGET=cpu runs kernels on the cpu)");
  runtime::CudaContext &Context = runtime::CudaContext::forDevice(Ordinal);
  unsigned SM = Context.limits().ptxSM();
  bool ReadSites = !S.RaiseSitesRead && hasRaiseSites(S.MarkerIR);
  std::optional<std::string> PTX = loadCachedPTX(D, S, SM);
  if (!PTX) {
    llvm::LLVMContext Ctx;
    std::unique_ptr<llvm::Module> M = parseIR(S.MarkerIR, Ctx);
    if (ReadSites) // numbered over the marker IR, as tidal-lower-exceptions does
      S.RaiseSites = raiseSites(*M);
    lowerLocated(D, [&] { lowerForNVPTX(*M, SM, nullptr, &D.Passes); });
    PTX = emitPTX(*M, SM);
    savePTX(D, S, SM, *PTX);
    dumpStages(D, S, /*Cuda=*/true, SM);
  } else if (ReadSites) {
    llvm::LLVMContext Ctx;
    S.RaiseSites = raiseSites(*parseIR(S.MarkerIR, Ctx));
  }
  S.RaiseSitesRead = true;
  auto Module = loadLinkedModule(Context, *PTX, S.KernelName, S.PtxLinks);
  auto Function = std::make_unique<runtime::CudaFunction>(Module->function(S.KernelName));
  if (D.SharedMemoryCarveout) // numba-cuda sets it as each kernel loads
    Function->setAttribute(runtime::cu::FunctionPreferredSharedMemoryCarveout,
                           *D.SharedMemoryCarveout);
  runtime::cu::DevicePointer Slot = 0;
  if (!S.RaiseSites.empty()) {
    auto [Pointer, Bytes] = Module->global(ExceptionSlotName);
    if (Bytes < sizeof(ExceptionSlot))
      throw runtime::RuntimeError("internal error: the exception slot of kernel '" + D.Name +
                                  "' has " + std::to_string(Bytes) + " bytes, not " +
                                  std::to_string(sizeof(ExceptionSlot)));
    Slot = Pointer;
  }
  S.Cuda.push_back({&Context, std::move(Module), std::move(Function), Slot});
  return S.Cuda.back();
}

runtime::CudaFunction &cudaFunctionOf(const DispatcherState &D, Specialization &S, int Ordinal) {
  return *cudaKernelOf(D, S, Ordinal).Function;
}

// Types from a signature: a string ("void(float32, float32[::1])") or a
// sequence of types as python/tidal/cuda/signatures.py describes them.
std::vector<Type> typesFromPython(PyObject *Signature) {
  if (PyUnicode_Check(Signature)) {
    frontend::Signature Sig = parseSignature(PyUnicode_AsUTF8(Signature));
    if (Sig.HasReturn && !Sig.Return.isNone())
      throw std::invalid_argument("a kernel's signature must return void, not " + Sig.Return.str());
    return Sig.Params;
  }
  PyRef Seq = PyRef::check(
      PySequence_Fast(Signature, "a signature must be a str or a sequence of type names"));
  std::vector<Type> Types;
  for (Py_ssize_t I = 0; I < PySequence_Fast_GET_SIZE(Seq.get()); ++I)
    Types.push_back(typeFromDescription(PySequence_Fast_GET_ITEM(Seq.get(), I)));
  return Types;
}

namespace {

PyObject *Dispatcher_compile(PyObject *Self, PyObject *Signature) {
  return translateErrors([&]() -> PyObject * {
    DispatcherState &D = configuredState(Self);
    Specialization &S = D.compile(typesFromPython(Signature));
    return PyUnicode_FromString(signatureText(S.ArgTypes).c_str());
  });
}

// _declare(signature): a signature given to cuda.jit, which launches keep to
// on every target; compiled now for the selected one.
PyObject *Dispatcher_declare(PyObject *Self, PyObject *Signature) {
  return translateErrors([&]() -> PyObject * {
    std::vector<Type> Types = typesFromPython(Signature);
    DispatcherState &D = configuredState(Self);
    Specialization &S = D.compile(Types);
    for (DispatcherState *State : reinterpret_cast<DispatcherObject *>(Self)->States)
      if (State)
        State->DeclaredSignatures.push_back(Types);
    return PyUnicode_FromString(signatureText(S.ArgTypes).c_str());
  });
}

PyObject *Dispatcher_specialize(PyObject *Self, PyObject *Args) {
  return translateErrors([&]() -> PyObject * {
    DispatcherState &D = configuredState(Self);
    std::vector<Type> Types;
    if (!typeArguments(D, &PyTuple_GET_ITEM(Args, 0), static_cast<size_t>(PyTuple_GET_SIZE(Args)),
                       Types))
      return nullptr;
    Specialization &S = D.forArguments(Types);
    return PyUnicode_FromString(signatureText(S.ArgTypes).c_str());
  });
}

// inspect(signature_text, what, sm, target, stage): what is "markers",
// "types", "llvm" (after tidal-nvptx), "ptx", "stage" (the IR at `stage` of
// tidal/Pipeline.def, or its assembly for stage "asm", of `target`, "cuda"
// or "cpu", with the kernel's passes) or "raise-sites" (the table of raise sites that
// the cuda target reads the exception slot with: [(kind, text)], kind
// "raise" or "bounds", site I writes code I + 1) of an existing
// specialisation.
PyObject *Dispatcher_inspect(PyObject *Self, PyObject *Args) {
  const char *Signature, *What, *Target = "cuda", *Stage = "final";
  unsigned SM = DefaultSM;
  if (!PyArg_ParseTuple(Args, "ss|Iss", &Signature, &What, &SM, &Target, &Stage))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    DispatcherState &D = state(Self);
    for (auto &S : D.Specializations) {
      if (signatureText(S->ArgTypes) != Signature)
        continue;
      std::string Kind = What;
      if (Kind == "markers")
        return PyUnicode_FromString(S->MarkerIR.c_str());
      if (Kind == "types")
        return PyUnicode_FromString(S->TypesText.c_str());
      if (Kind == "stage") {
        std::string TargetName = Target;
        if (TargetName != "cuda" && TargetName != "cpu")
          throw std::invalid_argument("target must be 'cuda' or 'cpu', not '" + TargetName + "'");
        std::optional<PipelinePoint> Point = parsePipelineStage(Stage);
        if (!Point && std::string(Stage) != "asm")
          throw std::invalid_argument("kernel '" + D.Name + "' has no stage '" + Stage + "'");
        StageViews Views = stageViews(D, *S, TargetName == "cuda", SM);
        return PyUnicode_FromString(
            (Point ? Views.IR[static_cast<unsigned>(*Point)] : Views.Assembly).c_str());
      }
      llvm::LLVMContext Ctx;
      std::unique_ptr<llvm::Module> M = parseIR(S->MarkerIR, Ctx);
      if (Kind == "raise-sites") { // [(kind, text)], site I writes code I + 1
        std::vector<RaiseSite> Sites = raiseSites(*M);
        PyRef List = PyRef::check(PyList_New(0));
        for (const RaiseSite &Site : Sites) {
          PyRef Entry = PyRef::check(Py_BuildValue(
              "(ss#)", Site.Bounds ? "bounds" : "raise", Site.Text.data(),
              static_cast<Py_ssize_t>(Site.Text.size())));
          if (PyList_Append(List.get(), Entry.get()) < 0)
            return nullptr;
        }
        return List.release();
      }
      lowerLocated(D, [&] { lowerForNVPTX(*M, SM, nullptr, &D.Passes); });
      if (Kind == "llvm") {
        std::string Text = moduleText(*M);
        frontend::forgetNVPTXModule(*M, SM);
        return PyUnicode_FromString(Text.c_str());
      }
      if (Kind == "ptx")
        return PyUnicode_FromString(emitPTX(*M, SM).c_str());
      frontend::forgetNVPTXModule(*M, SM);
      PyErr_Format(PyExc_ValueError,
                   "unknown view '%s': use markers, types, llvm, ptx or raise-sites", What);
      return nullptr;
    }
    PyErr_Format(PyExc_KeyError, "kernel '%s' has no specialisation %s", D.Name.c_str(), Signature);
    return nullptr;
  });
}

// _kernel_attribute(signature_text, what, shared_bytes=0): a fact of the
// kernel loaded on the current GPU: "regs", "shared", "local", "const" or
// "max_threads" (cuFuncGetAttribute), or "potential_block", the block size of
// the best occupancy with shared_bytes of dynamic shared memory.
PyObject *Dispatcher_kernel_attribute(PyObject *Self, PyObject *Args) {
  const char *Signature, *What;
  unsigned long long SharedBytes = 0; // "potential_block": dynamic shared memory
  if (!PyArg_ParseTuple(Args, "ss|K", &Signature, &What, &SharedBytes))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    DispatcherState &D = configuredState(Self);
    if (D.Target != TargetKind::Cuda) {
      PyErr_Format(PyExc_RuntimeError,
                   "the facts of kernel '%s' come from the CUDA driver and need a GPU: kernels "
                   "run on the %s target here",
                   D.Name.c_str(), targetName(D.Target));
      return nullptr;
    }
    for (auto &S : D.Specializations) {
      if (signatureText(S->ArgTypes) != Signature)
        continue;
      runtime::CudaFunction &Kernel = cudaFunctionOf(D, *S, runtime::currentDeviceOrdinal());
      std::string Kind = What;
      if (Kind == "regs")
        return PyLong_FromLong(Kernel.registersPerThread());
      if (Kind == "shared")
        return PyLong_FromLong(Kernel.staticSharedBytes());
      if (Kind == "local")
        return PyLong_FromLong(Kernel.localBytesPerThread());
      if (Kind == "const")
        return PyLong_FromLong(Kernel.attribute(runtime::cu::FunctionConstSizeBytes));
      if (Kind == "max_threads")
        return PyLong_FromLong(Kernel.maxThreadsPerBlock());
      if (Kind == "potential_block")
        return PyLong_FromLong(Kernel.potentialBlockSize(static_cast<size_t>(SharedBytes)));
      PyErr_Format(PyExc_ValueError, "unknown kernel attribute '%s'", What);
      return nullptr;
    }
    PyErr_Format(PyExc_KeyError, "kernel '%s' has no specialisation %s", D.Name.c_str(), Signature);
    return nullptr;
  });
}

// _cooperative(signature_text, threads=0, shared_bytes=0): whether the
// specialisation needs a cooperative launch; with threads > 0, (that, the
// most blocks of that many threads a cooperative launch of it may have on
// the current target: the cpu target's co-scheduling limit, or the GPU's
// resident blocks per SM x its SMs).
PyObject *Dispatcher_cooperative(PyObject *Self, PyObject *Args) {
  const char *Signature;
  unsigned long long Threads = 0, SharedBytes = 0;
  if (!PyArg_ParseTuple(Args, "s|KK", &Signature, &Threads, &SharedBytes))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    DispatcherState &D = configuredState(Self);
    for (auto &S : D.Specializations) {
      if (signatureText(S->ArgTypes) != Signature)
        continue;
      if (Threads == 0)
        return PyBool_FromLong(S->Cooperative);
      long long Blocks;
      if (D.Target == TargetKind::Cuda)
        Blocks = cudaFunctionOf(D, *S, runtime::currentDeviceOrdinal())
                     .maxCooperativeBlocks(static_cast<unsigned>(Threads),
                                           static_cast<size_t>(SharedBytes));
      else
        Blocks = static_cast<long long>(runtime::cpuMaxCooperativeBlocks(Threads));
      return Py_BuildValue("(OL)", S->Cooperative ? Py_True : Py_False, Blocks);
    }
    PyErr_Format(PyExc_KeyError, "kernel '%s' has no specialisation %s", D.Name.c_str(), Signature);
    return nullptr;
  });
}

PyObject *Dispatcher_signatures(PyObject *Self, void *) {
  return translateErrors([&]() -> PyObject * {
    DispatcherState &D = state(Self);
    PyRef List = PyRef::check(PyList_New(0));
    for (auto &S : D.Specializations) {
      PyRef Text = PyRef::check(PyUnicode_FromString(signatureText(S->ArgTypes).c_str()));
      if (PyList_Append(List.get(), Text.get()) < 0)
        return nullptr;
    }
    return List.release();
  });
}

// _forget(): drops every target's specialisations and launch plans, so that
// the next compile or launch compiles afresh (Numba's recompile(), which
// the Python dispatcher builds on this). Returns the signatures the
// selected target had.
PyObject *Dispatcher_forget(PyObject *Self, PyObject *) {
  return translateErrors([&]() -> PyObject * {
    PyRef Signatures = PyRef::check(Dispatcher_signatures(Self, nullptr));
    for (DispatcherState *State : reinterpret_cast<DispatcherObject *>(Self)->States) {
      if (!State)
        continue;
      State->Plans.clear();
      for (auto &S : State->Specializations)
        State->Retired.push_back(std::move(S));
      State->Specializations.clear();
    }
    return Signatures.release();
  });
}

PyMethodDef DispatcherMethods[] = {
    {"_forget", Dispatcher_forget, METH_NOARGS,
     "_forget(): drops the compiled specialisations of every target; returns the selected "
     "target's signatures."},
    {"_compile", Dispatcher_compile, METH_O,
     "_compile(signature): compile eagerly; returns the signature's text."},
    {"_declare", Dispatcher_declare, METH_O,
     "_declare(signature): a signature of cuda.jit('sig'): compiled now, and the only ones "
     "launches run."},
    {"_specialize", Dispatcher_specialize, METH_VARARGS,
     "_specialize(*args): compiles for the types of these arguments (or finds the declared "
     "signature they convert to); returns the signature's text."},
    {"_inspect", Dispatcher_inspect, METH_VARARGS,
     "_inspect(signature_text, what, sm=75): 'markers', 'llvm', 'ptx' or 'types'."},
    {"_kernel_attribute", Dispatcher_kernel_attribute, METH_VARARGS,
     "_kernel_attribute(signature_text, what, shared_bytes=0): 'regs', 'shared', 'local', "
     "'const', 'max_threads' or 'potential_block' of the kernel loaded on the GPU (cuda target "
     "only)."},
    {"_cooperative", Dispatcher_cooperative, METH_VARARGS,
     "_cooperative(signature_text, threads=0, shared_bytes=0): whether launches are "
     "cooperative; with threads, (that, the most blocks of a cooperative launch)."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef DispatcherGetSet[] = {
    {"signatures", Dispatcher_signatures, nullptr, "compiled signatures", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// kernel[griddim, blockdim, stream, sharedmem]: LaunchConfig.cpp.
PyObject *Dispatcher_subscript(PyObject *Self, PyObject *Key) {
  return launchConfiguration(Self, Key);
}

PyType_Slot DispatcherSlots[] = {
    {Py_tp_doc,
     const_cast<char *>("The compiled specialisations of one kernel, and its launcher.")},
    {Py_tp_new, reinterpret_cast<void *>(PyType_GenericNew)},
    {Py_tp_init, reinterpret_cast<void *>(Dispatcher_init)},
    {Py_tp_dealloc, reinterpret_cast<void *>(Dispatcher_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void *>(Dispatcher_traverse)},
    {Py_tp_clear, reinterpret_cast<void *>(Dispatcher_clear)},
    {Py_tp_methods, DispatcherMethods},
    {Py_tp_getset, DispatcherGetSet},
    {Py_mp_subscript, reinterpret_cast<void *>(Dispatcher_subscript)},
    {0, nullptr}};

PyType_Spec DispatcherSpec = {"tidal._tidal.Dispatcher", sizeof(DispatcherObject), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                              DispatcherSlots};

} // namespace

int addDispatcherType(PyObject *Module) {
  PyRef Type = PyRef::steal(PyType_FromSpec(&DispatcherSpec));
  return Type ? PyModule_AddObjectRef(Module, "Dispatcher", Type.get()) : -1;
}

} // namespace tidal::binding
