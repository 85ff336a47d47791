// CUDA C++ kernels from Python (RawKernels.h): clang's diagnostics as a
// CompileError, the kernel list with parameter types, and the adapter kernel
// between tidal's launch ABI and the C++ kernel's parameters.

#include "RawKernels.h"

#include "ForeignLinking.h"

#include "CompileError.h"
#include "Compiler.h"
#include "Errors.h"
#include "PyRef.h"

#include "CudaCompiler.h"
#include "ForeignFunctions.h"
#include "tidal/Contract.h"
#include "tidal/Passes.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugLoc.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cstring>
#include <optional>
#include <regex>
#include <stdexcept>

namespace tidal::binding {

using frontend::CompileError;
using frontend::KernelModule;
using frontend::PyRef;
using frontend::Scalar;
using frontend::Type;

namespace {

// cxx::compileCuda, given by tidal._cxx (CxxModule.cpp) when it is imported:
// _tidal itself does not link Clang.
using CompileCudaFunction = std::unique_ptr<llvm::Module> (*)(llvm::LLVMContext &,
                                                              llvm::StringRef, llvm::StringRef,
                                                              llvm::ArrayRef<std::string>,
                                                              std::string &);
CompileCudaFunction CompileCuda = nullptr;
// cxx::takeCacheWarnings: why its disk cache was not trusted, once each.
using TakeCacheWarningsFunction = std::vector<std::string> (*)();
TakeCacheWarningsFunction TakeCacheWarnings = nullptr;

// The reasons the disk cache of compiled C++ was not used, as
// tidal.errors.UntrustedCacheWarning.
void warnOfUntrustedCache() {
  if (!TakeCacheWarnings)
    return;
  for (const std::string &Why : TakeCacheWarnings()) {
    PyRef Category = frontend::importModule("tidal.errors").attr("UntrustedCacheWarning");
    if (PyErr_WarnEx(Category.get(), Why.c_str(), 1) < 0)
      throw frontend::PythonErrorSet();
  }
}

// Line `Line` (1-based) of Text, or "".
std::string lineOf(const std::string &Text, int Line) {
  size_t Start = 0;
  for (int I = 1; I < Line; ++I) {
    Start = Text.find('\n', Start);
    if (Start == std::string::npos)
      return "";
    ++Start;
  }
  size_t End = Text.find('\n', Start);
  return Text.substr(Start, End == std::string::npos ? std::string::npos : End - Start);
}

// Clang's diagnostics as a CompileError at the first error's place, with
// the rest of what clang printed after its message.
[[noreturn]] void throwClangError(const std::string &Diagnostics, const std::string &Code,
                                  const std::string &FileName) {
  // The first error, located, with the notes clang gives after it (the
  // candidates of an overloaded call, the template a deduction failed on).
  static const std::regex First(R"(^(.*):(\d+):(\d+): (?:fatal )?error: (.*)$)");
  static const std::regex Note(R"(^(.*):(\d+):(\d+): note: (.*)$)");
  std::smatch Match;
  std::optional<frontend::SourceLocation> Where;
  std::string Message;
  unsigned Notes = 0;
  size_t Start = 0;
  while (Start < Diagnostics.size()) {
    size_t End = Diagnostics.find('\n', Start);
    std::string Line = Diagnostics.substr(Start, End == std::string::npos ? std::string::npos
                                                                          : End - Start);
    if (!Where && std::regex_match(Line, Match, First)) {
      Where.emplace();
      Where->File = Match[1];
      Where->Line = std::stoi(Match[2]);
      Where->Column = std::stoi(Match[3]);
      Where->SourceLine = Where->File == FileName ? lineOf(Code, Where->Line) : "";
      Message = "CUDA C++: " + Match[4].str();
    } else if (Where && std::regex_match(Line, Match, Note)) {
      if (Notes++ < 3)
        Message += " (note: " + Match[4].str() + ", at " + Match[1].str() + ":" +
                   Match[2].str() + ":" + Match[3].str() + ")";
    } else if (Where && Line.find(": error: ") != std::string::npos) {
      break; // the next error
    }
    if (End == std::string::npos)
      break;
    Start = End + 1;
  }
  if (Where)
    throw CompileError("CompileError", Message, *Where);
  throw CompileError("CompileError", "CUDA C++: " + Diagnostics, frontend::SourceLocation{});
}

} // namespace

std::unique_ptr<llvm::Module> compileOrThrow(llvm::LLVMContext &Context, const std::string &Code,
                                             const std::string &FileName,
                                             const std::vector<std::string> &Options) {
  if (!CompileCuda)
    throw std::runtime_error("CUDA C++ needs tidal's Clang module: import tidal._cxx first");
  std::string Error;
  std::unique_ptr<llvm::Module> Clangs = CompileCuda(Context, Code, FileName, Options, Error);
  warnOfUntrustedCache();
  if (!Clangs)
    throwClangError(Error, Code, FileName);
  // Clang optimised its module with the NVPTX passes, which cached its
  // annotations by address: tidal goes on with a copy, and the original is
  // forgotten before it dies (forgetNVPTXAnnotations, tidal/Passes.h).
  std::unique_ptr<llvm::Module> M = llvm::CloneModule(*Clangs);
  frontend::forgetNVPTXModule(*Clangs, frontend::DefaultSM);
  return M;
}

namespace {

struct KernelInfo {
  std::string Symbol, Name;
  std::vector<std::string> Types, Names;
};

std::vector<KernelInfo> kernelsOf(const llvm::Module &M) {
  std::vector<KernelInfo> Kernels;
  const llvm::NamedMDNode *Node = M.getNamedMetadata(cxx::KernelParametersMetadata);
  if (!Node)
    return Kernels;
  for (const llvm::MDNode *K : Node->operands()) {
    KernelInfo Info;
    auto Text = [&](unsigned I) { return llvm::cast<llvm::MDString>(K->getOperand(I))->getString().str(); };
    Info.Symbol = Text(0);
    Info.Name = Text(1);
    for (unsigned I = 2; I + 1 < K->getNumOperands(); I += 2) {
      Info.Types.push_back(Text(I));
      Info.Names.push_back(Text(I + 1));
    }
    Kernels.push_back(std::move(Info));
  }
  return Kernels;
}

// The C++ parameter text "float32", "const float64*" as (scalar, pointer).
bool parseParameter(const std::string &Text, Scalar &Element, bool &Pointer) {
  std::string Name = Text;
  if (Name.rfind("const ", 0) == 0)
    Name = Name.substr(6);
  Pointer = !Name.empty() && Name.back() == '*';
  if (Pointer)
    Name.pop_back();
  return frontend::scalarFromName(Name, Element);
}

// The C++ spelling of a parameter text, for errors.
std::string cxxSpelling(const std::string &Text) {
  frontend::ForeignParameter Struct;
  if (Text.find("struct ") != std::string::npos && frontend::parseForeignParameter(Text, Struct) &&
      Struct.Record)
    return (Struct.Const ? "const " : "") +
           frontend::describeRecord(Struct.RecordName, *Struct.Record) + (Struct.Pointer ? " *" : "");
  if (!Text.empty() && Text[0] == '?')
    return Text.substr(1);
  Scalar Element;
  bool Pointer;
  if (!parseParameter(Text, Element, Pointer))
    return Text;
  const char *Cxx = frontend::cxxScalarName(Element);
  std::string Base = Cxx ? Cxx : frontend::scalarName(Element);
  return (Text.rfind("const ", 0) == 0 ? "const " : "") + Base + (Pointer ? " *" : "");
}

llvm::Type *llvmScalar(llvm::LLVMContext &Context, Scalar S) {
  switch (S) {
  case Scalar::Bool:
    return llvm::Type::getInt1Ty(Context);
  case Scalar::Float16:
    return llvm::Type::getHalfTy(Context);
  case Scalar::Float32:
    return llvm::Type::getFloatTy(Context);
  case Scalar::Float64:
    return llvm::Type::getDoubleTy(Context);
  default:
    return llvm::Type::getIntNTy(Context, frontend::bitWidth(S));
  }
}

// Value (of tidal scalar type From) converted to the C++ parameter's type To
// (of scalar ToScalar), as a C++ conversion does.
llvm::Value *convertScalar(llvm::IRBuilder<> &B, llvm::Value *Value, Scalar From, llvm::Type *To,
                           Scalar ToScalar) {
  llvm::Type *Source = Value->getType();
  if (Source == To)
    return Value;
  bool FromFloat = frontend::isFloat(From), ToFloat = frontend::isFloat(ToScalar);
  bool FromSigned = From != Scalar::Bool && frontend::isSigned(From);
  if (ToScalar == Scalar::Bool) {
    llvm::Value *Zero = llvm::Constant::getNullValue(Source);
    llvm::Value *Flag = FromFloat ? B.CreateFCmpUNE(Value, Zero) : B.CreateICmpNE(Value, Zero);
    return B.CreateZExtOrTrunc(Flag, To);
  }
  if (FromFloat && ToFloat)
    return B.CreateFPCast(Value, To);
  if (FromFloat)
    return frontend::isSigned(ToScalar) ? B.CreateFPToSI(Value, To) : B.CreateFPToUI(Value, To);
  if (ToFloat)
    return FromSigned ? B.CreateSIToFP(Value, To) : B.CreateUIToFP(Value, To);
  return B.CreateIntCast(Value, To, FromSigned);
}

const KernelInfo &findKernel(const std::vector<KernelInfo> &Kernels, const std::string &Symbol) {
  for (const KernelInfo &K : Kernels)
    if (K.Symbol == Symbol)
      return K;
  throw std::runtime_error("internal error: kernel '" + Symbol + "' is gone from its module");
}

// A __device__ or __constant__ variable of the source (clang's addrspace(1)
// and addrspace(4) globals it defines and names).
struct DeviceGlobal {
  std::string Symbol, Name;
  uint64_t Size = 0, Align = 1;
  bool Constant = false;
  bool Copyable = false; // its initializer is numbers (Bytes holds them)
  std::string Bytes;
};

// Writes C's bytes at Out (Layout's sizes and offsets); false for a
// constant that is not numbers (a pointer, an expression).
bool constantBytes(const llvm::DataLayout &Layout, const llvm::Constant *C, char *Out) {
  if (llvm::isa<llvm::ConstantAggregateZero>(C) || llvm::isa<llvm::ConstantPointerNull>(C) ||
      llvm::isa<llvm::UndefValue>(C))
    return true; // the storage starts zeroed
  if (const auto *Int = llvm::dyn_cast<llvm::ConstantInt>(C)) {
    uint64_t Bytes = Layout.getTypeStoreSize(Int->getType());
    llvm::APInt Value = Int->getValue().zextOrTrunc(Bytes * 8);
    for (uint64_t I = 0; I < Bytes; ++I)
      Out[I] = static_cast<char>(Value.extractBitsAsZExtValue(8, I * 8));
    return true;
  }
  if (const auto *Float = llvm::dyn_cast<llvm::ConstantFP>(C)) {
    llvm::APInt Bits = Float->getValueAPF().bitcastToAPInt();
    uint64_t Bytes = Layout.getTypeStoreSize(Float->getType());
    for (uint64_t I = 0; I < Bytes; ++I)
      Out[I] = static_cast<char>(Bits.extractBitsAsZExtValue(8, I * 8));
    return true;
  }
  if (const auto *Data = llvm::dyn_cast<llvm::ConstantDataSequential>(C)) {
    llvm::StringRef Raw = Data->getRawDataValues();
    std::memcpy(Out, Raw.data(), Raw.size());
    return true;
  }
  if (const auto *Struct = llvm::dyn_cast<llvm::ConstantStruct>(C)) {
    const llvm::StructLayout *Fields = Layout.getStructLayout(Struct->getType());
    for (unsigned I = 0; I < Struct->getNumOperands(); ++I)
      if (!constantBytes(Layout, Struct->getOperand(I),
                         Out + Fields->getElementOffset(I).getFixedValue()))
        return false;
    return true;
  }
  if (const auto *Array = llvm::dyn_cast<llvm::ConstantArray>(C)) {
    uint64_t Stride = Layout.getTypeAllocSize(Array->getType()->getElementType());
    for (unsigned I = 0; I < Array->getNumOperands(); ++I)
      if (!constantBytes(Layout, Array->getOperand(I), Out + I * Stride))
        return false;
    return true;
  }
  return false;
}

// The __device__ and __constant__ variables clang's module defines (not
// the private constants clang makes, such as string literals).
std::vector<DeviceGlobal> deviceGlobalsOf(const llvm::Module &M) {
  const llvm::DataLayout &Layout = M.getDataLayout();
  std::vector<DeviceGlobal> Globals;
  for (const llvm::GlobalVariable &G : M.globals()) {
    unsigned Space = G.getAddressSpace();
    if ((Space != 1 && Space != 4) || G.isDeclaration() || G.hasPrivateLinkage() ||
        G.getName().starts_with("llvm."))
      continue;
    DeviceGlobal D;
    D.Symbol = G.getName().str();
    D.Name = llvm::demangle(D.Symbol);
    D.Size = Layout.getTypeAllocSize(G.getValueType());
    D.Align = std::max<uint64_t>(1, G.getAlign() ? G.getAlign()->value()
                                                 : Layout.getPrefTypeAlign(G.getValueType()).value());
    D.Constant = Space == 4 || G.isConstant();
    D.Bytes.assign(D.Size, '\0');
    D.Copyable = constantBytes(Layout, G.getInitializer(), D.Bytes.data());
    Globals.push_back(std::move(D));
  }
  return Globals;
}

// Every __device__/__constant__ variable of a RawModule's kernel becomes
// the address of the module's one storage for it (Module._global_address,
// tidal/cuda/raw.py), so that the module's kernels share it, as in CUDA,
// and get_global() reads and writes it. A variable whose initializer is not
// numbers stays the module's own (each specialisation has a copy).
void shareDeviceGlobals(llvm::Module &M, const std::vector<DeviceGlobal> &Globals,
                        const RawKernelSource &Raw) {
  if (!Raw.Module || Raw.Module.isNone())
    return;
  llvm::Type *I64 = llvm::Type::getInt64Ty(M.getContext());
  for (const DeviceGlobal &D : Globals) {
    llvm::GlobalVariable *G = M.getNamedGlobal(D.Symbol);
    if (!D.Copyable || !G)
      continue;
    PyRef Address = PyRef::check(PyObject_CallMethod(Raw.Module.get(), "_global_address", "s",
                                                     D.Symbol.c_str()));
    uint64_t Value = PyLong_AsUnsignedLongLong(Address.get());
    if (PyErr_Occurred())
      throw frontend::PythonErrorSet();
    llvm::Constant *Storage =
        llvm::ConstantExpr::getIntToPtr(llvm::ConstantInt::get(I64, Value), G->getType());
    // A constant read through tidal.const.array reads the storage directly.
    for (llvm::User *U : llvm::make_early_inc_range(G->users()))
      if (auto *Call = llvm::dyn_cast<llvm::CallInst>(U))
        if (llvm::Function *Callee = Call->getCalledFunction();
            Callee && Callee->getName() == std::string(MarkerPrefix) + "const.array") {
          Call->replaceAllUsesWith(Storage);
          Call->eraseFromParent();
        }
    llvm::removeFromUsedLists(M, [G](llvm::Constant *C) { return C->stripPointerCasts() == G; });
    G->replaceAllUsesWith(Storage);
    G->eraseFromParent();
  }
}

// A write of the adapter: where to, and how many bytes.
struct Write {
  llvm::Instruction *At;
  llvm::Value *Address;
  llvm::Value *Bytes; // an integer (a memory intrinsic's length may be i32)
};

std::vector<Write> writesOf(llvm::Function &F) {
  const llvm::DataLayout &Layout = F.getParent()->getDataLayout();
  llvm::Type *I64 = llvm::Type::getInt64Ty(F.getContext());
  auto sizeOf = [&](llvm::Type *T) {
    return llvm::ConstantInt::get(I64, Layout.getTypeStoreSize(T).getFixedValue());
  };
  std::vector<Write> Writes;
  for (llvm::Instruction &I : llvm::instructions(F)) {
    if (auto *Store = llvm::dyn_cast<llvm::StoreInst>(&I)) {
      Writes.push_back({&I, Store->getPointerOperand(), sizeOf(Store->getValueOperand()->getType())});
    } else if (auto *RMW = llvm::dyn_cast<llvm::AtomicRMWInst>(&I)) {
      Writes.push_back({&I, RMW->getPointerOperand(), sizeOf(RMW->getValOperand()->getType())});
    } else if (auto *CAS = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&I)) {
      Writes.push_back({&I, CAS->getPointerOperand(), sizeOf(CAS->getNewValOperand()->getType())});
    } else if (auto *Fill = llvm::dyn_cast<llvm::MemIntrinsic>(&I)) {
      Writes.push_back({&I, Fill->getRawDest(), Fill->getLength()}); // widened where checked
    } else if (auto *Call = llvm::dyn_cast<llvm::CallInst>(&I)) {
      // The atomics that tidal-raise-nvvm made markers: tidal.atomic.*(ptr, ...).
      llvm::Function *Callee = Call->getCalledFunction();
      if (Callee && Callee->getName().starts_with(std::string(MarkerPrefix) + "atomic.") &&
          Call->arg_size() > 1 && Call->getArgOperand(0)->getType()->isPointerTy())
        Writes.push_back({&I, Call->getArgOperand(0), sizeOf(Call->getArgOperand(1)->getType())});
    }
  }
  return Writes;
}

// Every write of the adapter (the C++ kernel inlined in it) through an
// array's pointer parameter is checked against the array passed, as the
// frontend checks a Python kernel's stores: tidal.bounds.fault, which the
// cpu target makes the debug mode's IndexError and the NVPTX lowering drops
// (the PTX is as before). So a C++ store past a global array does not
// corrupt the process's heap on the cpu target. Checked: addresses whose
// every underlying object is that one parameter (through GEPs, casts, phis
// and selects). Not checked: reads (a read past an array reads garbage or
// faults, and the fault is recovered), and pointers that C++ code stores
// to memory and loads back, or passes to a function it does not inline.
void guardWritesThroughArrays(llvm::Function &Adapter, const std::vector<Type> &Types,
                              const std::vector<std::string> &ParamNames,
                              const RawKernelSource &Raw) {
  llvm::LLVMContext &Context = Adapter.getContext();
  llvm::Module &M = *Adapter.getParent();
  llvm::Type *I64 = llvm::Type::getInt64Ty(Context);
  llvm::Type *I32 = llvm::Type::getInt32Ty(Context);
  llvm::Type *Pointer = llvm::PointerType::get(Context, 0);
  struct ArrayParameter {
    unsigned Index;          // into Types
    llvm::Value *Elements;   // i64: the array's size
    uint64_t ElementBytes;
  };
  llvm::DenseMap<const llvm::Value *, ArrayParameter> Arrays;
  llvm::BasicBlock &Entry = Adapter.getEntryBlock();
  llvm::IRBuilder<> B(&Entry, Entry.getFirstInsertionPt());
  unsigned Next = 0;
  for (unsigned I = 0; I < Types.size(); ++I) {
    const Type &T = Types[I];
    if (!T.isArray()) {
      ++Next;
      continue;
    }
    llvm::Value *Elements = B.getInt64(1);
    for (unsigned D = 0; D < T.NDim; ++D)
      Elements = B.CreateMul(Elements, Adapter.getArg(Next + 1 + D));
    Arrays[Adapter.getArg(Next)] = {I, Elements,
                                    T.Record ? T.Record->Size : frontend::byteSize(T.Dtype)};
    Next += 1 + 2 * T.NDim;
  }
  if (Arrays.empty())
    return;
  llvm::FunctionCallee Fault = M.getOrInsertFunction(
      std::string(MarkerPrefix) + "bounds.fault",
      llvm::FunctionType::get(llvm::Type::getVoidTy(Context), {Pointer, I64, I64, I32}, false));
  for (const Write &W : writesOf(Adapter)) {
    llvm::SmallVector<const llvm::Value *, 4> Objects;
    llvm::getUnderlyingObjects(W.Address, Objects, nullptr, 0);
    if (Objects.empty() || !llvm::all_equal(Objects))
      continue;
    auto Found = Arrays.find(Objects.front());
    if (Found == Arrays.end())
      continue;
    const ArrayParameter &Array = Found->second;
    B.SetInsertPoint(W.At);
    llvm::Value *Base = const_cast<llvm::Value *>(Objects.front());
    // Reported: the first element written outside the array.
    llvm::Value *Offset = B.CreateSub(B.CreatePtrToInt(W.Address, I64),
                                      B.CreatePtrToInt(Base, I64), "write.offset");
    llvm::Value *Extent = B.CreateMul(Array.Elements, B.getInt64(Array.ElementBytes));
    llvm::Value *Before = B.CreateICmpUGT(Offset, Extent); // or past the end
    llvm::Value *Bytes = B.CreateZExtOrTrunc(W.Bytes, I64);
    llvm::Value *Last = B.CreateSub(B.CreateAdd(Offset, Bytes), B.getInt64(1));
    llvm::Value *Outside = B.CreateOr(Before, B.CreateICmpUGE(Last, Extent), "write.outside");
    llvm::Instruction *Fail = llvm::SplitBlockAndInsertIfThen(Outside, W.At, /*Unreachable=*/true);
    Fail->getParent()->setName("bounds.fault");
    std::string Where = "CUDA C++ kernel '" + Raw.Name + "' at " + Raw.FileName;
    if (const llvm::DebugLoc &Location = W.At->getDebugLoc())
      Where += ":" + std::to_string(Location.getLine());
    Where += ", pointer '" + ParamNames[Array.Index] + "'";
    B.SetInsertPoint(Fail);
    llvm::CallInst *Call = B.CreateCall(
        Fault, {B.CreateGlobalStringPtr(Where, "bounds.where", 0, &M),
                B.CreateSDiv(B.CreateSelect(Before, Offset, Last), B.getInt64(Array.ElementBytes)),
                Array.Elements,
                B.getInt32(0)});
    Call->setDebugLoc(W.At->getDebugLoc());
  }
}

} // namespace

KernelModule emitRawKernel(const RawKernelSource &Raw, const std::vector<std::string> &ParamNames,
                           const std::vector<Type> &Types) {
  KernelModule KM;
  KM.Context = std::make_unique<llvm::LLVMContext>();
  llvm::LLVMContext &Context = *KM.Context;
  KM.Module = compileOrThrow(Context, Raw.Code, Raw.FileName, Raw.Options);
  llvm::Module &M = *KM.Module;
  const std::vector<KernelInfo> AllKernels = kernelsOf(M);
  const KernelInfo &Info = findKernel(AllKernels, Raw.Symbol);
  if (Types.size() != Info.Types.size())
    throw std::invalid_argument("kernel '" + Raw.Name + "' takes " +
                                std::to_string(Info.Types.size()) + " arguments, got " +
                                std::to_string(Types.size()));

  // Each argument against its C++ parameter.
  for (size_t I = 0; I < Types.size(); ++I) {
    const std::string &Text = Info.Types[I];
    std::string Where = "argument '" + ParamNames[I] + "' of kernel '" + Raw.Name + "' (C++ type '" +
                        cxxSpelling(Text) + "'): ";
    const Type &T = Types[I];
    frontend::ForeignParameter Struct;
    if (Text.find("struct ") != std::string::npos &&
        frontend::parseForeignParameter(Text, Struct) && Struct.Record) {
      // A struct of numbers: a record of the same layout, by value (a
      // record scalar) or through a pointer (a record array).
      const bool Matches = T.Record && frontend::sameLayout(*Struct.Record, *T.Record) &&
                           (Struct.Pointer ? T.isArray() : T.Kind == frontend::TypeKind::Record);
      if (!Matches)
        throw std::invalid_argument(
            Where + "takes " + (Struct.Pointer ? "an array of records" : "a record") +
            " of that layout, not " +
            (T.Record ? T.str() + ", whose layout is " +
                            frontend::describeRecord("record", *T.Record)
                      : T.str()));
      if (Struct.Pointer && T.ArrayLayout == frontend::Layout::A)
        throw std::invalid_argument(Where + "takes a contiguous array (C or F order), not " +
                                    T.str());
      if (Struct.Pointer && T.ReadOnly && !Struct.Const)
        throw std::invalid_argument(Where + "writes through its pointer: a read-only array "
                                            "needs a const parameter");
      continue;
    }
    Scalar Element;
    bool Pointer;
    if (!parseParameter(Text, Element, Pointer))
      throw std::invalid_argument(Where + "tidal passes only scalars, structs of numbers and "
                                          "pointers to them to CUDA C++ kernels");
    if (Pointer) {
      if (!T.isArray() || T.Record || T.Dtype != Element)
        throw std::invalid_argument(Where + "takes an array of " +
                                    frontend::scalarName(Element) + ", not " + T.str());
      if (T.ArrayLayout == frontend::Layout::A)
        throw std::invalid_argument(Where + "takes a contiguous array (C or F order), not " +
                                    T.str());
      if (T.ReadOnly && Text.rfind("const ", 0) != 0)
        throw std::invalid_argument(Where + "writes through its pointer: a read-only array "
                                            "needs a const parameter");
    } else if (!T.isScalar() || frontend::isComplex(T.Dtype)) {
      throw std::invalid_argument(Where + "takes a number, not " + T.str());
    }
  }

  const std::vector<DeviceGlobal> Globals = deviceGlobalsOf(M);
  std::string RaiseError;
  if (!tidal::raiseNVVMModule(M, RaiseError))
    throw CompileError("CompileError",
                       "CUDA C++ kernel '" + Raw.Name + "' of " + Raw.FileName +
                           " cannot run on tidal: " + RaiseError,
                       frontend::SourceLocation{});
  shareDeviceGlobals(M, Globals, Raw);
  linkIntoRawModule(M, Raw.Links);
  llvm::Function *Body = M.getFunction(Raw.Symbol);
  if (!Body)
    throw std::runtime_error("internal error: kernel '" + Raw.Symbol + "' is gone after raising");

  // The adapter kernel: tidal's flattened parameters in, the C++ kernel's out.
  std::vector<llvm::Type *> Parameters;
  llvm::Type *Pointer = llvm::PointerType::get(Context, 0);
  llvm::Type *Int64 = llvm::Type::getInt64Ty(Context);
  for (const Type &T : Types) {
    if (T.isArray()) {
      Parameters.push_back(Pointer);
      Parameters.insert(Parameters.end(), 2u * T.NDim, Int64);
    } else if (T.Kind == frontend::TypeKind::Record) {
      Parameters.push_back(Pointer); // a record argument is passed by reference
    } else {
      Parameters.push_back(llvmScalar(Context, T.Dtype));
    }
  }
  Body->setName(Raw.Symbol + ".cxx");
  auto *Adapter = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(Context), Parameters, false),
      llvm::GlobalValue::ExternalLinkage, Raw.Symbol, M);
  for (const char *Attribute :
       {MaxThreadsAttribute, MinBlocksAttribute, MaxRegistersAttribute})
    if (Body->hasFnAttribute(Attribute))
      Adapter->addFnAttr(Body->getFnAttribute(Attribute));
  llvm::IRBuilder<> B(llvm::BasicBlock::Create(Context, "entry", Adapter));
  std::vector<llvm::Value *> Arguments;
  unsigned Next = 0;
  for (size_t I = 0; I < Types.size(); ++I) {
    const Type &T = Types[I];
    llvm::Type *Expected = Body->getFunctionType()->getParamType(I);
    if (T.isArray()) {
      Arguments.push_back(Adapter->getArg(Next));
      Next += 1 + 2 * T.NDim;
    } else if (T.Kind == frontend::TypeKind::Record) {
      // A struct by value: clang's `ptr byval(%struct)` takes the record's
      // address (the callee copies it); a struct passed directly is loaded.
      llvm::Value *Record = Adapter->getArg(Next++);
      Arguments.push_back(Expected->isPointerTy()
                              ? Record
                              : static_cast<llvm::Value *>(B.CreateAlignedLoad(
                                    Expected, Record, llvm::Align(T.Record->Align))));
    } else {
      Scalar To;
      bool IsPointer;
      parseParameter(Info.Types[I], To, IsPointer);
      Arguments.push_back(convertScalar(B, Adapter->getArg(Next++), T.Dtype, Expected, To));
    }
  }
  llvm::CallInst *Call = B.CreateCall(Body, Arguments);
  B.CreateRetVoid();
  llvm::InlineFunctionInfo Inlining;
  if (!llvm::InlineFunction(*Call, Inlining).isSuccess())
    throw std::runtime_error("internal error: cannot inline CUDA C++ kernel '" + Raw.Name + "'");
  guardWritesThroughArrays(*Adapter, Types, ParamNames, Raw);

  // The adapter is the module's one kernel; the C++ kernels go.
  if (llvm::NamedMDNode *Kernels = M.getNamedMetadata(KernelsMetadataName))
    Kernels->eraseFromParent();
  M.getOrInsertNamedMetadata(KernelsMetadataName)
      ->addOperand(llvm::MDNode::get(Context, {llvm::ValueAsMetadata::get(Adapter)}));
  if (llvm::NamedMDNode *Cxx = M.getNamedMetadata(cxx::KernelParametersMetadata))
    Cxx->eraseFromParent();
  Body->eraseFromParent();
  // The module's other kernels, and what only they called, go too: the
  // host lowering takes markers only in kernels and what kernels call.
  for (llvm::Function &F : M)
    if (&F != Adapter && !F.isDeclaration())
      F.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (bool Erased = true; Erased;) {
    Erased = false;
    for (llvm::Function &F : llvm::make_early_inc_range(M))
      if (&F != Adapter && !F.isDeclaration() && F.use_empty()) {
        F.eraseFromParent();
        Erased = true;
      }
  }
  KM.KernelName = Raw.Symbol;
  KM.ParamTypes = Types;
  KM.SourceFile = Raw.FileName;
  return KM;
}

namespace {

std::vector<std::string> stringsOf(PyObject *Sequence) {
  PyRef Items = PyRef::check(PySequence_Fast(Sequence, "clang options must be a sequence of str"));
  std::vector<std::string> Out;
  for (Py_ssize_t I = 0; I < PySequence_Fast_GET_SIZE(Items.get()); ++I) {
    PyObject *Item = PySequence_Fast_GET_ITEM(Items.get(), I);
    const char *Text = PyUnicode_Check(Item) ? PyUnicode_AsUTF8(Item) : nullptr;
    if (!Text)
      throw std::invalid_argument("clang options must be str, not '" +
                                  std::string(Py_TYPE(Item)->tp_name) + "'");
    Out.push_back(Text);
  }
  return Out;
}

PyObject *stringList(const std::vector<std::string> &Strings) {
  PyRef List = PyRef::check(PyList_New(static_cast<Py_ssize_t>(Strings.size())));
  for (size_t I = 0; I < Strings.size(); ++I)
    PyList_SET_ITEM(List.get(), I, PyRef::check(PyUnicode_FromString(Strings[I].c_str())).release());
  return List.release();
}

PyObject *module_raw_kernels(PyObject *, PyObject *Args) {
  const char *Code, *FileName;
  PyObject *Options;
  if (!PyArg_ParseTuple(Args, "ssO", &Code, &FileName, &Options))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    std::vector<std::string> ClangOptions = stringsOf(Options);
    llvm::LLVMContext Context;
    std::unique_ptr<llvm::Module> M;
    std::string Source = Code, File = FileName;
    M = compileOrThrow(Context, Source, File, ClangOptions);
    std::vector<KernelInfo> Kernels = kernelsOf(*M);
    PyRef List = PyRef::check(PyList_New(0));
    for (const KernelInfo &K : Kernels) {
      PyRef Types = PyRef::steal(stringList(K.Types));
      PyRef Names = PyRef::steal(stringList(K.Names));
      PyRef Entry = PyRef::check(
          Py_BuildValue("(ssOO)", K.Symbol.c_str(), K.Name.c_str(), Types.get(), Names.get()));
      if (PyList_Append(List.get(), Entry.get()) < 0)
        return nullptr;
    }
    return List.release();
  });
}

PyObject *module_raw_globals(PyObject *, PyObject *Args) {
  const char *Code, *FileName;
  PyObject *Options;
  if (!PyArg_ParseTuple(Args, "ssO", &Code, &FileName, &Options))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    llvm::LLVMContext Context;
    std::unique_ptr<llvm::Module> M =
        compileOrThrow(Context, Code, FileName, stringsOf(Options));
    PyRef List = PyRef::check(PyList_New(0));
    for (const DeviceGlobal &D : deviceGlobalsOf(*M)) {
      PyRef Bytes = D.Copyable ? PyRef::check(PyBytes_FromStringAndSize(
                                     D.Bytes.data(), static_cast<Py_ssize_t>(D.Bytes.size())))
                               : PyRef::borrow(Py_None);
      PyRef Entry = PyRef::check(Py_BuildValue("(ssKKOO)", D.Symbol.c_str(), D.Name.c_str(),
                                               static_cast<unsigned long long>(D.Size),
                                               static_cast<unsigned long long>(D.Align),
                                               Bytes.get(), D.Constant ? Py_True : Py_False));
      if (PyList_Append(List.get(), Entry.get()) < 0)
        return nullptr;
    }
    return List.release();
  });
}

PyObject *module_set_cxx_compiler(PyObject *, PyObject *Args) {
  PyObject *Capsule, *Warnings;
  if (!PyArg_ParseTuple(Args, "OO", &Capsule, &Warnings))
    return nullptr;
  void *Function = PyCapsule_GetPointer(Capsule, "tidal.cxx.compileCuda");
  void *Take = Function ? PyCapsule_GetPointer(Warnings, "tidal.cxx.takeCacheWarnings") : nullptr;
  if (!Take)
    return nullptr;
  CompileCuda = reinterpret_cast<CompileCudaFunction>(Function);
  TakeCacheWarnings = reinterpret_cast<TakeCacheWarningsFunction>(Take);
  Py_RETURN_NONE;
}

PyMethodDef RawKernelMethods[] = {
    {"_set_cxx_compiler", module_set_cxx_compiler, METH_VARARGS,
     "_set_cxx_compiler(compile, warnings): tidal._cxx gives its compileCuda and "
     "takeCacheWarnings."},
    {"_raw_kernels", module_raw_kernels, METH_VARARGS,
     "_raw_kernels(code, file_name, options): [(symbol, name, [parameter types], [parameter "
     "names])] of the __global__ functions of CUDA C++ source."},
    {"_raw_globals", module_raw_globals, METH_VARARGS,
     "_raw_globals(code, file_name, options): [(symbol, name, size, align, initial bytes or "
     "None, constant)] of the __device__ and __constant__ variables of CUDA C++ source."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int addRawKernelFunctions(PyObject *Module) {
  return PyModule_AddFunctions(Module, RawKernelMethods);
}

} // namespace tidal::binding
