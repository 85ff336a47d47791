// Emission for records (NumPy structured dtypes), from what typing decided
// (TypeRecords.cpp): fields read and written (numbers, nested records,
// sub-arrays as views of the record's bytes), whole sub-arrays assigned,
// arrays of records the compiler makes (shared, local, constant memory),
// record scalars frozen from globals; and a.view(dtype) of arrays.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "RecordLayouts.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Module.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

// The field typing found (it raised the errors).
static const RecordField &typedField(const TypedValue &Record, const std::string &Name) {
  return *Record.T.Record->field(Name);
}

// r.h of a sub-array field: a C-ordered view of the record's bytes (an
// array of numbers, or of records for a sub-array of nested records).
TypedValue FunctionCompiler::emitRecordFieldView(const TypedValue &Record, const RecordField &Field) {
  unsigned N = static_cast<unsigned>(Field.Shape.size());
  TypedValue View(recordFieldType(Field, Record.T.ReadOnly));
  View.Parts.push_back(
      B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Record.scalar(), Field.Offset, Field.Name + ".addr"));
  for (unsigned Extent : Field.Shape)
    View.Parts.push_back(B.getInt64(Extent));
  for (unsigned D = 0; D < N; ++D) {
    uint64_t Stride = Field.elementSize();
    for (unsigned Inner = D + 1; Inner < N; ++Inner)
      Stride *= Field.Shape[Inner];
    View.Parts.push_back(B.getInt64(Stride));
  }
  return View;
}

TypedValue FunctionCompiler::emitRecordFieldLoad(const TypedValue &Record, const std::string &Name,
                                                 PyObject *) {
  const RecordField &Field = typedField(Record, Name);
  if (!Field.Shape.empty())
    return emitRecordFieldView(Record, Field);
  Value *Ptr = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Record.scalar(), Field.Offset, Name + ".addr");
  if (Field.Nested) { // r.inner: a view of the nested record's bytes
    TypedValue Inner(recordFieldType(Field, Record.T.ReadOnly));
    Inner.Parts.push_back(Ptr);
    return Inner;
  }
  Value *V = B.CreateAlignedLoad(llvmMemoryType(Field.Type), Ptr, Align(1), Name);
  if (Field.Type == Scalar::Bool)
    V = B.CreateICmpNE(V, B.getInt8(0));
  return makeScalar(Field.Type, V);
}

void FunctionCompiler::emitRecordFieldStore(const TypedValue &Record, const std::string &Name,
                                            const TypedValue &V, PyObject *, PyObject *ValueNode) {
  const RecordField &Field = typedField(Record, Name);
  if (!Field.Shape.empty()) // r.h = array or number: every element
    return emitSubArrayStore(emitRecordFieldView(Record, Field), Field, V, ValueNode);
  Value *Ptr = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Record.scalar(), Field.Offset);
  if (Field.Nested) { // r.inner = record: its bytes
    B.CreateMemMove(Ptr, Align(1), V.scalar(), Align(1), Field.Nested->Size);
    return;
  }
  Value *X = convert(V, frontend::Type::scalar(Field.Type), ValueNode).scalar();
  if (Field.Type == Scalar::Bool)
    X = B.CreateZExt(X, B.getInt8Ty());
  B.CreateAlignedStore(X, Ptr, Align(1));
}

// r.h = v for a sub-array field h: v is a number (every element gets it) or
// an array of numbers with the field's dimensions, read at the same indices
// (Numba's dest['h'] = src); a loop over the field's elements.
void FunctionCompiler::emitSubArrayStore(const TypedValue &View, const RecordField &Field,
                                         const TypedValue &V, PyObject *ValueNode) {
  unsigned N = static_cast<unsigned>(Field.Shape.size());
  uint64_t Count = 1;
  for (unsigned Extent : Field.Shape)
    Count *= Extent;
  if (Count == 0)
    return;
  auto ToMemory = [&](const TypedValue &Element) {
    Value *X = convert(Element, frontend::Type::scalar(Field.Type), ValueNode).scalar();
    return Field.Type == Scalar::Bool ? B.CreateZExt(X, B.getInt8Ty()) : X;
  };
  bool FromArray = V.T.isArray();
  Value *Broadcast = FromArray ? nullptr : ToMemory(V); // converted once, before the loop
  BasicBlock *Before = B.GetInsertBlock();
  BasicBlock *Body = BasicBlock::Create(Ctx, "subarray.store", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "subarray.done", F);
  B.CreateBr(Body);
  B.SetInsertPoint(Body);
  PHINode *K = B.CreatePHI(B.getInt64Ty(), 2, "element");
  K->addIncoming(B.getInt64(0), Before);
  Value *X = Broadcast;
  if (FromArray) {
    // The multi-index of flat element K of the C-ordered field, and the
    // source element at that index of V (any layout).
    Value *Offset = B.getInt64(0);
    uint64_t Inner = Count;
    for (unsigned D = 0; D < N; ++D) {
      Inner /= Field.Shape[D];
      Value *Index = B.CreateURem(B.CreateUDiv(K, B.getInt64(Inner)), B.getInt64(Field.Shape[D]));
      Offset = B.CreateAdd(Offset, B.CreateMul(Index, V.Parts[1 + N + D]));
    }
    Value *Source = B.CreateGEP(B.getInt8Ty(), V.Parts[0], Offset, "source.addr");
    Value *Loaded = B.CreateAlignedLoad(llvmMemoryType(V.T.Dtype), Source,
                                        Align(elementAlign(V.T.Dtype)));
    if (V.T.Dtype == Scalar::Bool)
      Loaded = B.CreateICmpNE(Loaded, B.getInt8(0));
    X = ToMemory(makeScalar(V.T.Dtype, Loaded));
  }
  Value *Destination = B.CreateGEP(B.getInt8Ty(), View.Parts[0],
                                   B.CreateMul(K, B.getInt64(byteSize(Field.Type))), "field.addr");
  B.CreateAlignedStore(X, Destination, Align(elementAlign(Field.Type)));
  Value *Next = B.CreateAdd(K, B.getInt64(1));
  K->addIncoming(Next, B.GetInsertBlock());
  B.CreateCondBr(B.CreateICmpULT(Next, B.getInt64(Count)), Body, Done);
  B.SetInsertPoint(Done);
}

TypedValue FunctionCompiler::makeRecordArray(std::shared_ptr<const RecordLayout> Fields,
                                             const std::vector<int64_t> &Shape, Value *Data) {
  unsigned Size = Fields->Size;
  TypedValue A(frontend::Type::recordArray(std::move(Fields), static_cast<unsigned>(Shape.size()),
                                           Layout::C));
  if (!Data) // typing: the type alone
    return A;
  A.Parts.push_back(Data);
  for (int64_t E : Shape)
    A.Parts.push_back(B.getInt64(E));
  int64_t Stride = Size;
  std::vector<Value *> Strides(Shape.size());
  for (size_t D = Shape.size(); D-- > 0;) {
    Strides[D] = B.getInt64(Stride);
    Stride *= Shape[D];
  }
  A.Parts.insert(A.Parts.end(), Strides.begin(), Strides.end());
  return A;
}

// The bytes of a NumPy object as a private constant global (the data of a
// global array or record scalar), aligned for Alignment.
GlobalVariable *FunctionCompiler::constantBytes(PyObject *O, unsigned Alignment) {
  GlobalVariable *&G = ConstantArrays[O];
  if (G)
    return G;
  PyRef Numpy = importModule("numpy");
  PyRef Contiguous = PyRef::check(PyObject_CallMethod(Numpy.get(), "ascontiguousarray", "O", O));
  PyRef Bytes = PyRef::check(PyObject_CallMethod(Contiguous.get(), "tobytes", nullptr));
  StringRef Data(PyBytes_AS_STRING(Bytes.get()), static_cast<size_t>(PyBytes_GET_SIZE(Bytes.get())));
  Constant *Init = ConstantDataArray::getRaw(Data, Data.size(), llvm::Type::getInt8Ty(Ctx));
  G = new GlobalVariable(M, Init->getType(), /*isConstant=*/true, GlobalValue::PrivateLinkage, Init,
                         "const.array");
  G->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  G->setAlignment(Align(std::max(16u, Alignment)));
  return G;
}

// What typeFrozenRecords typed: a dtype stays a compile-time object; the
// bytes of a record array or record scalar go to constant memory.
std::optional<TypedValue> FunctionCompiler::emitFrozenRecords(PyObject *O, PyObject *Node) {
  std::optional<TypedValue> Typed = typeFrozenRecords(O, Node);
  if (!Typed || Typed->T.isPyObject())
    return Typed;
  const RecordLayout &Fields = *Typed->T.Record;
  Value *Data = callMarker("const.array", B.getPtrTy(), {constantBytes(O, Fields.Align)});
  if (Typed->T.isRecord()) {
    Typed->Parts.push_back(Data);
    return Typed;
  }
  std::vector<int64_t> Shape;
  PyRef ShapeTuple = PyRef::borrow(O).attr("shape");
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(ShapeTuple.get()); ++I)
    Shape.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(ShapeTuple.get(), I)));
  TypedValue Out = makeRecordArray(Typed->T.Record, Shape, Data);
  Out.T.ReadOnly = true;
  return Out;
}

// a.view(dtype): the same parts, with the last dimension recounted in the
// new item size when it differs (typing checked that it is contiguous).
TypedValue FunctionCompiler::emitArrayView(const TypedValue &Base, const frontend::Type &Result) {
  TypedValue View(Result);
  View.Parts = Base.Parts;
  unsigned N = Base.T.NDim, From = byteSize(Base.T.Dtype), To = byteSize(Result.Dtype);
  if (From != To && N > 0) {
    Value *Bytes = B.CreateMul(Base.Parts[N], B.getInt64(From));
    View.Parts[N] = B.CreateUDiv(Bytes, B.getInt64(To), "view.length");
    View.Parts[2 * N] = B.getInt64(To);
  }
  return View;
}

} // namespace tidal::frontend
