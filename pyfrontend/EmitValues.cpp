// Values: the LLVM types of kernel types, complex numbers, tuples,
// conversions between types (convertedType checks one while typing,
// convert emits it), truth values, marker calls and constants.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "Fp8.h"
#include "Markers.h"
#include "BFloat16.h"

#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace tidal::frontend {

// --- types ----------------------------------------------------------------------

llvm::Type *FunctionCompiler::llvmType(Scalar S) const {
  switch (S) {
  case Scalar::Bool:
    return llvm::Type::getInt1Ty(Ctx);
  case Scalar::Float16:
    return llvm::Type::getHalfTy(Ctx);
  case Scalar::BFloat16:
    return llvm::Type::getBFloatTy(Ctx);
  case Scalar::Float32:
    return llvm::Type::getFloatTy(Ctx);
  case Scalar::Float64:
    return llvm::Type::getDoubleTy(Ctx);
  case Scalar::Complex64:
  case Scalar::Complex128: {
    llvm::Type *Component = llvmType(componentOf(S));
    return StructType::get(Ctx, {Component, Component});
  }
  default:
    return llvm::Type::getIntNTy(Ctx, bitWidth(S));
  }
}

llvm::Type *FunctionCompiler::llvmMemoryType(Scalar S) const {
  return S == Scalar::Bool ? llvm::Type::getInt8Ty(Ctx) : llvmType(S);
}

std::vector<llvm::Type *> FunctionCompiler::partTypes(const frontend::Type &T) const {
  std::vector<llvm::Type *> Parts;
  switch (T.Kind) {
  case frontend::TypeKind::Scalar:
    Parts.push_back(llvmType(T.Dtype));
    break;
  case frontend::TypeKind::Array:
    Parts.push_back(PointerType::get(Ctx, 0));
    for (unsigned I = 0; I < 2u * T.NDim; ++I)
      Parts.push_back(llvm::Type::getInt64Ty(Ctx));
    break;
  case frontend::TypeKind::Record: // a pointer to the record's bytes
  case frontend::TypeKind::Pointer:
    Parts.push_back(PointerType::get(Ctx, 0));
    break;
  case frontend::TypeKind::Vector: // Numba's model: a struct of the elements
    Parts.push_back(StructType::get(Ctx, std::vector<llvm::Type *>(T.NDim, llvmType(T.Dtype))));
    break;
  case frontend::TypeKind::Tuple:
    for (const frontend::Type &E : T.Elements) {
      std::vector<llvm::Type *> Sub = partTypes(E);
      Parts.insert(Parts.end(), Sub.begin(), Sub.end());
    }
    break;
  case frontend::TypeKind::Optional: { // valid, then the value (OptionalValues.cpp)
    Parts.push_back(llvm::Type::getInt1Ty(Ctx));
    std::vector<llvm::Type *> Sub = partTypes(T.optionalInner());
    Parts.insert(Parts.end(), Sub.begin(), Sub.end());
    break;
  }
  default:
    break;
  }
  return Parts;
}

std::vector<unsigned> flattenedParameterSizes(const frontend::Type &T) {
  std::vector<unsigned> Sizes;
  switch (T.Kind) {
  case frontend::TypeKind::Scalar:
    Sizes.push_back(byteSize(T.Dtype));
    break;
  case frontend::TypeKind::Array:
    Sizes.assign(1 + 2u * T.NDim, 8);
    break;
  case frontend::TypeKind::Record:
  case frontend::TypeKind::Pointer:
    Sizes.push_back(8);
    break;
  case frontend::TypeKind::Tuple:
    for (const frontend::Type &E : T.Elements) {
      std::vector<unsigned> Sub = flattenedParameterSizes(E);
      Sizes.insert(Sizes.end(), Sub.begin(), Sub.end());
    }
    break;
  default:
    break;
  }
  return Sizes;
}

Value *FunctionCompiler::makeComplex(Scalar S, Value *Re, Value *Im) {
  Value *Z = UndefValue::get(llvmType(S));
  Z = B.CreateInsertValue(Z, Re, 0);
  return B.CreateInsertValue(Z, Im, 1);
}

// + - * / on complex numbers; division as CPython's _Py_c_quot (scaled by
// the larger part of the divisor, so that it neither overflows early nor
// loses the small part).
Value *FunctionCompiler::complexArithmetic(BinaryOperator Op, Scalar S, Value *X, Value *Y) {
  Value *A = B.CreateExtractValue(X, 0), *Bi = B.CreateExtractValue(X, 1);
  Value *C = B.CreateExtractValue(Y, 0), *D = B.CreateExtractValue(Y, 1);
  if (Op == BinaryOperator::Add)
    return makeComplex(S, B.CreateFAdd(A, C), B.CreateFAdd(Bi, D));
  if (Op == BinaryOperator::Subtract)
    return makeComplex(S, B.CreateFSub(A, C), B.CreateFSub(Bi, D));
  if (Op == BinaryOperator::Multiply)
    return makeComplex(S, B.CreateFSub(B.CreateFMul(A, C), B.CreateFMul(Bi, D)),
                       B.CreateFAdd(B.CreateFMul(A, D), B.CreateFMul(Bi, C)));
  // Div
  Value *AbsC = B.CreateUnaryIntrinsic(Intrinsic::fabs, C);
  Value *AbsD = B.CreateUnaryIntrinsic(Intrinsic::fabs, D);
  Value *RealLarger = B.CreateFCmpOGE(AbsC, AbsD);
  // |c| >= |d|: ratio = d / c, denominator = c + d * ratio
  Value *R1 = B.CreateFDiv(D, C);
  Value *Den1 = B.CreateFAdd(C, B.CreateFMul(D, R1));
  Value *Re1 = B.CreateFDiv(B.CreateFAdd(A, B.CreateFMul(Bi, R1)), Den1);
  Value *Im1 = B.CreateFDiv(B.CreateFSub(Bi, B.CreateFMul(A, R1)), Den1);
  // |d| > |c|: ratio = c / d, denominator = c * ratio + d
  Value *R2 = B.CreateFDiv(C, D);
  Value *Den2 = B.CreateFAdd(B.CreateFMul(C, R2), D);
  Value *Re2 = B.CreateFDiv(B.CreateFAdd(B.CreateFMul(A, R2), Bi), Den2);
  Value *Im2 = B.CreateFDiv(B.CreateFSub(B.CreateFMul(Bi, R2), A), Den2);
  return makeComplex(S, B.CreateSelect(RealLarger, Re1, Re2), B.CreateSelect(RealLarger, Im1, Im2));
}

TypedValue FunctionCompiler::makeScalar(Scalar S, Value *V) const {
  TypedValue R(frontend::Type::scalar(S));
  if (V)
    R.Parts.push_back(V);
  return R;
}

TypedValue FunctionCompiler::makeTuple(std::vector<TypedValue> Elements) const {
  std::vector<frontend::Type> Types;
  TypedValue R;
  bool AllConstant = true;
  for (TypedValue &E : Elements) {
    Types.push_back(E.T);
    R.Parts.insert(R.Parts.end(), E.Parts.begin(), E.Parts.end());
    AllConstant &= E.ConstInt.has_value();
    if (AllConstant)
      R.TupleConstInts.push_back(*E.ConstInt);
  }
  if (!AllConstant)
    R.TupleConstInts.clear();
  R.T = frontend::Type::tuple(std::move(Types));
  return R;
}

std::vector<TypedValue> FunctionCompiler::tupleElements(const TypedValue &V) const {
  std::vector<TypedValue> Out;
  size_t Offset = 0;
  for (const frontend::Type &E : V.T.Elements) {
    TypedValue Element(E);
    size_t Count = partTypes(E).size();
    if (V.Parts.size() >= Offset + Count) // an emitted value (typing's have no parts)
      Element.Parts.assign(V.Parts.begin() + Offset, V.Parts.begin() + Offset + Count);
    Offset += Count;
    if (V.TupleConstInts.size() == V.T.Elements.size())
      Element.ConstInt = V.TupleConstInts[Out.size()];
    Out.push_back(std::move(Element));
  }
  return Out;
}

// --- IR helpers -------------------------------------------------------------------

Value *FunctionCompiler::markerI32(const std::string &Name) {
  return B.CreateCall(declareMarker(Name, FunctionType::get(llvm::Type::getInt32Ty(Ctx), false)),
                      {}, Name);
}

// The declaration of tidal.<Name>, of the type the plugin's marker table
// gives it (tidal::getMarkerType), so that the frontend cannot emit a
// marker the plugin does not know, nor one of another type. Expected is
// the type the call needs.
FunctionCallee FunctionCompiler::declareMarker(const std::string &Name, FunctionType *Expected) {
  std::string Symbol = "tidal." + Name;
  FunctionType *Contract = tidal::getMarkerType(Symbol, Ctx);
  bool Matches = Contract && Contract->getReturnType() == Expected->getReturnType() &&
                 Contract->isVarArg() == Expected->isVarArg() &&
                 Contract->params() == Expected->params();
  if (!Matches) {
    std::string Text;
    raw_string_ostream OS(Text);
    OS << "internal error: the frontend emits the marker " << Symbol << " as " << *Expected
       << ", which the marker table (llvm-plugin/Markers.h) ";
    if (Contract)
      OS << "types as " << *Contract;
    else
      OS << "does not have";
    throw CompileError("CompileError", OS.str(), locate(Tree.get()));
  }
  return M.getOrInsertFunction(Symbol, Contract);
}

AllocaInst *FunctionCompiler::entryAlloca(llvm::Type *T, const std::string &Name) {
  BasicBlock &Entry = F->getEntryBlock();
  IRBuilder<> EntryBuilder(&Entry, Entry.getFirstInsertionPt());
  return EntryBuilder.CreateAlloca(T, nullptr, Name);
}

void FunctionCompiler::startDeadBlock() {
  B.SetInsertPoint(BasicBlock::Create(Ctx, "dead", F));
}

TypedValue FunctionCompiler::convert(const TypedValue &V, const frontend::Type &To, PyObject *Node) {
  if (V.T == To)
    return V;
  if (V.T.isOptional() || V.T.isNone() || To.isOptional()) // OptionalValues.cpp
    return convertOptional(V, To, Node);
  if (V.T.isScalar() && To.isScalar() && isDatetime(To.Dtype)) {
    TypedValue R(To);
    R.Parts.push_back(datetimeIn(V, To.Unit));
    return R;
  }
  if (V.T.isScalar() && To.isScalar() && (isComplex(V.T.Dtype) || isComplex(To.Dtype))) {
    if (!isComplex(To.Dtype) && To.Dtype != Scalar::Bool)
      internalError(Node, "converting " + V.T.str() + " to " + To.str() + " while emitting");
    TypedValue R(To);
    if (To.Dtype == Scalar::Bool) {
      R.Parts.push_back(truth(V, Node));
      return R;
    }
    frontend::Type Component = frontend::Type::scalar(componentOf(To.Dtype));
    Value *Re, *Im;
    if (isComplex(V.T.Dtype)) {
      Re = convert(makeScalar(componentOf(V.T.Dtype), B.CreateExtractValue(V.scalar(), 0)),
                   Component, Node).scalar();
      Im = convert(makeScalar(componentOf(V.T.Dtype), B.CreateExtractValue(V.scalar(), 1)),
                   Component, Node).scalar();
    } else {
      Re = convert(V, Component, Node).scalar();
      Im = ConstantFP::get(Re->getType(), 0.0);
    }
    R.Parts.push_back(makeComplex(To.Dtype, Re, Im));
    return R;
  }
  if (V.T.isScalar() && To.isScalar()) {
    TypedValue R(To);
    Value *X = V.scalar();
    Scalar From = V.T.Dtype, Target = To.Dtype;
    llvm::Type *T = llvmType(Target);
    if (isFp8(From) || isFp8(Target)) { // explicit only (typeCast): Fp8Conversions.cpp
      R.Parts.push_back(fp8::convert(*this, V, Target));
    } else if (Target == Scalar::Bool) {
      R.Parts.push_back(truth(V, Node));
    } else if (From == Scalar::Bool) {
      R.Parts.push_back(isFloat(Target) ? B.CreateUIToFP(X, T) : B.CreateZExt(X, T));
    } else if (isInteger(From) && isInteger(Target)) {
      R.Parts.push_back(B.CreateIntCast(X, T, isSigned(From)));
    } else if (isInteger(From) && Target == Scalar::BFloat16) {
      R.Parts.push_back(integerToBFloat16(B, X, isSigned(From))); // IntrinsicsBFloat16.cpp
    } else if (isInteger(From)) {
      R.Parts.push_back(isSigned(From) ? B.CreateSIToFP(X, T) : B.CreateUIToFP(X, T));
    } else if (isInteger(Target)) {
      // A float out of the integer's range (int(1e30), a NaN) converts to
      // poison in LLVM, whose uses LLVM may treat as unreachable (the
      // kernel vanished: the frontend fuzzer's seed 19, input 4911): frozen,
      // it is some integer instead, as the hardware's conversion gives one
      // (a GPU's cvt saturates; x86's gives the lowest integer).
      R.Parts.push_back(B.CreateFreeze(isSigned(Target) ? B.CreateFPToSI(X, T)
                                                        : B.CreateFPToUI(X, T)));
    } else if ((From == Scalar::Float16 && Target == Scalar::BFloat16) ||
               (From == Scalar::BFloat16 && Target == Scalar::Float16)) {
      // Neither half holds the other; float32 holds both, so one rounding.
      R.Parts.push_back(B.CreateFPTrunc(B.CreateFPExt(X, B.getFloatTy()), T));
    } else {
      R.Parts.push_back(B.CreateFPCast(X, T));
    }
    return R;
  }
  if (V.T.isTuple() && To.isTuple() && V.T.Elements.size() == To.Elements.size()) {
    std::vector<TypedValue> Elements = tupleElements(V);
    for (size_t I = 0; I < Elements.size(); ++I)
      Elements[I] = convert(Elements[I], To.Elements[I], Node);
    return makeTuple(std::move(Elements));
  }
  if (V.T.isArray() && To.isArray() && V.T.Dtype == To.Dtype && V.T.NDim == To.NDim &&
      (To.ArrayLayout == Layout::A || To.ArrayLayout == V.T.ArrayLayout) && (To.ReadOnly || !V.T.ReadOnly)) {
    TypedValue R = V;
    R.T = To;
    return R;
  }
  internalError(Node, "converting " + V.T.str() + " to " + To.str() + " while emitting");
}

// The rules of convert(), for typing: the same cases, the same errors.
TypedValue FunctionCompiler::convertedType(const TypedValue &V, const frontend::Type &To,
                                           PyObject *Node) {
  if (V.T == To)
    return V;
  if (V.T.isOptional() || V.T.isNone() || To.isOptional()) // OptionalValues.cpp
    return convertedOptionalType(V, To, Node);
  if (V.T.isScalar() && To.isScalar() && (isDatetime(V.T.Dtype) || isDatetime(To.Dtype))) {
    // Only to the same kind in a unit as fine or finer (NumPy's safe cast).
    TimeUnit Common;
    if (V.T.Dtype != To.Dtype || !commonTimeUnit(V.T.Unit, To.Unit, Common) || Common != To.Unit)
      typingError(Node, "cannot convert " + V.T.str() + " to " + To.str());
    return TypedValue(To);
  }
  if (V.T.isScalar() && To.isScalar()) {
    if (isFp8(V.T.Dtype) || isFp8(To.Dtype)) // numba-cuda converts them only explicitly
      typingError(Node, "cannot convert " + V.T.str() + " to " + To.str() + " implicitly: write " +
                            To.str() + "(v)");
    if ((isComplex(V.T.Dtype) || isComplex(To.Dtype)) && !isComplex(To.Dtype) &&
        To.Dtype != Scalar::Bool)
      typingError(Node, "cannot convert " + V.T.str() + " to " + To.str() +
                            ": take .real, .imag or abs() of a complex number");
    return TypedValue(To);
  }
  if (V.T.isTuple() && To.isTuple() && V.T.Elements.size() == To.Elements.size()) {
    std::vector<TypedValue> Elements = tupleElements(V);
    for (size_t I = 0; I < Elements.size(); ++I)
      Elements[I] = convertedType(Elements[I], To.Elements[I], Node);
    return makeTuple(std::move(Elements));
  }
  if (V.T.isArray() && To.isArray() && V.T.Dtype == To.Dtype && V.T.NDim == To.NDim &&
      (To.ArrayLayout == Layout::A || To.ArrayLayout == V.T.ArrayLayout) && (To.ReadOnly || !V.T.ReadOnly)) {
    TypedValue R = V;
    R.T = To;
    return R;
  }
  typingError(Node, "cannot convert " + V.T.str() + " to " + To.str());
}

void FunctionCompiler::checkCondition(const frontend::Type &T, PyObject *Node) {
  if (!T.isScalar())
    typingError(Node, "cannot use a value of type " + T.str() + " as a condition");
}

Value *FunctionCompiler::truth(const TypedValue &V, PyObject *Node) {
  if (!V.T.isScalar())
    internalError(Node, "a condition of type " + V.T.str() + " while emitting");
  Value *X = V.scalar();
  if (V.T.Dtype == Scalar::Bool)
    return X;
  if (isFp8(V.T.Dtype))
    return fp8::truth(*this, V);
  if (isFloat(V.T.Dtype)) // NaN is true, as in Python
    return B.CreateFCmpUNE(X, ConstantFP::get(X->getType(), 0.0));
  if (isComplex(V.T.Dtype)) {
    Value *Zero = ConstantFP::get(llvmType(componentOf(V.T.Dtype)), 0.0);
    return B.CreateOr(B.CreateFCmpUNE(B.CreateExtractValue(X, 0), Zero),
                      B.CreateFCmpUNE(B.CreateExtractValue(X, 1), Zero));
  }
  return B.CreateICmpNE(X, ConstantInt::get(X->getType(), 0));
}

int64_t FunctionCompiler::constantInt(const TypedValue &V, PyObject *Node, const std::string &What) {
  if (!V.ConstInt)
    typingError(Node, What + " must be a constant integer");
  return *V.ConstInt;
}

Value *FunctionCompiler::callMarker(const std::string &Name, llvm::Type *Result,
                                    ArrayRef<Value *> Args, bool VarArg) {
  std::vector<llvm::Type *> Params;
  size_t Fixed = VarArg ? 1 : Args.size();
  for (size_t I = 0; I < Fixed; ++I)
    Params.push_back(Args[I]->getType());
  CallInst *Call =
      B.CreateCall(declareMarker(Name, FunctionType::get(Result, Params, VarArg)), Args);
  markWhere(Call);
  return Call;
}

Scalar FunctionCompiler::dtypeOf(const TypedValue &DType, PyObject *Node) {
  if (DType.T.isPyObject()) {
    PyObject *O = static_cast<PyObject *>(DType.T.Object);
    std::string Name;
    PyRef Intrinsic = PyRef::borrow(O).attrOrNull("__tidal_intrinsic__");
    if (Intrinsic && PyUnicode_Check(Intrinsic.get()) &&
        Intrinsic.str().rfind("cast.", 0) == 0)
      Name = Intrinsic.str().substr(5);
    else if (PyType_Check(O) && PyObject_HasAttrString(O, "__module__") &&
             PyRef::borrow(O).attr("__module__").str() == "numpy") {
      Name = reinterpret_cast<PyTypeObject *>(O)->tp_name;
      Name = Name.substr(Name.rfind('.') + 1);
    } else if (typeName(O) == "dtype" || typeName(O).rfind("dtype[", 0) == 0 ||
               PyObject_HasAttrString(O, "kind")) {
      PyRef DTypeName = PyRef::borrow(O).attrOrNull("name");
      if (DTypeName)
        Name = DTypeName.str();
    } else if (O == reinterpret_cast<PyObject *>(&PyFloat_Type)) {
      Name = "float64";
    } else if (O == reinterpret_cast<PyObject *>(&PyLong_Type)) {
      Name = "int64";
    } else if (O == reinterpret_cast<PyObject *>(&PyBool_Type)) {
      Name = "bool";
    }
    Scalar S;
    if (!Name.empty() && scalarFromName(Name, S))
      return S;
    // Anything else (a Numba type object, a dtype's name as a string) is
    // read by tidal.cuda.signatures.dtype_name, whose ValueError says why not.
    // (tidalc without the tidal package: the error below.)
    PyRef Hooks = PyRef::steal(PyImport_ImportModule("tidal.cuda.signatures"));
    PyRef Result = Hooks ? PyRef::steal(PyObject_CallMethod(Hooks.get(), "dtype_name", "O", O))
                         : PyRef();
    if (Result && PyUnicode_Check(Result.get()) && scalarFromName(Result.str(), S))
      return S;
    if (!Hooks)
      PyErr_Clear();
    else if (!Result && !PyErr_ExceptionMatches(PyExc_ValueError))
      throw PythonErrorSet();
    else if (!Result) {
      std::string Message = takePendingErrorText("invalid dtype");
      typingError(Node, Message);
    }
  }
  typingError(Node, "expected a dtype (tidal.float32, numpy.float32, ...), got " +
                        (DType.T.isPyObject() ? "'" + typeName(static_cast<PyObject *>(DType.T.Object)) + "'"
                                              : DType.T.str()));
}

TypedValue FunctionCompiler::makeArray(Scalar ElementType, const std::vector<int64_t> &Shape, Value *Data) {
  TypedValue A(frontend::Type::array(ElementType, static_cast<unsigned>(Shape.size()), Layout::C));
  A.Parts.push_back(Data);
  for (int64_t E : Shape)
    A.Parts.push_back(B.getInt64(E));
  int64_t Stride = byteSize(ElementType);
  std::vector<Value *> Strides(Shape.size());
  for (size_t D = Shape.size(); D-- > 0;) {
    Strides[D] = B.getInt64(Stride);
    Stride *= Shape[D];
  }
  A.Parts.insert(A.Parts.end(), Strides.begin(), Strides.end());
  return A;
}

Value *FunctionCompiler::constantString(const std::string &Text, const std::string &Name) {
  Constant *Data = ConstantDataArray::getString(Ctx, Text, /*AddNull=*/true);
  auto *G = new GlobalVariable(M, Data->getType(), /*isConstant=*/true,
                               GlobalValue::PrivateLinkage, Data, Name);
  G->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  G->setAlignment(Align(1));
  return G;
}

std::vector<std::pair<std::string, std::string>> FunctionCompiler::variableTypes() const {
  std::vector<std::pair<std::string, std::string>> Out;
  for (const auto &[Name, Var] : Variables)
    if (!Var.T.isUndefined() && !Var.T.isPyObject())
      Out.emplace_back(Name, Var.T.str());
  return Out;
}

std::string FunctionCompiler::functionName() const {
  return identifierField(Tree.get(), "name");
}

} // namespace tidal::frontend
