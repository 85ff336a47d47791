// Privatised global atomics: the plan from the lowering's metadata, the
// launch-time check, and each participant's private copies
// (CpuPrivateAtomics.h; docs/cpu-target.md, "Privatised atomics").
#include "CpuPrivateAtomics.h"
#include "CpuParticipant.h"
#include "tidal/runtime/CpuTarget.h"

#include "tidal/Contract.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"

#include <atomic>
#include <cstring>
#include <limits>
#include <sstream>

namespace tidal::runtime {

namespace {

std::atomic<uint64_t> PrivatisedLaunches{0};

bool isCombine(uint32_t Combine) {
  return Combine >= TidalCombineAdd && Combine <= TidalCombineUMin;
}

// The identity of Combine on T (unsigned, the element's bits).
template <class T> T identityOf(uint32_t Combine) {
  using Signed = std::make_signed_t<T>;
  switch (Combine) {
  case TidalCombineAnd:
  case TidalCombineUMin:
    return std::numeric_limits<T>::max();
  case TidalCombineMax:
    return T(std::numeric_limits<Signed>::min());
  case TidalCombineMin:
    return T(std::numeric_limits<Signed>::max());
  default: // add, or, xor, unsigned max
    return 0;
  }
}

// *Real = *Real <Combine> Value, atomically.
template <class T> void combineInto(T *Real, T Value, uint32_t Combine) {
  using Signed = std::make_signed_t<T>;
  switch (Combine) {
  case TidalCombineAdd:
    __atomic_fetch_add(Real, Value, __ATOMIC_RELAXED);
    return;
  case TidalCombineAnd:
    __atomic_fetch_and(Real, Value, __ATOMIC_RELAXED);
    return;
  case TidalCombineOr:
    __atomic_fetch_or(Real, Value, __ATOMIC_RELAXED);
    return;
  case TidalCombineXor:
    __atomic_fetch_xor(Real, Value, __ATOMIC_RELAXED);
    return;
  default:
    break;
  }
  T Old = __atomic_load_n(Real, __ATOMIC_RELAXED);
  for (;;) {
    T New = Old;
    switch (Combine) {
    case TidalCombineMax:
      New = Signed(Value) > Signed(Old) ? Value : Old;
      break;
    case TidalCombineMin:
      New = Signed(Value) < Signed(Old) ? Value : Old;
      break;
    case TidalCombineUMax:
      New = Value > Old ? Value : Old;
      break;
    default: // unsigned min
      New = Value < Old ? Value : Old;
      break;
    }
    if (New == Old ||
        __atomic_compare_exchange_n(Real, &Old, New, /*weak=*/true, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      return;
  }
}

template <class T> void fillIdentity(void *Storage, uint64_t Bytes, uint32_t Combine) {
  T *Elements = static_cast<T *>(Storage);
  const T Identity = identityOf<T>(Combine);
  for (uint64_t I = 0, Count = Bytes / sizeof(T); I < Count; ++I)
    Elements[I] = Identity;
}

// Combines the copy's elements that differ from the identity (those the
// launch's atomics reached: elements of the array) and restores them.
template <class T>
void combineCopy(void *Storage, const PrivateLaunch::Target &Target) {
  T *Elements = static_cast<T *>(Storage);
  T *Real = reinterpret_cast<T *>(Target.Low);
  const T Identity = identityOf<T>(Target.Combine);
  for (uint64_t I = 0, Count = Target.Bytes / sizeof(T); I < Count; ++I)
    if (Elements[I] != Identity) {
      combineInto<T>(Real + I, Elements[I], Target.Combine);
      Elements[I] = Identity;
    }
}

uint32_t operandAsInt(const llvm::MDNode &Node, unsigned Index) {
  if (Index >= Node.getNumOperands())
    return 0;
  auto *Value = llvm::mdconst::dyn_extract_or_null<llvm::ConstantInt>(Node.getOperand(Index));
  return Value ? uint32_t(Value->getZExtValue()) : 0;
}

} // namespace

std::vector<std::string> privateAtomicsLines(const llvm::Module &M) {
  std::vector<std::string> Lines;
  const llvm::NamedMDNode *Table = M.getNamedMetadata(PrivateAtomicsMetadataName);
  if (!Table)
    return Lines;
  for (const llvm::MDNode *Entry : Table->operands()) {
    auto *F = Entry->getNumOperands() >= 3
                  ? llvm::mdconst::dyn_extract_or_null<llvm::Function>(Entry->getOperand(0))
                  : nullptr;
    if (!F)
      continue;
    std::string Line = F->getName().str() + " " + std::to_string(operandAsInt(*Entry, 1));
    for (unsigned I = 2; I < Entry->getNumOperands(); ++I) {
      auto *Array = llvm::dyn_cast<llvm::MDNode>(Entry->getOperand(I));
      if (!Array)
        continue;
      Line += " " + std::to_string(operandAsInt(*Array, 0)) + ":" +
              std::to_string(operandAsInt(*Array, 1)) + ":" +
              std::to_string(operandAsInt(*Array, 2)) + ":" +
              std::to_string(operandAsInt(*Array, 3));
    }
    Lines.push_back(Line);
  }
  return Lines;
}

std::optional<std::pair<std::string, CpuPrivatePlan>>
parsePrivateAtomicsLine(const std::string &Line) {
  std::istringstream In(Line);
  std::string Name;
  CpuPrivatePlan Plan;
  if (!(In >> Name >> Plan.Parameters))
    return std::nullopt;
  std::string Field;
  bool AnyPrivatised = false;
  while (In >> Field) {
    CpuPrivateArray Array;
    char Colon[3];
    std::istringstream Parts(Field);
    if (!(Parts >> Array.Data >> Colon[0] >> Array.Dimensions >> Colon[1] >> Array.Combine >>
          Colon[2] >> Array.ElementBytes) ||
        Colon[0] != ':' || Colon[1] != ':' || Colon[2] != ':' || Array.Dimensions == 0 ||
        uint64_t(Array.Data) + 2 * uint64_t(Array.Dimensions) >= Plan.Parameters ||
        (Array.Combine && (!isCombine(Array.Combine) ||
                           (Array.ElementBytes != 4 && Array.ElementBytes != 8))))
      return std::nullopt;
    AnyPrivatised |= Array.Combine != 0;
    Plan.Arrays.push_back(Array);
  }
  if (!AnyPrivatised)
    return std::nullopt;
  return std::make_pair(Name, Plan);
}

bool planPrivateLaunch(const CpuPrivatePlan &Plan, void **Params, PrivateLaunch &Launch) {
  Launch.Parameters = Plan.Parameters;
  Launch.Targets.clear();
  struct Range {
    uintptr_t Low, High;
  };
  std::vector<Range> Ranges; // of every non-empty array, targets first
  std::vector<Range> Others;
  uint64_t Total = 0;
  for (const CpuPrivateArray &Array : Plan.Arrays) {
    char *Data = *static_cast<char **>(Params[Array.Data]);
    int64_t Low = 0, High = 0, NarrowestStride = 0; // of dimensions with 2 or more
    bool Empty = false;
    for (uint32_t D = 0; D < Array.Dimensions; ++D) {
      const int64_t Shape = *static_cast<int64_t *>(Params[Array.Data + 1 + D]);
      const int64_t Stride =
          *static_cast<int64_t *>(Params[Array.Data + 1 + Array.Dimensions + D]);
      if (Shape <= 0) {
        Empty = true;
        break;
      }
      int64_t Span;
      if (__builtin_mul_overflow(Shape - 1, Stride, &Span) ||
          __builtin_add_overflow(Span < 0 ? Low : High, Span, Span < 0 ? &Low : &High))
        return false;
      if (Array.Combine && Stride % int64_t(Array.ElementBytes) != 0)
        return false;
      const int64_t Step = Stride < 0 ? -Stride : Stride;
      if (Shape > 1 && Step && (!NarrowestStride || Step < NarrowestStride))
        NarrowestStride = Step;
    }
    if (Empty) {
      if (Array.Combine) // no element to privatise (every index fails its check)
        return false;
      continue;
    }
    const uintptr_t Address = reinterpret_cast<uintptr_t>(Data);
    if (Array.Combine) {
      const uint64_t Bytes = uint64_t(High - Low) + Array.ElementBytes;
      if (Address % Array.ElementBytes != 0 || High - Low > int64_t(MaxPrivateBytes) ||
          (Total += Bytes) > MaxPrivateBytes)
        return false;
      Launch.Targets.push_back(
          {Array.Data, Array.Combine, Array.ElementBytes, Data + Low, Bytes, uint64_t(-Low)});
      Ranges.push_back({Address + Low, Address + High + Array.ElementBytes});
    } else {
      // Its element size is not known here: its narrowest stride (elements
      // do not overlap), or 16 bytes (complex128) for a single element.
      Others.push_back({Address + Low, Address + High + (NarrowestStride ? NarrowestStride : 16)});
    }
  }
  if (Launch.Targets.empty())
    return false;
  // 2. A privatised array may share no byte with any other array.
  for (size_t I = 0; I < Ranges.size(); ++I) {
    for (size_t J = I + 1; J < Ranges.size(); ++J)
      if (Ranges[I].Low < Ranges[J].High && Ranges[J].Low < Ranges[I].High)
        return false;
    for (const Range &Other : Others)
      if (Ranges[I].Low < Other.High && Other.Low < Ranges[I].High)
        return false;
  }
  return true;
}

struct PrivateCopies::Copy {
  SharedMemoryBuffer Buffer; // guarded, as shared memory is
  uint64_t Bytes = 0;
  uint32_t Combine = 0, ElementBytes = 0;

  void fill() {
    if (ElementBytes == 4)
      fillIdentity<uint32_t>(Buffer.data(), Bytes, Combine);
    else
      fillIdentity<uint64_t>(Buffer.data(), Bytes, Combine);
  }
};

PrivateCopies::PrivateCopies() = default;
PrivateCopies::~PrivateCopies() = default;

void PrivateCopies::prepare(const PrivateLaunch &Launch) {
  while (Copies.size() < Launch.Targets.size())
    Copies.push_back(std::make_unique<Copy>());
  DataPointers.resize(Launch.Targets.size());
  Parameters.reserve(Launch.Parameters);
  for (size_t K = 0; K < Launch.Targets.size(); ++K) {
    const PrivateLaunch::Target &Target = Launch.Targets[K];
    Copy &C = *Copies[K];
    if (C.Bytes != Target.Bytes || C.Combine != Target.Combine ||
        C.ElementBytes != Target.ElementBytes) {
      C.Buffer.reserve(Target.Bytes);
      C.Bytes = Target.Bytes;
      C.Combine = Target.Combine;
      C.ElementBytes = Target.ElementBytes;
      C.fill();
    }
  }
}

void **PrivateCopies::begin(const PrivateLaunch &Launch, void **Params) {
  Parameters.assign(Params, Params + Launch.Parameters); // reserved: no allocation
  for (size_t K = 0; K < Launch.Targets.size(); ++K) {
    DataPointers[K] = static_cast<char *>(Copies[K]->Buffer.data()) + Launch.Targets[K].DataAt;
    Parameters[Launch.Targets[K].Data] = &DataPointers[K];
  }
  Active = true;
  return Parameters.data();
}

void PrivateCopies::combine(const PrivateLaunch &Launch) {
  for (size_t K = 0; K < Launch.Targets.size(); ++K) {
    const PrivateLaunch::Target &Target = Launch.Targets[K];
    if (Target.ElementBytes == 4)
      combineCopy<uint32_t>(Copies[K]->Buffer.data(), Target);
    else
      combineCopy<uint64_t>(Copies[K]->Buffer.data(), Target);
  }
  Active = false;
}

void PrivateCopies::reset() {
  for (std::unique_ptr<Copy> &C : Copies)
    if (C->Bytes)
      C->fill();
  Active = false;
}

uint64_t privatisedLaunchCount() { return PrivatisedLaunches.load(std::memory_order_relaxed); }
void countPrivatisedLaunch() { PrivatisedLaunches.fetch_add(1, std::memory_order_relaxed); }

} // namespace tidal::runtime
