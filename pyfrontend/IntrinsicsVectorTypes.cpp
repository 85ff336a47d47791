// CUDA's vector types (cuda.float32x4, cuda.int16x2, ...; Numba's model: a
// struct of 1 to 4 numbers named x, y, z, w). A constructor takes numbers
// and smaller vectors of the same element type whose elements add up to
// its own count ("fancy creation": float32x4(v2, 1.0, z)); the numbers are
// converted to the element type. v.x reads an element (TypeNames.cpp,
// EmitNames.cpp). The aliases (float4, double2, short2, ...) are the same
// Python objects (python/tidal/cuda/intrinsics.py).
#include "IntrinsicTable.h"

#include <cstring>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// The vector type a row constructs: cuda.float32x4 -> float32, 4.
Type constructedType(IntrinsicCall &Call) {
  std::string Name = std::string(Call.Record->PythonPath).substr(std::strlen("cuda."));
  size_t X = Name.rfind('x');
  Scalar Element = Scalar::Float32;
  scalarFromName(Name.substr(0, X), Element);
  return Type::vector(Element, unsigned(std::stoi(Name.substr(X + 1))));
}

TypedValue typeVectorConstructor(IntrinsicCall &Call) {
  Type Result = constructedType(Call);
  std::string Name = Result.str();
  if (!Call.Keywords.empty())
    Call.C.typingError(Call.Node, Name + "() takes no keyword arguments");
  unsigned Count = 0;
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    const Type &T = Call.Args[I].T;
    if (T.isVector() && T.Dtype == Result.Dtype)
      Count += T.NDim;
    else if (T.isScalar() && !isComplex(T.Dtype))
      Count += 1;
    else
      Call.C.typingError(Call.ArgNodes[I],
                         Name + "() takes numbers and vectors of " + scalarName(Result.Dtype) +
                             " (" + scalarName(Result.Dtype) + "x1 to x3), not " + T.str());
  }
  if (Count != Result.NDim)
    Call.C.typingError(Call.Node, Name + "() needs " + std::to_string(Result.NDim) +
                                      " elements, but its arguments give " +
                                      std::to_string(Count));
  return TypedValue(Result);
}

TypedValue emitVectorConstructor(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  Type Element = Type::scalar(Result.Dtype);
  Value *Vector = PoisonValue::get(StructType::get(
      Call.C.context(), std::vector<llvm::Type *>(Result.NDim, Call.C.llvmType(Result.Dtype))));
  unsigned Next = 0;
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    const TypedValue &Arg = Call.Args[I];
    if (Arg.T.isVector()) {
      for (unsigned E = 0; E < Arg.T.NDim; ++E)
        Vector = B.CreateInsertValue(Vector, B.CreateExtractValue(Arg.scalar(), E), Next++);
      continue;
    }
    Vector = B.CreateInsertValue(Vector, Call.C.convert(Arg, Element, Call.ArgNodes[I]).scalar(),
                                 Next++);
  }
  TypedValue V(Result);
  V.Parts.push_back(Vector);
  return V;
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> vectorTypeIntrinsics() {
#define VECTOR(ELEMENT, N)                                                                    \
  {"cuda." #ELEMENT "x" #N, IntrinsicKind::Function, typeVectorConstructor,                    \
   emitVectorConstructor, "",                                                                  \
   "cuda." #ELEMENT "x" #N "(...): a CUDA vector of " #N " " #ELEMENT                         \
   " (.x .y .z .w), from numbers and smaller vectors."}
#define VECTORS(ELEMENT) VECTOR(ELEMENT, 1), VECTOR(ELEMENT, 2), VECTOR(ELEMENT, 3), VECTOR(ELEMENT, 4)
  static const IntrinsicRecord Records[] = {
      VECTORS(int8),   VECTORS(int16),  VECTORS(int32),   VECTORS(int64),   VECTORS(uint8),
      VECTORS(uint16), VECTORS(uint32), VECTORS(uint64),  VECTORS(float32), VECTORS(float64),
  };
#undef VECTORS
#undef VECTOR
  return Records;
}

} // namespace tidal::frontend
