// tidal._tidal: the extension module that binds the frontend, the plugin's
// pipelines and the runtime to Python. C++ errors become Python exceptions
// here and nowhere else.
#include "CompileError.h"
#include "Compiler.h"
#include "Frontend.h"
#include "ModuleFunctions.h"
#include "PyRef.h"
#include "Types.h"

#include "tidal/Passes.h"
#include "tidal/runtime/CpuTarget.h"
#include "tidal/runtime/CudaDriver.h"
#include "tidal/runtime/CudaTarget.h"
#include "tidal/runtime/CudaMemory.h"

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tidal_ARRAY_API
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

using namespace tidal;
using namespace tidal::frontend;

namespace {

// --- errors ------------------------------------------------------------------

// Raises the Python twin of a C++ error; returns null for the caller to return.
PyObject *raiseFromCurrentException() {
  try {
    throw;
  } catch (const PythonErrorSet &) {
    // already set
  } catch (const CompileError &E) {
    PyRef Errors = PyRef::steal(PyImport_ImportModule("tidal.errors"));
    PyRef Class = Errors ? Errors.attrOrNull(E.Kind.c_str()) : PyRef();
    if (!Class) {
      PyErr_Clear();
      PyErr_SetString(PyExc_RuntimeError, E.what());
      return nullptr;
    }
    PyRef Instance = PyRef::steal(PyObject_CallFunction(
        Class.get(), "ssiiis", E.what(), E.Where.File.c_str(), E.Where.Line, E.Where.Column,
        E.Where.EndColumn, E.Message.c_str()));
    if (Instance)
      PyErr_SetObject(Class.get(), Instance.get());
  } catch (const std::invalid_argument &E) {
    PyErr_SetString(PyExc_TypeError, E.what());
  } catch (const runtime::KernelError &E) {
    // What a failed check in a kernel raises, as Numba's simulator does.
    PyObject *Type = E.kind() == runtime::KernelError::Kind::Bounds   ? PyExc_IndexError
                     : E.kind() == runtime::KernelError::Kind::Assert ? PyExc_AssertionError
                                                                      : PyExc_RuntimeError;
    PyErr_SetString(Type, E.what());
  } catch (const runtime::CudaDriverError &E) {
    // tidal.cuda.CudaDriverError(message, call, error_name, code)
    PyRef Driver = PyRef::steal(PyImport_ImportModule("tidal.cuda.driver"));
    PyRef Class = Driver ? Driver.attrOrNull("CudaDriverError") : PyRef();
    if (!Class) {
      PyErr_Clear();
      PyErr_SetString(PyExc_RuntimeError, E.what());
      return nullptr;
    }
    PyRef Instance = PyRef::steal(PyObject_CallFunction(
        Class.get(), "sssi", E.what(), E.call().c_str(), E.errorName().c_str(), E.result()));
    if (Instance)
      PyErr_SetObject(Class.get(), Instance.get());
  } catch (const runtime::LaunchConfigError &E) {
    PyErr_SetString(PyExc_ValueError, E.what());
  } catch (const runtime::RuntimeError &E) {
    PyErr_SetString(PyExc_RuntimeError, E.what());
  } catch (const std::bad_alloc &) {
    PyErr_NoMemory();
  } catch (const std::exception &E) {
    PyErr_SetString(PyExc_RuntimeError, E.what());
  }
  return nullptr;
}

// Runs Work with the GIL released; what it throws is rethrown once the GIL
// is held again (an exception must not cross Py_END_ALLOW_THREADS). Work
// must not touch Python objects.
template <typename F> void withoutGIL(F &&Work) {
  std::exception_ptr Failure;
  Py_BEGIN_ALLOW_THREADS
  try {
    Work();
  } catch (...) {
    Failure = std::current_exception();
  }
  Py_END_ALLOW_THREADS
  if (Failure)
    std::rethrow_exception(Failure);
}

#define TIDAL_TRY try {
#define TIDAL_CATCH                                                                  \
  }                                                                                  \
  catch (...) {                                                                      \
    return raiseFromCurrentException();                                              \
  }

// --- typing of launch arguments --------------------------------------------------

bool scalarOfDescr(PyArray_Descr *D, Scalar &Out) {
  switch (D->kind) {
  case 'b':
    Out = Scalar::Bool;
    return true;
  case 'i':
  case 'u': {
    static const Scalar Signed[] = {Scalar::Int8, Scalar::Int16, Scalar::Int32, Scalar::Int64};
    static const Scalar Unsigned[] = {Scalar::UInt8, Scalar::UInt16, Scalar::UInt32,
                                      Scalar::UInt64};
    int Log = D->elsize == 1 ? 0 : D->elsize == 2 ? 1 : D->elsize == 4 ? 2 : D->elsize == 8 ? 3 : -1;
    if (Log < 0)
      return false;
    Out = D->kind == 'i' ? Signed[Log] : Unsigned[Log];
    return true;
  }
  case 'c':
    if (D->elsize != 8 && D->elsize != 16)
      return false;
    Out = D->elsize == 8 ? Scalar::Complex64 : Scalar::Complex128;
    return true;
  case 'f':
    if (D->elsize == 2)
      Out = Scalar::Float16;
    else if (D->elsize == 4)
      Out = Scalar::Float32;
    else if (D->elsize == 8)
      Out = Scalar::Float64;
    else
      return false;
    return true;
  default:
    return false;
  }
}

// The NumPy array over a device array's memory (tidal.cuda.DeviceNDArray's
// _tidal_host: on the cpu target device memory is host memory), borrowed:
// the device array owns it and never rebinds it. Null, with no error set,
// for any other object.
PyObject *hostArrayOf(PyObject *O) {
  static PyObject *Name = PyUnicode_InternFromString("_tidal_host");
  PyObject *Host = PyObject_GetAttr(O, Name);
  if (!Host) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(Host);
  return PyArray_Check(Host) ? Host : nullptr;
}

// The NumPy array over a cuda-target device array's device memory
// (tidal.cuda.DeviceNDArray's _tidal_device: its data pointer is the device
// pointer of element 0; never read through), borrowed as hostArrayOf's. Null,
// with no error set, for any other object.
PyObject *deviceLayoutOf(PyObject *O) {
  static PyObject *Name = PyUnicode_InternFromString("_tidal_device");
  PyObject *Layout = PyObject_GetAttr(O, Name);
  if (!Layout) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(Layout);
  return PyArray_Check(Layout) ? Layout : nullptr;
}

constexpr const char *AllocationCapsule = "tidal.CudaAllocation";
constexpr const char *StreamCapsule = "tidal.CudaStream";
constexpr const char *EventCapsule = "tidal.CudaEvent";

// The allocation a cuda-target device array holds (_tidal_memory), or null.
runtime::CudaAllocation *deviceAllocationOf(PyObject *O) {
  static PyObject *Name = PyUnicode_InternFromString("_tidal_memory");
  PyRef Capsule = PyRef::steal(PyObject_GetAttr(O, Name));
  if (!Capsule || !PyCapsule_IsValid(Capsule.get(), AllocationCapsule)) {
    PyErr_Clear();
    return nullptr;
  }
  return static_cast<runtime::CudaAllocation *>(
      PyCapsule_GetPointer(Capsule.get(), AllocationCapsule));
}

// Launch arguments with other libraries' device arrays (objects that only
// carry __cuda_array_interface__) wrapped by tidal.cuda.as_cuda_array, in a
// new tuple; Args itself, with nothing allocated, when there are none.
PyRef wrapForeignDeviceArrays(PyObject *Args) {
  PyRef Wrapped = PyRef::borrow(Args);
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(Args); ++I) {
    PyObject *O = PyTuple_GET_ITEM(Args, I);
    if (PyArray_Check(O) || PyLong_Check(O) || PyFloat_Check(O) || PyComplex_Check(O) ||
        PyArray_IsScalar(O, Generic) || hostArrayOf(O) || deviceLayoutOf(O) ||
        !PyObject_HasAttrString(O, "__cuda_array_interface__"))
      continue; // typeofArgument takes it, or says why not
    if (Wrapped.get() == Args) { // a copy (PyTuple_GetSlice would share Args)
      Wrapped = PyRef::check(PyTuple_New(PyTuple_GET_SIZE(Args)));
      for (Py_ssize_t J = 0; J < PyTuple_GET_SIZE(Args); ++J)
        PyTuple_SET_ITEM(Wrapped.get(), J, PyRef::borrow(PyTuple_GET_ITEM(Args, J)).release());
    }
    PyRef Device = importModule("tidal.cuda.memory").attr("as_cuda_array");
    Device = PyRef::check(PyObject_CallOneArg(Device.get(), O));
    PyTuple_SetItem(Wrapped.get(), I, Device.release()); // steals; drops O's slot
  }
  return Wrapped;
}

// The fields of a structured dtype; null (and Why) when one is not a
// supported scalar (nested records and sub-arrays are not).
std::shared_ptr<const RecordLayout> recordLayoutOf(PyArray_Descr *D, std::string &Why) {
  auto Layout = std::make_shared<RecordLayout>();
  Layout->Size = static_cast<unsigned>(D->elsize);
  Layout->Align = static_cast<unsigned>(D->alignment);
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(D->names); ++I) {
    PyObject *Name = PyTuple_GET_ITEM(D->names, I);
    PyObject *Info = PyDict_GetItem(D->fields, Name); // (dtype, offset[, title])
    if (!Info || !PyTuple_Check(Info) || PyTuple_GET_SIZE(Info) < 2)
      return nullptr;
    auto *FieldType = reinterpret_cast<PyArray_Descr *>(PyTuple_GET_ITEM(Info, 0));
    Scalar S;
    if (FieldType->names || FieldType->subarray || !scalarOfDescr(FieldType, S)) {
      Why = "a record whose field '" + PyRef::borrow(Name).str() +
            "' is not a number (nested records and sub-arrays are not supported)";
      return nullptr;
    }
    Layout->Fields.push_back({PyRef::borrow(Name).str(), S,
                              static_cast<unsigned>(PyLong_AsLong(PyTuple_GET_ITEM(Info, 1)))});
  }
  return Layout;
}

// The type Numba gives a launch argument; false (and Why) when kernels
// can't take it.
bool typeofArgument(PyObject *O, Type &Out, std::string &Why) {
  if (PyBool_Check(O)) {
    Out = Type::scalar(Scalar::Bool);
    return true;
  }
  if (PyLong_Check(O)) {
    Out = Type::scalar(Scalar::Int64);
    return true;
  }
  if (PyFloat_Check(O)) {
    Out = Type::scalar(Scalar::Float64);
    return true;
  }
  if (PyComplex_Check(O)) {
    Out = Type::scalar(Scalar::Complex128);
    return true;
  }
  if (PyArray_Check(O)) {
    PyArrayObject *A = reinterpret_cast<PyArrayObject *>(O);
    Layout L = PyArray_IS_C_CONTIGUOUS(A) ? Layout::C
               : PyArray_IS_F_CONTIGUOUS(A) ? Layout::F
                                            : Layout::A;
    if (PyArray_DESCR(A)->names) { // a structured dtype: an array of records
      auto Record = recordLayoutOf(PyArray_DESCR(A), Why);
      if (!Record)
        return false;
      Out = Type::recordArray(std::move(Record), static_cast<unsigned>(PyArray_NDIM(A)), L,
                              !PyArray_ISWRITEABLE(A));
      return true;
    }
    Scalar S;
    if (!scalarOfDescr(PyArray_DESCR(A), S)) {
      Why = "a NumPy array of dtype " + PyRef::borrow(reinterpret_cast<PyObject *>(PyArray_DESCR(A))).str() +
            ", which kernels can't take yet";
      return false;
    }
    if (!PyArray_ISNOTSWAPPED(A)) {
      Why = "a NumPy array in non-native byte order";
      return false;
    }
    Out = Type::array(S, static_cast<unsigned>(PyArray_NDIM(A)), L, !PyArray_ISWRITEABLE(A));
    return true;
  }
  if (PyArray_IsScalar(O, Void)) { // a record scalar: read-only, by reference
    PyArray_Descr *D = reinterpret_cast<PyVoidScalarObject *>(O)->descr;
    if (!D || !D->names) {
      Why = "a NumPy void scalar without fields";
      return false;
    }
    auto Record = recordLayoutOf(D, Why);
    if (!Record)
      return false;
    Out = Type::record(std::move(Record), /*ReadOnly=*/true);
    return true;
  }
  if (PyArray_IsScalar(O, Generic)) {
    PyRef Descr = PyRef::steal(reinterpret_cast<PyObject *>(PyArray_DescrFromScalar(O)));
    Scalar S;
    if (!Descr || !scalarOfDescr(reinterpret_cast<PyArray_Descr *>(Descr.get()), S)) {
      PyErr_Clear();
      Why = "a NumPy scalar of type '" + typeName(O) + "', which kernels can't take yet";
      return false;
    }
    Out = Type::scalar(S);
    return true;
  }
  // A device array: typed as the NumPy array over its memory.
  if (PyObject *Host = hostArrayOf(O))
    return typeofArgument(Host, Out, Why);
  if (PyObject *Layout = deviceLayoutOf(O)) // cuda target: device memory
    return typeofArgument(Layout, Out, Why);
  Why = "'" + typeName(O) + "'";
  return false;
}

// --- one compiled specialisation -------------------------------------------------

struct Specialization {
  std::vector<Type> ArgTypes;
  std::string KernelName;
  std::string MarkerIR; // the frontend's output, kept for inspection
  std::string TypesText; // inspect_types(): source and variable types
  std::unique_ptr<runtime::CpuModule> Cpu;
  TidalBlockFunction Block = nullptr;
  unsigned ParamCount = 0; // flattened
  // cuda target: the kernel loaded on each device it has run on, from PTX
  // for that device's sm.
  struct CudaLoaded {
    runtime::CudaContext *Context;
    std::unique_ptr<runtime::CudaModule> Module;
    std::unique_ptr<runtime::CudaFunction> Function;
  };
  std::vector<CudaLoaded> Cuda;
};

std::string signatureText(const std::vector<Type> &Types) {
  std::string S = "(";
  for (size_t I = 0; I < Types.size(); ++I)
    S += (I ? ", " : "") + Types[I].str();
  return S + ")";
}

// Re-reads marker IR into a fresh context (for the NVPTX views of a kernel
// that was compiled for the cpu).
std::unique_ptr<llvm::Module> parseIR(const std::string &Text, llvm::LLVMContext &Ctx) {
  llvm::SMDiagnostic Diag;
  std::unique_ptr<llvm::Module> M = llvm::parseAssemblyString(Text, Diag, Ctx);
  if (!M)
    throw std::runtime_error("internal error: cannot re-read marker IR: " +
                             Diag.getMessage().str());
  return M;
}

// What inspect_types() prints, in Numba's shape: the signature, the
// source with its line numbers, then each local variable and its type.
std::string typesText(const std::string &Name, const KernelModule &KM) {
  std::string Out = Name + " " + signatureText(KM.ParamTypes) + "\n" + std::string(80, '-') + "\n";
  Out += "# File: " + KM.SourceFile + "\n";
  for (size_t I = 0; I < KM.SourceLines.size(); ++I) {
    std::string Line = KM.SourceLines[I];
    while (!Line.empty() && (Line.back() == '\n' || Line.back() == '\r'))
      Line.pop_back();
    Out += "# --- LINE " + std::to_string(KM.FirstLine + static_cast<int>(I)) + " ---\n" + Line + "\n";
  }
  Out += "\n# variables:\n";
  for (const auto &[Variable, Type] : KM.VariableTypes)
    Out += "#   " + Variable + " = " + Type + "\n";
  return Out + std::string(80, '=') + "\n";
}

// --- Dispatcher: the C++ half of tidal.cuda's dispatcher ------------------------

struct DispatcherState {
  PyRef Function;
  std::string Name;
  std::vector<std::string> ParamNames;
  std::string Target; // "cpu" or "cuda"
  FrontendOptions Options;
  std::vector<std::unique_ptr<Specialization>> Specializations;

  Specialization *find(const std::vector<Type> &Types) {
    for (auto &S : Specializations)
      if (S->ArgTypes == Types)
        return S.get();
    return nullptr;
  }

  Specialization &compile(const std::vector<Type> &Types) {
    if (Specialization *S = find(Types))
      return *S;
    KernelModule KM = emitKernel(Function.get(), Types, Options);
    auto Spec = std::make_unique<Specialization>();
    Spec->ArgTypes = Types;
    Spec->KernelName = KM.KernelName;
    Spec->MarkerIR = moduleText(*KM.Module);
    Spec->TypesText = typesText(Name, KM);
    for (const Type &T : Types)
      Spec->ParamCount += flattenedParameterSizes(T).size();
    if (Target == "cpu") {
      lowerForHost(*KM.Module);
      Spec->Cpu = runtime::CpuModule::compile(std::move(KM.Module), std::move(KM.Context));
      Spec->Block = Spec->Cpu->blockFunction(Spec->KernelName);
    }
    Specializations.push_back(std::move(Spec));
    return *Specializations.back();
  }
};

struct DispatcherObject {
  PyObject_HEAD DispatcherState *State;
};

int Dispatcher_init(PyObject *Self, PyObject *Args, PyObject *Kwargs) {
  static const char *Keywords[] = {"function",      "target",     "debug",
                                   "lineinfo",      "fastmath",   "max_registers",
                                   "max_threads",   "min_blocks", nullptr};
  PyObject *Function;
  const char *Target = "cpu";
  int Debug = 0, LineInfo = 0, FastMath = 0;
  unsigned MaxRegisters = 0, MaxThreads = 0, MinBlocks = 0;
  if (!PyArg_ParseTupleAndKeywords(Args, Kwargs, "O|spppIII", const_cast<char **>(Keywords),
                                   &Function, &Target, &Debug, &LineInfo, &FastMath,
                                   &MaxRegisters, &MaxThreads, &MinBlocks))
    return -1;
  if (!PyFunction_Check(Function)) {
    PyErr_Format(PyExc_TypeError, "a kernel must be a Python function, not '%s'",
                 Py_TYPE(Function)->tp_name);
    return -1;
  }
  try {
    auto State = std::make_unique<DispatcherState>();
    State->Function = PyRef::borrow(Function);
    State->Name = PyRef::borrow(Function).attr("__name__").str();
    State->ParamNames = parameterNames(Function);
    State->Target = Target;
    State->Options.Debug = Debug;
    State->Options.LineInfo = LineInfo;
    State->Options.FastMath = FastMath;
    State->Options.MaxRegisters = MaxRegisters;
    State->Options.MaxThreadsPerBlock = MaxThreads;
    State->Options.MinBlocksPerSM = MinBlocks;
    auto *D = reinterpret_cast<DispatcherObject *>(Self);
    delete D->State;
    D->State = State.release();
  } catch (...) {
    raiseFromCurrentException();
    return -1;
  }
  return 0;
}

void Dispatcher_dealloc(PyObject *Self) {
  auto *D = reinterpret_cast<DispatcherObject *>(Self);
  delete D->State;
  Py_TYPE(Self)->tp_free(Self);
}

DispatcherState &state(PyObject *Self) {
  DispatcherState *S = reinterpret_cast<DispatcherObject *>(Self)->State;
  if (!S)
    throw std::runtime_error("tidal Dispatcher used before __init__");
  return *S;
}

// Types of the launch arguments; raises TypeError naming the parameter.
bool typeArguments(DispatcherState &D, PyObject *Args, std::vector<Type> &Types) {
  Py_ssize_t N = PyTuple_GET_SIZE(Args);
  if (static_cast<size_t>(N) != D.ParamNames.size()) {
    PyErr_Format(PyExc_TypeError, "kernel '%s' takes %zu argument%s but %zd %s given",
                 D.Name.c_str(), D.ParamNames.size(), D.ParamNames.size() == 1 ? "" : "s", N,
                 N == 1 ? "was" : "were");
    return false;
  }
  Types.resize(static_cast<size_t>(N));
  for (Py_ssize_t I = 0; I < N; ++I) {
    std::string Why;
    if (!typeofArgument(PyTuple_GET_ITEM(Args, I), Types[I], Why)) {
      PyErr_Format(PyExc_TypeError,
                   "argument '%s' of kernel '%s' is %s: kernels take NumPy arrays and "
                   "numbers (int, float, bool, NumPy scalars)",
                   D.ParamNames[I].c_str(), D.Name.c_str(), Why.c_str());
      return false;
    }
  }
  return true;
}

// Writes the flattened parameter values of every argument, as
// cuLaunchKernel's kernelParams: Params[i] points at the i-th value.
// One parameter value: 16 bytes hold the widest scalar (complex128).
struct alignas(16) ParamSlot {
  uint64_t Words[2];
};

bool packArguments(const Specialization &S, PyObject *Args, ParamSlot *Storage, void **Params) {
  unsigned K = 0;
  for (size_t I = 0; I < S.ArgTypes.size(); ++I) {
    PyObject *O = PyTuple_GET_ITEM(Args, I);
    const Type &T = S.ArgTypes[I];
    if (T.isArray()) {
      PyObject *Array = PyArray_Check(O) ? O : hostArrayOf(O); // a device array's memory
      if (!Array)
        Array = deviceLayoutOf(O); // cuda target: the device pointer itself
      if (!Array) {
        PyErr_Format(PyExc_TypeError, "argument %zu of kernel is no longer an array", I);
        return false;
      }
      PyArrayObject *A = reinterpret_cast<PyArrayObject *>(Array);
      Storage[K].Words[0] = reinterpret_cast<uint64_t>(PyArray_DATA(A));
      Params[K] = &Storage[K];
      ++K;
      for (int D = 0; D < PyArray_NDIM(A); ++D, ++K) {
        Storage[K].Words[0] = static_cast<uint64_t>(PyArray_DIM(A, D));
        Params[K] = &Storage[K];
      }
      for (int D = 0; D < PyArray_NDIM(A); ++D, ++K) {
        Storage[K].Words[0] = static_cast<uint64_t>(PyArray_STRIDE(A, D));
        Params[K] = &Storage[K];
      }
      continue;
    }
    Storage[K] = ParamSlot{};
    void *Slot = &Storage[K];
    if (T.isRecord()) { // a pointer to the record scalar's bytes
      Storage[K].Words[0] = reinterpret_cast<uint64_t>(reinterpret_cast<PyVoidScalarObject *>(O)->obval);
      Params[K] = Slot;
      ++K;
      continue;
    }
    if (PyBool_Check(O)) {
      *static_cast<uint8_t *>(Slot) = O == Py_True;
    } else if (PyLong_Check(O)) {
      long long V = PyLong_AsLongLong(O);
      if (V == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError, "argument %zu of kernel does not fit in int64", I);
        return false;
      }
      *static_cast<int64_t *>(Slot) = V;
    } else if (PyFloat_Check(O)) {
      *static_cast<double *>(Slot) = PyFloat_AS_DOUBLE(O);
    } else if (PyComplex_Check(O)) {
      static_cast<double *>(Slot)[0] = PyComplex_RealAsDouble(O);
      static_cast<double *>(Slot)[1] = PyComplex_ImagAsDouble(O);
    } else {
      PyArray_ScalarAsCtype(O, Slot); // a NumPy scalar of exactly type T
    }
    Params[K] = Slot;
    ++K;
  }
  return true;
}

// --- the cuda target ------------------------------------------------------------

// The kernel of S loaded on device Ordinal: compiled to PTX for the device's
// sm (capped to what LLVM 19 knows) and loaded on first use.
runtime::CudaFunction &cudaFunctionOf(const DispatcherState &D, Specialization &S, int Ordinal) {
  for (auto &Loaded : S.Cuda)
    if (Loaded.Context->ordinal() == Ordinal)
      return *Loaded.Function;
  const runtime::CudaDriver &Driver = runtime::CudaDriver::get();
  if (!Driver.usable())
    throw runtime::RuntimeError("kernel '" + D.Name +
                                "' cannot run on the cuda target: the CUDA driver is not usable: " +
                                Driver.reason() + " (TIDAL_TARGET=cpu runs kernels on the cpu)");
  runtime::CudaContext &Context = runtime::CudaContext::forDevice(Ordinal);
  unsigned SM = Context.limits().ptxSM();
  llvm::LLVMContext Ctx;
  std::unique_ptr<llvm::Module> M = parseIR(S.MarkerIR, Ctx);
  lowerForNVPTX(*M, SM);
  auto Module = std::make_unique<runtime::CudaModule>(Context, emitPTX(*M, SM));
  auto Function = std::make_unique<runtime::CudaFunction>(Module->function(S.KernelName));
  S.Cuda.push_back({&Context, std::move(Module), std::move(Function)});
  return *S.Cuda.back().Function;
}

// One host buffer a launch copies to the device (and back, unless read-only).
struct DeviceCopy {
  char *Host = nullptr;
  size_t Bytes = 0;
  bool CopyBack = false;
  runtime::CudaDeviceBuffer Device;
};

// The bytes [Start, Start + Bytes) an array's elements span in memory
// (strides may be negative); Bytes is 0 for an empty array.
void arraySpan(PyArrayObject *A, char *&Start, size_t &Bytes) {
  char *Data = static_cast<char *>(PyArray_DATA(A));
  npy_intp Low = 0, High = 0;
  for (int D = 0; D < PyArray_NDIM(A); ++D) {
    if (PyArray_DIM(A, D) == 0) {
      Start = Data;
      Bytes = 0;
      return;
    }
    npy_intp Reach = (PyArray_DIM(A, D) - 1) * PyArray_STRIDE(A, D);
    (Reach < 0 ? Low : High) += Reach;
  }
  Start = Data + Low;
  Bytes = static_cast<size_t>(High - Low + PyArray_ITEMSIZE(A));
}

// Launches S on the GPU as Numba does: device arrays (cuda-target
// DeviceNDArrays) are passed by their device pointers, with no copy; each
// NumPy array (and the host memory of any other device array) is copied to
// fresh device memory, and then the context is synchronised and the writable
// arrays are copied back. A launch whose arguments are all device arrays and
// numbers is asynchronous on Stream.
void launchOnCudaTarget(const DispatcherState &D, Specialization &S, runtime::Dim3 Grid,
                        runtime::Dim3 Block, size_t SharedBytes, PyObject *Args,
                        ParamSlot *Storage, void **Params, runtime::cu::Stream Stream) {
  runtime::CudaFunction &Kernel = cudaFunctionOf(D, S, 0);
  runtime::CudaContext &Context = Kernel.context();
  Context.requireUsable();
  Context.makeCurrent();
  const runtime::CudaDriver &Driver = Context.driver();

  constexpr size_t InlineCopies = 16;
  DeviceCopy InlineStorage[InlineCopies];
  std::vector<DeviceCopy> HeapStorage;
  DeviceCopy *Copies = InlineStorage;
  size_t CopyCount = 0;
  size_t Needed = 0;
  for (const Type &T : S.ArgTypes)
    Needed += T.isArray() || T.isRecord();
  if (Needed > InlineCopies) {
    HeapStorage.resize(Needed);
    Copies = HeapStorage.data();
  }
  // 1. Host memory to the device; the data-pointer slots packArguments wrote
  //    (host pointers) now point at the device copies.
  unsigned K = 0;
  for (size_t I = 0; I < S.ArgTypes.size(); ++I) {
    PyObject *O = PyTuple_GET_ITEM(Args, I);
    const Type &T = S.ArgTypes[I];
    if (T.isArray() && !PyArray_Check(O) && !hostArrayOf(O) && deviceLayoutOf(O)) {
      // Device memory: packArguments wrote its device pointer already.
      if (runtime::CudaAllocation *Allocation = deviceAllocationOf(O))
        Allocation->usedOn(Stream);
      K += 1 + 2 * static_cast<unsigned>(PyArray_NDIM(
                       reinterpret_cast<PyArrayObject *>(deviceLayoutOf(O))));
      continue;
    }
    if (T.isArray()) {
      auto *A = reinterpret_cast<PyArrayObject *>(PyArray_Check(O) ? O : hostArrayOf(O));
      DeviceCopy &Copy = Copies[CopyCount++];
      arraySpan(A, Copy.Host, Copy.Bytes);
      Copy.CopyBack = PyArray_ISWRITEABLE(A);
      Copy.Device = runtime::CudaDeviceBuffer(Driver, Copy.Bytes);
      Copy.Device.copyFromHost(Copy.Host, Copy.Bytes);
      Storage[K].Words[0] =
          Copy.Bytes ? Copy.Device.pointer() +
                           static_cast<uint64_t>(static_cast<char *>(PyArray_DATA(A)) - Copy.Host)
                     : 0;
      K += 1 + 2 * static_cast<unsigned>(PyArray_NDIM(A));
      continue;
    }
    if (T.isRecord()) { // read-only, by reference
      auto *Record = reinterpret_cast<PyVoidScalarObject *>(O);
      DeviceCopy &Copy = Copies[CopyCount++];
      Copy.Host = Record->obval;
      Copy.Bytes = static_cast<size_t>(Record->descr->elsize);
      Copy.Device = runtime::CudaDeviceBuffer(Driver, Copy.Bytes);
      Copy.Device.copyFromHost(Copy.Host, Copy.Bytes);
      Storage[K].Words[0] = Copy.Device.pointer();
    }
    ++K;
  }
  // 2. Launch, wait, copy back: without the GIL (only array memory is touched,
  //    and Args keeps the arrays alive).
  withoutGIL([&] {
    Kernel.launch(Grid, Block, SharedBytes, Stream, Params);
    if (CopyCount)
      Kernel.synchronize();
    for (size_t C = 0; C < CopyCount; ++C)
      if (Copies[C].CopyBack)
        Copies[C].Device.copyToHost(Copies[C].Host, Copies[C].Bytes);
  });
}

PyObject *Dispatcher_launch(PyObject *Self, PyObject *Args) {
  PyObject *Grid, *Block, *KernelArgs;
  unsigned long long SharedBytes, StreamHandle = 0;
  if (!PyArg_ParseTuple(Args, "O!O!KO!|K", &PyTuple_Type, &Grid, &PyTuple_Type, &Block,
                        &SharedBytes, &PyTuple_Type, &KernelArgs, &StreamHandle))
    return nullptr;
  TIDAL_TRY
  DispatcherState &D = state(Self);
  runtime::Dim3 G, Bk;
  for (int I = 0; I < 3; ++I) {
    G[I] = static_cast<uint32_t>(PyLong_AsUnsignedLong(PyTuple_GetItem(Grid, I)));
    Bk[I] = static_cast<uint32_t>(PyLong_AsUnsignedLong(PyTuple_GetItem(Block, I)));
  }
  if (PyErr_Occurred())
    return nullptr;
  PyRef Arguments = wrapForeignDeviceArrays(KernelArgs);
  KernelArgs = Arguments.get();
  std::vector<Type> Types;
  if (!typeArguments(D, KernelArgs, Types))
    return nullptr;
  Specialization &S = D.compile(Types);
  constexpr unsigned InlineParams = 64;
  ParamSlot InlineStorage[InlineParams];
  void *InlinePointers[InlineParams];
  std::vector<ParamSlot> HeapStorage;
  std::vector<void *> HeapPointers;
  ParamSlot *Storage = InlineStorage;
  void **Params = InlinePointers;
  if (S.ParamCount > InlineParams) {
    HeapStorage.resize(S.ParamCount);
    HeapPointers.resize(S.ParamCount);
    Storage = HeapStorage.data();
    Params = HeapPointers.data();
  }
  if (!packArguments(S, KernelArgs, Storage, Params))
    return nullptr;
  if (D.Target == "cuda") {
    launchOnCudaTarget(D, S, G, Bk, static_cast<size_t>(SharedBytes), KernelArgs, Storage, Params,
                       reinterpret_cast<runtime::cu::Stream>(StreamHandle));
    Py_RETURN_NONE;
  }
  // A failed check in the kernel is a KernelError, rethrown with the GIL.
  withoutGIL([&] {
    runtime::launchOnCpu(S.Block, G, Bk, Params, static_cast<size_t>(SharedBytes));
  });
  Py_RETURN_NONE;
  TIDAL_CATCH
}

// Types from a signature: a string ("void(float32, float32[::1])") or a
// sequence of type strings.
std::vector<Type> typesFromPython(PyObject *Signature) {
  if (PyUnicode_Check(Signature)) {
    frontend::Signature Sig = parseSignature(PyUnicode_AsUTF8(Signature));
    if (Sig.HasReturn && Sig.Return.K != Type::Kind::None)
      throw std::invalid_argument("a kernel's signature must return void, not " +
                                  Sig.Return.str());
    return Sig.Params;
  }
  PyRef Seq = PyRef::check(PySequence_Fast(Signature, "a signature must be a str or a sequence of type names"));
  std::vector<Type> Types;
  for (Py_ssize_t I = 0; I < PySequence_Fast_GET_SIZE(Seq.get()); ++I)
    Types.push_back(parseType(PyRef::borrow(PySequence_Fast_GET_ITEM(Seq.get(), I)).str()));
  return Types;
}

PyObject *Dispatcher_compile(PyObject *Self, PyObject *Signature) {
  TIDAL_TRY
  DispatcherState &D = state(Self);
  Specialization &S = D.compile(typesFromPython(Signature));
  return PyUnicode_FromString(signatureText(S.ArgTypes).c_str());
  TIDAL_CATCH
}

PyObject *Dispatcher_specialize(PyObject *Self, PyObject *Args) {
  TIDAL_TRY
  DispatcherState &D = state(Self);
  std::vector<Type> Types;
  if (!typeArguments(D, Args, Types))
    return nullptr;
  Specialization &S = D.compile(Types);
  return PyUnicode_FromString(signatureText(S.ArgTypes).c_str());
  TIDAL_CATCH
}

// inspect(signature_text, what, sm): what is "markers", "llvm" (after
// tidal-nvptx) or "ptx" of an existing specialisation.
PyObject *Dispatcher_inspect(PyObject *Self, PyObject *Args) {
  const char *Signature, *What;
  unsigned SM = DefaultSM;
  if (!PyArg_ParseTuple(Args, "ss|I", &Signature, &What, &SM))
    return nullptr;
  TIDAL_TRY
  DispatcherState &D = state(Self);
  for (auto &S : D.Specializations) {
    if (signatureText(S->ArgTypes) != Signature)
      continue;
    std::string Kind = What;
    if (Kind == "markers")
      return PyUnicode_FromString(S->MarkerIR.c_str());
    if (Kind == "types")
      return PyUnicode_FromString(S->TypesText.c_str());
    llvm::LLVMContext Ctx;
    std::unique_ptr<llvm::Module> M = parseIR(S->MarkerIR, Ctx);
    lowerForNVPTX(*M, SM);
    if (Kind == "llvm")
      return PyUnicode_FromString(moduleText(*M).c_str());
    if (Kind == "ptx")
      return PyUnicode_FromString(emitPTX(*M, SM).c_str());
    PyErr_Format(PyExc_ValueError, "unknown view '%s': use markers, llvm or ptx", What);
    return nullptr;
  }
  PyErr_Format(PyExc_KeyError, "kernel '%s' has no specialisation %s", D.Name.c_str(), Signature);
  return nullptr;
  TIDAL_CATCH
}

// kernel_attribute(signature_text, what): a fact of the kernel loaded on the
// GPU (cuFuncGetAttribute): "regs", "shared", "local" or "max_threads".
PyObject *Dispatcher_kernel_attribute(PyObject *Self, PyObject *Args) {
  const char *Signature, *What;
  if (!PyArg_ParseTuple(Args, "ss", &Signature, &What))
    return nullptr;
  TIDAL_TRY
  DispatcherState &D = state(Self);
  if (D.Target != "cuda") {
    PyErr_Format(PyExc_RuntimeError,
                 "the facts of kernel '%s' come from the CUDA driver and need a GPU: kernels "
                 "run on the %s target here",
                 D.Name.c_str(), D.Target.c_str());
    return nullptr;
  }
  for (auto &S : D.Specializations) {
    if (signatureText(S->ArgTypes) != Signature)
      continue;
    runtime::CudaFunction &Kernel = cudaFunctionOf(D, *S, 0);
    std::string Kind = What;
    if (Kind == "regs")
      return PyLong_FromLong(Kernel.registersPerThread());
    if (Kind == "shared")
      return PyLong_FromLong(Kernel.staticSharedBytes());
    if (Kind == "local")
      return PyLong_FromLong(Kernel.localBytesPerThread());
    if (Kind == "max_threads")
      return PyLong_FromLong(Kernel.maxThreadsPerBlock());
    PyErr_Format(PyExc_ValueError, "unknown kernel attribute '%s'", What);
    return nullptr;
  }
  PyErr_Format(PyExc_KeyError, "kernel '%s' has no specialisation %s", D.Name.c_str(), Signature);
  return nullptr;
  TIDAL_CATCH
}

PyObject *Dispatcher_signatures(PyObject *Self, void *) {
  TIDAL_TRY
  DispatcherState &D = state(Self);
  PyRef List = PyRef::check(PyList_New(0));
  for (auto &S : D.Specializations) {
    PyRef Text = PyRef::check(PyUnicode_FromString(signatureText(S->ArgTypes).c_str()));
    if (PyList_Append(List.get(), Text.get()) < 0)
      return nullptr;
  }
  return List.release();
  TIDAL_CATCH
}

PyMethodDef DispatcherMethods[] = {
    {"launch", Dispatcher_launch, METH_VARARGS,
     "launch(grid, block, shared_bytes, args, stream=0): compile for the arguments' types "
     "if needed, then run the kernel over the grid (cuda target: on the CUstream handle "
     "stream)."},
    {"compile", Dispatcher_compile, METH_O,
     "compile(signature): compile eagerly; returns the signature's text."},
    {"specialize", Dispatcher_specialize, METH_VARARGS,
     "specialize(*args): compile for the types of these arguments."},
    {"inspect", Dispatcher_inspect, METH_VARARGS,
     "inspect(signature_text, what, sm=75): 'markers', 'llvm' or 'ptx'."},
    {"kernel_attribute", Dispatcher_kernel_attribute, METH_VARARGS,
     "kernel_attribute(signature_text, what): 'regs', 'shared', 'local' or 'max_threads' "
     "of the kernel loaded on the GPU (cuda target only)."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef DispatcherGetSet[] = {
    {"signatures", Dispatcher_signatures, nullptr, "compiled signatures", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject DispatcherType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// --- module functions --------------------------------------------------------------

PyObject *module_typeof(PyObject *, PyObject *O) {
  Type T;
  std::string Why;
  if (!typeofArgument(O, T, Why)) {
    PyErr_Format(PyExc_TypeError, "kernels can't take %s", Why.c_str());
    return nullptr;
  }
  return PyUnicode_FromString(T.str().c_str());
}

PyObject *module_parse_signature(PyObject *, PyObject *Text) {
  TIDAL_TRY
  if (!PyUnicode_Check(Text)) {
    PyErr_SetString(PyExc_TypeError, "a signature must be a str");
    return nullptr;
  }
  frontend::Signature Sig = parseSignature(PyUnicode_AsUTF8(Text));
  PyRef Params = PyRef::check(PyList_New(0));
  for (const Type &T : Sig.Params) {
    PyRef S = PyRef::check(PyUnicode_FromString(T.str().c_str()));
    PyList_Append(Params.get(), S.get());
  }
  if (!Sig.HasReturn)
    return Py_BuildValue("(OO)", Py_None, Params.get());
  return Py_BuildValue("(sO)", Sig.Return.str().c_str(), Params.get());
  TIDAL_CATCH
}

PyObject *module_driver_status(PyObject *, PyObject *) {
  TIDAL_TRY
  runtime::CudaDriver &D = runtime::CudaDriver::get();
  return Py_BuildValue("(Oiss)", D.usable() ? Py_True : Py_False, D.deviceCount(),
                       D.reason().c_str(), D.libraryPath().c_str());
  TIDAL_CATCH
}

PyObject *module_cpu_worker_count(PyObject *, PyObject *) {
  return PyLong_FromUnsignedLong(runtime::cpuWorkerCount());
}

// compile_ptx_timed(function, signature, sm): PTX of a kernel compiled
// from scratch, and the seconds of each stage, for the benchmark.
PyObject *module_compile_ptx_timed(PyObject *, PyObject *Args) {
  PyObject *Function, *Signature;
  unsigned SM = DefaultSM;
  if (!PyArg_ParseTuple(Args, "OO|I", &Function, &Signature, &SM))
    return nullptr;
  TIDAL_TRY
  using Clock = std::chrono::steady_clock;
  auto Seconds = [](Clock::time_point A, Clock::time_point B) {
    return std::chrono::duration<double>(B - A).count();
  };
  std::vector<Type> Types = typesFromPython(Signature);
  Clock::time_point Start = Clock::now();
  KernelModule KM = emitKernel(Function, Types, FrontendOptions());
  Clock::time_point Emitted = Clock::now();
  PipelineTimings Timings;
  lowerForNVPTX(*KM.Module, SM, &Timings);
  Clock::time_point Lowered = Clock::now();
  std::string PTX = emitPTX(*KM.Module, SM);
  Clock::time_point Done = Clock::now();
  (void)Lowered;
  return Py_BuildValue("(s{sdsdsdsd})", PTX.c_str(), "frontend", Seconds(Start, Emitted),
                       "lowering", Timings.LoweringSeconds, "optimisation",
                       Timings.OptimisationSeconds, "codegen", Seconds(Lowered, Done));
  TIDAL_CATCH
}

// --- the cuda target's memory, streams and events (tidal.cuda.memory, streams) ----
// Allocations, streams and events are C++ objects owned by capsules: the
// Python objects hold the capsule, and the object is destroyed (the memory
// given back to the caching allocator, cuStreamDestroy, cuEventDestroy) when
// the capsule is collected. Device 0's context.

// Hands Object to a new capsule named Name that deletes it when collected.
template <typename T> PyRef capsuleOwning(std::unique_ptr<T> Object, const char *Name) {
  PyRef Capsule = PyRef::check(PyCapsule_New(Object.get(), Name, [](PyObject *C) {
    delete static_cast<T *>(PyCapsule_GetPointer(C, PyCapsule_GetName(C)));
  }));
  Object.release();
  return Capsule;
}

template <typename T> T &capsuleObject(PyObject *Capsule, const char *Name) {
  auto *Object = static_cast<T *>(PyCapsule_GetPointer(Capsule, Name));
  if (!Object)
    throw std::invalid_argument(std::string("expected a ") + Name);
  return *Object;
}

runtime::cu::Stream streamFromHandle(unsigned long long Handle) {
  return reinterpret_cast<runtime::cu::Stream>(Handle);
}

// cuda_alloc(bytes, stream) -> (allocation capsule, device pointer)
PyObject *module_cuda_alloc(PyObject *, PyObject *Args) {
  unsigned long long Bytes, Stream;
  if (!PyArg_ParseTuple(Args, "KK", &Bytes, &Stream))
    return nullptr;
  TIDAL_TRY
  auto Allocation = std::make_unique<runtime::CudaAllocation>(
      runtime::CudaAllocator::forDevice(0), static_cast<size_t>(Bytes), streamFromHandle(Stream));
  unsigned long long Pointer = Allocation->pointer();
  PyRef Capsule = capsuleOwning(std::move(Allocation), AllocationCapsule);
  return Py_BuildValue("(OK)", Capsule.get(), Pointer);
  TIDAL_CATCH
}

// cuda_copy(kind, destination, source, bytes, stream, allocation): kind 0 host
// to device, 1 device to host, 2 device to device; pointers as ints; the
// allocation capsule (or None) is marked as used on the stream.
PyObject *module_cuda_copy(PyObject *, PyObject *Args) {
  int Kind;
  unsigned long long Destination, Source, Bytes, Stream;
  PyObject *Allocation = Py_None;
  if (!PyArg_ParseTuple(Args, "iKKKK|O", &Kind, &Destination, &Source, &Bytes, &Stream,
                        &Allocation))
    return nullptr;
  TIDAL_TRY
  runtime::CudaContext &Context = runtime::CudaContext::forDevice(0);
  Context.requireUsable();
  Context.makeCurrent();
  if (Allocation != Py_None)
    capsuleObject<runtime::CudaAllocation>(Allocation, AllocationCapsule)
        .usedOn(streamFromHandle(Stream));
  withoutGIL([&] {
    const runtime::CudaDriver &Driver = Context.driver();
    if (Kind == 0)
      runtime::cudaCopyToDevice(Driver, Destination, reinterpret_cast<const void *>(Source),
                                Bytes, streamFromHandle(Stream));
    else if (Kind == 1)
      runtime::cudaCopyToHost(Driver, reinterpret_cast<void *>(Destination), Source, Bytes,
                              streamFromHandle(Stream));
    else
      runtime::cudaCopyDeviceToDevice(Driver, Destination, Source, Bytes,
                                      streamFromHandle(Stream));
  });
  Py_RETURN_NONE;
  TIDAL_CATCH
}

PyObject *module_cuda_memory_stats(PyObject *, PyObject *) {
  TIDAL_TRY
  runtime::CudaMemoryStats S = runtime::CudaAllocator::forDevice(0).stats();
  return Py_BuildValue("{sKsKsKsKsKsKsKsK}", "bytes_in_use", (unsigned long long)S.BytesInUse,
                       "bytes_requested", (unsigned long long)S.BytesRequested, "bytes_cached",
                       (unsigned long long)S.BytesCached, "bytes_pending",
                       (unsigned long long)S.BytesPending, "driver_allocations",
                       (unsigned long long)S.DriverAllocations, "driver_frees",
                       (unsigned long long)S.DriverFrees, "live_driver_allocations",
                       (unsigned long long)S.LiveDriverAllocations, "reuses",
                       (unsigned long long)S.Reuses);
  TIDAL_CATCH
}

PyObject *module_cuda_memory_clear(PyObject *, PyObject *) {
  TIDAL_TRY
  runtime::CudaAllocator &Allocator = runtime::CudaAllocator::forDevice(0);
  Py_BEGIN_ALLOW_THREADS
  Allocator.releaseCached();
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
  TIDAL_CATCH
}

PyObject *module_cuda_memory_info(PyObject *, PyObject *) {
  TIDAL_TRY
  runtime::CudaContext &Context = runtime::CudaContext::forDevice(0);
  Context.makeCurrent();
  size_t Free = 0, Total = 0;
  Context.driver().check(Context.driver().api().MemGetInfo(&Free, &Total), "cuMemGetInfo");
  return Py_BuildValue("(KK)", (unsigned long long)Free, (unsigned long long)Total);
  TIDAL_CATCH
}

PyObject *module_cuda_synchronize(PyObject *, PyObject *) {
  TIDAL_TRY
  runtime::CudaContext &Context = runtime::CudaContext::forDevice(0);
  withoutGIL([&] {
    Context.makeCurrent();
    Context.synchronize();
  });
  Py_RETURN_NONE;
  TIDAL_CATCH
}

// cuda_stream_create() -> (stream capsule, CUstream handle)
PyObject *module_cuda_stream_create(PyObject *, PyObject *) {
  TIDAL_TRY
  auto Stream = std::make_unique<runtime::CudaStream>(runtime::CudaContext::forDevice(0));
  unsigned long long Handle = reinterpret_cast<unsigned long long>(Stream->handle());
  PyRef Capsule = capsuleOwning(std::move(Stream), StreamCapsule);
  return Py_BuildValue("(OK)", Capsule.get(), Handle);
  TIDAL_CATCH
}

// cuda_stream_synchronize(handle): cuStreamSynchronize (0: the default stream).
PyObject *module_cuda_stream_synchronize(PyObject *, PyObject *Args) {
  unsigned long long Handle;
  if (!PyArg_ParseTuple(Args, "K", &Handle))
    return nullptr;
  TIDAL_TRY
  runtime::CudaContext &Context = runtime::CudaContext::forDevice(0);
  Context.requireUsable();
  runtime::cu::Result Result;
  Py_BEGIN_ALLOW_THREADS
  Result = Context.driver().api().StreamSynchronize(streamFromHandle(Handle));
  Py_END_ALLOW_THREADS
  Context.driver().check(Result, "cuStreamSynchronize");
  Py_RETURN_NONE;
  TIDAL_CATCH
}

// cuda_event_create(timing) -> event capsule
PyObject *module_cuda_event_create(PyObject *, PyObject *Args) {
  int Timing = 1;
  if (!PyArg_ParseTuple(Args, "|p", &Timing))
    return nullptr;
  TIDAL_TRY
  auto Event = std::make_unique<runtime::CudaEvent>(runtime::CudaContext::forDevice(0), Timing);
  PyRef Capsule = capsuleOwning(std::move(Event), EventCapsule);
  return Capsule.release();
  TIDAL_CATCH
}

// cuda_event(what, event, stream_or_end): what is "record", "query",
// "synchronize", "wait" or "elapsed".
PyObject *module_cuda_event(PyObject *, PyObject *Args) {
  const char *What;
  PyObject *EventObject, *Other = Py_None;
  if (!PyArg_ParseTuple(Args, "sO|O", &What, &EventObject, &Other))
    return nullptr;
  TIDAL_TRY
  runtime::CudaEvent &Event = capsuleObject<runtime::CudaEvent>(EventObject, EventCapsule);
  std::string Op = What;
  auto streamArg = [&] {
    unsigned long long Handle = PyLong_AsUnsignedLongLong(Other);
    if (PyErr_Occurred())
      throw std::invalid_argument("a stream handle must be an int");
    return streamFromHandle(Handle);
  };
  if (Op == "record") {
    Event.record(streamArg());
    Py_RETURN_NONE;
  }
  if (Op == "query")
    return PyBool_FromLong(Event.query());
  if (Op == "wait") {
    Event.waitOn(streamArg());
    Py_RETURN_NONE;
  }
  if (Op == "elapsed")
    return PyFloat_FromDouble(runtime::CudaEvent::elapsed(
        Event, capsuleObject<runtime::CudaEvent>(Other, EventCapsule)));
  if (Op == "synchronize") {
    withoutGIL([&] {
      Event.synchronize();
    });
    Py_RETURN_NONE;
  }
  throw std::invalid_argument("unknown event operation " + Op);
  TIDAL_CATCH
}

PyMethodDef ModuleMethods[] = {
    {"cuda_alloc", module_cuda_alloc, METH_VARARGS,
     "cuda_alloc(bytes, stream): (allocation, device pointer) from the caching allocator."},
    {"cuda_copy", module_cuda_copy, METH_VARARGS,
     "cuda_copy(kind, dst, src, bytes, stream, allocation=None): 0 HtoD, 1 DtoH, 2 DtoD."},
    {"cuda_memory_stats", module_cuda_memory_stats, METH_NOARGS,
     "cuda_memory_stats(): the caching allocator's statistics (dict)."},
    {"cuda_memory_clear", module_cuda_memory_clear, METH_NOARGS,
     "cuda_memory_clear(): returns the cached blocks to the driver."},
    {"cuda_memory_info", module_cuda_memory_info, METH_NOARGS,
     "cuda_memory_info(): (free, total) bytes (cuMemGetInfo)."},
    {"cuda_synchronize", module_cuda_synchronize, METH_NOARGS,
     "cuda_synchronize(): cuCtxSynchronize."},
    {"cuda_stream_create", module_cuda_stream_create, METH_NOARGS,
     "cuda_stream_create(): (stream, CUstream handle)."},
    {"cuda_stream_synchronize", module_cuda_stream_synchronize, METH_VARARGS,
     "cuda_stream_synchronize(handle)."},
    {"cuda_event_create", module_cuda_event_create, METH_VARARGS,
     "cuda_event_create(timing=True): an event."},
    {"cuda_event", module_cuda_event, METH_VARARGS,
     "cuda_event(what, event, stream_or_end=None)."},
    {"compile_ptx_timed", module_compile_ptx_timed, METH_VARARGS,
     "compile_ptx_timed(function, signature, sm=75): (ptx, {stage: seconds})."},
    {"typeof", module_typeof, METH_O, "typeof(value): the kernel type of a launch argument."},
    {"parse_signature", module_parse_signature, METH_O,
     "parse_signature(text): (return type or None, [parameter types])."},
    {"driver_status", module_driver_status, METH_NOARGS,
     "driver_status(): (usable, device_count, reason, library)."},
    {"cpu_worker_count", module_cpu_worker_count, METH_NOARGS,
     "cpu_worker_count(): workers of the cpu target's pool."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef ModuleDef = {PyModuleDef_HEAD_INIT, "tidal._tidal",
                         "tidal's compiler and runtime (C++).", -1, ModuleMethods};

} // namespace

PyObject *tidal::frontend::raisePythonError() { return raiseFromCurrentException(); }

PyMODINIT_FUNC PyInit__tidal() {
  import_array();
  DispatcherType.tp_name = "tidal._tidal.Dispatcher";
  DispatcherType.tp_basicsize = sizeof(DispatcherObject);
  DispatcherType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  DispatcherType.tp_doc = "The compiled specialisations of one kernel, and its launcher.";
  DispatcherType.tp_new = PyType_GenericNew;
  DispatcherType.tp_init = Dispatcher_init;
  DispatcherType.tp_dealloc = Dispatcher_dealloc;
  DispatcherType.tp_methods = DispatcherMethods;
  DispatcherType.tp_getset = DispatcherGetSet;
  if (PyType_Ready(&DispatcherType) < 0)
    return nullptr;
  PyObject *M = PyModule_Create(&ModuleDef);
  if (!M)
    return nullptr;
  Py_INCREF(&DispatcherType);
  if (PyModule_AddObject(M, "Dispatcher", reinterpret_cast<PyObject *>(&DispatcherType)) < 0) {
    Py_DECREF(&DispatcherType);
    Py_DECREF(M);
    return nullptr;
  }
  if (addHostMemoryFunctions(M) < 0) {
    Py_DECREF(M);
    return nullptr;
  }
  return M;
}
