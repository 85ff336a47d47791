// compile_to_ptx: PTX of a kernel or of a device function for given argument
// types, without a GPU or a driver, whatever the current target
// (tidal.cuda.compile_ptx and cuda.compile, python/tidal/cuda/compilation.py).
//
// A device function is compiled by way of a kernel that calls it (the
// frontend compiles functions reached from kernels): the kernel is then
// removed, and the device function kept as an external function, either
// as it is under its Python name (abi 'c': T name(args...)) or behind
// Numba's ABI (abi 'numba': i32 name(T *func_retval, args...), 0 on
// success).
#include "ForeignLinking.h"
#include "ArgumentTyping.h"
#include "Errors.h"
#include "ModuleParts.h"

#include "Compiler.h"
#include "Frontend.h"
#include "tidal/Contract.h"

#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

namespace tidal::binding {

using namespace tidal::frontend;

namespace {

// Removes the kernel, and what names it, from a module lowered and
// optimised for NVPTX: only the device function it called is left.
void removeKernel(llvm::Module &M, const std::string &KernelName) {
  llvm::Function *Kernel = M.getFunction(KernelName);
  if (!Kernel)
    return;
  for (const char *Name : {KernelsMetadataName, "nvvm.annotations"}) {
    llvm::NamedMDNode *Named = M.getNamedMetadata(Name);
    if (!Named)
      continue;
    std::vector<llvm::MDNode *> Others;
    for (llvm::MDNode *Node : Named->operands()) {
      auto *First = Node->getNumOperands()
                        ? llvm::dyn_cast_or_null<llvm::ValueAsMetadata>(Node->getOperand(0))
                        : nullptr;
      if (!First || First->getValue() != Kernel)
        Others.push_back(Node);
    }
    Named->clearOperands();
    for (llvm::MDNode *Node : Others)
      Named->addOperand(Node);
  }
  Kernel->eraseFromParent();
}

// Makes the device function that KM's kernel calls (`CalleeSymbol`) the
// module's external function `Symbol`, with the ABI asked for. The kernel
// stays until the lowering is done (the plugin checks that markers are
// reached from a kernel); removeKernel takes it out.
void keepDeviceFunction(KernelModule &KM, const std::string &CalleeSymbol,
                        const std::string &Symbol, bool NumbaABI, bool ForceInline) {
  llvm::Module &M = *KM.Module;
  llvm::Function *Kernel = M.getFunction(KM.KernelName);
  llvm::Function *Callee = M.getFunction(CalleeSymbol);
  if (!Kernel || !Callee)
    throw std::runtime_error("internal error: the device function '" + CalleeSymbol +
                             "' is missing from its module");
  // PTX's identifiers: a user's abi_name is checked, not mangled (C++ calls
  // it by that name); the default names are frontend::symbolName's.
  bool Legal = !Symbol.empty() && !std::isdigit(static_cast<unsigned char>(Symbol[0]));
  for (char C : Symbol)
    Legal &= std::isalnum(static_cast<unsigned char>(C)) || C == '_' || C == '$';
  if (!Legal)
    throw std::invalid_argument("the symbol '" + Symbol + "' of the device function is not a "
                                "PTX name (letters, digits, '_' and '$', not starting with a "
                                "digit)");
  llvm::Function *Kept = Callee;
  if (!NumbaABI) {
    if (llvm::Function *Existing = M.getFunction(Symbol); Existing && Existing != Callee)
      throw std::invalid_argument("the symbol '" + Symbol + "' of the device function is "
                                  "already a function of its module");
    Callee->setName(Symbol);
    Callee->setLinkage(llvm::GlobalValue::ExternalLinkage);
  } else {
    // i32 Symbol(ptr func_retval, args...): the result stored, 0 returned.
    llvm::LLVMContext &Ctx = M.getContext();
    llvm::Type *Result = Callee->getReturnType();
    std::vector<llvm::Type *> Params{llvm::PointerType::get(Ctx, 0)};
    for (llvm::Argument &A : Callee->args())
      Params.push_back(A.getType());
    Kept = llvm::Function::Create(
        llvm::FunctionType::get(llvm::Type::getInt32Ty(Ctx), Params, false),
        llvm::GlobalValue::ExternalLinkage, Symbol, M);
    Kept->getArg(0)->setName("func_retval");
    llvm::IRBuilder<> B(llvm::BasicBlock::Create(Ctx, "entry", Kept));
    // Debug info and lineinfo: the wrapper is at the function's def line.
    if (llvm::DISubprogram *Subprogram = Callee->getSubprogram()) {
      llvm::DISubprogram *Copy = llvm::MDNode::replaceWithDistinct(Subprogram->clone());
      Kept->setSubprogram(Copy);
      B.SetCurrentDebugLocation(llvm::DILocation::get(Ctx, Subprogram->getLine(), 0, Copy));
    }
    std::vector<llvm::Value *> Arguments;
    for (unsigned I = 1; I < Kept->arg_size(); ++I) {
      Kept->getArg(I)->setName(Callee->getArg(I - 1)->getName());
      Arguments.push_back(Kept->getArg(I));
    }
    llvm::Value *Value = B.CreateCall(Callee, Arguments);
    if (!Result->isVoidTy())
      B.CreateStore(Value, Kept->getArg(0));
    B.CreateRet(B.getInt32(0));
    Callee->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  // forceinline (LTO-IR only, as numba-cuda): the linker of the code that
  // calls it inlines it.
  if (ForceInline) {
    Kept->removeFnAttr(llvm::Attribute::NoInline);
    Kept->addFnAttr(llvm::Attribute::AlwaysInline);
  }
  // Not a kernel: llvm.used keeps it through the pipeline's internalisation.
  llvm::appendToUsed(M, {Kept});
}

// compile_to_ptx(function, argument types, sm, debug, lineinfo, fastmath,
//                device function's name or None, symbol, numba abi,
//                output="ptx", launch bounds=(0, 0, 0), forceinline=False)
//   -> (code, {variable: type text}, [(kind, name, bytes) of the PTX and
//   binaries left to the driver's linker]). output "llvm" gives the NVVM IR that
//   the PTX is made from (lowered and optimised for NVPTX) as text, "ltoir"
//   the same module as bitcode (bytes). The launch bounds (max threads per
//   block, min blocks per SM, max blocks per cluster; 0 for none) go on a
//   kernel; forceinline marks the kept device function alwaysinline.
PyObject *compile_to_ptx(PyObject *, PyObject *Args) {
  PyObject *Function, *ArgTypes, *CalleeName;
  const char *Symbol;
  const char *Output = "ptx";
  unsigned SM;
  unsigned MaxThreads = 0, MinBlocks = 0, MaxClusterRank = 0;
  int Debug, LineInfo, FastMath, NumbaABI, ForceInline = 0;
  if (!PyArg_ParseTuple(Args, "OOIpppOsp|s(III)p", &Function, &ArgTypes, &SM, &Debug, &LineInfo,
                        &FastMath, &CalleeName, &Symbol, &NumbaABI, &Output, &MaxThreads,
                        &MinBlocks, &MaxClusterRank, &ForceInline))
    return nullptr;
  const std::string OutputKind = Output;
  const bool WantsLLVM = OutputKind == "llvm", WantsBitcode = OutputKind == "ltoir";
  if (!WantsLLVM && !WantsBitcode && OutputKind != "ptx") {
    PyErr_Format(PyExc_ValueError,
                 "compile_to_ptx: output is 'ptx', 'llvm' or 'ltoir', not '%s'", Output);
    return nullptr;
  }
  return translateErrors([&]() -> PyObject * {
    PyRef Items = PyRef::check(PySequence_Fast(ArgTypes, "argument types must be a list"));
    std::vector<Type> Types;
    for (Py_ssize_t I = 0; I < PySequence_Fast_GET_SIZE(Items.get()); ++I)
      Types.push_back(typeFromDescription(PySequence_Fast_GET_ITEM(Items.get(), I)));
    FrontendOptions Options;
    Options.Debug = Debug;
    Options.LineInfo = LineInfo;
    Options.FastMath = FastMath;
    Options.MaxThreadsPerBlock = MaxThreads;
    Options.MinBlocksPerSM = MinBlocks;
    KernelModule KM = emitKernel(Function, Types, Options);
    if (MaxClusterRank)
      if (llvm::Function *Kernel = KM.Module->getFunction(KM.KernelName))
        Kernel->addFnAttr(MaxClusterRankAttribute, std::to_string(MaxClusterRank));
    // PTX and binaries stay for the driver's linker: compile_all lists them.
    std::vector<ForeignLink> DriverLinks;
    linkForeignCode(*KM.Module, {}, TargetKind::Cuda, &DriverLinks);
    if (CalleeName != Py_None) {
      // The frontend's symbol of the callee for these types (FunctionCompiler::typeDevice).
      std::string CalleeSymbol = symbolName(PyRef::borrow(CalleeName).str());
      for (const Type &T : Types)
        CalleeSymbol += "." + T.mangle();
      keepDeviceFunction(KM, CalleeSymbol, Symbol, NumbaABI, ForceInline);
    }
    // tidal's LTO-IR also carries the function's marker IR, which tidal
    // links in place of the NVPTX code (the cpu target runs it too).
    std::string MarkerBitcode;
    if (WantsBitcode && CalleeName != Py_None) {
      std::unique_ptr<llvm::Module> Markers = llvm::CloneModule(*KM.Module);
      removeKernel(*Markers, KM.KernelName);
      llvm::raw_string_ostream Stream(MarkerBitcode);
      llvm::WriteBitcodeToFile(*Markers, Stream);
    }
    lowerForNVPTX(*KM.Module, SM);
    if (CalleeName != Py_None)
      removeKernel(*KM.Module, KM.KernelName);
    std::string PTX;
    if (WantsLLVM || WantsBitcode) {
      llvm::raw_string_ostream Stream(PTX);
      if (!MarkerBitcode.empty()) {
        llvm::LLVMContext &Ctx = KM.Module->getContext();
        KM.Module->getOrInsertNamedMetadata(EmbeddedMarkerIRMetadata)
            ->addOperand(llvm::MDNode::get(Ctx, {llvm::MDString::get(Ctx, MarkerBitcode)}));
      }
      if (WantsBitcode)
        llvm::WriteBitcodeToFile(*KM.Module, Stream);
      else
        KM.Module->print(Stream, nullptr);
      Stream.flush();
      forgetNVPTXModule(*KM.Module, SM);
    } else {
      PTX = emitPTX(*KM.Module, SM);
    }
    PyRef Variables = PyRef::check(PyDict_New());
    for (const auto &[Name, TypeText] : KM.VariableTypes) {
      PyRef Text = PyRef::check(PyUnicode_FromString(TypeText.c_str()));
      if (PyDict_SetItemString(Variables.get(), Name.c_str(), Text.get()) < 0)
        return nullptr;
    }
    PyRef Links = PyRef::check(PyList_New(0));
    for (const ForeignLink &L : DriverLinks) {
      PyRef Item = PyRef::check(Py_BuildValue("(ssy#)", L.Kind.c_str(), L.Name.c_str(),
                                              L.Payload.data(),
                                              static_cast<Py_ssize_t>(L.Payload.size())));
      if (PyList_Append(Links.get(), Item.get()) < 0)
        return nullptr;
    }
    if (WantsBitcode)
      return Py_BuildValue("(y#OO)", PTX.data(), static_cast<Py_ssize_t>(PTX.size()),
                           Variables.get(), Links.get());
    return Py_BuildValue("(sOO)", PTX.c_str(), Variables.get(), Links.get());
  });
}

// symbol_name(name): frontend::symbolName, the symbol a user's name is
// given (compile_ptx's default symbols are made from it).
PyObject *symbol_name(PyObject *, PyObject *Name) {
  if (!PyUnicode_Check(Name)) {
    PyErr_SetString(PyExc_TypeError, "symbol_name takes a str");
    return nullptr;
  }
  return translateErrors([&]() -> PyObject * {
    return PyUnicode_FromString(symbolName(PyRef::borrow(Name).str()).c_str());
  });
}

PyMethodDef CompileToPTXMethods[] = {
    {"symbol_name", symbol_name, METH_O,
     "symbol_name(name): the symbol tidal gives a user's name on every target ('<lambda>' "
     "is '$3clambda$3e')."},
    {"compile_to_ptx", compile_to_ptx, METH_VARARGS,
     "compile_to_ptx(function, types, sm, debug, lineinfo, fastmath, callee, symbol, "
     "numba_abi, output='ptx', launch_bounds=(0, 0, 0), forceinline=False): (code, "
     "{variable: type}, [(kind, name, bytes) left to the driver's linker]); callee None compiles the kernel `function`, else the device "
     "function of that name that `function` calls with these types; output 'llvm' gives "
     "the NVVM IR instead of the PTX, 'ltoir' that IR as bitcode (bytes)."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int addCompileToPTXFunctions(PyObject *Module) {
  return PyModule_AddFunctions(Module, CompileToPTXMethods);
}

} // namespace tidal::binding
