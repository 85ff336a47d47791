// The marker contract (version 1, docs/markers.md) as the passes see it: the
// table of markers and their types, the kernels of a module, and the one way
// the passes report errors.
#ifndef TIDAL_MARKERS_H
#define TIDAL_MARKERS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include <optional>
#include <string>

namespace llvm {
class CallInst;
class Function;
class FunctionType;
class Instruction;
class LLVMContext;
class Module;
} // namespace llvm

namespace tidal {

// i32 @tidal.<register>.<x|y|z>()
enum class SpecialRegister {
  ThreadIndex, // tidal.tid.*
  BlockDim,    // tidal.ntid.*
  BlockIndex,  // tidal.ctaid.*
  GridDim,     // tidal.nctaid.*
};

struct SpecialRegisterMarker {
  SpecialRegister Register;
  unsigned Dimension; // 0 = x, 1 = y, 2 = z
};

// "tidal.tid.x" -> {ThreadIndex, 0}; nullopt for any other name.
std::optional<SpecialRegisterMarker>
parseSpecialRegisterMarker(llvm::StringRef Name);

// True for every function whose name starts with "tidal.".
bool isMarker(const llvm::Function &F);

// The type the contract gives the marker named `Name`, or nullptr when the
// contract has no such marker.
llvm::FunctionType *getMarkerType(llvm::StringRef Name,
                                  llvm::LLVMContext &Context);

// The marker called by `Call` if the call is a well-formed use of a known
// marker: a plain `call` of a declaration, both of the contract's type.
// Everything else is left in place by the lowering passes and reported by
// tidal-verify-markers.
const llvm::Function *getCalledMarker(const llvm::CallInst &Call);

// The well-formed special-register marker called by `Call`, if any.
std::optional<SpecialRegisterMarker>
getSpecialRegisterCall(const llvm::CallInst &Call);

// The value type of a marker with a type suffix (docs/markers.md, v2).
enum class MarkerValueKind { Signed, Unsigned, Float };

// "tidal.atomic.add.u32" -> {"atomic.add", Unsigned}; nullopt without a
// suffix i32/i64/u32/u64/f32/f64. Only the name is looked at.
struct TypedMarkerName {
  llvm::StringRef Operation; // "atomic.add", "shfl.idx", "math.sin", ...
  MarkerValueKind Kind;
};
std::optional<TypedMarkerName> parseTypedMarkerName(llvm::StringRef Name);

// Calls `Lower(Call, Name)` for every well-formed call (getCalledMarker) of
// every marker of M, with Name the marker's name without "tidal.". `Lower`
// returns true if it replaced and erased the call, false to leave it (for
// another pass, or for tidal-verify-markers). Declarations left without
// uses are erased. Returns true if anything changed.
bool lowerMarkerCalls(
    llvm::Module &M,
    llvm::function_ref<bool(llvm::CallInst &Call, llvm::StringRef Name)> Lower);

// The functions listed in !tidal.kernels, in order, each once (operands
// that are not functions are skipped).
llvm::SmallVector<llvm::Function *, 8> getKernels(const llvm::Module &M);
bool isKernel(const llvm::Function &F);

// "file:line:col" of the instruction's debug location, or "" without one.
std::string describeLocation(const llvm::Instruction &I);

// Emits a DS_Error diagnostic "tidal: <Message>" on `Context`. Under opt the
// default handler prints "error: tidal: ..." and exits with status 1; the
// in-process pipelines (Passes.h) collect the message instead, so a pass
// must leave valid IR after reporting.
void reportError(llvm::LLVMContext &Context, const llvm::Twine &Message);

// True once a DS_Error has gone through `Context` (a collecting handler
// keeps going after it; later passes use this to avoid follow-on noise).
bool hasReportedErrors(const llvm::LLVMContext &Context);

} // namespace tidal

#endif
