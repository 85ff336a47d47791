// Foreign code linked into a Python kernel's module (ForeignLinking.h), and
// the list of a CUDA C++ source's device functions that cuda.include binds.

#include "ForeignLinking.h"

#include "CompileError.h"
#include "DeviceBinding.h"
#include "Errors.h"
#include "PyRef.h"
#include "RawKernels.h"

#include "tidal/Contract.h"
#include "tidal/Passes.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
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

// One linked file, compiled: its module and, for CUDA C++, the bindings
// of its device functions.
struct Library {
  const ForeignLink *Link;
  std::unique_ptr<llvm::Module> Module;
  std::vector<cxx::DeviceFunctionBinding> Bindings;
};

std::unique_ptr<llvm::Module> parseLinkedIR(const ForeignLink &L, llvm::LLVMContext &Context) {
  llvm::SMDiagnostic Diagnostic;
  std::unique_ptr<llvm::Module> M;
  if (L.Kind == "ll") {
    M = llvm::parseAssemblyString(L.Payload, Diagnostic, Context);
    if (!M) {
      SourceLocation Where;
      Where.File = L.Name;
      Where.Line = Diagnostic.getLineNo();
      Where.Column = Diagnostic.getColumnNo() + 1;
      Where.SourceLine = Diagnostic.getLineContents().str();
      throw CompileError("CompileError", "LLVM IR: " + Diagnostic.getMessage().str(), Where);
    }
    return M;
  }
  auto Parsed = llvm::parseBitcodeFile(llvm::MemoryBufferRef(L.Payload, L.Name), Context);
  if (!Parsed)
    throw CompileError("CompileError",
                       "cannot read LLVM bitcode " + L.Name + ": " +
                           llvm::toString(Parsed.takeError()),
                       SourceLocation{});
  return std::move(*Parsed);
}

Library compileLink(const ForeignLink &L, llvm::LLVMContext &Context, TargetKind Target) {
  Library Lib{&L, nullptr, {}};
  if (L.Kind == "cu") {
    Lib.Module = compileOrThrow(Context, L.Payload, L.Name, L.Options);
    Lib.Bindings = cxx::readBindings(*Lib.Module);
  } else if (L.Kind == "ll" || L.Kind == "bc") {
    Lib.Module = parseLinkedIR(L, Context);
  } else if (L.Kind == "ptx") {
    if (Target == TargetKind::Cpu)
      throw CompileError("CompileError",
                         "cannot link " + L.Name +
                             " on the cpu target: PTX is GPU machine code, which only runs "
                             "on a GPU; link the CUDA C++ source (.cu) it was compiled from "
                             "instead, which tidal compiles for both targets",
                         SourceLocation{});
    throw CompileError("CompileError",
                       "cannot link " + L.Name +
                           ": tidal links PTX files on neither target yet (it links before "
                           "optimisation, at the LLVM level); link the CUDA C++ source (.cu) "
                           "or LLVM IR (.ll, .bc) instead",
                       SourceLocation{});
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

// A declaration the C++ definition disagrees with: both shown.
void checkAgainstBinding(const ForeignUse &U, const cxx::DeviceFunctionBinding &B,
                         const std::string &File) {
  std::string Result;
  std::vector<std::string> Params;
  expectedTypes(U, Result, Params);
  bool Same = B.Reason.empty() && B.ReturnType == Result &&
              B.ParameterTypes.size() == Params.size();
  for (size_t I = 0; Same && I < Params.size(); ++I)
    Same = withoutConst(B.ParameterTypes[I]) == withoutConst(Params[I]);
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
  if (Declaration.getFunctionType() == Definition.getFunctionType())
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

bool linkForeignCode(llvm::Module &M, const std::vector<ForeignLink> &KernelLinks,
                     TargetKind Target) {
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

  llvm::LLVMContext &Context = M.getContext();
  std::vector<Library> Libraries;
  for (const ForeignLink &L : Links)
    Libraries.push_back(compileLink(L, Context, Target));

  // Each symbol from the first file that defines it.
  std::map<std::string, Library *> Definer;
  std::set<std::string> Needed;
  for (const ForeignUse &U : Uses) {
    llvm::Function *Declaration = M.getFunction(U.Symbol);
    Library *Found = nullptr;
    for (Library &Lib : Libraries) {
      llvm::Function *Definition = Lib.Module->getFunction(U.Symbol);
      if (Definition && !Definition->isDeclaration()) {
        Found = &Lib;
        break;
      }
    }
    if (!Found) {
      std::string Files;
      for (const ForeignLink &L : Links)
        Files += (Files.empty() ? "" : ", ") + L.Name;
      // A function the C++ declares without defining says so.
      std::string Declared;
      for (Library &Lib : Libraries)
        for (const cxx::DeviceFunctionBinding &B : Lib.Bindings)
          if (B.Symbol == U.Symbol && !B.Defined)
            Declared = " (" + Lib.Link->Name + " declares " + B.Declaration +
                       " but does not define it)";
      failAt(U, "foreign function '" + U.Shown + "' (" + U.Declared + ", symbol '" + U.Symbol +
                    "') is not defined by " +
                    (Files.empty() ? "any linked file: pass link=['file.cu'] to "
                                     "cuda.declare_device or cuda.jit"
                                   : "the linked files (" + Files + ")") +
                    Declared);
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

  for (Library &Lib : Libraries) {
    std::set<std::string> Mine;
    for (const auto &[Symbol, Owner] : Definer)
      if (Owner == &Lib)
        Mine.insert(Symbol);
    if (Mine.empty())
      continue;
    llvm::Module &Foreign = *Lib.Module;
    // Each symbol once: a later file's definition of a symbol an earlier
    // one defines is dropped.
    for (llvm::Function &F : Foreign)
      if (!F.isDeclaration() && Needed.count(F.getName().str()) && !Mine.count(F.getName().str()))
        F.deleteBody();
    keepOnly(Foreign, Mine);
    std::string RaiseError;
    if (!tidal::raiseNVVMModule(Foreign, RaiseError))
      throw CompileError("CompileError",
                         "CUDA C++ of " + Lib.Link->Name + " cannot run on tidal: " + RaiseError,
                         SourceLocation{});
    for (const char *Name : {"llvm.module.flags", "nvvmir.version", "llvm.ident",
                             cxx::DeviceFunctionsMetadata, KernelsMetadataName})
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
  return true;
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
