// Typing of records (NumPy structured dtypes): which field a name or a
// position means, what reading it gives (a number, a nested record, a
// sub-array view), what may be stored into it, Numba's alignment rule, the
// records frozen from globals, and a.view(dtype) of arrays. Every error
// about records is raised here; EmitRecords.cpp emits what this decided.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "RecordLayouts.h"

#include <optional>

namespace tidal::frontend {

// The spelling of a field's element type in messages: float32, Record(...).
static std::string fieldTypeName(const RecordField &Field) {
  return Field.Nested ? Field.Nested->str() : std::string(scalarName(Field.Type));
}

const RecordField &FunctionCompiler::recordField(const TypedValue &Record, const std::string &Name,
                                                 PyObject *Node) {
  const RecordField *Field = Record.T.Record->field(Name);
  if (!Field)
    typingError(Node, Record.T.str() + " has no field '" + Name + "'");
  // As on Numba's CUDA target: a field its dtype leaves at an offset that is
  // not a multiple of its type's alignment (a packed dtype, without
  // align=True) can't be loaded or stored.
  if (Field->Offset % Field->elementAlign() != 0)
    typingError(Node, Record.T.str() + "." + Name + " of type " + fieldTypeName(*Field) +
                          " is not aligned (it starts at byte " + std::to_string(Field->Offset) +
                          "): use an aligned dtype (numpy.dtype(..., align=True))");
  return *Field;
}

TypedValue FunctionCompiler::typeRecordFieldLoad(const TypedValue &Record, const std::string &Name,
                                                 PyObject *Node) {
  return TypedValue(recordFieldType(recordField(Record, Name, Node), Record.T.ReadOnly));
}

void FunctionCompiler::typeRecordFieldStore(const TypedValue &Record, const std::string &Name,
                                            const TypedValue &V, PyObject *Node,
                                            PyObject *ValueNode) {
  const RecordField &Field = recordField(Record, Name, Node);
  if (Record.T.ReadOnly)
    typingError(Node, "cannot write to field '" + Name + "' of a read-only record");
  if (!Field.Shape.empty()) { // r.h = v: a number, or an array of the field's dimensions
    unsigned N = static_cast<unsigned>(Field.Shape.size());
    if (Field.Nested)
      unsupported(Node, "assigning to the whole field '" + Name +
                            "', an array of records, is not supported: assign its records (r." +
                            Name + "[i] = record)");
    bool FromArray = V.T.isArray() && !V.T.Record && V.T.NDim == N;
    if (!V.T.isScalar() && !FromArray)
      typingError(ValueNode, "cannot store a value of type " + V.T.str() + " into field '" + Name +
                                 "' of type " + recordFieldType(Field, false).str() +
                                 ": give a number or an array of " + std::to_string(N) +
                                 " dimension" + (N == 1 ? "" : "s"));
    convertedType(FromArray ? TypedValue(frontend::Type::scalar(V.T.Dtype)) : V,
                  frontend::Type::scalar(Field.Type), ValueNode);
    return;
  }
  if (Field.Nested) { // r.inner = record: its bytes
    if (!V.T.isRecord() || !(*V.T.Record == *Field.Nested))
      typingError(ValueNode, "cannot store a value of type " + V.T.str() + " into field '" + Name +
                                 "' of " + Record.T.str() + ", which is a " + Field.Nested->str());
    return;
  }
  if (!V.T.isScalar())
    typingError(ValueNode, "cannot store a value of type " + V.T.str() + " into field '" + Name +
                               "' of " + Record.T.str() + ", which is a " + scalarName(Field.Type));
  convertedType(V, frontend::Type::scalar(Field.Type), ValueNode);
}

std::string FunctionCompiler::recordFieldName(const TypedValue &Record, const TypedValue &Index,
                                              PyObject *IndexNode) {
  if (Index.T.isPyObject() && PyUnicode_Check(static_cast<PyObject *>(Index.T.Object))) {
    const char *Text = PyUnicode_AsUTF8(static_cast<PyObject *>(Index.T.Object));
    if (!Text)
      throw PythonErrorSet();
    return Text;
  }
  // r[0]: the field at that position, as Numba's static getitem gives it.
  if (Index.T.isIntegerScalar() && Index.ConstInt) {
    int64_t Count = static_cast<int64_t>(Record.T.Record->Fields.size());
    if (*Index.ConstInt < 0 || *Index.ConstInt >= Count)
      typingError(IndexNode, "field index " + std::to_string(*Index.ConstInt) + " out of range for " +
                                 Record.T.str() + ", which has " + std::to_string(Count) + " fields");
    return Record.T.Record->Fields[static_cast<size_t>(*Index.ConstInt)].Name;
  }
  typingError(IndexNode, "a record's field is named by a string constant or a constant integer, "
                         "not by " + (Index.T.isIntegerScalar() ? "an integer computed at run time"
                                                                : Index.T.str()));
}

std::shared_ptr<const RecordLayout> FunctionCompiler::recordLayoutOfObject(PyObject *Object,
                                                                           PyObject *Node) {
  PyRef Dtype = PyRef::steal(structuredDtypeOf(Object));
  if (!Dtype)
    return nullptr;
  std::string Why;
  std::shared_ptr<const RecordLayout> Layout = recordLayoutOfDtype(Dtype.get(), Why);
  if (!Layout)
    unsupported(Node, "kernels can't use " + Why);
  return Layout;
}

// The shape of a NumPy array object.
static std::vector<int64_t> shapeOf(PyObject *O) {
  std::vector<int64_t> Shape;
  PyRef ShapeTuple = PyRef::borrow(O).attr("shape");
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(ShapeTuple.get()); ++I)
    Shape.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(ShapeTuple.get(), I)));
  return Shape;
}

// A global or closure NumPy dtype (a compile-time object, for
// cuda.shared.array(n, dtype) and the like), or a NumPy object that holds
// records: an array of records (a read-only C array in constant memory) or
// a record scalar (numpy.void: a read-only record in constant memory);
// nullopt for any other object.
std::optional<TypedValue> FunctionCompiler::typeFrozenRecords(PyObject *O, PyObject *Node) {
  std::string Kind = typeName(O);
  if (Kind == "dtype" || Kind.rfind("dtype[", 0) == 0)
    return TypedValue(frontend::Type::pyObject(O));
  bool IsArray = Kind == "ndarray" || Kind == "recarray";
  bool IsScalar = Kind == "void" || Kind == "record";
  if (!IsArray && !IsScalar)
    return std::nullopt;
  PyRef Dtype = PyRef::borrow(O).attrOrNull("dtype");
  std::shared_ptr<const RecordLayout> Fields = Dtype ? recordLayoutOfObject(Dtype.get(), Node) : nullptr;
  if (!Fields)
    return std::nullopt;
  if (IsScalar)
    return TypedValue(frontend::Type::record(std::move(Fields), /*ReadOnly=*/true));
  return TypedValue(frontend::Type::recordArray(
      std::move(Fields), static_cast<unsigned>(shapeOf(O).size()), Layout::C, /*ReadOnly=*/true));
}

// a.view(dtype): the array's bytes as another dtype. Node is the call;
// Base the array.
TypedValue FunctionCompiler::typeArrayView(const TypedValue &Base, PyObject *Node) {
  std::vector<PyObject *> ArgNodes = listItems(field(Node, "args").get());
  std::vector<PyObject *> KeywordNodes = listItems(field(Node, "keywords").get());
  PyRef DtypeNode;
  if (ArgNodes.size() == 1 && KeywordNodes.empty())
    DtypeNode = PyRef::borrow(ArgNodes[0]);
  else if (ArgNodes.empty() && KeywordNodes.size() == 1 &&
           identifierField(KeywordNodes[0], "arg") == "dtype")
    DtypeNode = field(KeywordNodes[0], "value");
  else
    typingError(Node, "view() takes one argument, the dtype (a.view(numpy.int32))");
  if (Base.T.Record)
    unsupported(Node, "view() of an array of records is not supported");
  TypedValue DtypeValue = typeExpression(DtypeNode.get());
  if (DtypeValue.T.isUndefined())
    return TypedValue();
  Scalar To = dtypeOf(DtypeValue, DtypeNode.get());
  unsigned From = byteSize(Base.T.Dtype), ToSize = byteSize(To);
  // Another item size changes the last dimension, which must be contiguous
  // (NumPy: C order); its length in bytes is then cut to whole new items.
  if (From != ToSize && Base.T.ArrayLayout != Layout::C)
    typingError(Node, "view() as " + std::string(scalarName(To)) + " (" + std::to_string(ToSize) +
                          " bytes) of " + Base.T.str() + " (" + std::to_string(From) +
                          "-byte items) needs a C-contiguous array: copy it or view a contiguous slice");
  return TypedValue(frontend::Type::array(To, Base.T.NDim, Base.T.ArrayLayout, Base.T.ReadOnly));
}

} // namespace tidal::frontend
