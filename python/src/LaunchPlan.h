// Launch plans: how a launch reads each argument, decided once per
// combination of argument classes and reused by every launch whose arguments
// are of those classes (no typing, no lookup, no allocation), and the packing
// of the arguments into the kernel's flattened parameters.
#ifndef TIDAL_BINDING_LAUNCHPLAN_H
#define TIDAL_BINDING_LAUNCHPLAN_H

#include "ArrayInterface.h"
#include "DLPack.h"
#include "PyRef.h"
#include "Types.h"

#include "tidal/runtime/CudaDriver.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace tidal::binding {

struct Specialization;
struct DispatcherState;

// How a launch passes one argument: decided when the argument's launch plan is
// made, and checked cheaply at every launch that reuses the plan.
enum class ArgKind : uint8_t {
  Bool,            // Python bool
  Int,             // Python int: int64
  Float,           // Python float: float64
  Complex,         // Python complex: complex128
  NumPyScalar,     // a NumPy scalar of the plan's type
  RecordScalar,    // a NumPy record (np.void), by reference
  Address,         // a cffi pointer or ctypes c_void_p, for a pointer parameter
  HostArray,       // a NumPy array (the cuda target copies it in and back)
  DirectedArray,   // cuda.In / Out / InOut: a NumPy array and its copies
  HostDeviceArray, // a cpu-target device array: the NumPy array of its memory
  DeviceArray,     // device memory described by _tidal_device (cuda target)
  InterfaceArray,  // any other object with __cuda_array_interface__
  DLPackArray,     // any other object with __dlpack__
};

inline bool isArrayKind(ArgKind Kind) { return Kind >= ArgKind::HostArray; }

// A tuple, namedtuple or Enum member among a launch's arguments, or a leaf
// (a number or an array) inside one: launches read the leaves as
// arguments of their own, in order, after checking that each argument has
// the plan's shape (the same classes, the same tuple lengths).
struct ArgumentNode {
  enum Kinds : uint8_t { Leaf, Tuple, Enum } Kind = Leaf;
  uint32_t Length = 0;   // Tuple: its elements (Enum: its value, one)
  PyTypeObject *Class = nullptr; // borrowed: PyTypes holds the leaves', Classes the rest
};

// A dispatcher's launch plan for one combination of argument classes: the
// specialisation it runs and how each argument is read. A launch whose
// arguments have these Python types, and whose arrays have the element types,
// dimensions and layouts of the specialisation, reuses the plan: no typing,
// no lookup of the specialisation, no allocation.
struct LaunchPlan {
  Specialization *Spec = nullptr;
  std::vector<frontend::PyRef> PyTypes; // of each argument (kept alive: compared by identity)
  std::vector<ArgKind> Kinds;
  std::vector<frontend::PyRef> RecordDescrs; // the dtype of record arguments (null otherwise)
  std::vector<uint8_t> ValueBytes;           // the value's size of NumPy scalar arguments
  std::vector<uint8_t> Copies;               // cuda target: CopyIn | CopyOut of host arrays
  // The types of the arguments the plan was made for: those of the
  // specialisation, or, for a declared signature, what converts to them.
  std::vector<frontend::Type> ArgumentTypes;
  // With tuples or Enum members among the arguments, the vectors above are
  // per leaf (each tuple's numbers and arrays, in order), and Structure
  // describes every argument in pre-order (empty: the arguments are the
  // leaves). ParameterOf: each leaf's argument (for messages);
  // ParameterTypes: each leaf's type in the specialisation.
  std::vector<ArgumentNode> Structure;
  std::vector<frontend::PyRef> Classes; // of the tuples and Enum members (kept alive)
  size_t ArgumentCount = 0;
  std::vector<uint32_t> ParameterOf;
  std::vector<frontend::Type> ParameterTypes;
  // Per leaf: a scalar that converts to its parameter's type (a declared
  // signature's), decided once here rather than by comparing types at
  // each launch.
  std::vector<uint8_t> Converts;
  bool AnyConverts = false;
  // Whether some leaf is a NumPy array (the host-array warning), or a
  // cuda.In array (the cpu target's launch copies it): decided here, so that
  // a launch without either does not look at its arguments again.
  bool AnyHostArray = false;
  bool AnyCopyInOnly = false;
};

// One flattened parameter value: 16 bytes hold the widest scalar (complex128).
struct alignas(16) ParamSlot {
  uint64_t Words[2];
};

// A launch's flattened parameter values (cuLaunchKernel's kernelParams:
// Params[i] points at Slots[i]): on the stack up to Inline values (256
// scalars fit), on the heap beyond.
struct PackedArguments {
  static constexpr unsigned Inline = 320;
  ParamSlot InlineSlots[Inline];
  void *InlineParams[Inline];
  std::vector<ParamSlot> HeapSlots;
  std::vector<void *> HeapParams;
  ParamSlot *Slots = InlineSlots;
  void **Params = InlineParams;
  TakenTensors Tensors; // DLPack arguments, given back after the launch

  unsigned capacity() const {
    return HeapSlots.empty() ? Inline : static_cast<unsigned>(HeapSlots.size());
  }

  explicit PackedArguments(unsigned Count) {
    if (Count > Inline) {
      HeapSlots.resize(Count);
      HeapParams.resize(Count);
      Slots = HeapSlots.data();
      Params = HeapParams.data();
    }
  }
};

// The view of an array argument of kind Kind; false (no error set) when O
// does not have the memory its kind says, true with a Python error set when
// its __cuda_array_interface__ is invalid.
bool arrayViewOf(PyObject *O, ArgKind Kind, ArrayView &V);

// The bytes [Start, Start + Bytes) an array's elements span in memory
// (strides may be negative); Bytes is 0 for an empty array.
void arraySpan(const ArrayView &V, char *&Start, size_t &Bytes);

// Types of the launch arguments; false with a TypeError naming the
// parameter.
bool typeArguments(DispatcherState &D, PyObject *const *Args, size_t N,
                   std::vector<frontend::Type> &Types);

// The plan for these arguments, and their values packed into Out: the most
// recently used plan that fits them, or a new one (typing the arguments and
// compiling them when needed). Storage holds the packed values; Out points
// into it. Throws PythonErrorSet when an argument can't be taken.
// Leaves: the arguments as the plan reads them (Args itself, or the leaves
// of its tuples, held in LeafStorage).
std::shared_ptr<LaunchPlan> planAndPack(DispatcherState &D, PyObject *const *Args, size_t N,
                                        PackedArguments *&Out,
                                        std::optional<PackedArguments> &Storage,
                                        runtime::cu::Stream Stream,
                                        std::vector<PyObject *> &LeafStorage,
                                        PyObject *const *&Leaves);

// Throws ValueError when Stream (a launch's stream object, not the default
// stream) was made on another target than D's.
void rejectOtherTargetsStream(const DispatcherState &D, PyObject *Stream);

} // namespace tidal::binding

#endif
