// Foreign code linked into a Python kernel's module (ForeignLinking.h), and
// the list of a CUDA C++ source's device functions that cuda.include binds.

#include "ForeignLinking.h"

#include "CompileError.h"
#include "DeviceBinding.h"
#include "Errors.h"
#include "PyRef.h"
#include "RawKernels.h"

#include "tidal/runtime/CudaTarget.h"

#include "tidal/Contract.h"
#include "tidal/PtxText.h"
#include "tidal/Passes.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/AutoUpgrade.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ModuleSummaryIndex.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>

namespace tidal::binding {

using frontend::CompileError;
using frontend::ForeignLink;
using frontend::PyRef;
using frontend::SourceLocation;

namespace {

// One foreign symbol the kernel calls (ForeignCallsMetadata).
struct ForeignUse {
  std::string Symbol, Shown, Declared, ABI;
  SourceLocation Where;
  std::string Result;
  std::vector<std::string> Parameters;
};

std::vector<ForeignUse> readUses(const llvm::Module &M) {
  std::vector<ForeignUse> Uses;
  const llvm::NamedMDNode *Node = M.getNamedMetadata(frontend::ForeignCallsMetadata);
  if (!Node)
    return Uses;
  for (const llvm::MDNode *N : Node->operands()) {
    auto Text = [&](unsigned I) {
      return llvm::cast<llvm::MDString>(N->getOperand(I))->getString().str();
    };
    ForeignUse U;
    U.Symbol = Text(0);
    U.Shown = Text(1);
    U.Declared = Text(2);
    U.ABI = Text(3);
    U.Where.File = Text(4);
    U.Where.Line = std::stoi(Text(5));
    U.Where.Column = std::stoi(Text(6));
    U.Where.SourceLine = Text(7);
    U.Result = Text(8);
    for (unsigned I = 9; I < N->getNumOperands(); ++I)
      U.Parameters.push_back(Text(I));
    Uses.push_back(std::move(U));
  }
  return Uses;
}

std::vector<ForeignLink> readLinks(const llvm::Module &M) {
  std::vector<ForeignLink> Links;
  const llvm::NamedMDNode *Node = M.getNamedMetadata(frontend::ForeignLinksMetadata);
  if (!Node)
    return Links;
  for (const llvm::MDNode *N : Node->operands()) {
    auto Text = [&](unsigned I) {
      return llvm::cast<llvm::MDString>(N->getOperand(I))->getString().str();
    };
    ForeignLink L{Text(0), Text(1), Text(2), {}};
    for (unsigned I = 3; I < N->getNumOperands(); ++I)
      L.Options.push_back(Text(I));
    Links.push_back(std::move(L));
  }
  return Links;
}

bool sameLink(const ForeignLink &A, const ForeignLink &B) {
  return A.Kind == B.Kind && A.Name == B.Name && A.Payload == B.Payload && A.Options == B.Options;
}

std::string typeText(const llvm::Type *T) {
  std::string Text;
  llvm::raw_string_ostream Stream(Text);
  T->print(Stream);
  return Stream.str();
}

// One `.func` of a .ptx file (readPtxFunctions).
struct PtxFunction {
  std::string Name, Linkage, Header;
  bool Defined = false, Returns = false;
  unsigned Parameters = 0;
  size_t Offset = 0; // of its line
};

// One linked file, compiled: its module and, for CUDA C++, the bindings
// of its device functions.
struct Library {
  const ForeignLink *Link;
  std::unique_ptr<llvm::Module> Module; // null for PTX
  std::vector<cxx::DeviceFunctionBinding> Bindings;
  std::vector<PtxFunction> PtxFunctions; // a .ptx file's functions
  bool Binary = false;   // a cubin, fatbin, object or archive: the driver's to link
  bool MarkerIR = false; // tidal's LTO-IR: marker IR already, not raised
};

// The link kinds the CUDA driver's JIT linker takes as binaries (the
// CUjitInputType of each: loadLinkedModule), and what each is called.
bool isBinaryKind(const std::string &Kind) {
  return Kind == "cubin" || Kind == "fatbin" || Kind == "object" || Kind == "archive";
}

std::string binaryKindName(const std::string &Kind) {
  if (Kind == "cubin")
    return "a cubin";
  if (Kind == "fatbin")
    return "a fatbin";
  if (Kind == "object")
    return "an object file";
  return "an archive of object files";
}

// A linked file's IR that does not verify is an error, never code: LLVM's
// readers would otherwise stop the process ("Broken module found,
// compilation aborted!": their debug-info upgrade verifies a module that
// has debug info, and calls report_fatal_error), or hand on IR that crashes
// a later pass. So each is read without that upgrade, verified here, and
// upgraded only once it verifies.
void verifyLinkedIR(const ForeignLink &L, llvm::Module &M) {
  std::string Problems;
  llvm::raw_string_ostream Stream(Problems);
  if (llvm::verifyModule(M, &Stream)) {
    std::string First = Stream.str().substr(0, Stream.str().find('\n'));
    throw CompileError("CompileError",
                       "LLVM IR of " + L.Name + " does not verify: " + First, SourceLocation{});
  }
  llvm::UpgradeDebugInfo(M);
}

std::unique_ptr<llvm::Module> parseLinkedIR(const ForeignLink &L, llvm::LLVMContext &Context) {
  llvm::SMDiagnostic Diagnostic;
  std::unique_ptr<llvm::Module> M;
  if (L.Kind == "ll") {
    // LLVM parses text without the upgrade from a file only.
    llvm::SmallString<128> Path;
    int FD = -1;
    if (llvm::sys::fs::createTemporaryFile("tidal-link", "ll", FD, Path))
      throw std::runtime_error("cannot write a temporary file to read " + L.Name);
    {
      llvm::raw_fd_ostream Out(FD, /*shouldClose=*/true);
      Out << L.Payload;
    }
    llvm::ParsedModuleAndIndex Parsed = llvm::parseAssemblyFileWithIndexNoUpgradeDebugInfo(
        Path, Diagnostic, Context, nullptr,
        [](llvm::StringRef, llvm::StringRef) { return std::nullopt; });
    llvm::sys::fs::remove(Path);
    M = std::move(Parsed.Mod);
    if (!M) {
      SourceLocation Where;
      Where.File = L.Name;
      Where.Line = Diagnostic.getLineNo();
      Where.Column = Diagnostic.getColumnNo() + 1;
      Where.SourceLine = Diagnostic.getLineContents().str();
      throw CompileError("CompileError", "LLVM IR: " + Diagnostic.getMessage().str(), Where);
    }
    verifyLinkedIR(L, *M);
    return M;
  }
  auto readError = [&](llvm::Error E) {
    return CompileError("CompileError",
                        "cannot read LLVM bitcode " + L.Name + ": " + llvm::toString(std::move(E)),
                        SourceLocation{});
  };
  // Lazily, each function read on its own (no upgrade of the module's
  // debug info), then verified; materializeAll only after.
  auto Lazy = llvm::getLazyBitcodeModule(llvm::MemoryBufferRef(L.Payload, L.Name), Context);
  if (!Lazy)
    throw readError(Lazy.takeError());
  M = std::move(*Lazy);
  for (llvm::Function &F : *M)
    if (llvm::Error E = M->materialize(&F))
      throw readError(std::move(E));
  if (llvm::Error E = M->materializeMetadata())
    throw readError(std::move(E));
  std::string Problems;
  llvm::raw_string_ostream Stream(Problems);
  if (llvm::verifyModule(*M, &Stream)) {
    std::string First = Stream.str().substr(0, Stream.str().find('\n'));
    throw CompileError("CompileError",
                       "LLVM IR of " + L.Name + " does not verify: " + First, SourceLocation{});
  }
  if (llvm::Error E = M->materializeAll())
    throw readError(std::move(E));
  return M;
}

// The line (1-based) of Offset in Text, and that line's text.
SourceLocation locationIn(const std::string &File, const std::string &Text, size_t Offset) {
  SourceLocation Where;
  Where.File = File;
  Offset = std::min(Offset, Text.size());
  size_t LineStart = Text.rfind('\n', Offset ? Offset - 1 : 0);
  LineStart = LineStart == std::string::npos || Offset == 0 ? 0 : LineStart + 1;
  Where.Line = 1 + static_cast<int>(std::count(Text.begin(), Text.begin() + LineStart, '\n'));
  Where.Column = 1 + static_cast<int>(Offset - LineStart);
  size_t LineEnd = Text.find('\n', LineStart);
  Where.SourceLine = Text.substr(LineStart, LineEnd == std::string::npos ? std::string::npos
                                                                         : LineEnd - LineStart);
  return Where;
}

SourceLocation lineIn(const std::string &File, const std::string &Text, int Line) {
  size_t Offset = 0;
  for (int I = 1; I < Line && Offset != std::string::npos; ++I) {
    Offset = Text.find('\n', Offset);
    if (Offset != std::string::npos)
      ++Offset;
  }
  SourceLocation Where = locationIn(File, Text, Offset == std::string::npos ? Text.size() : Offset);
  Where.Column = 1;
  return Where;
}

// The `.func`s of PTX text (tidal/PtxText.h), with their headers as
// written for messages.
std::vector<PtxFunction> readPtxFunctions(const std::string &PTX) {
  std::vector<PtxFunction> Out;
  for (const ptx::FunctionHeader &H : ptx::readFunctionHeaders(PTX)) {
    PtxFunction F;
    F.Name = H.Name;
    F.Linkage = H.Linkage;
    F.Header = H.header(PTX);
    F.Defined = H.Defined;
    F.Returns = H.Returns;
    F.Parameters = H.Parameters;
    F.Offset = H.Start;
    Out.push_back(std::move(F));
  }
  return Out;
}

// A .ptx file checked as far as tidal can before the driver sees it: PTX
// at all (.version and .target), its functions read.
std::vector<PtxFunction> readPtxFile(const ForeignLink &L) {
  for (const char *Directive : {".version", ".target"})
    if (L.Payload.find(Directive) == std::string::npos) {
      SourceLocation Where = lineIn(L.Name, L.Payload, 1);
      throw CompileError("CompileError",
                         "cannot link " + L.Name + ": it is not PTX (no " + Directive +
                             " directive; a PTX file starts with .version and .target)",
                         Where);
    }
  return readPtxFunctions(L.Payload);
}

Library compileLink(const ForeignLink &L, llvm::LLVMContext &Context) {
  Library Lib{&L, nullptr, {}};
  if (L.Kind == "cu") {
    Lib.Module = compileOrThrow(Context, L.Payload, L.Name, L.Options);
    Lib.Bindings = cxx::readBindings(*Lib.Module);
  } else if (L.Kind == "ll" || L.Kind == "bc") {
    Lib.Module = parseLinkedIR(L, Context);
    // tidal's LTO-IR: the marker IR it carries is what links.
    if (const llvm::NamedMDNode *Embedded =
            Lib.Module->getNamedMetadata(EmbeddedMarkerIRMetadata);
        Embedded && Embedded->getNumOperands() == 1)
      if (auto *Text = llvm::dyn_cast_or_null<llvm::MDString>(
              Embedded->getOperand(0)->getNumOperands()
                  ? Embedded->getOperand(0)->getOperand(0).get()
                  : nullptr)) {
        ForeignLink Markers{"bc", L.Name, Text->getString().str(), {}};
        Lib.Module = parseLinkedIR(Markers, Context);
        Lib.MarkerIR = true;
      }
  } else if (L.Kind == "ptx") {
    Lib.PtxFunctions = readPtxFile(L);
  } else if (isBinaryKind(L.Kind)) {
    Lib.Binary = true; // its symbols are the driver's linker's to find
  } else {
    throw std::invalid_argument("internal error: unknown link kind '" + L.Kind + "'");
  }
  return Lib;
}

[[noreturn]] void failAt(const ForeignUse &U, const std::string &Message) {
  throw CompileError("CompileError", Message, U.Where);
}

// The C++ types a use expects, as DeviceBinding.h's texts: Numba's ABI
// returns an int status and takes the result's address first.
void expectedTypes(const ForeignUse &U, std::string &Result, std::vector<std::string> &Params) {
  Params = U.Parameters;
  Result = U.Result;
  if (U.ABI == "numba") {
    Params.insert(Params.begin(), U.Result + "*");
    Result = "int32";
  }
}

std::string withoutConst(const std::string &Text) {
  return Text.rfind("const ", 0) == 0 ? Text.substr(6) : Text;
}

// A type text with its struct's and fields' names left out: a record
// dtype (a declare_device signature names no struct) matches a C++ struct
// of the same layout whatever the names, as the frontend's typing does.
std::string withoutStructName(const std::string &Text) {
  std::string Plain = withoutConst(Text);
  size_t Brace = Plain.find('{');
  if (Plain.rfind("struct ", 0) != 0 || Brace == std::string::npos)
    return Plain;
  std::string Out = "struct {";
  bool InName = true;
  for (size_t I = Brace + 1; I < Plain.size(); ++I) {
    char C = Plain[I];
    if (InName) {
      if (C == ':')
        InName = false;
      else if (C == ';')
        InName = false, Out += C;
      continue;
    }
    Out += C;
    if (C == ',')
      InName = true;
  }
  return Out;
}

// Function types alike but for the identity of their structs: clang's
// %struct.X and the kernel's own struct of the same elements.
bool sameShape(llvm::Type *A, llvm::Type *B) {
  if (A == B)
    return true;
  if (A->getTypeID() != B->getTypeID() || A->getNumContainedTypes() != B->getNumContainedTypes())
    return false;
  if (auto *SA = llvm::dyn_cast<llvm::StructType>(A)) {
    auto *SB = llvm::cast<llvm::StructType>(B);
    if (SA->isOpaque() || SB->isOpaque() || SA->isPacked() != SB->isPacked())
      return false;
  } else if (auto *AA = llvm::dyn_cast<llvm::ArrayType>(A)) {
    if (AA->getNumElements() != llvm::cast<llvm::ArrayType>(B)->getNumElements())
      return false;
  } else if (auto *FA = llvm::dyn_cast<llvm::FunctionType>(A)) {
    if (FA->isVarArg() != llvm::cast<llvm::FunctionType>(B)->isVarArg())
      return false;
  } else if (A->getNumContainedTypes() == 0) {
    return false; // two different leaf types (i32 and i64, ...)
  }
  for (unsigned I = 0; I < A->getNumContainedTypes(); ++I)
    if (!sameShape(A->getContainedType(I), B->getContainedType(I)))
      return false;
  return true;
}

// A declaration the C++ definition disagrees with: both shown.
void checkAgainstBinding(const ForeignUse &U, const cxx::DeviceFunctionBinding &B,
                         const std::string &File) {
  std::string Result;
  std::vector<std::string> Params;
  expectedTypes(U, Result, Params);
  bool Same = B.Reason.empty() && withoutStructName(B.ReturnType) == withoutStructName(Result) &&
              B.ParameterTypes.size() == Params.size();
  for (size_t I = 0; Same && I < Params.size(); ++I)
    Same = withoutStructName(B.ParameterTypes[I]) == withoutStructName(Params[I]);
  if (Same)
    return;
  std::string Expected = Result + " " + U.Symbol + "(";
  for (size_t I = 0; I < Params.size(); ++I)
    Expected += (I ? ", " : "") + Params[I];
  Expected += ")";
  failAt(U, "'" + U.Shown + "' is declared as " + U.Declared +
                (U.ABI == "numba" ? " (Numba's ABI" : " (the C ABI") + ", which calls " +
                Expected + ") but " + File + " defines " + B.Declaration +
                (B.Reason.empty() ? "" : " (which tidal cannot bind: " + B.Reason + ")"));
}

void checkAgainstIR(const ForeignUse &U, const llvm::Function &Declaration,
                    const llvm::Function &Definition, const std::string &File) {
  if (sameShape(Declaration.getFunctionType(), Definition.getFunctionType()))
    return;
  failAt(U, "'" + U.Shown + "' is declared as " + U.Declared + ", which calls " +
                typeText(Declaration.getFunctionType()) + ", but " + File + " defines " +
                typeText(Definition.getFunctionType()));
}

// Keeps of Lib only what the kernel calls (and what that calls): the rest
// is made internal and removed, the module's own kernels included, so
// that tidal-raise-nvvm sees only what will run.
void keepOnly(llvm::Module &M, const std::set<std::string> &Needed) {
  if (llvm::NamedMDNode *Annotations = M.getNamedMetadata("nvvm.annotations"))
    Annotations->eraseFromParent();
  for (llvm::Function &F : M) {
    if (F.isDeclaration())
      continue;
    if (Needed.count(F.getName().str())) {
      F.setCallingConv(llvm::CallingConv::C);
      F.setLinkage(llvm::GlobalValue::ExternalLinkage);
    } else {
      F.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
  }
  for (bool Erased = true; Erased;) {
    Erased = false;
    for (llvm::Function &F : llvm::make_early_inc_range(M))
      if (!F.isDeclaration() && F.hasLocalLinkage() && F.use_empty()) {
        F.eraseFromParent();
        Erased = true;
      }
  }
}

} // namespace

namespace {

// A use that a .ptx file defines: its PTX must take what the call passes
// (the number of parameters and whether a value comes back; PTX says no
// more than the widths).
void checkAgainstPtx(const ForeignUse &U, const PtxFunction &F, const std::string &File) {
  std::string Result;
  std::vector<std::string> Params;
  expectedTypes(U, Result, Params);
  bool Returns = Result != "void";
  if (F.Parameters == Params.size() && F.Returns == Returns)
    return;
  std::string Expected = Result + " " + U.Symbol + "(";
  for (size_t I = 0; I < Params.size(); ++I)
    Expected += (I ? ", " : "") + Params[I];
  Expected += ")";
  auto parameters = [](size_t Count) {
    return std::to_string(Count) + (Count == 1 ? " parameter" : " parameters");
  };
  failAt(U, "'" + U.Shown + "' is declared as " + U.Declared +
                (U.ABI == "numba" ? " (Numba's ABI" : " (the C ABI") + ", which calls " +
                Expected + ": " + parameters(Params.size()) +
                (Returns ? " and a result" : ", no result") + ") but " + File + " defines " +
                F.Header + " (" + parameters(F.Parameters) +
                (F.Returns ? " and a result" : ", no result") + ")");
}

} // namespace

namespace {

// Links Lib's definitions of Mine (the symbols the kernel takes from it;
// Needed: every symbol some file gives) into M, raised to marker IR first
// (tidal's LTO-IR is marker IR already), each once and internal.
void linkLibrary(llvm::Module &M, Library &Lib, const std::set<std::string> &Mine,
                 const std::set<std::string> &Needed) {
  llvm::Module &Foreign = *Lib.Module;
  // Each symbol once: a later file's definition of a symbol an earlier
  // one defines is dropped.
  for (llvm::Function &F : Foreign)
    if (!F.isDeclaration() && Needed.count(F.getName().str()) && !Mine.count(F.getName().str()))
      F.deleteBody();
  keepOnly(Foreign, Mine);
  // A variable a file linked before defines too (the same source linked
  // again with the forwarder of a template call, foreign.py): one
  // storage, the first file's.
  for (llvm::GlobalVariable &Variable : Foreign.globals())
    if (Variable.hasInitializer() && !Variable.hasLocalLinkage() &&
        !Variable.hasAppendingLinkage())
      if (const llvm::GlobalVariable *Known =
              M.getGlobalVariable(Variable.getName(), /*AllowInternal=*/false);
          Known && !Known->isDeclaration()) {
        Variable.setInitializer(nullptr);
        Variable.setLinkage(llvm::GlobalValue::ExternalLinkage);
        Variable.setComdat(nullptr);
      }
  // tidal's LTO-IR keeps its function in llvm.used (for its own
  // pipeline): linked, it is an internal function like any other.
  if (llvm::GlobalVariable *Used = Foreign.getGlobalVariable("llvm.used"); Used && Lib.MarkerIR)
    Used->eraseFromParent();
  std::string RaiseError;
  if (!Lib.MarkerIR && !tidal::raiseNVVMModule(Foreign, RaiseError))
    throw CompileError("CompileError",
                       "CUDA C++ of " + Lib.Link->Name + " cannot run on tidal: " + RaiseError,
                       SourceLocation{});
  for (const char *Name : {"llvm.module.flags", "nvvmir.version", "llvm.ident",
                           cxx::DeviceFunctionsMetadata, KernelsMetadataName,
                           EmbeddedMarkerIRMetadata})
    if (llvm::NamedMDNode *Node = Foreign.getNamedMetadata(Name))
      Node->eraseFromParent();
  if (llvm::NamedMDNode *Node = Foreign.getNamedMetadata("tidal.cxx.kernels"))
    Node->eraseFromParent();
  Foreign.setTargetTriple(M.getTargetTriple());
  Foreign.setDataLayout(M.getDataLayout());
  std::vector<std::string> Defined;
  for (llvm::Function &F : Foreign)
    if (!F.isDeclaration())
      Defined.push_back(F.getName().str());
  if (llvm::Linker::linkModules(M, std::move(Lib.Module)))
    throw CompileError("CompileError",
                       "cannot link " + Lib.Link->Name + " into the kernel's module",
                       SourceLocation{});
  // Internal: O3 inlines them into their callers and drops the bodies.
  for (const std::string &Name : Defined)
    if (llvm::Function *F = M.getFunction(Name))
      F->setLinkage(llvm::GlobalValue::InternalLinkage);
}

} // namespace

bool linkForeignCode(llvm::Module &M, const std::vector<ForeignLink> &KernelLinks,
                     TargetKind Target, std::vector<ForeignLink> *PtxLinks) {
  std::vector<ForeignUse> Uses = readUses(M);
  std::vector<ForeignLink> Links = readLinks(M);
  for (const ForeignLink &L : KernelLinks)
    if (std::none_of(Links.begin(), Links.end(), [&](const ForeignLink &O) { return sameLink(O, L); }))
      Links.push_back(L);
  for (const char *Name : {frontend::ForeignCallsMetadata, frontend::ForeignLinksMetadata})
    if (llvm::NamedMDNode *Node = M.getNamedMetadata(Name))
      Node->eraseFromParent();
  if (Uses.empty())
    return false;

  // PTX is GPU code, linked by the driver after tidal's compile: the cpu
  // target cannot run it, which is an error at the first call that needs
  // it (one no other file defines); a kernel that calls only what the
  // other files define runs.
  bool OnCpu = Target == TargetKind::Cpu;
  auto cannotRunPtx = [&](const ForeignUse &U, const std::string &File) {
    throw CompileError("CompileError",
                       "cannot link " + File +
                           " on the cpu target: PTX is GPU machine code, which only runs on "
                           "a GPU (the cuda target links it with the CUDA driver's JIT "
                           "linker); link the CUDA C++ source (.cu) it was compiled from, "
                           "or LLVM IR (.ll, .bc), which tidal compiles for both targets",
                       U.Where);
  };
  auto cannotRunBinary = [&](const ForeignUse &U, const ForeignLink &L) {
    throw CompileError("CompileError",
                       "cannot link " + L.Name + " on the cpu target: it is " +
                           binaryKindName(L.Kind) +
                           " of GPU machine code, which only runs on a GPU (the cuda target "
                           "links it with the CUDA driver's JIT linker); link the CUDA C++ "
                           "source it was compiled from (a .cu file or cuda.CUSource), which "
                           "tidal compiles for both targets",
                       U.Where);
  };

  llvm::LLVMContext &Context = M.getContext();
  std::vector<Library> Libraries;
  for (const ForeignLink &L : Links) {
    if (OnCpu && L.Kind == "ptx")
      Libraries.push_back(Library{&L, nullptr, {}, readPtxFunctions(L.Payload)});
    else
      Libraries.push_back(compileLink(L, Context));
  }
  const ForeignLink *FirstBinary = nullptr;
  for (const ForeignLink &L : Links)
    if (isBinaryKind(L.Kind) && !FirstBinary)
      FirstBinary = &L;

  // Each symbol from the first file that defines it.
  std::map<std::string, Library *> Definer;
  std::set<std::string> Needed;
  bool UsesPtx = false, UsesBinary = false;
  for (const ForeignUse &U : Uses) {
    llvm::Function *Declaration = M.getFunction(U.Symbol);
    Library *Found = nullptr;
    const PtxFunction *InPtx = nullptr;
    const ForeignLink *PtxOnCpu = nullptr; // a .ptx file the cpu target cannot use
    for (Library &Lib : Libraries) {
      if (Lib.Binary)
        continue;
      if (!Lib.Module && OnCpu) {
        for (const PtxFunction &F : Lib.PtxFunctions)
          if (F.Name == U.Symbol && F.Defined && !PtxOnCpu)
            PtxOnCpu = Lib.Link;
        continue;
      }
      if (!Lib.Module) {
        for (const PtxFunction &F : Lib.PtxFunctions)
          if (F.Name == U.Symbol && F.Defined && (F.Linkage == "visible" || F.Linkage == "weak"))
            InPtx = &F;
        if (InPtx) {
          Found = &Lib;
          break;
        }
        continue;
      }
      llvm::Function *Definition = Lib.Module->getFunction(U.Symbol);
      if (Definition && !Definition->isDeclaration()) {
        Found = &Lib;
        break;
      }
    }
    if (!Found && OnCpu) {
      // Named by the .ptx file that defines it, else by the first one.
      if (!PtxOnCpu)
        for (const ForeignLink &L : Links)
          if (L.Kind == "ptx" && !PtxOnCpu)
            PtxOnCpu = &L;
      if (PtxOnCpu)
        cannotRunPtx(U, PtxOnCpu->Name);
      if (FirstBinary)
        cannotRunBinary(U, *FirstBinary);
    }
    if (!Found && FirstBinary) {
      // Left a declaration: tidal cannot read a binary's symbols, so the
      // driver's linker finds it in one (or says it is undefined).
      UsesBinary = true;
      continue;
    }
    if (!Found) {
      std::string Files;
      for (const ForeignLink &L : Links)
        Files += (Files.empty() ? "" : ", ") + L.Name;
      // A function the C++ declares without defining says so, as does
      // one a .ptx file has without .visible (which no other module sees).
      std::string Declared;
      for (Library &Lib : Libraries) {
        for (const cxx::DeviceFunctionBinding &B : Lib.Bindings)
          if (B.Symbol == U.Symbol && !B.Defined)
            Declared = " (" + Lib.Link->Name + " declares " + B.Declaration +
                       " but does not define it)";
        for (const PtxFunction &F : Lib.PtxFunctions)
          if (F.Name == U.Symbol)
            Declared = " (" + Lib.Link->Name + " has " + F.Header +
                       (F.Defined ? ", which is not .visible: other modules cannot call it)"
                                  : " but does not define it)");
      }
      failAt(U, "foreign function '" + U.Shown + "' (" + U.Declared + ", symbol '" + U.Symbol +
                    "') is not defined by " +
                    (Files.empty() ? "any linked file: pass link=['file.cu'] to "
                                     "cuda.declare_device or cuda.jit"
                                   : "the linked files (" + Files + ")") +
                    Declared);
    }
    if (InPtx) {
      // Left a declaration: the driver's linker resolves it.
      checkAgainstPtx(U, *InPtx, Found->Link->Name);
      UsesPtx = true;
      continue;
    }
    const cxx::DeviceFunctionBinding *Binding = nullptr;
    for (const cxx::DeviceFunctionBinding &B : Found->Bindings)
      if (B.Symbol == U.Symbol)
        Binding = &B;
    if (Binding)
      checkAgainstBinding(U, *Binding, Found->Link->Name);
    else if (Declaration)
      checkAgainstIR(U, *Declaration, *Found->Module->getFunction(U.Symbol), Found->Link->Name);
    Definer[U.Symbol] = Found;
    Needed.insert(U.Symbol);
  }
  // Every .ptx file and binary goes to the driver's linker, as Numba links
  // every file it is given.
  if ((UsesPtx || UsesBinary) && PtxLinks)
    for (const ForeignLink &L : Links)
      if (L.Kind == "ptx" || isBinaryKind(L.Kind))
        PtxLinks->push_back(L);

  for (Library &Lib : Libraries) {
    if (!Lib.Module)
      continue;
    std::set<std::string> Mine;
    for (const auto &[Symbol, Owner] : Definer)
      if (Owner == &Lib)
        Mine.insert(Symbol);
    if (Mine.empty())
      continue;
    linkLibrary(M, Lib, Mine, Needed);
  }
  return true;
}

void linkIntoRawModule(llvm::Module &M, const std::vector<ForeignLink> &Links) {
  if (Links.empty())
    return;
  std::vector<Library> Libraries;
  for (const ForeignLink &L : Links) {
    if (L.Kind == "ptx" || isBinaryKind(L.Kind))
      throw std::invalid_argument(
          "RawModule cannot link " + L.Name + ": its kernels link CUDA C++ (.cu, "
          "cuda.CUSource), LLVM IR (.ll, .bc) and tidal's LTO-IR (cuda.compile(..., "
          "output='ltoir')), which tidal compiles for both targets; PTX and binaries are "
          "linked by the CUDA driver for Python kernels' link= only");
    Libraries.push_back(compileLink(L, M.getContext()));
  }
  // What M declares, from the first file that defines it; a definition of
  // another type than the declaration is an error showing both.
  std::map<std::string, Library *> Definer;
  std::set<std::string> Needed;
  for (llvm::Function &F : M) {
    if (!F.isDeclaration() || F.isIntrinsic())
      continue;
    std::string Symbol = F.getName().str();
    for (Library &Lib : Libraries) {
      llvm::Function *Definition = Lib.Module->getFunction(Symbol);
      if (!Definition || Definition->isDeclaration())
        continue;
      if (!sameShape(F.getFunctionType(), Definition->getFunctionType()))
        throw CompileError("CompileError",
                           "'" + Symbol + "' is declared in the CUDA C++ as " +
                               typeText(F.getFunctionType()) + " but " + Lib.Link->Name +
                               " defines " + typeText(Definition->getFunctionType()),
                           SourceLocation{});
      Definer[Symbol] = &Lib;
      Needed.insert(Symbol);
      break;
    }
  }
  for (Library &Lib : Libraries) {
    std::set<std::string> Mine;
    for (const auto &[Symbol, Owner] : Definer)
      if (Owner == &Lib)
        Mine.insert(Symbol);
    if (!Mine.empty())
      linkLibrary(M, Lib, Mine, Needed);
  }
}

std::unique_ptr<runtime::CudaModule>
loadLinkedModule(runtime::CudaContext &Context, const std::string &PTX,
                 const std::string &KernelName, const std::vector<ForeignLink> &PtxLinks) {
  if (PtxLinks.empty())
    return std::make_unique<runtime::CudaModule>(Context, PTX);
  std::vector<runtime::CudaLinkInput> Inputs;
  for (const ForeignLink &L : PtxLinks) {
    int Type = L.Kind == "cubin"    ? runtime::cu::JitInputCubin
               : L.Kind == "fatbin" ? runtime::cu::JitInputFatbinary
               : L.Kind == "object" ? runtime::cu::JitInputObject
               : L.Kind == "archive" ? runtime::cu::JitInputLibrary
                                     : runtime::cu::JitInputPtx;
    Inputs.push_back({L.Name, L.Payload, Type});
  }
  std::string KernelInput = "the PTX of kernel '" + KernelName + "'";
  try {
    return std::make_unique<runtime::CudaModule>(Context, PTX, KernelInput, Inputs);
  } catch (const runtime::CudaDriverError &Error) {
    if (Error.call() != "cuLinkAddData" && Error.call() != "cuLinkComplete")
      throw;
    // The JIT's log, located in the file it names where it can be: an
    // undefined reference at the file's .extern of the symbol, ptxas's
    // "line N" in the input it rejected.
    std::string Message = Error.what();
    SourceLocation Where;
    // Only PTX text has lines to point at; a binary's errors stay the
    // driver's, with its log.
    auto find = [&](const std::string &Name) -> const ForeignLink * {
      for (const ForeignLink &L : PtxLinks)
        if (L.Name == Name && L.Kind == "ptx")
          return &L;
      return nullptr;
    };
    static const std::string Undefined = "Undefined reference to '";
    size_t At = Message.find(Undefined);
    if (At != std::string::npos) {
      size_t SymbolEnd = Message.find('\'', At + Undefined.size());
      std::string Symbol = Message.substr(At + Undefined.size(), SymbolEnd - At - Undefined.size());
      size_t In = Message.find("in '", SymbolEnd);
      if (In != std::string::npos) {
        std::string Name = Message.substr(In + 4, Message.find('\'', In + 4) - In - 4);
        if (const ForeignLink *L = find(Name)) {
          for (const PtxFunction &F : readPtxFunctions(L->Payload))
            if (F.Name == Symbol && !F.Defined) {
              Where = locationIn(L->Name, L->Payload, F.Offset);
              Where.Column = 1;
              break;
            }
          if (Where.File.empty())
            Where = lineIn(L->Name, L->Payload, 1);
        }
      }
    } else if (Error.call() == "cuLinkAddData") {
      for (const ForeignLink &L : PtxLinks)
        if (L.Kind == "ptx" && Message.find("rejected " + L.Name + " ") != std::string::npos) {
          static const std::string LineWord = "line ";
          size_t Line = Message.find(LineWord, Message.find('\n'));
          int Number = Line == std::string::npos ? 1 : std::atoi(Message.c_str() + Line + LineWord.size());
          Where = lineIn(L.Name, L.Payload, std::max(Number, 1));
          break;
        }
    }
    if (Where.File.empty())
      throw;
    throw CompileError("CompileError", Message, Where);
  }
}

std::vector<ForeignLink> foreignLinksFromPython(PyObject *Links) {
  std::vector<ForeignLink> Out;
  if (!Links || Links == Py_None)
    return Out;
  PyRef Items = PyRef::check(PySequence_Fast(Links, "link must be a list"));
  for (Py_ssize_t I = 0; I < PySequence_Fast_GET_SIZE(Items.get()); ++I) {
    PyObject *Item = PySequence_Fast_GET_ITEM(Items.get(), I);
    PyObject *Kind, *Name, *Payload, *Options;
    if (!PyArg_ParseTuple(Item, "OOOO", &Kind, &Name, &Payload, &Options))
      throw frontend::PythonErrorSet();
    ForeignLink L;
    L.Kind = PyRef::borrow(Kind).str();
    L.Name = PyRef::borrow(Name).str();
    if (PyBytes_Check(Payload)) {
      L.Payload.assign(PyBytes_AS_STRING(Payload), PyBytes_GET_SIZE(Payload));
    } else {
      Py_ssize_t Size = 0;
      const char *Text = PyUnicode_AsUTF8AndSize(Payload, &Size);
      if (!Text)
        throw frontend::PythonErrorSet();
      L.Payload.assign(Text, Size);
    }
    PyRef OptionItems = PyRef::check(PySequence_Fast(Options, "link options must be a sequence"));
    for (Py_ssize_t J = 0; J < PySequence_Fast_GET_SIZE(OptionItems.get()); ++J)
      L.Options.push_back(PyRef::borrow(PySequence_Fast_GET_ITEM(OptionItems.get(), J)).str());
    Out.push_back(std::move(L));
  }
  return Out;
}

namespace {

PyObject *module_cxx_device_functions(PyObject *, PyObject *Args) {
  const char *Code, *FileName;
  PyObject *Options;
  if (!PyArg_ParseTuple(Args, "ssO", &Code, &FileName, &Options))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    std::vector<std::string> ClangOptions;
    PyRef Items = PyRef::check(PySequence_Fast(Options, "clang options must be a sequence"));
    for (Py_ssize_t I = 0; I < PySequence_Fast_GET_SIZE(Items.get()); ++I)
      ClangOptions.push_back(PyRef::borrow(PySequence_Fast_GET_ITEM(Items.get(), I)).str());
    llvm::LLVMContext Context;
    std::unique_ptr<llvm::Module> M = compileOrThrow(Context, Code, FileName, ClangOptions);
    PyRef List = PyRef::check(PyList_New(0));
    for (const cxx::DeviceFunctionBinding &B : cxx::readBindings(*M)) {
      PyRef Params = PyRef::check(PyList_New(0));
      for (const std::string &P : B.ParameterTypes)
        if (PyList_Append(Params.get(), PyRef::check(PyUnicode_FromString(P.c_str())).get()) < 0)
          return nullptr;
      PyRef Entry = PyRef::check(Py_BuildValue(
          "(ssssOsO)", B.Symbol.c_str(), B.QualifiedName.c_str(), B.Declaration.c_str(),
          B.Reason.c_str(), B.Defined ? Py_True : Py_False, B.ReturnType.c_str(), Params.get()));
      if (PyList_Append(List.get(), Entry.get()) < 0)
        return nullptr;
    }
    return List.release();
  });
}

PyMethodDef ForeignMethods[] = {
    {"_cxx_device_functions", module_cxx_device_functions, METH_VARARGS,
     "_cxx_device_functions(code, file_name, options): [(symbol, qualified name, declaration, "
     "reason, defined, return type, [parameter types])] of the __device__ functions of CUDA "
     "C++ source, as cuda.include binds them."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int addForeignFunctions(PyObject *Module) {
  return PyModule_AddFunctions(Module, ForeignMethods);
}

} // namespace tidal::binding
