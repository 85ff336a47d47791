// Memory: shared, local and constant arrays.
#include "IntrinsicTable.h"
#include "AstAccess.h"

#include "llvm/IR/Intrinsics.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// A shape argument as Numba spells it in its "No implementation" error:
// float32, Tuple(Literal[int](1), int32) (a tuple written in the call: its
// elements' constants are the nodes').
std::string numbaShapeSpelling(FunctionCompiler &C, const TypedValue &V, PyObject *Node) {
  if (V.ConstInt && V.T.isIntegerScalar())
    return "Literal[int](" + std::to_string(*V.ConstInt) + ")";
  if (!V.T.isTuple() || V.T.Elements.empty() || nodeKind(Node) != "Tuple")
    return V.T.str();
  std::string Elements;
  bool AnyConstant = false;
  for (PyObject *E : listItems(field(Node, "elts").get())) {
    const ExpressionType &Typed = C.typeOf(E);
    AnyConstant |= Typed.ConstInt.has_value();
    Elements += (Elements.empty() ? "" : ", ") +
                (Typed.ConstInt ? "Literal[int](" + std::to_string(*Typed.ConstInt) + ")"
                                : Typed.T.str());
  }
  return AnyConstant || !V.T.isHomogeneousTuple() ? "Tuple(" + Elements + ")" : V.T.str();
}

} // namespace

std::string noImplementationOfArray(FunctionCompiler &C, const std::string &Python,
                                    const std::string &Shape, const TypedValue *DType,
                                    PyObject *DTypeNode) {
  std::string DTypeText = "?";
  if (DType) {
    try {
      DTypeText = std::string("class(") + scalarName(C.dtypeOf(*DType, DTypeNode)) + ")";
    } catch (const CompileError &) {
      DTypeText = DType->T.isPyObject() ? "'" + PyRef::borrow(static_cast<PyObject *>(DType->T.Object)).str() + "'"
                                        : DType->T.str();
    }
  }
  // Numba's words, which its users search for; tidal's reason follows.
  return "No implementation of function Function(<function " + Python.substr(5) +
         ">) found for signature:\n \n >>> array(shape=" + Shape + ", dtype=" + DTypeText +
         ")\n \n";
}

namespace {

// A constant shape: an int or a tuple of ints, each >= 0.
std::vector<int64_t> constantShape(IntrinsicCall &Call, size_t Index, const std::string &Python) {
  const TypedValue &V = Call.Args[Index];
  std::string What = "the shape of " + Python + "()";
  std::vector<int64_t> Shape;
  if (V.T.isIntegerScalar() && V.ConstInt) {
    Shape.push_back(*V.ConstInt);
  } else if (V.T.isTuple() && V.TupleConstInts.size() == V.T.Elements.size() &&
             !V.T.Elements.empty()) {
    Shape = V.TupleConstInts;
  } else {
    Call.C.typingError(Call.ArgNodes[Index],
                       noImplementationOfArray(Call.C, Python, numbaShapeSpelling(Call.C, V, Call.ArgNodes[Index]),
                                               Call.Args.size() > 1 ? &Call.Args[1] : nullptr,
                                               Call.Args.size() > 1 ? Call.ArgNodes[1] : nullptr) +
                           What + " must be a constant int or a tuple of constant ints, not " +
                           (V.T.isIntegerScalar() || V.T.isTuple() ? "a value computed at run time"
                                                                   : V.T.str()));
  }
  for (int64_t E : Shape)
    if (E < 0)
      Call.C.typingError(Call.ArgNodes[Index], What + " must not be negative");
  return Shape;
}

// numba-cuda's alignment= of cuda.shared.array/cuda.local.array: a constant
// int that is positive, a power of 2 and a multiple of the pointer size (8),
// or None; its errors are numba-cuda's. Dynamic shared memory starts
// 16-byte aligned (LowerMemorySpaces.cpp), which bounds its alignment.
constexpr int64_t DynamicSharedAlign = 16;

std::optional<uint64_t> arrayAlignment(IntrinsicCall &Call, const std::string &Python) {
  if (Call.Args.size() < 3 || Call.Args[2].T.isNone())
    return std::nullopt;
  const TypedValue &V = Call.Args[2];
  PyObject *Node = Call.ArgNodes[2];
  if (!V.T.isIntegerScalar() || !V.ConstInt)
    Call.C.typingError(Node, Python + "(): alignment must be a constant integer, not " +
                                 (V.T.isIntegerScalar() ? std::string("a value computed at run time")
                                                        : V.T.str()));
  int64_t Alignment = *V.ConstInt;
  if (Alignment <= 0)
    Call.C.typingError(Node, Python + "(): Alignment must be positive, not " + std::to_string(Alignment));
  if (Alignment & (Alignment - 1))
    Call.C.typingError(Node, Python + "(): Alignment must be a power of 2, not " + std::to_string(Alignment));
  if (Alignment % 8)
    Call.C.typingError(Node, Python + "(): Alignment must be a multiple of 8, not " + std::to_string(Alignment));
  return static_cast<uint64_t>(Alignment);
}

// CUDA's limits on the arrays a kernel declares.
constexpr uint64_t MaxStaticSharedBytes = 48 * 1024;
constexpr uint64_t MaxLocalBytes = 512 * 1024;

// cuda.shared.array and cuda.local.array: the record's marker, or for a
// shared array of no elements, dynamic shared memory.
bool isSharedArray(IntrinsicCall &Call) {
  return std::string(Call.Record->PythonPath) == "cuda.shared.array";
}

TypedValue typeArrayMarker(IntrinsicCall &Call) {
  std::string Python = Call.Record->PythonPath;
  bindArguments(Call, Python, {"shape", "dtype", "alignment"}, 2);
  std::vector<int64_t> Shape = constantShape(Call, 0, Python);
  std::optional<uint64_t> Alignment = arrayAlignment(Call, Python);
  bool Dynamic = isSharedArray(Call) &&
                 std::any_of(Shape.begin(), Shape.end(), [](int64_t E) { return E == 0; });
  if (Alignment && Dynamic && *Alignment > static_cast<uint64_t>(DynamicSharedAlign))
    Call.C.typingError(Call.ArgNodes[2],
                       Python + "(): alignment " + std::to_string(*Alignment) +
                           " of a dynamic shared array: dynamic shared memory starts " +
                           std::to_string(DynamicSharedAlign) + "-byte aligned; give a static "
                           "shape for a larger alignment");
  // An object dtype (numpy.dtype('O')): Numba cannot type the array.
  if (Call.Args[1].T.isPyObject()) {
    PyRef Kind = PyRef::borrow(static_cast<PyObject *>(Call.Args[1].T.Object)).attrOrNull("kind");
    if (Kind && PyUnicode_Check(Kind.get()) && Kind.str() == "O") {
      std::string Variable = Call.C.assignedVariable();
      Call.C.typingError(Call.ArgNodes[1],
                         (Variable.empty() ? std::string("Cannot infer the type of the array")
                                           : "Cannot infer the type of variable '" + Variable + "'") +
                             ": " + Python + "() of dtype object would hold Python objects; "
                             "kernels' arrays hold numbers and records");
    }
  }
  // A structured dtype: an array of records (EmitRecords.cpp).
  std::shared_ptr<const RecordLayout> Records =
      Call.Args[1].T.isPyObject()
          ? Call.C.recordLayoutOfObject(static_cast<PyObject *>(Call.Args[1].T.Object), Call.ArgNodes[1])
          : nullptr;
  Scalar ElementType = Records ? Scalar::UInt8 : Call.C.dtypeOf(Call.Args[1], Call.ArgNodes[1]);
  uint64_t ElementBytes = Records ? Records->Size : byteSize(ElementType);
  // The size in bytes, multiplied with overflow checks, against CUDA's
  // limits: 48 KiB of static shared memory per block, 512 KiB of local
  // memory per thread.
  bool IsShared = isSharedArray(Call);
  uint64_t Limit = IsShared ? MaxStaticSharedBytes : MaxLocalBytes;
  uint64_t Count = 1;
  bool TooLarge = false;
  for (int64_t E : Shape)
    TooLarge |= __builtin_mul_overflow(Count, static_cast<uint64_t>(E), &Count);
  uint64_t Bytes = 0;
  TooLarge |= __builtin_mul_overflow(Count, ElementBytes, &Bytes);
  if (TooLarge || Bytes > Limit)
    Call.C.typingError(Call.ArgNodes[0],
                       Python + "() of " + (TooLarge ? std::string("more than 2**64") : std::to_string(Bytes)) +
                           " bytes is larger than CUDA allows (" + std::to_string(Limit / 1024) +
                           " KiB of " + (IsShared ? "static shared memory per block" : "local memory per thread") +
                           ")" + (IsShared ? "; use a dynamic shared array (shape 0) sized by the launch" : ""));
  return Records ? Call.C.makeRecordArray(Records, Shape, nullptr)
                 : TypedValue(Type::array(ElementType, static_cast<unsigned>(Shape.size()), Layout::C));
}

TypedValue emitArrayMarker(IntrinsicCall &Call, const Type &Result) {
  // The shape is the constant the typing rule checked, as typing recorded it.
  const ExpressionType &ShapeArgument = Call.C.typeOf(Call.ArgNodes[0]);
  std::vector<int64_t> Shape = ShapeArgument.T.isTuple() ? ShapeArgument.TupleConstInts
                                                         : std::vector<int64_t>{*ShapeArgument.ConstInt};
  Scalar ElementType = Result.Dtype;
  // Records: their itemsize and their dtype's alignment.
  uint64_t ElementBytes = Result.Record ? Result.Record->Size : byteSize(ElementType);
  uint64_t ElementAlign = Result.Record ? Result.Record->Align : byteSize(ElementType);
  if (Result.Record) // fields are loaded at their own alignment, even from a packed dtype
    for (const RecordField &Field : Result.Record->Fields)
      ElementAlign = std::max<uint64_t>(ElementAlign, Field.elementAlign());
  // alignment=, checked by the typing rule (None: the element's).
  if (Call.ArgNodes.size() > 2)
    if (std::optional<int64_t> Alignment = Call.C.typeOf(Call.ArgNodes[2]).ConstInt)
      ElementAlign = std::max<uint64_t>(ElementAlign, static_cast<uint64_t>(*Alignment));
  auto Make = [&](Value *Data) {
    return Result.Record ? Call.C.makeRecordArray(Result.Record, Shape, Data)
                         : Call.C.makeArray(ElementType, Shape, Data);
  };
  uint64_t Count = 1;
  for (int64_t E : Shape)
    Count *= static_cast<uint64_t>(E);
  IRBuilder<> &B = Call.C.builder();
  if (isSharedArray(Call) && Count == 0) {
    // Dynamic shared memory: every such array starts at the same base (as in
    // Numba), and a 1-D one is as long as the launch's dynamic bytes allow,
    // so that its slices are where the user asked (Numba's issue #5073).
    TypedValue Array = Make(Call.C.callMarker("shared.dynamic", B.getPtrTy(), {}));
    if (Shape.size() == 1)
      Array.Parts[1] = B.CreateUDiv(Call.C.callMarker("shared.dynamic.bytes", B.getInt64Ty(), {}),
                                    B.getInt64(ElementBytes), "dynamic.length");
    return Array;
  }
  uint64_t Bytes = Count * ElementBytes;
  Value *Data = Call.C.callMarker(Call.Record->Marker, B.getPtrTy(),
                                  {B.getInt64(Bytes), B.getInt64(ElementAlign)});
  return Make(Data);
}

// cuda.const.array_like(ary): ary is a global NumPy array, already frozen
// into a constant array by the compiler.
TypedValue typeConstArrayLike(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.const.array_like", {"ary"}, 1);
  const TypedValue &A = Call.Args[0];
  if (!A.T.isArray() || !A.T.ReadOnly)
    Call.C.typingError(Call.ArgNodes[0],
                       "cuda.const.array_like() takes a global NumPy array, not " + A.T.str());
  return A;
}
TypedValue emitConstArrayLike(IntrinsicCall &Call, const Type &) { return Call.Args[0]; }

// numba-cuda's cache-hinted loads (cuda.ldca(array, i) ... ldcv) and stores
// (cuda.stcg(array, i, value) ... stwt) of global memory, through the
// ld.<op>/st.<op> markers; numba-cuda's checks of the array and the index.
// tidal's markers take 32- and 64-bit integers and floats.
std::string cacheHintName(IntrinsicCall &Call) {
  std::string Python = Call.Record->PythonPath;
  return Python.substr(Python.rfind('.') + 1); // "ldca"
}
Scalar checkCacheHintAccess(IntrinsicCall &Call) {
  std::string Name = cacheHintName(Call);
  const Type &Array = Call.Args[0].T;
  const Type &Index = Call.Args[1].T;
  if (!Array.isArray())
    Call.C.typingError(Call.ArgNodes[0],
                       Name + " operates on arrays or pointers. Got type " + Array.str());
  if (Index.isIntegerScalar()) {
    if (Array.NDim != 1)
      Call.C.typingError(Call.ArgNodes[1], Name + ": Expected " + std::to_string(Array.NDim) +
                                               " indices, got a scalar");
  } else if (Index.isTuple() && Index.isHomogeneousTuple() && !Index.Elements.empty() &&
             Index.Elements[0].isIntegerScalar()) {
    if (Index.Elements.size() != Array.NDim)
      Call.C.typingError(Call.ArgNodes[1], Name + ": Expected " + std::to_string(Array.NDim) +
                                               " indices, got " +
                                               std::to_string(Index.Elements.size()));
  } else {
    Call.C.typingError(Call.ArgNodes[1], Name + ": " + Index.str() + " is not a valid index");
  }
  Scalar Element = Array.Dtype;
  if (Array.hasRecordElements() || !(isInteger(Element) || isFloat(Element)) || isComplex(Element))
    Call.C.typingError(Call.ArgNodes[0], Name + " requires array of integer or float type, got " +
                                             (Array.hasRecordElements() ? std::string("a record")
                                                                        : std::string(scalarName(Element))));
  if (!suffixOf(Element))
    Call.C.typingError(Call.ArgNodes[0],
                       Name + " requires array dtype with bitwidth in [32, 64] on tidal, got " +
                           scalarName(Element) + " (numba-cuda also takes 8- and 16-bit elements)");
  Call.C.checkIndex(Array, Index, Call.ArgNodes[1]);
  return Element;
}
TypedValue typeCacheLoad(IntrinsicCall &Call) {
  bindArguments(Call, Call.Record->PythonPath, {"array", "i"}, 2);
  return TypedValue(Type::scalar(checkCacheHintAccess(Call)));
}
TypedValue emitCacheLoad(IntrinsicCall &Call, const Type &Result) {
  Value *Ptr = Call.C.elementPointer(Call.Args[0], Call.ArgNodes[1], Call.Args[1], Call.ArgNodes[0],
                                     FunctionCompiler::ElementAccess::Read);
  return Call.C.makeScalar(Result.Dtype,
                           Call.C.callMarker(std::string(Call.Record->Marker) + "." + suffixOf(Result.Dtype),
                                             Call.C.llvmType(Result.Dtype), {Ptr}));
}
TypedValue typeCacheStore(IntrinsicCall &Call) {
  bindArguments(Call, Call.Record->PythonPath, {"array", "i", "value"}, 3);
  Scalar Element = checkCacheHintAccess(Call);
  if (Call.Args[0].T.ReadOnly)
    Call.C.typingError(Call.ArgNodes[0], cacheHintName(Call) + " on a read-only array");
  if (!Call.Args[2].T.isScalar())
    Call.C.typingError(Call.ArgNodes[2], "the value of " + cacheHintName(Call) +
                                             "() must be a number, not " + Call.Args[2].T.str());
  Call.C.convertedType(Call.Args[2], Type::scalar(Element), Call.ArgNodes[2]);
  return TypedValue(Type::none());
}
TypedValue emitCacheStore(IntrinsicCall &Call, const Type &) {
  Scalar Element = Call.Args[0].T.Dtype;
  Value *Ptr = Call.C.elementPointer(Call.Args[0], Call.ArgNodes[1], Call.Args[1], Call.ArgNodes[0]);
  Value *V = Call.C.convert(Call.Args[2], Type::scalar(Element), Call.ArgNodes[2]).scalar();
  Call.C.callMarker(std::string(Call.Record->Marker) + "." + suffixOf(Element),
                    Call.C.builder().getVoidTy(), {Ptr, V});
  return TypedValue(Type::none());
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> memoryIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.shared", IntrinsicKind::Namespace, nullptr, nullptr, "",
       "Shared memory of the block."},
      {"cuda.shared.array", IntrinsicKind::Function, typeArrayMarker, emitArrayMarker, "shared.array",
       "array(shape, dtype, alignment=None): a shared array of the block, static (shape a constant int or tuple) or dynamic (shape 0: sized by the launch's sharedmem); alignment: a constant power of 2, a multiple of 8"},
      {"cuda.local", IntrinsicKind::Namespace, nullptr, nullptr, "",
       "Memory private to the thread."},
      {"cuda.local.array", IntrinsicKind::Function, typeArrayMarker, emitArrayMarker, "local.array",
       "array(shape, dtype, alignment=None): an array private to the thread; alignment: a constant power of 2, a multiple of 8"},
      {"cuda.const", IntrinsicKind::Namespace, nullptr, nullptr, "",
       "Constant memory."},
      {"cuda.ldca", IntrinsicKind::Function, typeCacheLoad, emitCacheLoad, "ld.ca",
       "ldca(array, i): array[i] loaded with PTX's ld.global.ca (cached at all levels)"},
      {"cuda.ldcg", IntrinsicKind::Function, typeCacheLoad, emitCacheLoad, "ld.cg",
       "ldcg(array, i): array[i] loaded with ld.global.cg (cached in L2, not L1)"},
      {"cuda.ldcs", IntrinsicKind::Function, typeCacheLoad, emitCacheLoad, "ld.cs",
       "ldcs(array, i): array[i] loaded with ld.global.cs (streaming, likely used once)"},
      {"cuda.ldlu", IntrinsicKind::Function, typeCacheLoad, emitCacheLoad, "ld.lu",
       "ldlu(array, i): array[i] loaded with ld.global.lu (last use)"},
      {"cuda.ldcv", IntrinsicKind::Function, typeCacheLoad, emitCacheLoad, "ld.cv",
       "ldcv(array, i): array[i] loaded with ld.global.cv (not cached: fetched again)"},
      {"cuda.stcg", IntrinsicKind::Function, typeCacheStore, emitCacheStore, "st.cg",
       "stcg(array, i, value): array[i] = value with st.global.cg (cached in L2, not L1)"},
      {"cuda.stcs", IntrinsicKind::Function, typeCacheStore, emitCacheStore, "st.cs",
       "stcs(array, i, value): array[i] = value with st.global.cs (streaming)"},
      {"cuda.stwb", IntrinsicKind::Function, typeCacheStore, emitCacheStore, "st.wb",
       "stwb(array, i, value): array[i] = value with st.global.wb (write-back)"},
      {"cuda.stwt", IntrinsicKind::Function, typeCacheStore, emitCacheStore, "st.wt",
       "stwt(array, i, value): array[i] = value with st.global.wt (write-through)"},
      {"cuda.const.array_like", IntrinsicKind::Function, typeConstArrayLike, emitConstArrayLike, "const.array",
       "array_like(ary): a global NumPy array as constant memory"},
  };
  return Records;
}

} // namespace tidal::frontend
