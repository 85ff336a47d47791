// Kernel types as Numba names them: scalars, arrays (dtype, ndim, layout,
// read-only), tuples, and the compile-time kinds (modules, intrinsics) that
// only exist while a kernel is being typed.
#ifndef TIDAL_FRONTEND_TYPES_H
#define TIDAL_FRONTEND_TYPES_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tidal::frontend {

enum class Scalar : uint8_t {
  Bool,
  Int8, Int16, Int32, Int64,
  UInt8, UInt16, UInt32, UInt64,
  Float16,
  BFloat16, // float32's exponent, 8 significant bits; among the floats (isFloat)
  Float32, Float64,
  Complex64, Complex128, // pairs of float32 / float64
  Datetime64, Timedelta64, // int64 counts of a time unit (Type::TimeUnit); NaT is INT64_MIN
  Fp8E4M3, Fp8E5M2, Fp8E8M0, // CUDA's 8-bit floats (cuda_fp8.h): bits in an i8, no arithmetic (Fp8.h)
};

// NumPy's time units, coarsest first (Y, M, W, D, h, m, s, ms, us, ns, ps,
// fs, as); Generic: none given (numpy.timedelta64(0)).
enum class TimeUnit : uint8_t { Generic, Y, M, W, D, h, m, s, ms, us, ns, ps, fs, as };
const char *timeUnitName(TimeUnit U); // "D"; "" for Generic
bool timeUnitFromName(const std::string &Name, TimeUnit &Out);
bool isDatetime(Scalar S); // datetime64 or timedelta64
// How many of Fine make one Coarse (D in h: 24), when both are linear
// units (W and finer) or both calendar units (Y, M); 0 otherwise.
int64_t timeUnitRatio(TimeUnit Coarse, TimeUnit Fine);
// The finer of two units that values of each convert to exactly; false
// when one is a calendar unit (Y, M) and the other is not.
bool commonTimeUnit(TimeUnit A, TimeUnit B, TimeUnit &Out);

bool isInteger(Scalar S);
bool isSigned(Scalar S);
bool isFloat(Scalar S);
bool isComplex(Scalar S);
bool isFp8(Scalar S); // fp8_e4m3, fp8_e5m2, fp8_e8m0: convert only explicitly
Scalar componentOf(Scalar Complex); // Complex64 -> Float32
Scalar complexOf(Scalar Float);     // Float32 (or narrower) -> Complex64, else Complex128
unsigned bitWidth(Scalar S);      // bool: 1
unsigned byteSize(Scalar S);      // in memory; bool: 1
const char *scalarName(Scalar S); // "float32", "bool", ...
bool scalarFromName(const std::string &Name, Scalar &Out);

enum class Layout : uint8_t { C, F, A };

// A NumPy structured dtype: named fields at byte offsets, each a number, a
// nested record, or a C-ordered sub-array of either (('h', np.float32,
// (2, 3)): Shape {2, 3}).
struct RecordLayout;
struct RecordField {
  std::string Name;
  Scalar Type;  // the number (or the sub-array's element); unused for a nested record
  unsigned Offset;
  std::vector<unsigned> Shape = {}; // empty: a single number (or record)
  std::shared_ptr<const RecordLayout> Nested = nullptr; // a nested record's fields
  bool operator==(const RecordField &O) const;
  // Bytes of one element (a number, or a nested record's itemsize).
  unsigned elementSize() const;
  // The alignment CUDA needs for loading one element: a number's own (a
  // complex number's component's), a nested record's most aligned field's.
  unsigned elementAlign() const;
};
struct RecordLayout {
  std::vector<RecordField> Fields;
  unsigned Size = 0;
  unsigned Align = 1;
  bool operator==(const RecordLayout &O) const {
    return Fields == O.Fields && Size == O.Size && Align == O.Align;
  }
  // Numba's spelling, Record(x:float32, v:float32[3], inner:Record(a:int32)).
  std::string str() const;
  const RecordField *field(const std::string &Name) const {
    for (const RecordField &F : Fields)
      if (F.Name == Name)
        return &F;
    return nullptr;
  }
};

// A namedtuple's class: its name and its fields' names, in order.
struct NamedTupleInfo {
  std::string ClassName;
  std::vector<std::string> Fields;
  bool operator==(const NamedTupleInfo &O) const {
    return ClassName == O.ClassName && Fields == O.Fields;
  }
};

// The class of an Enum member: the class object (a strong reference that
// is never given back, so that types compare by the class's identity
// safely), its name, and whether it is an IntEnum (which behaves as an int).
struct EnumInfo {
  void *Class = nullptr;
  std::string ClassName;
  bool IsIntEnum = false;
};

// What a Type is; the fields of Type that apply to each are marked.
enum class TypeKind : uint8_t {
  Undefined, // not yet known while typing
  None,      // the value of a statement, `void`
  Scalar,
  Array,
  Tuple,
  PyObject,  // a compile-time Python object: module, intrinsic, dtype, ...
  Record,    // a reference to a record (a pointer to its bytes)
  Vector,    // a CUDA vector type (float32x4): NDim elements of Dtype, one LLVM struct
  Pointer,   // Numba's CPointer(Dtype), or voidptr (NDim 1): one address
  Optional,  // Numba's Optional(T): None or a T (Elements[0]); parts {i1 valid, T's parts}
};

struct Type {
  TypeKind Kind = TypeKind::Undefined;
  // Scalar: the scalar itself; Array: its element (dtype); Vector: its element.
  Scalar Dtype = Scalar::Int64;
  // Datetime64/Timedelta64 scalars and arrays: the unit of their counts.
  TimeUnit Unit = TimeUnit::Generic;
  // Record, and arrays of records: the fields.
  std::shared_ptr<const RecordLayout> Record;
  uint8_t NDim = 0;                // Array; Vector: its element count
  Layout ArrayLayout = Layout::A;  // Array
  bool ReadOnly = false;           // Array, Record
  std::vector<Type> Elements;      // Tuple
  void *Object = nullptr;          // PyObject (borrowed; the function keeps it alive)
  std::shared_ptr<const NamedTupleInfo> Named; // Tuple: a namedtuple's names
  // Scalar or Tuple: the value of an Enum member (Numba's EnumMember and
  // IntEnumMember); the type is its value's, tagged with its class.
  std::shared_ptr<const EnumInfo> Enum;

  static Type undefined() { return Type(); }
  static Type none() { Type T; T.Kind = TypeKind::None; return T; }
  static Type scalar(Scalar S) { Type T; T.Kind = TypeKind::Scalar; T.Dtype = S; return T; }
  static Type datetime(Scalar S, TimeUnit U) { Type T = scalar(S); T.Unit = U; return T; }
  // An array's element as a scalar type (its unit kept).
  Type elementType() const { return datetime(Dtype, Unit); }
  bool isDatetimeScalar() const { return Kind == TypeKind::Scalar && Dtype == Scalar::Datetime64; }
  bool isTimedeltaScalar() const { return Kind == TypeKind::Scalar && Dtype == Scalar::Timedelta64; }
  static Type array(Scalar S, unsigned NDim, Layout L, bool ReadOnly = false);
  static Type tuple(std::vector<Type> Elements);
  static Type pyObject(void *Object);
  static Type vector(Scalar Element, unsigned Count) {
    Type T; T.Kind = TypeKind::Vector; T.Dtype = Element; T.NDim = uint8_t(Count); return T;
  }
  static Type record(std::shared_ptr<const RecordLayout> Layout, bool ReadOnly = false);
  // Optional(T) of a T that is not None, a compile-time object or Optional.
  static Type optional(Type Inner) {
    Type T; T.Kind = TypeKind::Optional; T.Elements = {std::move(Inner)}; return T;
  }
  bool isOptional() const { return Kind == TypeKind::Optional; }
  const Type &optionalInner() const { return Elements[0]; }
  static Type recordArray(std::shared_ptr<const RecordLayout> Fields, unsigned NDim, Layout L,
                          bool ReadOnly = false);
  bool isRecord() const { return Kind == TypeKind::Record; }
  bool isEnum() const { return Enum != nullptr; }
  bool isNamedTuple() const { return Kind == TypeKind::Tuple && Named != nullptr; }
  // A tuple whose elements all have one type (Numba's UniTuple).
  bool isHomogeneousTuple() const;
  // The type without its Enum or namedtuple tag (a plain value of it).
  Type untagged() const;
  bool hasRecordElements() const { return Kind == TypeKind::Array && Record != nullptr; }
  // Bytes of one array element (records: their itemsize).
  unsigned elementSize() const;

  bool isUndefined() const { return Kind == TypeKind::Undefined; }
  bool isScalar() const { return Kind == TypeKind::Scalar; }
  bool isArray() const { return Kind == TypeKind::Array; }
  bool isTuple() const { return Kind == TypeKind::Tuple; }
  bool isPyObject() const { return Kind == TypeKind::PyObject; }
  bool isNone() const { return Kind == TypeKind::None; }
  bool isVector() const { return Kind == TypeKind::Vector; }
  // Numba's CPointer(T) and voidptr (PointerTypes.cpp).
  static Type pointer(Scalar Element) {
    Type T; T.Kind = TypeKind::Pointer; T.Dtype = Element; return T;
  }
  static Type voidPointer() { Type T = pointer(Scalar::UInt8); T.NDim = 1; return T; }
  bool isPointer() const { return Kind == TypeKind::Pointer; }
  bool isVoidPointer() const { return isPointer() && NDim == 1; }
  bool isIntegerScalar() const { return isScalar() && isInteger(Dtype); }
  bool isFloatScalar() const { return isScalar() && isFloat(Dtype); }
  bool isComplexScalar() const { return isScalar() && isComplex(Dtype); }
  bool isBool() const { return isScalar() && Dtype == Scalar::Bool; }
  // np.asarray(1): an array index as its element (NumPy's and Numba's rule).
  bool isZeroDimensionalIntegerArray() const {
    return isArray() && NDim == 0 && !Record && isInteger(Dtype);
  }

  // Numba's spelling: float32, array(float32, 1d, C), UniTuple(int64 x 2),
  // Tuple(int64, float32).
  std::string str() const;
  // A short mangling-safe spelling used in symbol names: f32, a1Cf32, ...
  std::string mangle() const;

  bool operator==(const Type &O) const;
  bool operator!=(const Type &O) const { return !(*this == O); }
};

// A user's name (a function's, a field's, a class's: '<lambda>', non-ASCII
// identifiers, anything exec'd code or __name__ holds) as a legal symbol on
// every target: letters, digits and '_' stay, any other byte of its UTF-8
// and a leading digit become '$' and two hex digits ('<lambda>' is
// '$3clambda$3e'). Python names hold no '$', so no two names meet, and a
// plain identifier is itself. Every symbol the frontend makes from a
// user's name goes through it.
std::string symbolName(const std::string &UserName);

// Numba's promotion of the operands of an arithmetic operator (NumPy rules
// with Numba's integer widening: small ints compute in int64/uint64).
Scalar promoteArithmetic(Scalar A, Scalar B);
// The type two values of a variable unify to across branches and loop
// iterations (int64 then float32 is float64); false when they can't.
bool unify(const Type &A, const Type &B, Type &Out);

// Parses a Numba signature string, "void(float32, float32[::1], int64)" or
// a bare argument list "float32[:, ::1], int64". Throws std::invalid_argument
// with a message pointing at the offending position.
struct Signature {
  bool HasReturn = false;
  Type Return;
  std::vector<Type> Params;
};
Signature parseSignature(const std::string &Text);
// Parses one type, "float32[:, ::1]".
Type parseType(const std::string &Text);

} // namespace tidal::frontend

#endif
