// The marker contract (docs/markers.md; its version: MarkerContractVersion in
// include/tidal/Contract.h) as the passes see it: the marker table
// (tidal/Markers.def) as an enum with its parsing and types, the kernels of
// a module, and the one way the passes report errors.
#ifndef TIDAL_MARKERS_H
#define TIDAL_MARKERS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include <cstdint>
#include <optional>
#include <string>

namespace llvm {
class CallInst;
class Function;
class FunctionType;
class Instruction;
class LLVMContext;
class Module;
class raw_ostream;
} // namespace llvm

namespace tidal {

// One enumerator per row of tidal/Markers.def, in its order.
enum class MarkerKind : uint8_t {
#define TIDAL_MARKER(Kind, Name, Suffixes, Result, Parameters, Sync) Kind,
#include "tidal/Markers.def"
};

// The type suffix of a marker name (".u32"); None for the markers without.
enum class MarkerSuffix : uint8_t { None, I32, I64, U32, U64, F32, F64, F16 };

// A marker named by the table: its row and its suffix.
struct MarkerName {
  MarkerKind Kind;
  MarkerSuffix Suffix;
};

// "tidal.atomic.add.u32" -> {AtomicAdd, U32}; nullopt for a name that the
// table does not have (an unknown name, a suffix the row does not take).
std::optional<MarkerName> parseMarkerName(llvm::StringRef Name);

// The row's name without "tidal." and suffix: "atomic.add".
llvm::StringRef getMarkerBaseName(MarkerKind Kind);

// The kind of the well-formed marker call `Call` (getCalledMarker), if any.
std::optional<MarkerName> getMarkerCall(const llvm::CallInst &Call);

// Prints the table, one line per marker and suffix set, as
// docs/markers.md lists it ("i32 @tidal.atomic.add.{i32,i64,...}(ptr, T)").
void printMarkerTable(llvm::raw_ostream &Out);

// The sync-point column of tidal/Markers.def: whether, after a call of the
// marker, a thread needs values that other threads computed before the call
// (the host lowering splits its rounds at such calls), and how.
enum class SyncPointKind : uint8_t {
  NoSync,         // not a sync point
  BlockBarrier,   // syncthreads
  BlockReduction, // syncthreads.count/and/or: a block barrier that counts
  GridBarrier,    // grid.sync: a barrier of every block of the launch
  WarpBarrier,    // syncwarp
  WarpActiveMask, // activemask: the lanes that arrive together
  WarpExchange,   // shfl, vote, match: the lanes exchange argument 1
};

// The row's sync-point column.
SyncPointKind getSyncPointKind(MarkerKind Kind);
// WarpBarrier, WarpActiveMask, WarpExchange: a sync point of one warp.
bool isWarpSyncPoint(SyncPointKind Kind);
// "block barrier", "warp exchange", ... (for debug output).
llvm::StringRef getSyncPointKindName(SyncPointKind Kind);

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
// The same for a marker kind (ThreadIndexX .. GridDimZ).
std::optional<SpecialRegisterMarker> getSpecialRegister(MarkerKind Kind);

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
MarkerValueKind getValueKind(MarkerSuffix Suffix);


// Calls `Lower(Call, Marker)` for every well-formed call (getCalledMarker)
// of every marker of M, with Marker its row and suffix. `Lower`
// returns true if it replaced and erased the call, false to leave it (for
// another pass, or for tidal-verify-markers). Declarations left without
// uses are erased. Returns true if anything changed.
bool lowerMarkerCalls(
    llvm::Module &M,
    llvm::function_ref<bool(llvm::CallInst &Call, MarkerName Marker)> Lower);

// The functions listed in !tidal.kernels, in order, each once (operands
// that are not functions are skipped).
llvm::SmallVector<llvm::Function *, 8> getKernels(const llvm::Module &M);
bool isKernel(const llvm::Function &F);

// "file:line:col" of the instruction's debug location, else of its
// !tidal.where, or "" without either.
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
