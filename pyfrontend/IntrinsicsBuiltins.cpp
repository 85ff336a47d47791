// Builtins: len, tuple, abs, min, max, range, int, float, bool, print, and the
// casts to each dtype (tidal.float32(x), numpy.float32(x)).
#include "IntrinsicTable.h"
#include "AstAccess.h"

#include "llvm/IR/Intrinsics.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// len(a): a tuple's length (a constant) or an array's first extent.
TypedValue typeLen(IntrinsicCall &Call) {
  expectArgCount(Call, "len", 1, 1);
  const TypedValue &A = Call.Args[0];
  TypedValue R(Type::scalar(Scalar::Int64));
  if (A.T.isTuple()) {
    R.ConstInt = static_cast<int64_t>(A.T.Elements.size());
    return R;
  }
  if (!A.T.isArray())
    Call.C.typingError(Call.ArgNodes[0], "len() of a value of type " + A.T.str());
  return R;
}
TypedValue emitLen(IntrinsicCall &Call, const Type &) {
  const TypedValue &A = Call.Args[0];
  if (A.T.isTuple()) {
    TypedValue R = Call.C.makeScalar(Scalar::Int64, Call.C.builder().getInt64(A.T.Elements.size()));
    R.ConstInt = static_cast<int64_t>(A.T.Elements.size());
    return R;
  }
  return Call.C.makeScalar(Scalar::Int64, A.Parts[1]);
}

// tuple(t) of a tuple (itself) or of a CUDA vector type (its elements, a
// UniTuple); an array's length is not known when compiling (as in Numba).
TypedValue typeTuple(IntrinsicCall &Call) {
  expectArgCount(Call, "tuple", 1, 1);
  const TypedValue &A = Call.Args[0];
  if (A.T.isTuple())
    return A;
  if (A.T.isVector())
    return TypedValue(
        Type::tuple(std::vector<Type>(A.T.NDim, Type::scalar(A.T.Dtype))));
  Call.C.typingError(Call.ArgNodes[0],
                     "tuple() of a value of type " + A.T.str() +
                         ": kernels make tuples of tuples and of CUDA vector types, whose "
                         "length is known when compiling");
}
TypedValue emitTuple(IntrinsicCall &Call, const Type &) {
  const TypedValue &A = Call.Args[0];
  if (A.T.isTuple())
    return A;
  std::vector<TypedValue> Elements;
  for (unsigned E = 0; E < A.T.NDim; ++E)
    Elements.push_back(
        Call.C.makeScalar(A.T.Dtype, Call.C.builder().CreateExtractValue(A.scalar(), E)));
  return Call.C.makeTuple(std::move(Elements));
}

// The magnitude of a complex number: hypot of its parts (math marker).
Value *complexMagnitude(FunctionCompiler &C, Scalar S, Value *Z) {
  IRBuilder<> &B = C.builder();
  Scalar F = componentOf(S);
  return C.callMarker(std::string("math.hypot.") + (F == Scalar::Float32 ? "f32" : "f64"),
                      C.llvmType(F), {B.CreateExtractValue(Z, 0), B.CreateExtractValue(Z, 1)});
}

// abs(x): a complex number's magnitude; bools as int64; else the type of x.
TypedValue typeAbs(IntrinsicCall &Call) {
  expectArgCount(Call, "abs", 1, 1);
  const TypedValue &A = Call.Args[0];
  if (!A.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "abs() of a value of type " + A.T.str());
  if (isComplex(A.T.Dtype))
    return TypedValue(Type::scalar(componentOf(A.T.Dtype)));
  Scalar S = A.T.Dtype == Scalar::Bool ? Scalar::Int64 : A.T.Dtype;
  return Call.C.convertedType(A, Type::scalar(S), Call.Node);
}
TypedValue emitAbs(IntrinsicCall &Call, const Type &Result) {
  const TypedValue &A = Call.Args[0];
  if (isComplex(A.T.Dtype))
    return Call.C.makeScalar(Result.Dtype, complexMagnitude(Call.C, A.T.Dtype, A.scalar()));
  Scalar S = Result.Dtype;
  TypedValue X = Call.C.convert(A, Result, Call.Node);
  if (!isSigned(S) && !isFloat(S))
    return X;
  IRBuilder<> &B = Call.C.builder();
  Value *V = X.scalar();
  if (isFloat(S))
    return Call.C.makeScalar(S, B.CreateUnaryIntrinsic(Intrinsic::fabs, V));
  return Call.C.makeScalar(S, B.CreateBinaryIntrinsic(Intrinsic::abs, V, B.getFalse()));
}

// min(a, b, ...) and max(a, b, ...) of numbers, in their promoted type.
bool isMax(IntrinsicCall &Call) { return std::string(Call.Record->PythonPath) == "builtins.max"; }
// min(t) and max(t) of one tuple are over its elements: the arguments
// become the elements (each a scalar: one part). False for other calls.
bool spreadTupleArgument(IntrinsicCall &Call) {
  if (Call.Args.size() != 1 || !Call.Args[0].T.isTuple())
    return false;
  TypedValue Tuple = Call.Args[0];
  PyObject *Node = Call.ArgNodes[0];
  bool Known = Tuple.TupleConstInts.size() == Tuple.T.Elements.size();
  Call.Args.clear();
  Call.ArgNodes.clear();
  for (size_t I = 0; I < Tuple.T.Elements.size(); ++I) {
    TypedValue Element(Tuple.T.Elements[I]);
    if (!Element.T.isScalar())
      Call.C.typingError(Node, std::string(isMax(Call) ? "max" : "min") +
                                   "() of a tuple of numbers, not of " + Tuple.T.str());
    if (I < Tuple.Parts.size())
      Element.Parts.push_back(Tuple.Parts[I]);
    if (Known)
      Element.ConstInt = Tuple.TupleConstInts[I];
    Call.Args.push_back(std::move(Element));
    Call.ArgNodes.push_back(Node);
  }
  return true;
}
TypedValue typeMinOrMax(IntrinsicCall &Call) {
  const char *Name = isMax(Call) ? "max" : "min";
  if (!Call.Keywords.empty())
    Call.C.typingError(Call.Node, std::string(Name) + "() in kernels takes no keyword arguments");
  bool FromTuple = spreadTupleArgument(Call);
  if (Call.Args.size() == 1 && Call.Args[0].T.isArray())
    Call.C.typingError(Call.Node, std::string(Name) + "() of an array is not supported in "
                                                      "kernels: loop over its elements");
  if (Call.Args.empty() || (Call.Args.size() < 2 && !FromTuple))
    Call.C.typingError(Call.Node, std::string(Name) +
                                      "() in kernels takes two or more numbers, or one tuple of "
                                      "numbers");
  Scalar Common = Call.Args[0].T.isScalar() ? Call.Args[0].T.Dtype : Scalar::Int64;
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    if (!Call.Args[I].T.isScalar() || isFp8(Call.Args[I].T.Dtype))
      Call.C.typingError(Call.ArgNodes[I], std::string(Name) + "() of a value of type " +
                                               Call.Args[I].T.str());
    if (I)
      Common = promoteArithmetic(Common, Call.Args[I].T.Dtype);
  }
  if (isComplex(Common))
    Call.C.typingError(Call.Node, std::string(Name) + "() of complex numbers: they have no order");
  // min/max of bools and small ints keep Numba's promotion.
  return TypedValue(Type::scalar(Common));
}
// Numba's rule for max(a, b)/min(a, b) of two float32/float64 numbers:
// libdevice's fmax/fmin, whose result is the operand that is not NaN
// (llvm.maxnum/minnum: PTX's max/min.f32/f64 on the GPU). Other calls
// (three or more arguments, integers, a float and an int) are Python's
// algorithm: an argument replaces the best so far when it compares greater.
bool isTwoFloatMinOrMax(IntrinsicCall &Call) {
  auto IsFloat32Or64 = [](const TypedValue &V) {
    return V.T.isScalar() && (V.T.Dtype == Scalar::Float32 || V.T.Dtype == Scalar::Float64);
  };
  return Call.Args.size() == 2 && IsFloat32Or64(Call.Args[0]) && IsFloat32Or64(Call.Args[1]);
}
TypedValue emitMinOrMax(IntrinsicCall &Call, const Type &Result) {
  bool IsMax = isMax(Call);
  spreadTupleArgument(Call);
  Scalar Common = Result.Dtype;
  IRBuilder<> &B = Call.C.builder();
  if (isTwoFloatMinOrMax(Call)) {
    Value *A = Call.C.convert(Call.Args[0], Result, Call.ArgNodes[0]).scalar();
    Value *Other = Call.C.convert(Call.Args[1], Result, Call.ArgNodes[1]).scalar();
    return Call.C.makeScalar(
        Common, B.CreateBinaryIntrinsic(IsMax ? Intrinsic::maxnum : Intrinsic::minnum, A, Other));
  }
  Value *Best = Call.C.convert(Call.Args[0], Result, Call.ArgNodes[0]).scalar();
  for (size_t I = 1; I < Call.Args.size(); ++I) {
    Value *X = Call.C.convert(Call.Args[I], Result, Call.ArgNodes[I]).scalar();
    Value *Better;
    if (isFloat(Common))
      Better = IsMax ? B.CreateFCmpOGT(X, Best) : B.CreateFCmpOLT(X, Best);
    else if (isSigned(Common))
      Better = IsMax ? B.CreateICmpSGT(X, Best) : B.CreateICmpSLT(X, Best);
    else
      Better = IsMax ? B.CreateICmpUGT(X, Best) : B.CreateICmpULT(X, Best);
    Best = B.CreateSelect(Better, X, Best);
  }
  return Call.C.makeScalar(Common, Best);
}

TypedValue typeRange(IntrinsicCall &Call) {
  Call.C.unsupported(Call.Node, "range() can only be used as the iterable of a for loop");
}

// Casts: tidal.float32(x), numpy.float32(x), int(x), float(x), bool(x).
template <Scalar S> TypedValue typeCast(IntrinsicCall &Call) {
  std::string Name = scalarName(S);
  expectArgCount(Call, Name, 1, 1);
  if (!Call.Args[0].T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "cannot convert " + Call.Args[0].T.str() +
                                             " to " + Name);
  if (isFp8(Call.Args[0].T.Dtype)) // explicit, as fp8 values convert (Fp8Conversions.cpp)
    return TypedValue(Type::scalar(S));
  return Call.C.convertedType(Call.Args[0], Type::scalar(S), Call.Node);
}
TypedValue emitCast(IntrinsicCall &Call, const Type &Result) {
  return Call.C.convert(Call.Args[0], Result, Call.Node);
}

// pow(base, exp): base ** exp, as the operator types and computes it.
TypedValue typePow(IntrinsicCall &Call) {
  bindArguments(Call, "pow", {"base", "exp", "mod"}, 2);
  if (Call.Args.size() == 3)
    Call.C.unsupported(Call.ArgNodes[2], "pow() with a modulus is not supported in kernels");
  return Call.C.arithmeticType(BinaryOperator::Power, Call.Args[0], Call.Args[1], Call.Node);
}
TypedValue emitPow(IntrinsicCall &Call, const Type &) {
  return Call.C.arithmetic(BinaryOperator::Power, Call.Args[0], Call.Args[1], Call.Node);
}

// print(a, b, "text"): one printf with the format numba-cuda's print uses:
// integers %lld/%llu, floats %f, bools True/False, tuples (a, b) and (a,)
// of those, dim3 objects (cuda.threadIdx) (%d, %d, %d), separated by spaces.
// The string literal of a print argument; null for the other arguments.
PyObject *printedText(PyObject *ArgNode) {
  if (typeName(ArgNode) != "Constant")
    return nullptr;
  PyObject *Value = PyObject_GetAttrString(ArgNode, "value");
  Py_XDECREF(Value); // the node keeps it alive
  return Value && PyUnicode_Check(Value) ? Value : nullptr;
}
// The dim3 intrinsic (cuda.threadIdx, cuda.blockDim, ...) a value names; null
// for other values.
const IntrinsicRecord *printedDim3(const Type &T) {
  if (!T.isPyObject())
    return nullptr;
  const IntrinsicRecord *Record = findIntrinsic(intrinsicName(static_cast<PyObject *>(T.Object)));
  return Record && Record->Kind == IntrinsicKind::Dim3 ? Record : nullptr;
}
void checkPrintable(IntrinsicCall &Call, const Type &T, PyObject *ArgNode) {
  if (T.isTuple()) {
    for (const Type &E : T.Elements)
      checkPrintable(Call, E, ArgNode);
    return;
  }
  if (printedDim3(T))
    return;
  if (!T.isScalar())
    Call.C.typingError(ArgNode, "print() in kernels prints numbers, tuples of them, dim3 objects "
                                "and string literals, not " + T.str());
  if (isComplex(T.Dtype))
    Call.C.typingError(ArgNode, "print() in kernels prints real numbers: print .real and .imag");
  if (isFp8(T.Dtype))
    Call.C.typingError(ArgNode, "print() in kernels does not print " + T.str() +
                                    " values: print float32(v)");
}
TypedValue typePrint(IntrinsicCall &Call) {
  for (const std::string &K : Call.Keywords)
    Call.C.unsupported(Call.Node, "print() in kernels takes no keyword arguments ('" + K + "')");
  for (size_t I = 0; I < Call.Args.size(); ++I)
    if (!printedText(Call.ArgNodes[I]))
      checkPrintable(Call, Call.Args[I].T, Call.ArgNodes[I]);
  return TypedValue(Type::none());
}
// Appends V's printf format and values.
void printItem(IntrinsicCall &Call, const TypedValue &V, PyObject *ArgNode, std::string &Format,
               std::vector<Value *> &Values) {
  IRBuilder<> &B = Call.C.builder();
  if (V.T.isTuple()) {
    std::vector<TypedValue> Elements = Call.C.tupleElements(V);
    Format += "(";
    for (size_t I = 0; I < Elements.size(); ++I) {
      if (I)
        Format += ", ";
      printItem(Call, Elements[I], ArgNode, Format, Values);
    }
    Format += Elements.size() == 1 ? ",)" : ")";
    return;
  }
  if (const IntrinsicRecord *Dim3 = printedDim3(V.T)) {
    Format += "(%d, %d, %d)";
    for (const char *Axis : {".x", ".y", ".z"})
      Values.push_back(Call.C.markerI32(std::string(Dim3->Marker) + Axis));
    return;
  }
  Scalar S = V.T.Dtype;
  if (S == Scalar::Bool) {
    Format += "%s";
    Values.push_back(B.CreateSelect(V.scalar(), Call.C.constantString("True", "print.true"),
                                    Call.C.constantString("False", "print.false")));
  } else if (isFloat(S)) {
    Format += "%f";
    Values.push_back(Call.C.convert(V, Type::scalar(Scalar::Float64), ArgNode).scalar());
  } else {
    Format += isSigned(S) ? "%lld" : "%llu";
    Values.push_back(Call.C.convert(V, Type::scalar(isSigned(S) ? Scalar::Int64 : Scalar::UInt64),
                                    ArgNode).scalar());
  }
}
constexpr size_t MaxPrintItems = 32;
TypedValue emitPrint(IntrinsicCall &Call, const Type &) {
  std::string Format;
  std::vector<Value *> Values;
  IRBuilder<> &B = Call.C.builder();
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    if (I)
      Format += " ";
    PyObject *ArgNode = Call.ArgNodes[I];
    if (PyObject *Text = printedText(ArgNode)) {
      for (char Ch : PyRef::borrow(Text).str())
        Format += Ch == '%' ? std::string("%%") : std::string(1, Ch);
      continue;
    }
    printItem(Call, Call.Args[I], ArgNode, Format, Values);
  }
  Format += "\n";
  if (Call.Args.size() > MaxPrintItems) {
    // CUDA's vprintf takes 32 arguments: as Numba does, warn and print the
    // format itself (a GPU would print garbage), on every target alike.
    Call.C.warnAt(Call.Node, "tidal.errors", "CompileWarning",
                  "CUDA print() cannot print more than 32 items. The raw format string "
                  "will be emitted by the kernel instead.");
    std::string Raw;
    for (char Ch : Format)
      Raw += Ch == '%' ? std::string("%%") : std::string(1, Ch);
    Format = Raw;
    Values.clear();
  }
  Values.insert(Values.begin(), Call.C.constantString(Format, "print.format"));
  Call.C.callMarker("print", B.getVoidTy(), Values, /*VarArg=*/true);
  return TypedValue(Type::none());
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> builtinIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"builtins.len", IntrinsicKind::Function, typeLen, emitLen, "",
       "len(a): the length of a tuple or of an array's first axis."},
      {"builtins.tuple", IntrinsicKind::Function, typeTuple, emitTuple, "",
       "tuple(t): a tuple's own value, or a CUDA vector type's elements as a tuple."},
      {"builtins.abs", IntrinsicKind::Function, typeAbs, emitAbs, "",
       "abs(x): the absolute value (the magnitude of a complex number)."},
      {"builtins.min", IntrinsicKind::Function, typeMinOrMax, emitMinOrMax, "",
       "min(a, b, ...) or min(tuple): the smallest argument or element."},
      {"builtins.max", IntrinsicKind::Function, typeMinOrMax, emitMinOrMax, "",
       "max(a, b, ...) or max(tuple): the largest argument or element."},
      {"builtins.range", IntrinsicKind::Function, typeRange, nullptr, "",
       "range(stop), range(start, stop[, step]): the counter of a for loop."},
      {"builtins.int", IntrinsicKind::Function, typeCast<Scalar::Int64>, emitCast, "",
       "int(x): x as int64, truncated toward zero."},
      {"builtins.float", IntrinsicKind::Function, typeCast<Scalar::Float64>, emitCast, "",
       "float(x): x as float64."},
      {"builtins.bool", IntrinsicKind::Function, typeCast<Scalar::Bool>, emitCast, "",
       "bool(x): the truth of x."},
      {"builtins.print", IntrinsicKind::Function, typePrint, emitPrint, "print",
       "print(*values): numbers, tuples, dim3 objects and string literals, one line, through printf."},
      {"cast.bool", IntrinsicKind::Function, typeCast<Scalar::Bool>, emitCast, "",
       "bool(x): x converted to bool."},
      {"cast.int8", IntrinsicKind::Function, typeCast<Scalar::Int8>, emitCast, "",
       "int8(x): x converted to int8."},
      {"cast.int16", IntrinsicKind::Function, typeCast<Scalar::Int16>, emitCast, "",
       "int16(x): x converted to int16."},
      {"cast.int32", IntrinsicKind::Function, typeCast<Scalar::Int32>, emitCast, "",
       "int32(x): x converted to int32."},
      {"cast.int64", IntrinsicKind::Function, typeCast<Scalar::Int64>, emitCast, "",
       "int64(x): x converted to int64."},
      {"cast.uint8", IntrinsicKind::Function, typeCast<Scalar::UInt8>, emitCast, "",
       "uint8(x): x converted to uint8."},
      {"cast.uint16", IntrinsicKind::Function, typeCast<Scalar::UInt16>, emitCast, "",
       "uint16(x): x converted to uint16."},
      {"cast.uint32", IntrinsicKind::Function, typeCast<Scalar::UInt32>, emitCast, "",
       "uint32(x): x converted to uint32."},
      {"cast.uint64", IntrinsicKind::Function, typeCast<Scalar::UInt64>, emitCast, "",
       "uint64(x): x converted to uint64."},
      {"cast.float16", IntrinsicKind::Function, typeCast<Scalar::Float16>, emitCast, "",
       "float16(x): x converted to float16."},
      {"cast.float32", IntrinsicKind::Function, typeCast<Scalar::Float32>, emitCast, "",
       "float32(x): x converted to float32."},
      {"cast.float64", IntrinsicKind::Function, typeCast<Scalar::Float64>, emitCast, "",
       "float64(x): x converted to float64."},
      {"cast.complex64", IntrinsicKind::Function, typeCast<Scalar::Complex64>, emitCast, "",
       "complex64(x): x converted to complex64."},
      {"cast.complex128", IntrinsicKind::Function, typeCast<Scalar::Complex128>, emitCast, "",
       "complex128(x): x converted to complex128."},
      {"cast.bfloat16", IntrinsicKind::Function, typeCast<Scalar::BFloat16>, emitCast, "",
       "bfloat16(x): x converted to bfloat16, rounded to nearest (ties to even)."},
      {"builtins.pow", IntrinsicKind::Function, typePow, emitPow, "",
       "pow(base, exp): base ** exp."},
      {"tidal.literal_unroll", IntrinsicKind::Function, typeLiteralUnrollCall,
       emitLiteralUnrollCall, "", "literal_unroll(t): t; a for loop over it is unrolled."},
  };
  return Records;
}

} // namespace tidal::frontend
