#include "Types.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace tidal::frontend {

namespace {
struct ScalarInfo {
  Scalar S;
  const char *Name;
  const char *Short;
  unsigned Bits;
};

// One row per scalar: Numba's name, the mangling, the width in bits.
const ScalarInfo ScalarTable[] = {
    {Scalar::Bool, "bool", "b1", 1},         {Scalar::Int8, "int8", "i8", 8},
    {Scalar::Int16, "int16", "i16", 16},     {Scalar::Int32, "int32", "i32", 32},
    {Scalar::Int64, "int64", "i64", 64},     {Scalar::UInt8, "uint8", "u8", 8},
    {Scalar::UInt16, "uint16", "u16", 16},   {Scalar::UInt32, "uint32", "u32", 32},
    {Scalar::UInt64, "uint64", "u64", 64},   {Scalar::Float16, "float16", "f16", 16},
    {Scalar::BFloat16, "bfloat16", "bf16", 16},
    {Scalar::Float32, "float32", "f32", 32}, {Scalar::Float64, "float64", "f64", 64},
    {Scalar::Complex64, "complex64", "c64", 64}, {Scalar::Complex128, "complex128", "c128", 128},
    {Scalar::Datetime64, "datetime64", "M8", 64}, {Scalar::Timedelta64, "timedelta64", "m8", 64},
    {Scalar::Fp8E4M3, "fp8_e4m3", "e4m3", 8}, {Scalar::Fp8E5M2, "fp8_e5m2", "e5m2", 8},
    {Scalar::Fp8E8M0, "fp8_e8m0", "e8m0", 8},
};

const char *const TimeUnitNames[] = {"",   "Y",  "M",  "W",  "D",  "h",  "m",
                                     "s",  "ms", "us", "ns", "ps", "fs", "as"};

// A scalar's or an array element's name with its unit: datetime64[D].
std::string dtypeName(Scalar S, TimeUnit U) {
  if (!isDatetime(S))
    return scalarName(S);
  std::string Name = scalarName(S);
  return U == TimeUnit::Generic ? Name : Name + "[" + TimeUnitNames[static_cast<int>(U)] + "]";
}

const ScalarInfo &info(Scalar S) { return ScalarTable[static_cast<int>(S)]; }
} // namespace

bool isInteger(Scalar S) {
  return S >= Scalar::Int8 && S <= Scalar::UInt64;
}
bool isSigned(Scalar S) { return S >= Scalar::Int8 && S <= Scalar::Int64; }
bool isFloat(Scalar S) { return S >= Scalar::Float16 && S <= Scalar::Float64; }
bool isComplex(Scalar S) { return S == Scalar::Complex64 || S == Scalar::Complex128; }
bool isFp8(Scalar S) { return S >= Scalar::Fp8E4M3 && S <= Scalar::Fp8E8M0; }
Scalar componentOf(Scalar S) { return S == Scalar::Complex64 ? Scalar::Float32 : Scalar::Float64; }
Scalar complexOf(Scalar S) {
  return S == Scalar::Float32 || S == Scalar::Float16 || S == Scalar::BFloat16 ? Scalar::Complex64
                                                                               : Scalar::Complex128;
}
bool isDatetime(Scalar S) { return S == Scalar::Datetime64 || S == Scalar::Timedelta64; }
const char *timeUnitName(TimeUnit U) { return TimeUnitNames[static_cast<int>(U)]; }
bool timeUnitFromName(const std::string &Name, TimeUnit &Out) {
  for (int I = 0; I < static_cast<int>(std::size(TimeUnitNames)); ++I)
    if (Name == TimeUnitNames[I]) {
      Out = static_cast<TimeUnit>(I);
      return true;
    }
  return false;
}
int64_t timeUnitRatio(TimeUnit Coarse, TimeUnit Fine) {
  if (Coarse == TimeUnit::Generic || Fine == TimeUnit::Generic)
    return 1; // a generic count (timedelta64(0)) takes the other's unit
  if (Coarse == Fine)
    return 1;
  if (Coarse == TimeUnit::Y && Fine == TimeUnit::M)
    return 12;
  if (Coarse < TimeUnit::W || Fine < TimeUnit::W || Fine < Coarse)
    return 0;
  // W D h m s ms us ns ps fs as: each step's factor.
  static const int64_t Step[] = {7, 24, 60, 60, 1000, 1000, 1000, 1000, 1000, 1000};
  int64_t Ratio = 1;
  for (int U = static_cast<int>(Coarse); U < static_cast<int>(Fine); ++U) {
    int64_t Next = Step[U - static_cast<int>(TimeUnit::W)];
    if (__builtin_mul_overflow(Ratio, Next, &Ratio))
      return 0;
  }
  return Ratio;
}
bool commonTimeUnit(TimeUnit A, TimeUnit B, TimeUnit &Out) {
  if (A == TimeUnit::Generic || B == TimeUnit::Generic) {
    Out = A == TimeUnit::Generic ? B : A;
    return true;
  }
  Out = std::max(A, B);
  return timeUnitRatio(std::min(A, B), Out) != 0;
}
unsigned bitWidth(Scalar S) { return info(S).Bits; }
unsigned byteSize(Scalar S) { return S == Scalar::Bool ? 1 : info(S).Bits / 8; }
const char *scalarName(Scalar S) { return info(S).Name; }

bool scalarFromName(const std::string &Name, Scalar &Out) {
  static const std::pair<const char *, Scalar> Aliases[] = {
      {"boolean", Scalar::Bool}, {"b1", Scalar::Bool},     {"intp", Scalar::Int64},
      {"uintp", Scalar::UInt64}, {"int_", Scalar::Int64},   {"float_", Scalar::Float64},
      {"double", Scalar::Float64}, {"f8", Scalar::Float64}, {"f4", Scalar::Float32},
      {"f2", Scalar::Float16},   {"i8", Scalar::Int64},     {"i4", Scalar::Int32},
      {"i2", Scalar::Int16},     {"i1", Scalar::Int8},      {"u8", Scalar::UInt64},
      {"u4", Scalar::UInt32},    {"u2", Scalar::UInt16},    {"u1", Scalar::UInt8},
      {"half", Scalar::Float16}, {"single", Scalar::Float32},
      {"c8", Scalar::Complex64}, {"c16", Scalar::Complex128}, {"complex_", Scalar::Complex128}};
  for (const ScalarInfo &I : ScalarTable)
    if (Name == I.Name) {
      Out = I.S;
      return true;
    }
  for (const auto &[Alias, S] : Aliases)
    if (Name == Alias) {
      Out = S;
      return true;
    }
  return false;
}

Type Type::array(Scalar S, unsigned NDim, Layout L, bool ReadOnly) {
  Type T;
  T.Kind = TypeKind::Array;
  T.Dtype = S;
  T.NDim = static_cast<uint8_t>(NDim);
  // A 1-D array that is contiguous is C-contiguous, as Numba names it.
  T.ArrayLayout = (NDim <= 1 && L == Layout::F) ? Layout::C : L;
  T.ReadOnly = ReadOnly;
  return T;
}

Type Type::tuple(std::vector<Type> Elements) {
  Type T;
  T.Kind = TypeKind::Tuple;
  T.Elements = std::move(Elements);
  return T;
}

Type Type::record(std::shared_ptr<const RecordLayout> Layout, bool ReadOnly) {
  Type T;
  T.Kind = TypeKind::Record;
  T.Record = std::move(Layout);
  T.ReadOnly = ReadOnly;
  return T;
}

Type Type::recordArray(std::shared_ptr<const RecordLayout> Fields, unsigned NDim,
                       frontend::Layout L, bool ReadOnly) {
  Type T = array(Scalar::UInt8, NDim, L, ReadOnly);
  T.Record = std::move(Fields);
  return T;
}

bool Type::isHomogeneousTuple() const {
  return Kind == TypeKind::Tuple && !Elements.empty() &&
         std::all_of(Elements.begin(), Elements.end(),
                     [&](const Type &E) { return E == Elements[0]; });
}

Type Type::untagged() const {
  Type T = *this;
  T.Enum = nullptr;
  T.Named = nullptr;
  return T;
}

unsigned Type::elementSize() const { return Record ? Record->Size : byteSize(Dtype); }

bool RecordField::operator==(const RecordField &O) const {
  return Name == O.Name && Type == O.Type && Offset == O.Offset && Shape == O.Shape &&
         (Nested == O.Nested || (Nested && O.Nested && *Nested == *O.Nested));
}

unsigned RecordField::elementSize() const { return Nested ? Nested->Size : byteSize(Type); }

unsigned RecordField::elementAlign() const {
  if (!Nested)
    return isComplex(Type) ? byteSize(Type) / 2 : byteSize(Type);
  unsigned Align = 1;
  for (const RecordField &F : Nested->Fields)
    Align = std::max(Align, F.elementAlign());
  return Align;
}

std::string RecordLayout::str() const {
  std::string S = "Record(";
  for (size_t I = 0; I < Fields.size(); ++I) {
    S += (I ? ", " : "") + Fields[I].Name + ":" +
         (Fields[I].Nested ? Fields[I].Nested->str() : std::string(scalarName(Fields[I].Type)));
    for (unsigned Extent : Fields[I].Shape)
      S += "[" + std::to_string(Extent) + "]";
  }
  return S + ")";
}

static std::string recordName(const RecordLayout &R) { return R.str(); }

std::string symbolName(const std::string &UserName) {
  static const char Hex[] = "0123456789abcdef";
  std::string Out;
  for (size_t I = 0; I < UserName.size(); ++I) {
    unsigned char Byte = static_cast<unsigned char>(UserName[I]);
    bool Kept = (Byte >= 'a' && Byte <= 'z') || (Byte >= 'A' && Byte <= 'Z') || Byte == '_' ||
                (Byte >= '0' && Byte <= '9' && I > 0);
    if (Kept) {
      Out += static_cast<char>(Byte);
    } else {
      Out += '$';
      Out += Hex[Byte >> 4];
      Out += Hex[Byte & 15];
    }
  }
  return Out.empty() ? "$" : Out;
}

// A mangling of a record's fields, offsets and size (two layouts of the
// same names differ).
static std::string recordMangle(const RecordLayout &R) {
  std::string S = "rec" + std::to_string(R.Size);
  for (const RecordField &F : R.Fields) {
    S += "_" + symbolName(F.Name) + "o" + std::to_string(F.Offset) +
         (F.Nested ? recordMangle(*F.Nested) + "_e" : std::string(info(F.Type).Short));
    for (unsigned Extent : F.Shape)
      S += "x" + std::to_string(Extent);
  }
  return S;
}

Type Type::pyObject(void *Object) {
  Type T;
  T.Kind = TypeKind::PyObject;
  T.Object = Object;
  return T;
}

static const char *layoutName(Layout L) {
  return L == Layout::C ? "C" : L == Layout::F ? "F" : "A";
}

std::string Type::str() const {
  if (Enum) // Numba's spelling: IntEnumMember(<enum 'Shape'>, int64)
    return std::string(Enum->IsIntEnum ? "IntEnumMember" : "EnumMember") + "(<enum '" +
           Enum->ClassName + "'>, " + untagged().str() + ")";
  switch (Kind) {
  case TypeKind::Undefined:
    return "undefined";
  case TypeKind::None:
    return "none";
  case TypeKind::Scalar:
    return dtypeName(Dtype, Unit);
  case TypeKind::Array:
    return std::string(ReadOnly ? "readonly array(" : "array(") +
           (Record ? recordName(*Record) : dtypeName(Dtype, Unit)) + ", " + std::to_string(NDim) + "d, " +
           layoutName(ArrayLayout) + ")";
  case TypeKind::Record:
    return recordName(*Record);
  case TypeKind::Vector: // CUDA's and Numba's spelling: float32x4
    return std::string(scalarName(Dtype)) + "x" + std::to_string(NDim);
  case TypeKind::Tuple: {
    bool Uniform = isHomogeneousTuple();
    if (Named) { // Numba's: Point(int64 x 2), Point(int64, float64); then the fields
      std::string S = Named->ClassName + "(";
      if (Uniform)
        S += Elements[0].str() + " x " + std::to_string(Elements.size());
      else
        for (size_t I = 0; I < Elements.size(); ++I)
          S += (I ? ", " : "") + Elements[I].str();
      S += ", fields=(";
      for (size_t I = 0; I < Named->Fields.size(); ++I)
        S += (I ? ", " : "") + Named->Fields[I];
      return S + "))";
    }
    if (Uniform)
      return "UniTuple(" + Elements[0].str() + " x " + std::to_string(Elements.size()) + ")";
    std::string S = "Tuple(";
    for (size_t I = 0; I < Elements.size(); ++I)
      S += (I ? ", " : "") + Elements[I].str();
    return S + ")";
  }
  case TypeKind::PyObject:
    return "Python object";
  case TypeKind::Pointer: // Numba's spelling: uint8*, void*
    return NDim ? "void*" : std::string(scalarName(Dtype)) + "*";
  case TypeKind::Optional: // Numba's spelling
    return "OptionalType(" + Elements[0].str() + ")";
  }
  return "?";
}

std::string Type::mangle() const {
  if (Enum) {
    return "en" + symbolName(Enum->ClassName) + untagged().mangle();
  }
  switch (Kind) {
  case TypeKind::Scalar:
    return info(Dtype).Short + std::string(timeUnitName(Unit));
  case TypeKind::Array:
    return std::string("a") + std::to_string(NDim) + layoutName(ArrayLayout) +
           (ReadOnly ? "r" : "") +
           (Record ? recordMangle(*Record) : std::string(info(Dtype).Short) + timeUnitName(Unit));
  case TypeKind::Record:
    return (ReadOnly ? "r" : "") + recordMangle(*Record);
  case TypeKind::Vector:
    return "v" + std::to_string(NDim) + info(Dtype).Short;
  case TypeKind::Pointer:
    return NDim ? std::string("pv") : "p" + std::string(info(Dtype).Short);
  case TypeKind::Tuple: {
    std::string S = "t" + std::to_string(Elements.size());
    if (Named)
      for (const std::string &Field : Named->Fields)
        S += "_" + symbolName(Field);
    for (const Type &E : Elements)
      S += E.mangle();
    return S + "e";
  }
  case TypeKind::Optional:
    return "o" + Elements[0].mangle();
  default:
    return "x";
  }
}

bool Type::operator==(const Type &O) const {
  if (Kind != O.Kind)
    return false;
  if ((Enum ? Enum->Class : nullptr) != (O.Enum ? O.Enum->Class : nullptr))
    return false;
  switch (Kind) {
  case TypeKind::Scalar:
    return Dtype == O.Dtype && Unit == O.Unit;
  case TypeKind::Vector:
  case TypeKind::Pointer:
    return Dtype == O.Dtype && NDim == O.NDim;
  case TypeKind::Array:
    return Dtype == O.Dtype && Unit == O.Unit && NDim == O.NDim && ArrayLayout == O.ArrayLayout &&
           ReadOnly == O.ReadOnly &&
           (Record == O.Record || (Record && O.Record && *Record == *O.Record));
  case TypeKind::Record:
    return ReadOnly == O.ReadOnly && (Record == O.Record || (Record && O.Record && *Record == *O.Record));
  case TypeKind::Tuple:
    return Elements == O.Elements &&
           (Named == O.Named || (Named && O.Named && *Named == *O.Named));
  case TypeKind::PyObject:
    return Object == O.Object;
  case TypeKind::Optional:
    return Elements == O.Elements;
  default:
    return true;
  }
}

// The float that holds every value of two floats: the wider, except that
// neither float16 nor bfloat16 holds the other (float32 holds both).
static Scalar widerFloat(Scalar A, Scalar B) {
  if ((A == Scalar::Float16 && B == Scalar::BFloat16) ||
      (A == Scalar::BFloat16 && B == Scalar::Float16))
    return Scalar::Float32;
  return std::max(A, B);
}

Scalar promoteArithmetic(Scalar A, Scalar B) {
  // Complex: the complex of what the components (or reals) promote to.
  if (isComplex(A) || isComplex(B))
    return complexOf(promoteArithmetic(isComplex(A) ? componentOf(A) : A,
                                       isComplex(B) ? componentOf(B) : B));
  // Floats: float64 wins; float32 survives only next to small ints (Numba 0.56).
  if (A == Scalar::Float64 || B == Scalar::Float64)
    return Scalar::Float64;
  if (isFloat(A) || isFloat(B)) {
    Scalar F = isFloat(A) ? A : B, Other = isFloat(A) ? B : A;
    if (isFloat(Other))
      return widerFloat(F, Other);
    bool SmallInt = Other == Scalar::Bool || Other == Scalar::Int8 ||
                    Other == Scalar::Int16 || Other == Scalar::UInt8;
    if (F == Scalar::Float16 || F == Scalar::BFloat16) // 8-bit integers fit both
      return SmallInt && Other != Scalar::Int16 ? F
                                                 : (SmallInt ? Scalar::Float32 : Scalar::Float64);
    return SmallInt ? Scalar::Float32 : Scalar::Float64;
  }
  // Integers (and bools) compute in 64 bits: unsigned only if both are.
  bool BothUnsigned = isInteger(A) && !isSigned(A) && isInteger(B) && !isSigned(B);
  return BothUnsigned ? Scalar::UInt64 : Scalar::Int64;
}

static bool unifyScalar(Scalar A, Scalar B, Scalar &Out) {
  if (A == B) {
    Out = A;
    return true;
  }
  if (isFp8(A) || isFp8(B)) // an fp8 value converts only explicitly
    return false;
  if (isComplex(A) || isComplex(B)) {
    Scalar Component;
    unifyScalar(isComplex(A) ? componentOf(A) : A, isComplex(B) ? componentOf(B) : B, Component);
    Out = complexOf(Component);
    return true;
  }
  if (isFloat(A) || isFloat(B)) {
    Scalar F = isFloat(A) ? A : B, Other = isFloat(A) ? B : A;
    if (isFloat(Other)) {
      Out = widerFloat(F, Other);
      return true;
    }
    bool Fits32 = Other == Scalar::Bool || bitWidth(Other) <= 16;
    Out = (F == Scalar::Float32 && Fits32) ? Scalar::Float32 : Scalar::Float64;
    return true;
  }
  if (A == Scalar::Bool || B == Scalar::Bool) {
    Out = A == Scalar::Bool ? B : A;
    return true;
  }
  // Both integers.
  if (isSigned(A) == isSigned(B)) {
    Out = bitWidth(A) >= bitWidth(B) ? A : B;
    return true;
  }
  Scalar S = isSigned(A) ? A : B, U = isSigned(A) ? B : A;
  unsigned Width = std::max(bitWidth(S), 2 * bitWidth(U));
  Out = Width <= 8 ? Scalar::Int8 : Width <= 16 ? Scalar::Int16 : Width <= 32 ? Scalar::Int32
        : bitWidth(U) < 64 ? Scalar::Int64 : Scalar::Float64;
  return true;
}

// None, Optional(T) and a value: Optional of what the values unify to;
// false for a compile-time object (which has no None-or-value form).
static bool unifyOptional(const Type &A, const Type &B, Type &Out) {
  auto Value = [](const Type &T) { return T.isOptional() ? T.optionalInner() : T; };
  if (A.isPyObject() || B.isPyObject())
    return false;
  if (A.isNone() || B.isNone()) {
    const Type &Other = A.isNone() ? B : A;
    Out = Other.isOptional() ? Other : Type::optional(Other);
    return true;
  }
  Type Inner;
  if (!unify(Value(A), Value(B), Inner))
    return false;
  Out = Type::optional(Inner);
  return true;
}

bool unify(const Type &A, const Type &B, Type &Out) {
  if (A.isUndefined()) {
    Out = B;
    return true;
  }
  if (B.isUndefined() || A == B) {
    Out = A;
    return true;
  }
  // None and a value: Numba's Optional (None and Optional(T) is Optional(T)).
  if (A.isNone() || B.isNone() || A.isOptional() || B.isOptional())
    return unifyOptional(A, B, Out);
  if (A.isScalar() && B.isScalar() && (isDatetime(A.Dtype) || isDatetime(B.Dtype))) {
    TimeUnit U;
    if (A.Dtype != B.Dtype || !commonTimeUnit(A.Unit, B.Unit, U))
      return false;
    Out = Type::datetime(A.Dtype, U);
    return true;
  }
  if (A.isScalar() && B.isScalar()) {
    Scalar S;
    if (!unifyScalar(A.Dtype, B.Dtype, S))
      return false;
    Out = Type::scalar(S);
    return true;
  }
  if (A.isArray() && B.isArray() && A.Dtype == B.Dtype && A.Unit == B.Unit && A.NDim == B.NDim &&
      (A.Record == B.Record || (A.Record && B.Record && *A.Record == *B.Record))) {
    Out = Type::array(A.Dtype, A.NDim, A.ArrayLayout == B.ArrayLayout ? A.ArrayLayout : Layout::A,
                      A.ReadOnly || B.ReadOnly);
    Out.Record = A.Record;
    Out.Unit = A.Unit;
    return true;
  }
  if (A.isTuple() && B.isTuple() && A.Elements.size() == B.Elements.size()) {
    std::vector<Type> Elements(A.Elements.size());
    for (size_t I = 0; I < Elements.size(); ++I)
      if (!unify(A.Elements[I], B.Elements[I], Elements[I]))
        return false;
    Out = Type::tuple(std::move(Elements));
    return true;
  }
  return false;
}

// --- signature parsing --------------------------------------------------

namespace {
class SignatureParser {
public:
  explicit SignatureParser(const std::string &Text) : Text(Text) {}

  Signature parseSignature() {
    Signature Sig;
    skipSpace();
    // "ret(args)" or a bare argument list.
    size_t Save = Pos;
    std::string Name = identifier();
    Type First;
    bool IsVoid = Name == "void" || Name == "none";
    if (Name.empty() && peek() == '(') { // a tuple returned, "(int32, int32)(int64)"
      First = parseOneType();
      Name = peek() == '(' ? "tuple" : "";
    }
    if (!IsVoid && !Name.empty() && First.isUndefined()) {
      Pos = Save;
      First = parseOneType();
    }
    if (!Name.empty() && peek() == '(') {
      Sig.HasReturn = true;
      Sig.Return = IsVoid ? Type::none() : First;
      expect('(');
      Sig.Params = parseList(')');
      expect(')');
    } else {
      Pos = Save;
      Sig.Params = parseList('\0');
    }
    skipSpace();
    if (Pos != Text.size())
      fail("unexpected text");
    return Sig;
  }

  Type parseStandaloneType() {
    skipSpace();
    Type T = parseOneType();
    skipSpace();
    if (Pos != Text.size())
      fail("unexpected text after the type");
    return T;
  }

private:
  const std::string &Text;
  size_t Pos = 0;

  [[noreturn]] void fail(const std::string &What) {
    throw std::invalid_argument("invalid signature '" + Text + "': " + What +
                                " at column " + std::to_string(Pos + 1));
  }
  char peek() {
    skipSpace();
    return Pos < Text.size() ? Text[Pos] : '\0';
  }
  void skipSpace() {
    while (Pos < Text.size() && std::isspace(static_cast<unsigned char>(Text[Pos])))
      ++Pos;
  }
  void expect(char C) {
    if (peek() != C)
      fail(std::string("expected '") + C + "'");
    ++Pos;
  }
  std::string identifier() {
    skipSpace();
    size_t Start = Pos;
    while (Pos < Text.size() &&
           (std::isalnum(static_cast<unsigned char>(Text[Pos])) || Text[Pos] == '_'))
      ++Pos;
    return Text.substr(Start, Pos - Start);
  }

  std::vector<Type> parseList(char Close) {
    std::vector<Type> Types;
    if (peek() == Close)
      return Types;
    while (true) {
      Types.push_back(parseOneType());
      if (peek() != ',')
        break;
      ++Pos;
    }
    return Types;
  }

  Type parseOneType() {
    if (peek() == '(') { // a tuple type: (int64, float32)
      ++Pos;
      std::vector<Type> Elements = parseList(')');
      expect(')');
      return Type::tuple(std::move(Elements));
    }
    skipSpace();
    size_t Start = Pos;
    std::string Name = identifier();
    if (Name.empty())
      fail("expected a type name");
    // Numba's pointers: CPointer(uint8), voidptr, and as they print, uint8*, void*.
    if (Name == "CPointer" && peek() == '(') {
      ++Pos;
      size_t ElementStart = Pos;
      Type Element = parseOneType();
      if (!Element.isScalar()) {
        Pos = ElementStart;
        fail("CPointer() takes a scalar type");
      }
      expect(')');
      return Type::pointer(Element.Dtype);
    }
    if (Name == "voidptr" || (Name == "void" && peek() == '*')) {
      if (Name == "void")
        ++Pos;
      return Type::voidPointer();
    }
    if (Name == "optional" && peek() == '(') { // Numba's optional(int32)
      ++Pos;
      Type Inner = parseOneType();
      expect(')');
      return Type::optional(std::move(Inner));
    }
    Scalar S;
    if (!scalarFromName(Name, S)) {
      Pos = Start;
      fail("unknown type '" + Name + "'");
    }
    if (peek() == '*') {
      ++Pos;
      return Type::pointer(S);
    }
    TimeUnit Unit = TimeUnit::Generic;
    if (isDatetime(S) && peek() == '[' && Pos + 1 < Text.size() && std::isalpha(static_cast<unsigned char>(Text[Pos + 1]))) {
      ++Pos; // datetime64[D]
      std::string UnitName = identifier();
      if (!timeUnitFromName(UnitName, Unit))
        fail("unknown time unit '" + UnitName + "'");
      expect(']');
    }
    if (peek() != '[') {
      Type T = Type::scalar(S);
      T.Unit = Unit;
      return T;
    }
    // Array: one entry per dimension, ':' or '::1' (contiguous in that one).
    ++Pos;
    unsigned NDim = 0;
    int ContiguousDim = -1;
    while (true) {
      skipSpace();
      if (Text.compare(Pos, 3, "::1") == 0) {
        if (ContiguousDim >= 0)
          fail("only one dimension can be '::1'");
        ContiguousDim = static_cast<int>(NDim);
        Pos += 3;
      } else if (peek() == ':') {
        ++Pos;
      } else {
        fail("expected ':' or '::1' in an array type");
      }
      ++NDim;
      if (peek() == ',') {
        ++Pos;
        continue;
      }
      expect(']');
      break;
    }
    Layout L = Layout::A;
    if (ContiguousDim == static_cast<int>(NDim) - 1)
      L = Layout::C;
    else if (ContiguousDim == 0)
      L = Layout::F;
    else if (ContiguousDim >= 0)
      fail("'::1' must be on the first or the last dimension");
    Type T = Type::array(S, NDim, L);
    T.Unit = Unit;
    return T;
  }
};
} // namespace

Signature parseSignature(const std::string &Text) {
  return SignatureParser(Text).parseSignature();
}

Type parseType(const std::string &Text) {
  return SignatureParser(Text).parseStandaloneType();
}

} // namespace tidal::frontend
