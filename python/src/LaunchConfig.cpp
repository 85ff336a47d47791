// kernel[griddim, blockdim, stream, sharedmem]: the launch configuration
// object, and the launch itself on the cpu target (the thread pool) and on
// the cuda target (the driver, with host arrays copied in and back).
#include "LaunchConfig.h"

#include "ArgumentTyping.h"
#include "Dispatcher.h"
#include "Errors.h"
#include "FittedBlocks.h"
#include "LaunchPlan.h"
#include "PerformanceWarnings.h"

#include "tidal/Contract.h"
#include "tidal/HostABI.h"
#include "tidal/runtime/CpuTarget.h"
#include "tidal/runtime/CudaMemory.h"
#include "tidal/runtime/CudaTarget.h"

#include <cstring>
#include <memory>
#include <optional>

#include <structmember.h>

namespace tidal::binding {

using namespace tidal::frontend;

namespace {

// One host buffer a launch copies to the device (and back, unless read-only).
struct DeviceCopy {
  char *Host = nullptr;
  size_t Bytes = 0;
  bool CopyBack = false;
  runtime::CudaDeviceBuffer Device;
};

// After a launch of a kernel whose module has an exception slot: waits for
// the launch's stream, reads the slot and, when a thread raised, clears it
// for the next launch (Numba's debug launches do the same with theirs).
ExceptionSlot readExceptionSlot(const runtime::CudaContext &Context,
                                runtime::cu::DevicePointer Address, runtime::cu::Stream Stream,
                                const std::string &Kernel) {
  const runtime::CudaDriverApi &Api = Context.driver().api();
  Context.check(Api.StreamSynchronize(Stream), "cuStreamSynchronize",
                "after kernel '" + Kernel + "', to read its exception slot");
  ExceptionSlot Slot;
  Context.check(Api.MemcpyDtoH(&Slot, Address, sizeof Slot), "cuMemcpyDtoH",
                "the exception slot of kernel '" + Kernel + "'");
  if (Slot.Code) {
    const ExceptionSlot Clear;
    Context.check(Api.MemcpyHtoD(Address, &Clear, sizeof Clear), "cuMemcpyHtoD",
                  "the exception slot of kernel '" + Kernel + "'");
  }
  return Slot;
}

// The error of the raise site the slot names, worded as the cpu target
// words it (so that the binding raises the same exception: Errors.cpp).
runtime::KernelError raisedError(const Specialization &S, const ExceptionSlot &Slot) {
  if (Slot.Code < 1 || static_cast<size_t>(Slot.Code) > S.RaiseSites.size())
    throw runtime::RuntimeError("internal error: kernel '" + S.KernelName + "' wrote code " +
                                std::to_string(Slot.Code) + " into its exception slot, and has " +
                                std::to_string(S.RaiseSites.size()) + " raise sites");
  const RaiseSite &Site = S.RaiseSites[static_cast<size_t>(Slot.Code) - 1];
  const runtime::Dim3 Thread = {Slot.Thread[0], Slot.Thread[1], Slot.Thread[2]};
  const runtime::Dim3 Block = {Slot.Block[0], Slot.Block[1], Slot.Block[2]};
  return Site.Bounds ? runtime::boundsError(Site.Text.c_str(), Slot.Index, Slot.Extent,
                                            Slot.Axis, Block, Thread)
                     : runtime::assertFailure(Site.Text.c_str(), Block, Thread);
}

// Launches on the GPU as Numba does: device memory (device arrays, mapped and
// managed arrays, other libraries' arrays) is passed by its device pointer,
// with no copy; each NumPy array (and record scalar) is copied to fresh device
// memory, and then the context is synchronised and the writable arrays are
// copied back (cuda.In: copied in only; cuda.Out: copied back only). A
// launch with no host memory is asynchronous on Stream.
void launchOnCudaTarget(const DispatcherState &D, const LaunchPlan &Plan, runtime::Dim3 Grid,
                        runtime::Dim3 Block, size_t SharedBytes, PyObject *const *Args,
                        PackedArguments &Packed, runtime::cu::Stream Stream, bool Execute) {
  Specialization &S = *Plan.Spec;
  Specialization::CudaLoaded &Loaded = cudaKernelOf(D, S, runtime::currentDeviceOrdinal());
  runtime::CudaFunction &Kernel = *Loaded.Function;
  runtime::CudaContext &Context = Kernel.context();
  Context.requireUsable();
  if (!Execute) {
    Kernel.checkLaunch(Grid, Block, SharedBytes);
    return;
  }
  Context.makeCurrent();
  const runtime::CudaDriver &Driver = Context.driver();

  constexpr size_t InlineCopies = 16;
  DeviceCopy InlineStorage[InlineCopies];
  std::vector<DeviceCopy> HeapStorage;
  DeviceCopy *Copies = InlineStorage;
  size_t CopyCount = 0;
  size_t Needed = 0;
  for (ArgKind Kind : Plan.Kinds)
    Needed += Kind == ArgKind::HostArray || Kind == ArgKind::DirectedArray ||
              Kind == ArgKind::HostDeviceArray || Kind == ArgKind::RecordScalar;
  if (Needed > InlineCopies) {
    HeapStorage.resize(Needed);
    Copies = HeapStorage.data();
  }
  // Host memory to the device: the data-pointer slots packArguments wrote
  // (host pointers) now point at the device copies.
  unsigned K = 0;
  for (size_t I = 0; I < Plan.ParameterTypes.size(); ++I) {
    PyObject *O = Args[I]; // the arguments' leaves (LaunchPlan.h)
    ArgKind Kind = Plan.Kinds[I];
    if (isArrayKind(Kind)) {
      // Device memory (packArguments wrote its pointer): tidal's allocations
      // are checked and marked used; host memory is copied.
      if (Kind == ArgKind::DeviceArray) {
        if (runtime::CudaAllocation *Allocation = deviceAllocationOf(O)) {
          Allocation->requireContext(Context, Kernel.name(), Plan.ParameterOf[I]);
          Allocation->usedOn(Stream);
        }
      } else if (Kind != ArgKind::InterfaceArray && Kind != ArgKind::DLPackArray) {
        ArrayView V;
        arrayViewOf(O, Kind, V); // packArguments read it already
        if (Kind == ArgKind::HostArray && D.PerformanceWarnings) // not cuda.In/Out, which ask for it
          warnImplicitCopy();
        DeviceCopy &Copy = Copies[CopyCount++];
        arraySpan(V, Copy.Host, Copy.Bytes);
        Copy.CopyBack = !V.ReadOnly && (Plan.Copies[I] & CopyOut);
        Copy.Device = runtime::CudaDeviceBuffer(Driver, Copy.Bytes);
        if (Plan.Copies[I] & CopyIn)
          Copy.Device.copyFromHost(Copy.Host, Copy.Bytes);
        Packed.Slots[K].Words[0] =
            Copy.Bytes ? Copy.Device.pointer() + static_cast<uint64_t>(V.Data - Copy.Host) : 0;
      }
      K += 1 + 2 * static_cast<unsigned>(Plan.ParameterTypes[I].NDim);
      continue;
    }
    if (Kind == ArgKind::RecordScalar) { // by reference; copied back unless read-only
      auto *Record = reinterpret_cast<PyVoidScalarObject *>(O);
      DeviceCopy &Copy = Copies[CopyCount++];
      Copy.Host = Record->obval;
      Copy.Bytes = static_cast<size_t>(Record->descr->elsize);
      Copy.CopyBack = !S.ArgTypes[I].ReadOnly;
      Copy.Device = runtime::CudaDeviceBuffer(Driver, Copy.Bytes);
      Copy.Device.copyFromHost(Copy.Host, Copy.Bytes);
      Packed.Slots[K].Words[0] = Copy.Device.pointer();
    }
    ++K;
  }
  // Launch, wait, copy back: without the GIL (only array memory is touched,
  // and the caller's references keep the arrays alive). A kernel that can
  // raise (its module has an exception slot) is waited for, and what a
  // raising thread wrote is raised after the copies back, as on the cpu
  // target, whose kernels write the arrays in place.
  withoutGIL([&] {
    Kernel.launch(Grid, Block, SharedBytes, Stream, Packed.Params, S.Cooperative);
    ExceptionSlot Raised;
    if (Loaded.ExceptionSlot)
      Raised = readExceptionSlot(Context, Loaded.ExceptionSlot, Stream, Kernel.name());
    if (CopyCount)
      Kernel.synchronize();
    for (size_t C = 0; C < CopyCount; ++C)
      if (Copies[C].CopyBack)
        Copies[C].Device.copyToHost(Copies[C].Host, Copies[C].Bytes);
    if (Raised.Code)
      throw raisedError(S, Raised);
  });
}

// cuda.In arrays on the cpu target: the kernel gets a copy, whose writes are
// dropped, as a GPU's launch copies the array in and not back. The copies
// (each at the same address modulo 64 as the array, so that elements keep
// their alignment) must live until the launch is done; none is made for a
// launch without cuda.In arrays.
std::vector<std::unique_ptr<char[]>> copyInOnlyArrays(const LaunchPlan &Plan,
                                                      PyObject *const *Args,
                                                      PackedArguments &Packed) {
  std::vector<std::unique_ptr<char[]>> Copies;
  unsigned K = 0;
  for (size_t I = 0; I < Plan.ParameterTypes.size(); ++I) {
    ArgKind Kind = Plan.Kinds[I];
    if (!isArrayKind(Kind)) {
      ++K;
      continue;
    }
    if (Kind == ArgKind::DirectedArray && Plan.Copies[I] == CopyIn) {
      ArrayView V;
      arrayViewOf(Args[I], Kind, V); // packArguments read it already
      char *Host;
      size_t Bytes;
      arraySpan(V, Host, Bytes);
      if (Bytes && !V.ReadOnly) {
        constexpr uintptr_t Alignment = 64;
        auto Offset = reinterpret_cast<uintptr_t>(Host) % Alignment;
        Copies.push_back(std::make_unique<char[]>(Bytes + 2 * Alignment));
        char *Base = Copies.back().get();
        char *Copy = Base + (Alignment - reinterpret_cast<uintptr_t>(Base) % Alignment) + Offset;
        std::memcpy(Copy, Host, Bytes);
        Packed.Slots[K].Words[0] = reinterpret_cast<uint64_t>(Copy + (V.Data - Host));
      }
    }
    K += 1 + 2 * static_cast<unsigned>(Plan.ParameterTypes[I].NDim);
  }
  return Copies;
}

// --- launch configurations: kernel[griddim, blockdim, stream, sharedmem] ----------

// What kernel[...] returns: the configuration, called with the arguments.
struct LaunchConfigObject {
  PyObject_HEAD PyObject *Dispatcher; // strong
  runtime::Dim3 Grid, Block;
  unsigned long long Stream; // the CUstream handle (0: the default stream)
  unsigned long long SharedBytes;
  PyObject *StreamObject; // strong: what was given (None for the default)
  // A block beyond CUDA's limits: the message (a str, strong) that launching
  // the configuration raises, as Numba fails at the launch; null otherwise.
  PyObject *BlockError;
  vectorcallfunc Vectorcall;
};

// The LaunchConfiguration type, made when the module loads.
PyTypeObject *LaunchConfigType = nullptr;

// Runs the kernel of Config on Args (Execute false: everything but running
// it, for the dispatch benchmark: typing or plan lookup, packing, the
// device's checks).
PyObject *launch(LaunchConfigObject *Config, PyObject *const *Args, size_t N, bool Execute);

// A launch of a kernel with extensions: the Python dispatcher runs the
// arguments through them (_prepare_extension_arguments returns the new
// arguments and the functions to call once the launch is done), then the
// launch proper.
PyObject *launchWithExtensions(LaunchConfigObject *Config, PyObject *const *Args, size_t N,
                               bool Execute) {
  static PyObject *Method = PyUnicode_InternFromString("_prepare_extension_arguments");
  PyRef Given = PyRef::check(PyTuple_New(static_cast<Py_ssize_t>(N)));
  for (size_t I = 0; I < N; ++I)
    PyTuple_SET_ITEM(Given.get(), static_cast<Py_ssize_t>(I), Py_NewRef(Args[I]));
  PyRef Prepared = PyRef::check(PyObject_CallMethodObjArgs(
      Config->Dispatcher, Method, Given.get(), Config->StreamObject, nullptr));
  PyObject *NewArgs, *Retrieve;
  if (!PyArg_ParseTuple(Prepared.get(), "O!O!", &PyTuple_Type, &NewArgs, &PyList_Type, &Retrieve))
    return nullptr;
  PyRef Result = PyRef::steal(launch(Config, &PyTuple_GET_ITEM(NewArgs, 0),
                                     static_cast<size_t>(PyTuple_GET_SIZE(NewArgs)), Execute));
  if (!Result)
    return nullptr;
  for (Py_ssize_t I = 0; I < PyList_GET_SIZE(Retrieve); ++I)
    if (!PyRef::steal(PyObject_CallNoArgs(PyList_GET_ITEM(Retrieve, I))))
      return nullptr;
  return Result.release();
}

PyObject *launch(LaunchConfigObject *Config, PyObject *const *Args, size_t N, bool Execute) {
  return translateErrors([&]() -> PyObject * {
    DispatcherState &D = configuredState(Config->Dispatcher);
    auto Stream = reinterpret_cast<runtime::cu::Stream>(Config->Stream);
    if (Config->Stream)
      rejectOtherTargetsStream(D, Config->StreamObject);
    std::optional<PackedArguments> Storage;
    PackedArguments *Packed = nullptr;
    std::vector<PyObject *> LeafStorage; // the leaves of tuple arguments
    PyObject *const *Leaves = Args;
    std::shared_ptr<LaunchPlan> Held =
        planAndPack(D, Args, N, Packed, Storage, Stream, LeafStorage, Leaves);
    const LaunchPlan &Plan = *Held;
    if (D.Target == TargetKind::Cuda) {
      launchOnCudaTarget(D, Plan, Config->Grid, Config->Block, Config->SharedBytes, Leaves, *Packed,
                         Stream, Execute);
      Py_RETURN_NONE;
    }
    // launch_bounds' threads per block, as a GPU's launch refuses a bigger
    // block (CUDA_ERROR_INVALID_VALUE) with the kernel's .maxntid.
    if (uint64_t Threads = uint64_t(Config->Block[0]) * Config->Block[1] * Config->Block[2];
        D.Options.MaxThreadsPerBlock && Threads > D.Options.MaxThreadsPerBlock)
      throw runtime::LaunchConfigError(
          "cannot launch kernel '" + Plan.Spec->KernelName + "' on the cpu target: blockdim (" +
          std::to_string(Config->Block[0]) + ", " + std::to_string(Config->Block[1]) + ", " +
          std::to_string(Config->Block[2]) + ") has " + std::to_string(Threads) +
          " threads, the kernel's launch_bounds allow at most " +
          std::to_string(D.Options.MaxThreadsPerBlock) +
          " per block (a GPU's launch fails with CUDA_ERROR_INVALID_VALUE)");
    // Dynamic shared memory, checked as a GPU's launch checks it (the
    // device's limits: TIDAL_MAX_SHARED_BYTES_PER_BLOCK*).
    if (Config->SharedBytes)
      runtime::checkDynamicSharedMemory(Plan.Spec->KernelName, "the cpu target",
                                        Plan.Spec->CpuStaticSharedBytes, Config->SharedBytes,
                                        TIDAL_MAX_SHARED_BYTES_PER_BLOCK_OPTIN);
    // A Ctrl-C that came while the kernel compiled is raised now: once the
    // launch runs, only a new SIGINT interrupts it.
    if (Execute && PyErr_CheckSignals() < 0)
      return nullptr;
    std::vector<std::unique_ptr<char[]>> InOnlyCopies;
    if (Execute && Plan.AnyCopyInOnly)
      InOnlyCopies = copyInOnlyArrays(Plan, Leaves, *Packed);
    // NumPy arrays are read in place here; the warning, once per kernel,
    // says what a GPU's launch would copy (PerformanceWarnings.h).
    if (Execute && Plan.AnyHostArray && !D.ImplicitCopyWarned)
      for (size_t I = 0; I < Plan.ParameterTypes.size(); ++I)
        if (Plan.Kinds[I] == ArgKind::HostArray && wouldCopyOnCudaTarget(Leaves[I])) {
          warnImplicitCopyOnce(D);
          break;
        }
    if (Execute) { // a failed check in the kernel is a KernelError, rethrown with the GIL
      TidalBlockFunction Block =
          cpuBlockFunctionFor(D, *Plan.Spec, Config->Grid, Config->Block, Packed->Params);
      withoutGIL([&] {
        // A kernel that uses cuda.cg.this_grid() runs all its blocks at once.
        (Plan.Spec->Cooperative ? runtime::launchCooperativeOnCpu : runtime::launchOnCpu)(
            Block, Config->Grid, Config->Block, Packed->Params,
            static_cast<size_t>(Config->SharedBytes));
      });
    }
    Py_RETURN_NONE;
  });
}

// Whether launches of the kernel go through its extensions (a non-empty
// extensions list); false with a Python error set when its options fail.
bool hasExtensions(LaunchConfigObject *Config, bool &Failed) {
  Failed = false;
  try {
    DispatcherState &D = configuredState(Config->Dispatcher);
    return D.Extensions && PyList_GET_SIZE(D.Extensions.get()) > 0;
  } catch (...) {
    Failed = true; // launch() reports it
    return false;
  }
}

// A configuration whose block is beyond CUDA's limits cannot launch: true
// with the ValueError set.
bool refuseBlock(const LaunchConfigObject *Config) {
  if (!Config->BlockError)
    return false;
  PyErr_SetObject(PyExc_ValueError, Config->BlockError);
  return true;
}

PyObject *LaunchConfig_vectorcall(PyObject *Self, PyObject *const *Args, size_t NArgsF,
                                  PyObject *KwNames) {
  auto *Config = reinterpret_cast<LaunchConfigObject *>(Self);
  if (refuseBlock(Config))
    return nullptr;
  if (KwNames && PyTuple_GET_SIZE(KwNames)) {
    PyErr_Format(PyExc_TypeError, "a kernel takes its arguments by position, not by keyword (%R)",
                 KwNames);
    return nullptr;
  }
  bool Failed;
  if (hasExtensions(Config, Failed)) {
    try {
      return launchWithExtensions(Config, Args, PyVectorcall_NARGS(NArgsF), /*Execute=*/true);
    } catch (const PythonErrorSet &) {
      return nullptr;
    }
  }
  if (Failed)
    PyErr_Clear();
  return launch(Config, Args, PyVectorcall_NARGS(NArgsF), /*Execute=*/true);
}

PyObject *LaunchConfig_dispatch(PyObject *Self, PyObject *const *Args, Py_ssize_t N) {
  if (refuseBlock(reinterpret_cast<LaunchConfigObject *>(Self)))
    return nullptr;
  return launch(reinterpret_cast<LaunchConfigObject *>(Self), Args, static_cast<size_t>(N),
                /*Execute=*/false);
}

// A configuration kept in a module's globals (launch = kernel[4, 256]) is
// part of the kernel's cycle (Dispatcher_traverse): the collector sees it.
int LaunchConfig_traverse(PyObject *Self, visitproc visit, void *arg) {
  auto *Config = reinterpret_cast<LaunchConfigObject *>(Self);
  Py_VISIT(Py_TYPE(Self));
  Py_VISIT(Config->Dispatcher);
  Py_VISIT(Config->StreamObject);
  return 0;
}

// No tp_clear: the dispatcher's breaks the cycle, and a configuration
// never holds a null dispatcher.
void LaunchConfig_dealloc(PyObject *Self) {
  PyObject_GC_UnTrack(Self);
  auto *Config = reinterpret_cast<LaunchConfigObject *>(Self);
  Py_XDECREF(Config->Dispatcher);
  Py_XDECREF(Config->StreamObject);
  Py_XDECREF(Config->BlockError);
  PyTypeObject *Type = Py_TYPE(Self); // a heap type: its instances hold a reference
  PyObject_GC_Del(Self);
  Py_DECREF(Type);
}

PyObject *dimsTuple(const runtime::Dim3 &Dims) {
  return Py_BuildValue("(III)", Dims[0], Dims[1], Dims[2]);
}

PyObject *LaunchConfig_get(PyObject *Self, void *What) {
  auto *Config = reinterpret_cast<LaunchConfigObject *>(Self);
  switch (reinterpret_cast<intptr_t>(What)) {
  case 0:
    return Py_NewRef(Config->Dispatcher);
  case 1:
    return dimsTuple(Config->Grid);
  case 2:
    return dimsTuple(Config->Block);
  case 3:
    return Py_NewRef(Config->StreamObject);
  default:
    return PyLong_FromUnsignedLongLong(Config->SharedBytes);
  }
}

PyObject *LaunchConfig_repr(PyObject *Self) {
  auto *Config = reinterpret_cast<LaunchConfigObject *>(Self);
  PyRef Name = PyRef::steal(PyObject_GetAttrString(Config->Dispatcher, "__name__"));
  if (!Name)
    return nullptr;
  return PyUnicode_FromFormat("<launch of %S griddim=(%u, %u, %u) blockdim=(%u, %u, %u) "
                              "stream=%R sharedmem=%llu>",
                              Name.get(), Config->Grid[0], Config->Grid[1], Config->Grid[2],
                              Config->Block[0], Config->Block[1], Config->Block[2],
                              Config->StreamObject, Config->SharedBytes);
}

// pickle: kernel[griddim, blockdim, stream, sharedmem] again, through
// operator.getitem on the kernel (which pickles by value); a stream object
// pickles only if it can.
PyObject *LaunchConfig_reduce(PyObject *Self, PyObject *) {
  auto *Config = reinterpret_cast<LaunchConfigObject *>(Self);
  PyRef Operator = PyRef::steal(PyImport_ImportModule("operator"));
  if (!Operator)
    return nullptr;
  PyRef GetItem = PyRef::steal(PyObject_GetAttrString(Operator.get(), "getitem"));
  PyRef Grid = PyRef::steal(dimsTuple(Config->Grid));
  PyRef Block = PyRef::steal(dimsTuple(Config->Block));
  if (!GetItem || !Grid || !Block)
    return nullptr;
  return Py_BuildValue("(O(O(OOOK)))", GetItem.get(), Config->Dispatcher, Grid.get(), Block.get(),
                       Config->StreamObject, Config->SharedBytes);
}

PyMethodDef LaunchConfigMethods[] = {
    {"__reduce__", LaunchConfig_reduce, METH_NOARGS,
     "pickles as kernel[griddim, blockdim, stream, sharedmem]"},
    {"_dispatch",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(LaunchConfig_dispatch)),
     METH_FASTCALL,
     "_dispatch(*args): everything a launch does (typing or the launch plan, packing the "
     "arguments, the device's checks) but running the kernel; for benchmarks."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef LaunchConfigGetSet[] = {
    {"dispatcher", LaunchConfig_get, nullptr, "the kernel", reinterpret_cast<void *>(0)},
    {"griddim", LaunchConfig_get, nullptr, "blocks per grid (x, y, z)",
     reinterpret_cast<void *>(1)},
    {"blockdim", LaunchConfig_get, nullptr, "threads per block (x, y, z)",
     reinterpret_cast<void *>(2)},
    {"stream", LaunchConfig_get, nullptr, "the stream (0 or None: the default)",
     reinterpret_cast<void *>(3)},
    {"sharedmem", LaunchConfig_get, nullptr, "dynamic shared memory, bytes",
     reinterpret_cast<void *>(4)},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// One launch dimension given as a small positive int or a tuple of 1 to 3 of
// them, within CUDA's limits; false (no error set) for anything else, which
// the Python dispatcher then checks and explains.
bool quickDims(PyObject *Value, const uint32_t (&Limits)[3], runtime::Dim3 &Out) {
  PyObject *Single[1] = {Value};
  PyObject *const *Items = Single;
  Py_ssize_t Count = 1;
  if (PyTuple_CheckExact(Value)) {
    Count = PyTuple_GET_SIZE(Value);
    Items = &PyTuple_GET_ITEM(Value, 0);
    if (Count < 1 || Count > 3)
      return false;
  }
  for (int I = 0; I < 3; ++I) {
    long N = 1;
    if (I < Count) {
      if (!PyLong_CheckExact(Items[I]))
        return false;
      int Overflow;
      N = PyLong_AsLongAndOverflow(Items[I], &Overflow);
      if (Overflow || N < 1 || static_cast<unsigned long>(N) > Limits[I])
        return false;
    }
    Out[I] = static_cast<uint32_t>(N);
  }
  return true;
}

constexpr uint32_t MaxGridDims[3] = {TIDAL_MAX_GRID_DIM_X, TIDAL_MAX_GRID_DIM_Y,
                                     TIDAL_MAX_GRID_DIM_Z};
constexpr uint32_t MaxBlockDims[3] = {TIDAL_MAX_BLOCK_DIM_X, TIDAL_MAX_BLOCK_DIM_Y,
                                      TIDAL_MAX_BLOCK_DIM_Z};

// kernel[griddim, blockdim(, stream(, sharedmem))]: a launch configuration.
// The common forms (ints, tuples of ints, a stream object or 0, a byte count)
// are read here; anything else goes through the Python dispatcher's
// _launch_config(config), which accepts what Numba does (objects with
// __index__, ...) or raises the error that says what is wrong.
} // namespace

PyObject *launchConfiguration(PyObject *Self, PyObject *Key) {
  runtime::Dim3 Grid, Block;
  unsigned long long Stream = 0, SharedBytes = 0;
  PyObject *StreamObject = Py_None;
  PyRef BlockError; // the message of a block beyond the limits
  bool Quick = PyTuple_CheckExact(Key) && PyTuple_GET_SIZE(Key) >= 2 &&
               PyTuple_GET_SIZE(Key) <= 4 &&
               quickDims(PyTuple_GET_ITEM(Key, 0), MaxGridDims, Grid) &&
               quickDims(PyTuple_GET_ITEM(Key, 1), MaxBlockDims, Block) &&
               static_cast<uint64_t>(Block[0]) * Block[1] * Block[2] <= TIDAL_MAX_THREADS_PER_BLOCK;
  if (Quick && PyTuple_GET_SIZE(Key) > 2) {
    StreamObject = PyTuple_GET_ITEM(Key, 2);
    if (StreamObject == Py_None || (PyLong_CheckExact(StreamObject) &&
                                    PyLong_AsLong(StreamObject) == 0 && !PyErr_Occurred())) {
      Stream = 0;
    } else { // a tidal Stream: its handle (a StreamHandle, an int)
      static PyObject *Handle = PyUnicode_InternFromString("handle");
      PyRef Value = PyRef::steal(PyObject_GetAttr(StreamObject, Handle));
      Quick = Value && PyLong_Check(Value.get());
      if (Quick)
        Stream = PyLong_AsUnsignedLongLong(Value.get());
      Quick = Quick && !PyErr_Occurred();
      PyErr_Clear();
    }
  }
  if (Quick && PyTuple_GET_SIZE(Key) > 3) {
    PyObject *Bytes = PyTuple_GET_ITEM(Key, 3);
    Quick = PyLong_CheckExact(Bytes);
    if (Quick) {
      SharedBytes = PyLong_AsUnsignedLongLong(Bytes);
      Quick = !PyErr_Occurred();
      PyErr_Clear();
    }
  }
  if (!Quick) {
    // (griddim, blockdim, stream handle, sharedmem, stream, block error):
    // normalised, or raises.
    static PyObject *Method = PyUnicode_InternFromString("_launch_config");
    PyRef Checked = PyRef::steal(PyObject_CallMethodOneArg(Self, Method, Key));
    if (!Checked)
      return nullptr;
    PyObject *StreamGiven, *Message;
    unsigned int GX, GY, GZ, BX, BY, BZ;
    if (!PyArg_ParseTuple(Checked.get(), "(III)(III)KKOO", &GX, &GY, &GZ, &BX, &BY, &BZ, &Stream,
                          &SharedBytes, &StreamGiven, &Message))
      return nullptr;
    if (Message != Py_None)
      BlockError = PyRef::borrow(Message);
    Grid = {GX, GY, GZ};
    Block = {BX, BY, BZ};
    StreamObject = StreamGiven;
  }
  try {
    warnLowOccupancy(configuredState(Self), Grid);
  } catch (...) {
    raisePythonError();
    return nullptr;
  }
  auto *Config = PyObject_GC_New(LaunchConfigObject, LaunchConfigType);
  if (!Config)
    return nullptr;
  Config->Dispatcher = Py_NewRef(Self);
  Config->Grid = Grid;
  Config->Block = Block;
  Config->Stream = Stream;
  Config->SharedBytes = SharedBytes;
  Config->StreamObject = Py_NewRef(StreamObject);
  Config->BlockError = BlockError.release();
  Config->Vectorcall = LaunchConfig_vectorcall;
  PyObject_GC_Track(Config);
  return reinterpret_cast<PyObject *>(Config);
}

namespace {

PyMemberDef LaunchConfigMembers[] = {{"__vectorcalloffset__", T_PYSSIZET,
                                      offsetof(LaunchConfigObject, Vectorcall), READONLY, nullptr},
                                     {nullptr, 0, 0, 0, nullptr}};

PyType_Slot LaunchConfigSlots[] = {
    {Py_tp_doc, const_cast<char *>("kernel[griddim, blockdim, stream, sharedmem]: call it with "
                                   "the kernel's arguments to launch it.")},
    {Py_tp_call, reinterpret_cast<void *>(PyVectorcall_Call)},
    {Py_tp_dealloc, reinterpret_cast<void *>(LaunchConfig_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void *>(LaunchConfig_traverse)},
    {Py_tp_repr, reinterpret_cast<void *>(LaunchConfig_repr)},
    {Py_tp_methods, LaunchConfigMethods},
    {Py_tp_getset, LaunchConfigGetSet},
    {Py_tp_members, LaunchConfigMembers},
    {0, nullptr}};

PyType_Spec LaunchConfigSpec = {"tidal._tidal.LaunchConfiguration", sizeof(LaunchConfigObject), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL |
                                    Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_HAVE_GC,
                                LaunchConfigSlots};

// CUDA's launch limits (include/tidal/HostABI.h), which tidal.cuda.dispatcher
// checks against: MAX_THREADS_PER_BLOCK, MAX_BLOCK_DIM and MAX_GRID_DIM; and
// the shared memory per block that the cpu target's device reports.
int addLaunchLimits(PyObject *Module) {
  PyRef Block =
      PyRef::steal(Py_BuildValue("(III)", MaxBlockDims[0], MaxBlockDims[1], MaxBlockDims[2]));
  PyRef Grid = PyRef::steal(Py_BuildValue("(III)", MaxGridDims[0], MaxGridDims[1], MaxGridDims[2]));
  if (!Block || !Grid ||
      PyModule_AddIntConstant(Module, "MAX_THREADS_PER_BLOCK", TIDAL_MAX_THREADS_PER_BLOCK) < 0 ||
      PyModule_AddObjectRef(Module, "MAX_BLOCK_DIM", Block.get()) < 0 ||
      PyModule_AddObjectRef(Module, "MAX_GRID_DIM", Grid.get()) < 0 ||
      PyModule_AddIntConstant(Module, "MAX_SHARED_MEMORY_PER_BLOCK",
                              TIDAL_MAX_SHARED_BYTES_PER_BLOCK) < 0 ||
      PyModule_AddIntConstant(Module, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
                              TIDAL_MAX_SHARED_BYTES_PER_BLOCK_OPTIN) < 0)
    return -1;
  return 0;
}

} // namespace

int addLaunchConfigType(PyObject *Module) {
  // Held for the life of the process: every launch configuration is one.
  LaunchConfigType = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&LaunchConfigSpec));
  if (!LaunchConfigType ||
      PyModule_AddObjectRef(Module, "LaunchConfiguration",
                            reinterpret_cast<PyObject *>(LaunchConfigType)) < 0)
    return -1;
  return addLaunchLimits(Module);
}

} // namespace tidal::binding
