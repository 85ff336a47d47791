// Foreign functions: calls from a Python kernel into functions written in
// CUDA C++ (or LLVM IR), declared by cuda.declare_device or bound from the
// source by cuda.include (python/tidal/cuda/foreign.py). Typing picks the
// callee (an overload, by the argument types) and records it in the type
// map as a CallTarget's Foreign; emission declares the symbol and calls it
// with Numba's ABI or the C ABI. The code to link is named in the module's
// metadata (below), which python/src/ForeignLinking.cpp reads to compile
// and link the C++ into the kernel's module before optimisation.
#ifndef TIDAL_FRONTEND_FOREIGNFUNCTIONS_H
#define TIDAL_FRONTEND_FOREIGNFUNCTIONS_H

#include "Types.h"

#include <memory>
#include <string>
#include <vector>

namespace tidal::frontend {

// Named metadata of a kernel's module before linking:
// ForeignLinksMetadata: one node per file or source to link,
//   !{!"kind", !"name", !"payload", !"clang option", ...}
//   kind: "cu" (CUDA C++ source, payload its text), "ll" (LLVM IR text),
//   "bc" (bitcode), "ptx" (PTX text);
// ForeignCallsMetadata: one node per foreign symbol the kernel calls,
//   !{!"symbol", !"name as called", !"declared signature", !"abi",
//     !"file", !"line", !"column", !"source line", !"result type",
//     !"parameter type", ...}
//   abi: "numba" or "c"; the place is the first call's; the types are
//   foreignParameterText's ("void" for no result).
inline constexpr const char *ForeignLinksMetadata = "tidal.foreign.links";
inline constexpr const char *ForeignCallsMetadata = "tidal.foreign.calls";

struct ForeignLink {
  std::string Kind, Name, Payload;
  std::vector<std::string> Options;
};

// One parameter: a number, or a pointer to numbers (an array argument's
// data, or an element's address), or a pointer to a struct of numbers (a
// record, or a record array's data, of the same layout), or a struct of
// numbers by value (Record without Pointer: a record of the same layout,
// copied, as clang's `ptr byval(%struct)`).
struct ForeignParameter {
  Scalar Element = Scalar::Int64;
  bool Pointer = false;
  bool Const = false;
  std::shared_ptr<const RecordLayout> Record; // the struct's layout
  std::string RecordName;
  std::string Text; // as parsed
};

struct ForeignFunction {
  std::string Shown;    // as the kernel names it: "mul", "lib.geometry.dot"
  std::string Symbol;   // the symbol linked
  bool NumbaABI = true; // int f(T *result, args...) against T f(args...)
  bool HasResult = false;
  Scalar Result = Scalar::Int64;
  // A struct returned by value (the C ABI): a record of its layout.
  std::shared_ptr<const RecordLayout> ResultRecord;
  std::string ResultText; // as described: float32, struct Pair{...;8}, void
  std::vector<ForeignParameter> Parameters;
  std::string Declared; // the signature or C++ declaration, for messages
  std::vector<ForeignLink> Links;

  Type resultType() const {
    if (ResultRecord)
      return Type::record(ResultRecord, /*ReadOnly=*/false);
    return HasResult ? Type::scalar(Result) : Type::none();
  }
};

// "float32", "float32*", "const float32*",
// "struct Pair{first:int32@0,second:int32@4;8}*" or, by value, without the
// '*' (DeviceBinding.h's texts)
// as a parameter; false for another text.
bool parseForeignParameter(const std::string &Text, ForeignParameter &Out);
std::string foreignParameterText(const ForeignParameter &P);
// The C++ name of a number type as CUDA C++ spells it ("float", "long long",
// "half"); null for a type C++ has no number for (complex, datetime).
const char *cxxScalarName(Scalar S);

// The fields of a struct's layout as a user reads them: "struct Pair {a:
// int32 at 0, b: float32 at 4} (8 bytes)".
std::string describeRecord(const std::string &Name, const RecordLayout &Layout);
// A record dtype's layout matches a C++ struct's: the same numbers at the
// same offsets, the same size (the names may differ).
bool sameLayout(const RecordLayout &Struct, const RecordLayout &Record);

} // namespace tidal::frontend

#endif
