// Privatised global atomics (docs/cpu-target.md, "Privatised atomics"): a
// launch of a kernel listed in !tidal.private.atomics whose arrays qualify
// gives each participant a private copy of each privatised array (filled
// with the operation's identity), runs the kernel's plain-atomic block
// function on every participant with the copies in place of the arrays,
// and each participant combines its copies into the arrays with atomic
// operations when it has no block left. Private to the runtime.
#ifndef TIDAL_RUNTIME_CPUPRIVATEATOMICS_H
#define TIDAL_RUNTIME_CPUPRIVATEATOMICS_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
}

namespace tidal::runtime {

class SharedMemoryBuffer;

// One array parameter of the kernel (the lowering's entry).
struct CpuPrivateArray {
  uint32_t Data = 0;         // its pointer's parameter index
  uint32_t Dimensions = 0;   // shapes at Data + 1..., strides after them
  uint32_t Combine = 0;      // tidal::TidalCombine; 0: not privatised
  uint32_t ElementBytes = 0; // of its atomics (4 or 8), when privatised
};

struct CpuPrivatePlan {
  uint32_t Parameters = 0; // the kernel's (flattened) parameter count
  std::vector<CpuPrivateArray> Arrays;
};

// The most bytes of private copies per participant a launch may use (all
// its privatised arrays together); larger launches run alone.
constexpr uint64_t MaxPrivateBytes = uint64_t(256) << 10;

// The module's !tidal.private.atomics as text, one line per kernel
// ("BLOCKNAME parameters data:dimensions:combine:bytes ..."), as
// CpuObject::PrivateAtomics keeps it; and one line back (nothing if it is
// not one).
std::vector<std::string> privateAtomicsLines(const llvm::Module &M);
std::optional<std::pair<std::string, CpuPrivatePlan>>
parsePrivateAtomicsLine(const std::string &Line);

// A launch's privatised arrays, decided by the launching thread.
struct PrivateLaunch {
  struct Target {
    uint32_t Data = 0, Combine = 0, ElementBytes = 0;
    char *Low = nullptr;    // the array's lowest byte
    uint64_t Bytes = 0;     // from Low to past its highest element
    uint64_t DataAt = 0;    // the data pointer's offset from Low
  };
  uint32_t Parameters = 0;
  std::vector<Target> Targets;
};

// Whether a launch with Params (as launchOnCpu's) may privatise Plan's
// arrays: each privatised array non-empty, aligned, with strides that are
// multiples of its element, all of them within MaxPrivateBytes, and none
// overlapping another array of the kernel. Fills Launch when it may.
bool planPrivateLaunch(const CpuPrivatePlan &Plan, void **Params, PrivateLaunch &Launch);

// A participant's private copies, kept across launches, and always holding
// the identity between launches (combine() restores it).
class PrivateCopies {
public:
  PrivateCopies();
  ~PrivateCopies();
  // On the launching thread, before the launch starts: a copy per array of
  // Launch, sized and holding the identity (throws RuntimeError when memory
  // runs out).
  void prepare(const PrivateLaunch &Launch);
  // At the participant's first block (no allocation): the parameters its
  // blocks get, Params with each privatised array's data pointer moved to
  // its copy.
  void **begin(const PrivateLaunch &Launch, void **Params);
  // Adds what the copies hold to the arrays (atomically: other participants
  // run blocks or combine meanwhile) and restores the identity. A fault in
  // it (an array not in memory) leaves the copies for reset().
  void combine(const PrivateLaunch &Launch);
  // Refills every copy with its identity (after a fault in combine()).
  void reset();
  bool active() const { return Active; }

private:
  struct Copy;
  std::vector<std::unique_ptr<Copy>> Copies;
  std::vector<void *> Parameters;
  std::vector<void *> DataPointers;
  bool Active = false; // begin() since the last combine()
};

// One more for privatisedLaunchCount() (tidal/runtime/CpuTarget.h).
void countPrivatisedLaunch();

} // namespace tidal::runtime

#endif
