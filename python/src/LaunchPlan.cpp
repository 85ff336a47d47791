// Launch plans: how the arguments of a launch are read and packed into the
// flattened parameters of the kernel, reused by every launch whose arguments
// are of the same classes (no typing, no allocation).
#include "LaunchPlan.h"

#include "ArgumentTyping.h"
#include "Dispatcher.h"
#include "Errors.h"
#include "TupleTypes.h"

#include "tidal/runtime/CudaTarget.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace tidal::binding {

using namespace tidal::frontend;

// Says that argument I of the kernel can't be taken; returns false.
static bool rejectArgument(const DispatcherState &D, size_t I, const std::string &Why) {
  PyErr_Format(PyExc_TypeError,
               "argument '%s' of kernel '%s' is %s: kernels take NumPy arrays, device arrays, "
               "numbers (int, float, bool, NumPy scalars), tuples of these and Enum members",
               D.ParamNames[I].c_str(), D.Name.c_str(), Why.c_str());
  return false;
}

static bool checkArgumentCount(const DispatcherState &D, size_t N) {
  if (N == D.ParamNames.size())
    return true;
  PyErr_Format(PyExc_TypeError, "kernel '%s' takes %zu argument%s but %zu %s given", D.Name.c_str(),
               D.ParamNames.size(), D.ParamNames.size() == 1 ? "" : "s", N,
               N == 1 ? "was" : "were");
  return false;
}

// Puts "argument 'x' of kernel 'k': " before the message of the Python
// error set now (what an argument's __cuda_array_interface__ or DLPack
// tensor said), keeping its type. Errors of other classes than Python's
// own (a library's, which may need more than a message) are left as they
// are.
static void nameArgumentInError(const DispatcherState &D, size_t I) {
  PyObject *Type, *Value, *Traceback;
  PyErr_Fetch(&Type, &Value, &Traceback);
  PyErr_NormalizeException(&Type, &Value, &Traceback);
  bool Builtin = Type && PyType_Check(Type) &&
                 !(reinterpret_cast<PyTypeObject *>(Type)->tp_flags & Py_TPFLAGS_HEAPTYPE);
  PyRef Text = PyRef::steal(Value && Builtin ? PyObject_Str(Value) : nullptr);
  const char *Message = Text ? PyUnicode_AsUTF8(Text.get()) : nullptr;
  if (!Message) {
    PyErr_Clear();
    PyErr_Restore(Type, Value, Traceback);
    return;
  }
  PyErr_Format(Type, "argument '%s' of kernel '%s': %s", D.ParamNames[I].c_str(), D.Name.c_str(),
               Message);
  Py_XDECREF(Type);
  Py_XDECREF(Value);
  Py_XDECREF(Traceback);
}

// Types of the launch arguments; raises TypeError naming the parameter.
bool typeArguments(DispatcherState &D, PyObject *const *Args, size_t N, std::vector<Type> &Types) {
  if (!checkArgumentCount(D, N))
    return false;
  Types.resize(N);
  for (size_t I = 0; I < N; ++I) {
    std::string Why;
    if (typeofArgument(Args[I], Types[I], Why))
      continue;
    if (!PyErr_Occurred())
      return rejectArgument(D, I, Why);
    nameArgumentInError(D, I);
    return false;
  }
  return true;
}

// How a launch on Target passes O (a Python error may be set when O's
// __cuda_array_interface__ is broken; the caller types O afterwards).
static ArgKind argumentKind(PyObject *O, TargetKind Target) {
  if (PyBool_Check(O))
    return ArgKind::Bool;
  if (PyLong_Check(O))
    return ArgKind::Int;
  if (PyFloat_Check(O))
    return ArgKind::Float;
  if (PyComplex_Check(O))
    return ArgKind::Complex;
  if (PyArray_Check(O)) // a subclass may be mapped or managed memory
    return !PyArray_CheckExact(O) && Target == TargetKind::Cuda && deviceLayoutOf(O)
               ? ArgKind::DeviceArray
               : ArgKind::HostArray;
  if (PyArray_IsScalar(O, Void))
    return ArgKind::RecordScalar;
  if (isAddressObject(O))
    return ArgKind::Address;
  if (PyArray_IsScalar(O, Generic))
    return ArgKind::NumPyScalar;
  if (directedArrayOf(O))
    return ArgKind::DirectedArray;
  if (hostArrayOf(O))
    return ArgKind::HostDeviceArray;
  if (deviceLayoutOf(O))
    return ArgKind::DeviceArray;
  return PyObject_HasAttrString(O, "__cuda_array_interface__") ? ArgKind::InterfaceArray
                                                               : ArgKind::DLPackArray;
}

// Throws ValueError when argument I, of kind Kind, is a device array made on
// the other target than D's: a cpu-target device array is host memory, a
// cuda-target one device memory, and neither is what the other target reads.
static void rejectOtherTargetsArray(const DispatcherState &D, size_t I, ArgKind Kind) {
  const char *MadeOn = Kind == ArgKind::HostDeviceArray && D.Target == TargetKind::Cuda ? "cpu"
                       : Kind == ArgKind::DeviceArray && D.Target == TargetKind::Cpu    ? "cuda"
                                                                                        : nullptr;
  if (!MadeOn)
    return;
  PyErr_Format(PyExc_ValueError,
               "argument '%s' of kernel '%s' is a device array made on the %s target, but the "
               "kernel is launched on the %s target: copy it to the host "
               "(copy_to_host()) or launch on the %s target",
               D.ParamNames[I].c_str(), D.Name.c_str(), MadeOn, targetName(D.Target), MadeOn);
  throw PythonErrorSet();
}

// Throws ValueError when Stream (a launch's stream object, not the default
// stream) was made on another target than D's: a cuda.stream() keeps the
// target it was made on in its `target` attribute.
void rejectOtherTargetsStream(const DispatcherState &D, PyObject *Stream) {
  static PyObject *Name = PyUnicode_InternFromString("target");
  PyRef MadeOn = PyRef::steal(PyObject_GetAttr(Stream, Name));
  if (!MadeOn) {
    PyErr_Clear();
    return;
  }
  if (!PyUnicode_Check(MadeOn.get()) ||
      PyUnicode_CompareWithASCIIString(MadeOn.get(), targetName(D.Target)) == 0)
    return;
  PyErr_Format(PyExc_ValueError,
               "kernel '%s' is launched on the %s target with a stream made on the %U target: "
               "a stream belongs to the target it was made on",
               D.Name.c_str(), targetName(D.Target), MadeOn.get());
  throw PythonErrorSet();
}

// Appends O's shape to Plan's structure and its leaves (the numbers and
// arrays in it, with their types, untagged) to Leaves; O is argument
// Parameter, of type T.
static void describeArgument(PyObject *O, const Type &T, LaunchPlan &Plan, uint32_t Parameter,
                             std::vector<PyObject *> &Leaves, std::vector<Type> &LeafTypes) {
  ArgumentNode Node;
  Node.Class = Py_TYPE(O);
  if (T.isEnum() || T.isTuple()) {
    Node.Kind = T.isEnum() ? ArgumentNode::Enum : ArgumentNode::Tuple;
    Node.Length = T.isEnum() ? 1 : static_cast<uint32_t>(T.Elements.size());
    Plan.Structure.push_back(Node);
    Plan.Classes.push_back(PyRef::borrow(reinterpret_cast<PyObject *>(Py_TYPE(O))));
    if (T.isEnum())
      return describeArgument(enumValueOf(O), T.untagged(), Plan, Parameter, Leaves, LeafTypes);
    for (size_t I = 0; I < T.Elements.size(); ++I)
      describeArgument(PyTuple_GET_ITEM(O, static_cast<Py_ssize_t>(I)), T.Elements[I], Plan,
                       Parameter, Leaves, LeafTypes);
    return;
  }
  Plan.Structure.push_back(Node);
  Leaves.push_back(O);
  LeafTypes.push_back(T);
  Plan.ParameterOf.push_back(Parameter);
}

// The types of the leaves of a value of type T, in order (as
// describeArgument finds them).
static void appendLeafTypes(const Type &T, std::vector<Type> &Out) {
  if (T.isTuple()) {
    for (const Type &E : T.Elements)
      appendLeafTypes(E, Out);
    return;
  }
  Out.push_back(T.untagged());
}

// Appends the leaves of O to Leaves as node Next of Plan's structure
// describes them; false when O is not of that shape (other classes, other
// tuple lengths): the launch needs another plan.
static bool flattenArgument(const LaunchPlan &Plan, PyObject *O, size_t &Next,
                            std::vector<PyObject *> &Leaves) {
  const ArgumentNode &Node = Plan.Structure[Next++];
  if (Node.Kind == ArgumentNode::Leaf) { // packArguments checks its class
    Leaves.push_back(O);
    return true;
  }
  if (Py_TYPE(O) != Node.Class)
    return false;
  if (Node.Kind == ArgumentNode::Enum) {
    PyObject *Value = enumValueOf(O);
    if (!Value) {
      PyErr_Clear();
      return false;
    }
    return flattenArgument(Plan, Value, Next, Leaves);
  }
  if (PyTuple_GET_SIZE(O) != static_cast<Py_ssize_t>(Node.Length))
    return false;
  for (uint32_t I = 0; I < Node.Length; ++I)
    if (!flattenArgument(Plan, PyTuple_GET_ITEM(O, I), Next, Leaves))
      return false;
  return true;
}

// The leaves of a launch's arguments as Plan reads them; false when the
// arguments are not of the plan's shape.
static bool flattenArguments(const LaunchPlan &Plan, PyObject *const *Args, size_t N,
                             std::vector<PyObject *> &Leaves) {
  if (N != Plan.ArgumentCount)
    return false;
  Leaves.clear();
  size_t Next = 0;
  for (size_t I = 0; I < N; ++I)
    if (!flattenArgument(Plan, Args[I], Next, Leaves))
      return false;
  return true;
}

// A new plan for these arguments (typed, and compiled when new), put first;
// Leaves: the arguments as it reads them (LeafStorage holds them when
// tuples or Enum members are among them).
static std::shared_ptr<LaunchPlan> makePlan(DispatcherState &D, PyObject *const *Args, size_t N,
                                            std::vector<PyObject *> &LeafStorage,
                                            PyObject *const *&Leaves) {
  std::vector<Type> Types;
  if (!typeArguments(D, Args, N, Types))
    throw PythonErrorSet();
  auto Plan = std::make_shared<LaunchPlan>();
  Plan->Spec = &D.forArguments(Types);
  Plan->ArgumentCount = N;
  bool Structured = std::any_of(Types.begin(), Types.end(),
                                [](const Type &T) { return T.isTuple() || T.isEnum(); });
  if (Structured) {
    LeafStorage.clear();
    std::vector<Type> LeafTypes;
    for (size_t I = 0; I < N; ++I)
      describeArgument(Args[I], Types[I], *Plan, static_cast<uint32_t>(I), LeafStorage, LeafTypes);
    for (const Type &T : Plan->Spec->ArgTypes)
      appendLeafTypes(T, Plan->ParameterTypes);
    if (Plan->ParameterTypes.size() != LeafStorage.size())
      throw std::runtime_error("internal error: kernel '" + D.Name +
                               "': its parameters do not match the tuples of its arguments");
    Plan->ArgumentTypes = std::move(LeafTypes);
    Leaves = LeafStorage.data();
  } else {
    Plan->ArgumentTypes = Types;
    Plan->ParameterTypes = Plan->Spec->ArgTypes;
    for (size_t I = 0; I < N; ++I)
      Plan->ParameterOf.push_back(static_cast<uint32_t>(I));
    Leaves = Args;
  }
  const std::vector<Type> &LeafTypes = Plan->ArgumentTypes;
  for (size_t I = 0; I < LeafTypes.size(); ++I) {
    PyObject *const *Args = Leaves; // the leaves, from here on
    const std::vector<Type> &Types = LeafTypes;
    Plan->PyTypes.push_back(PyRef::borrow(reinterpret_cast<PyObject *>(Py_TYPE(Args[I]))));
    Plan->Kinds.push_back(argumentKind(Args[I], D.Target));
    rejectOtherTargetsArray(D, Plan->ParameterOf[I], Plan->Kinds[I]);
    // The dtype of records (an array's elements, or a record scalar).
    PyArray_Descr *Records = nullptr;
    if (Plan->Kinds[I] == ArgKind::RecordScalar) {
      Records = reinterpret_cast<PyVoidScalarObject *>(Args[I])->descr;
    } else if (Types[I].hasRecordElements()) {
      ArrayView V;
      arrayViewOf(Args[I], Plan->Kinds[I], V);
      Records = V.Array ? PyArray_DESCR(V.Array) : nullptr;
    }
    Plan->RecordDescrs.push_back(PyRef::borrow(reinterpret_cast<PyObject *>(Records)));
    Plan->ValueBytes.push_back(
        Plan->Kinds[I] == ArgKind::NumPyScalar ? static_cast<uint8_t>(byteSize(Types[I].Dtype)) : 0);
    Plan->Copies.push_back(Plan->Kinds[I] == ArgKind::DirectedArray ? directionOf(Args[I])
                                                                    : CopyIn | CopyOut);
    Plan->Converts.push_back(Plan->ParameterTypes[I] != Types[I]);
    Plan->AnyConverts |= Plan->Converts.back() != 0;
    Plan->AnyHostArray |= Plan->Kinds[I] == ArgKind::HostArray;
    Plan->AnyCopyInOnly |= Plan->Kinds[I] == ArgKind::DirectedArray && Plan->Copies[I] == CopyIn;
  }
  // A few plans per kernel is the common case; a program cycling through
  // many argument classes keeps the most recent ones.
  constexpr size_t MaxPlans = 32;
  if (D.Plans.size() == MaxPlans)
    D.Plans.pop_back();
  D.Plans.insert(D.Plans.begin(), Plan);
  return Plan;
}

// The view of an array argument of kind K; false (no error set) when O does
// not have the memory its kind says, true with a Python error set when its
// __cuda_array_interface__ is invalid.
bool arrayViewOf(PyObject *O, ArgKind K, ArrayView &V) {
  PyObject *Array = K == ArgKind::HostArray         ? O
                    : K == ArgKind::DirectedArray   ? directedArrayOf(O)
                    : K == ArgKind::HostDeviceArray ? hostArrayOf(O)
                    : K == ArgKind::DeviceArray     ? deviceLayoutOf(O)
                                                    : nullptr;
  if (Array) {
    V.fromArray(reinterpret_cast<PyArrayObject *>(Array));
    return true;
  }
  if (K != ArgKind::InterfaceArray)
    return false; // (a DLPack tensor is read by packArguments, once per launch)
  interfaceView(O, V);
  return true;
}

// True when the records of dtype Descr are those of the plan (Expected).
static bool sameRecords(PyArray_Descr *Descr, PyObject *Expected) {
  return Expected && (reinterpret_cast<PyObject *>(Descr) == Expected ||
                      PyArray_EquivTypes(Descr, reinterpret_cast<PyArray_Descr *>(Expected)));
}

// True when the array V matches the array type T of the specialisation
// (Records: the plan's dtype for an array of records).
static bool viewMatches(const ArrayView &V, const Type &T, PyObject *Records) {
  if (V.NDim != T.NDim || V.ReadOnly != T.ReadOnly)
    return false;
  if (!V.Array)
    return !T.hasRecordElements() && V.Dtype == T.Dtype &&
           layoutOf(V.NDim, V.Shape, V.Strides, V.ItemSize) == T.ArrayLayout;
  PyArray_Descr *Descr = PyArray_DESCR(V.Array);
  Layout L = PyArray_IS_C_CONTIGUOUS(V.Array)   ? Layout::C
             : PyArray_IS_F_CONTIGUOUS(V.Array) ? Layout::F
                                                : Layout::A;
  if (L != T.ArrayLayout)
    return false;
  if (T.hasRecordElements())
    return Descr->names && sameRecords(Descr, Records);
  if (isDatetime(T.Dtype)) { // and of the same unit
    Type Datetime;
    return PyArray_ISNOTSWAPPED(V.Array) && datetimeOfDescr(Descr, Datetime) &&
           Datetime.Dtype == T.Dtype && Datetime.Unit == T.Unit;
  }
  Scalar Dtype;
  return !Descr->names && PyArray_ISNOTSWAPPED(V.Array) && scalarOfDescr(Descr, Dtype) &&
         Dtype == T.Dtype;
}

// On a __cuda_array_interface__ pointer on the cpu target: a kernel reads it
// as host memory, so it must be memory this process can read (another
// library's GPU pointer would crash the process). The first and last bytes
// are read through process_vm_readv, which fails instead of faulting; the
// last range checked is remembered.
static bool readableHostMemory(const char *Start, size_t Bytes) {
  static thread_local const char *LastStart = nullptr;
  static thread_local size_t LastBytes = 0;
  if (Bytes == 0 || (Start == LastStart && Bytes == LastBytes))
    return true;
  char Probe[2];
  iovec Local[2] = {{&Probe[0], 1}, {&Probe[1], 1}};
  iovec Remote[2] = {{const_cast<char *>(Start), 1}, {const_cast<char *>(Start + Bytes - 1), 1}};
  if (process_vm_readv(getpid(), Local, 2, Remote, 2, 0) != 2)
    return false;
  LastStart = Start;
  LastBytes = Bytes;
  return true;
}

// The bytes [Start, Start + Bytes) an array's elements span in memory
// (strides may be negative); Bytes is 0 for an empty array.
void arraySpan(const ArrayView &V, char *&Start, size_t &Bytes) {
  npy_intp Low = 0, High = 0;
  for (int D = 0; D < V.NDim; ++D) {
    if (V.Shape[D] == 0) {
      Start = V.Data;
      Bytes = 0;
      return;
    }
    npy_intp Reach = (V.Shape[D] - 1) * V.Strides[D];
    (Reach < 0 ? Low : High) += Reach;
  }
  Start = V.Data + Low;
  Bytes = static_cast<size_t>(High - Low + V.ItemSize);
}

// Where a NumPy scalar object keeps its value: after the object header, for
// every numeric type (NumPy's Py<Type>ScalarObject structs).
constexpr size_t NumPyScalarValueOffset = offsetof(PyDoubleScalarObject, obval);
static_assert(offsetof(PyBoolScalarObject, obval) == NumPyScalarValueOffset &&
                  offsetof(PyByteScalarObject, obval) == NumPyScalarValueOffset &&
                  offsetof(PyHalfScalarObject, obval) == NumPyScalarValueOffset &&
                  offsetof(PyFloatScalarObject, obval) == NumPyScalarValueOffset &&
                  offsetof(PyLongLongScalarObject, obval) == NumPyScalarValueOffset &&
                  offsetof(PyCDoubleScalarObject, obval) == NumPyScalarValueOffset,
              "NumPy scalars keep their values at different offsets");

enum class PackResult { Packed, Mismatch, Failed };

// NumPy's type number of a scalar type.
static int numpyTypeNumber(Scalar S) {
  switch (S) {
  case Scalar::Bool: return NPY_BOOL;
  case Scalar::Int8: return NPY_INT8;
  case Scalar::Int16: return NPY_INT16;
  case Scalar::Int32: return NPY_INT32;
  case Scalar::Int64: return NPY_INT64;
  case Scalar::UInt8: return NPY_UINT8;
  case Scalar::UInt16: return NPY_UINT16;
  case Scalar::UInt32: return NPY_UINT32;
  case Scalar::UInt64: return NPY_UINT64;
  case Scalar::Float16: return NPY_FLOAT16;
  case Scalar::Float32: return NPY_FLOAT32;
  case Scalar::Float64: return NPY_FLOAT64;
  case Scalar::Complex64: return NPY_COMPLEX64;
  case Scalar::Complex128: return NPY_COMPLEX128;
  case Scalar::Datetime64: return NPY_DATETIME;
  case Scalar::Timedelta64: return NPY_TIMEDELTA;
  }
  return NPY_NOTYPE;
}

// Writes the value of the scalar O (of type From) as a value of type To, as
// Numba converts an argument to a declared signature: through a C cast
// (integers wrap, floats truncate toward zero, a complex keeps its real
// part). False with a Python error set when O has no value of type From.
static bool convertScalar(PyObject *O, Scalar From, Scalar To, ParamSlot &Slot) {
  // A Python int past int64's range but in uint64's: Numba's typeof says uint64.
  if (From == Scalar::Int64 && PyLong_Check(O) && !PyBool_Check(O)) {
    int Overflow = 0;
    PyLong_AsLongLongAndOverflow(O, &Overflow);
    if (Overflow > 0)
      From = Scalar::UInt64;
  }
  PyRef Source = PyRef::steal(PyArray_FromAny(O, PyArray_DescrFromType(numpyTypeNumber(From)), 0,
                                              0, NPY_ARRAY_FORCECAST, nullptr));
  if (!Source)
    return false;
  PyRef Converted = PyRef::steal(PyArray_CastToType(
      reinterpret_cast<PyArrayObject *>(Source.get()), PyArray_DescrFromType(numpyTypeNumber(To)),
      0));
  if (!Converted)
    return false;
  std::memcpy(&Slot, PyArray_DATA(reinterpret_cast<PyArrayObject *>(Converted.get())),
              byteSize(To));
  return true;
}

// The Python error set now, with "argument 'x' of kernel 'k': " before its
// message (its type kept); returns Failed.
static PackResult failArgument(const DispatcherState &D, size_t I) {
  nameArgumentInError(D, I);
  return PackResult::Failed;
}

// Writes the arguments' flattened values as Plan reads them; Mismatch (no
// error set) when an argument is not of the plan's class after all, Failed
// with a Python error set. Waits for the streams of __cuda_array_interface__
// producers other than Stream, as the specification asks of a consumer.
// MayConvert: the plan has a scalar that converts to a declared type; a
// plan without one (the common case) packs with no per-scalar test.
template <bool MayConvert>
static PackResult packArgumentsOf(const DispatcherState &D, const LaunchPlan &Plan,
                                  PyObject *const *Args, PackedArguments &Out,
                                  runtime::cu::Stream Stream) {
  const std::vector<Type> &Types = Plan.ParameterTypes;
  unsigned K = 0;
  auto Put = [&](uint64_t Word) {
    Out.Slots[K].Words[0] = Word;
    Out.Params[K] = &Out.Slots[K];
    ++K;
  };
  for (size_t I = 0; I < Types.size(); ++I) {
    PyObject *O = Args[I];
    if (reinterpret_cast<PyObject *>(Py_TYPE(O)) != Plan.PyTypes[I].get())
      return PackResult::Mismatch;
    ArgKind Kind = Plan.Kinds[I];
    if (isArrayKind(Kind)) {
      ArrayView V;
      if (Kind == ArgKind::DLPackArray) {
        if (!dlpackView(O, V, &D.Target, reinterpret_cast<uint64_t>(Stream), &Out.Tensors))
          return failArgument(D, Plan.ParameterOf[I]);
      } else if (!arrayViewOf(O, Kind, V)) {
        return PackResult::Mismatch;
      }
      if (PyErr_Occurred()) // an invalid __cuda_array_interface__
        return failArgument(D, Plan.ParameterOf[I]);
      if (!viewMatches(V, Plan.ArgumentTypes[I], Plan.RecordDescrs[I].get()))
        return PackResult::Mismatch;
      if (Kind == ArgKind::InterfaceArray) {
        char *Start;
        size_t Bytes;
        arraySpan(V, Start, Bytes);
        if (D.Target == TargetKind::Cpu && !readableHostMemory(Start, Bytes)) {
          PyErr_Format(PyExc_ValueError,
                       "argument '%s' of kernel '%s': its __cuda_array_interface__ pointer %p "
                       "is not host memory this process can read; on the cpu target device "
                       "arrays are in host memory",
                       D.ParamNames[Plan.ParameterOf[I]].c_str(), D.Name.c_str(), static_cast<void *>(V.Data));
          return PackResult::Failed;
        }
        // The launch's stream 0 is the legacy default stream, which the
        // interface calls 1: work there is ordered already.
        uint64_t LaunchStream = Stream ? reinterpret_cast<uint64_t>(Stream) : 1;
        if (D.Target == TargetKind::Cuda && V.ProducerStream && V.ProducerStream != LaunchStream) {
          runtime::CudaContext &Context =
              runtime::CudaContext::forDevice(runtime::currentDeviceOrdinal());
          runtime::cu::Result Result;
          Py_BEGIN_ALLOW_THREADS Result = Context.driver().api().StreamSynchronize(
              reinterpret_cast<runtime::cu::Stream>(V.ProducerStream));
          Py_END_ALLOW_THREADS Context.driver().check(Result, "cuStreamSynchronize");
        }
      }
      Put(reinterpret_cast<uint64_t>(V.Data));
      for (int Dim = 0; Dim < V.NDim; ++Dim)
        Put(static_cast<uint64_t>(V.Shape[Dim]));
      for (int Dim = 0; Dim < V.NDim; ++Dim)
        Put(static_cast<uint64_t>(V.Strides[Dim]));
      continue;
    }
    ParamSlot &Slot = Out.Slots[K];
    Slot = ParamSlot{};
    if ((MayConvert && Plan.Converts[I] && Types[I].isPointer()) || Kind == ArgKind::Address) {
      // An address: an int, a cffi pointer, a ctypes c_void_p.
      if (!addressOf(O, Slot.Words[0]))
        return failArgument(D, Plan.ParameterOf[I]);
      Out.Params[K] = &Slot;
      ++K;
      continue;
    }
    if (MayConvert && Plan.Converts[I]) { // to a declared signature's scalar type
      if (!convertScalar(O, Plan.ArgumentTypes[I].Dtype, Types[I].Dtype, Slot))
        return failArgument(D, Plan.ParameterOf[I]);
      Out.Params[K] = &Slot;
      ++K;
      continue;
    }
    switch (Kind) {
    case ArgKind::Bool:
      Slot.Words[0] = O == Py_True;
      break;
    case ArgKind::Int: {
      long long V = PyLong_AsLongLong(O);
      if (V == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError, "argument '%s' of kernel '%s' does not fit in int64",
                     D.ParamNames[Plan.ParameterOf[I]].c_str(), D.Name.c_str());
        return PackResult::Failed;
      }
      std::memcpy(&Slot, &V, sizeof V);
      break;
    }
    case ArgKind::Float: {
      double V = PyFloat_AS_DOUBLE(O);
      std::memcpy(&Slot, &V, sizeof V);
      break;
    }
    case ArgKind::Complex: {
      Py_complex V = PyComplex_AsCComplex(O);
      std::memcpy(&Slot, &V, sizeof V);
      break;
    }
    case ArgKind::RecordScalar: { // by reference to the record's bytes
      auto *Record = reinterpret_cast<PyVoidScalarObject *>(O);
      if (!sameRecords(Record->descr, Plan.RecordDescrs[I].get()) ||
          ((Record->flags & NPY_ARRAY_WRITEABLE) == 0) != Plan.ArgumentTypes[I].ReadOnly)
        return PackResult::Mismatch;
      Slot.Words[0] = reinterpret_cast<uint64_t>(Record->obval);
      break;
    }
    default: { // a NumPy scalar, of exactly the plan's type: its value, in place
      const char *Value = reinterpret_cast<const char *>(O) + NumPyScalarValueOffset;
      switch (Plan.ValueBytes[I]) { // sizes the compiler knows: plain loads
      case 1:
        std::memcpy(&Slot, Value, 1);
        break;
      case 2:
        std::memcpy(&Slot, Value, 2);
        break;
      case 4:
        std::memcpy(&Slot, Value, 4);
        break;
      case 8:
        std::memcpy(&Slot, Value, 8);
        break;
      default:
        std::memcpy(&Slot, Value, 16);
        break;
      }
      break;
    }
    }
    Out.Params[K] = &Slot;
    ++K;
  }
  return PackResult::Packed;
}

static PackResult packArguments(const DispatcherState &D, const LaunchPlan &Plan,
                                PyObject *const *Args, PackedArguments &Out,
                                runtime::cu::Stream Stream) {
  return Plan.AnyConverts ? packArgumentsOf<true>(D, Plan, Args, Out, Stream)
                          : packArgumentsOf<false>(D, Plan, Args, Out, Stream);
}

// The plan for these arguments, and their values packed into Out: the most
// recently used plan that fits them, or a new one (typing the arguments and
// compiling them when needed).
std::shared_ptr<LaunchPlan> planAndPack(DispatcherState &D, PyObject *const *Args, size_t N,
                                        PackedArguments *&Out,
                                        std::optional<PackedArguments> &Storage,
                                        runtime::cu::Stream Stream,
                                        std::vector<PyObject *> &LeafStorage,
                                        PyObject *const *&Leaves) {
  for (size_t P = 0; P < D.Plans.size(); ++P) {
    std::shared_ptr<LaunchPlan> Plan = D.Plans[P];
    PyObject *const *PlanArgs = Args;
    if (!Plan->Structure.empty()) { // tuples or Enum members: their leaves
      if (!flattenArguments(*Plan, Args, N, LeafStorage))
        continue;
      PlanArgs = LeafStorage.data();
    } else if (Plan->Kinds.size() != N) {
      continue;
    }
    if (!Storage || Storage->capacity() < Plan->Spec->ParamCount)
      Storage.emplace(Plan->Spec->ParamCount);
    switch (packArguments(D, *Plan, PlanArgs, *Storage, Stream)) {
    case PackResult::Packed:
      if (P != 0 && P < D.Plans.size() && D.Plans[P] == Plan) // most recently used first
        std::swap(D.Plans[0], D.Plans[P]);
      Out = &*Storage;
      Leaves = PlanArgs;
      return Plan;
    case PackResult::Failed:
      throw PythonErrorSet();
    case PackResult::Mismatch:
      break;
    }
  }
  std::shared_ptr<LaunchPlan> Plan = makePlan(D, Args, N, LeafStorage, Leaves);
  Storage.emplace(Plan->Spec->ParamCount);
  PackResult Result = packArguments(D, *Plan, Leaves, *Storage, Stream);
  if (Result == PackResult::Failed)
    throw PythonErrorSet();
  if (Result == PackResult::Mismatch)
    throw std::runtime_error("internal error: kernel '" + D.Name +
                             "': the arguments do not fit the launch plan made for them");
  Out = &*Storage;
  return Plan;
}

} // namespace tidal::binding
