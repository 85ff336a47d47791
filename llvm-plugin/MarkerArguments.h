// The arguments of the markers whose arguments the contract constrains
// (shared.array, local.array, const.array), read and checked in one place
// for tidal-check-marker-arguments and both lowerings.
#ifndef TIDAL_MARKERARGUMENTS_H
#define TIDAL_MARKERARGUMENTS_H

#include "Markers.h"

#include "llvm/Support/Alignment.h"
#include <optional>
#include <string>

namespace llvm {
class GlobalVariable;
} // namespace llvm

namespace tidal {

// The largest alignment shared.array and local.array take.
inline constexpr uint64_t MaxArrayAlignment = 1u << 16;

struct ArrayArguments {
  uint64_t Bytes;
  llvm::Align Alignment;
};

// The (bytes, alignment) of a well-formed call of tidal.shared.array or
// tidal.local.array when the contract allows them: constants, a size that
// is not negative and within its memory's limit, an alignment that is a
// power of two up to MaxArrayAlignment. Otherwise nullopt, and `Problem`
// (if given) says why.
std::optional<ArrayArguments> getArrayArguments(const llvm::CallInst &Call,
                                                std::string *Problem = nullptr);

// The data of a tidal.const.array call: a constant global variable with an
// initializer; otherwise null, and `Problem` says why.
llvm::GlobalVariable *getConstArrayData(const llvm::CallInst &Call,
                                        std::string *Problem = nullptr);

// False (with `Problem`) if `Call` is a well-formed marker call whose
// arguments the contract refuses.
bool hasValidMarkerArguments(const llvm::CallInst &Call,
                             std::string *Problem = nullptr);

// "marker 'tidal.x' in function 'f' at file:line:col" (no location without
// a debug location).
std::string describeMarkerCall(const llvm::CallInst &Call);

} // namespace tidal

#endif
