// Reads a NumPy structured dtype into a RecordLayout (RecordLayouts.h).
#include "RecordLayouts.h"
#include "PyRef.h"

#include <algorithm>

namespace tidal::frontend {

PyObject *structuredDtypeOf(PyObject *Object) {
  PyRef Candidate = PyRef::borrow(Object);
  for (int Depth = 0; Depth < 2 && Candidate; ++Depth) {
    PyRef Names = Candidate.attrOrNull("names");
    PyRef Fields = Candidate.attrOrNull("fields");
    if (Names && Fields && PyTuple_Check(Names.get()) && PyMapping_Check(Fields.get()) &&
        PyObject_HasAttrString(Candidate.get(), "itemsize"))
      return Candidate.release();
    if (PyType_Check(Candidate.get()))
      break;
    Candidate = Candidate.attrOrNull("dtype");
  }
  PyErr_Clear();
  return nullptr;
}

Type recordFieldType(const RecordField &Field, bool ReadOnly) {
  unsigned N = static_cast<unsigned>(Field.Shape.size());
  if (N)
    return Field.Nested ? Type::recordArray(Field.Nested, N, Layout::C, ReadOnly)
                        : Type::array(Field.Type, N, Layout::C, ReadOnly);
  if (Field.Nested)
    return Type::record(Field.Nested, ReadOnly);
  return Type::scalar(Field.Type);
}

static long longAttribute(const PyRef &O, const char *Name) {
  long V = PyLong_AsLong(O.attr(Name).get());
  if (V == -1 && PyErr_Occurred())
    throw PythonErrorSet();
  return V;
}

static bool truthAttribute(const PyRef &O, const char *Name) {
  PyRef V = O.attrOrNull(Name);
  return V && PyObject_IsTrue(V.get()) == 1;
}

std::shared_ptr<const RecordLayout> recordLayoutOfDtype(PyObject *DtypeObject, std::string &Why) {
  PyRef Dtype = PyRef::steal(structuredDtypeOf(DtypeObject));
  if (!Dtype) {
    Why = "'" + PyRef::borrow(DtypeObject).str() + "', which is not a structured dtype";
    return nullptr;
  }
  auto Layout = std::make_shared<RecordLayout>();
  Layout->Size = static_cast<unsigned>(longAttribute(Dtype, "itemsize"));
  Layout->Align = static_cast<unsigned>(longAttribute(Dtype, "alignment"));
  // An aligned struct is as aligned as its most aligned field (np.recarray's
  // numpy.record dtypes report 1 for the same layout as np.zeros' 8).
  bool AlignedStruct = truthAttribute(Dtype, "isalignedstruct");
  PyRef Names = Dtype.attr("names");
  PyRef Fields = Dtype.attr("fields");
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(Names.get()); ++I) {
    PyObject *Name = PyTuple_GET_ITEM(Names.get(), I);
    std::string FieldName = PyRef::borrow(Name).str();
    PyRef InfoRef = PyRef::steal(PyObject_GetItem(Fields.get(), Name)); // (dtype, offset[, title])
    PyObject *Info = InfoRef.get();
    if (!Info || !PyTuple_Check(Info) || PyTuple_GET_SIZE(Info) < 2) {
      PyErr_Clear();
      Why = "a record whose field '" + FieldName + "' has no offset";
      return nullptr;
    }
    PyRef FieldType = PyRef::borrow(PyTuple_GET_ITEM(Info, 0));
    RecordField Field{FieldName, Scalar::UInt8, 0};
    Field.Offset = static_cast<unsigned>(PyLong_AsLong(PyTuple_GET_ITEM(Info, 1)));
    PyRef ElementType = FieldType;
    PyRef SubArray = FieldType.attr("subdtype"); // (base, shape) or None
    if (SubArray.get() != Py_None) { // ('h', np.float32, (2, 3)): a C-ordered block
      ElementType = PyRef::borrow(PyTuple_GET_ITEM(SubArray.get(), 0));
      PyObject *Extents = PyTuple_GET_ITEM(SubArray.get(), 1);
      for (Py_ssize_t D = 0; D < PyTuple_GET_SIZE(Extents); ++D)
        Field.Shape.push_back(static_cast<unsigned>(PyLong_AsLong(PyTuple_GET_ITEM(Extents, D))));
    }
    if (ElementType.attr("names").get() != Py_None) { // a nested record
      Field.Nested = recordLayoutOfDtype(ElementType.get(), Why);
      if (!Field.Nested)
        return nullptr;
    } else if (!truthAttribute(ElementType, "isnative") ||
               !scalarFromName(ElementType.attr("name").str(), Field.Type)) {
      Why = "a record whose field '" + FieldName + "' is of dtype " + ElementType.str() +
            ", which kernels can't take (fields are numbers, records, or arrays of them)";
      return nullptr;
    }
    // A sub-array's elements are loaded as array elements, at their natural
    // alignment (a packed dtype can place them anywhere).
    unsigned ElementAlign = Field.elementAlign();
    if (!Field.Shape.empty() && Field.Offset % ElementAlign != 0) {
      Why = "a record whose array field '" + FieldName + "' starts at byte " +
            std::to_string(Field.Offset) + ", not a multiple of its elements' alignment (" +
            std::to_string(ElementAlign) + "): use an aligned dtype (align=True)";
      return nullptr;
    }
    if (AlignedStruct)
      Layout->Align = std::max(Layout->Align, static_cast<unsigned>(longAttribute(FieldType, "alignment")));
    Layout->Fields.push_back(std::move(Field));
  }
  return Layout;
}

} // namespace tidal::frontend
