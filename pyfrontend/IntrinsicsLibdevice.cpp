// tidal.cuda.libdevice: every function of libdevice (__nv_<name>) as the
// record libdevice.<name>, made from the table that tidal-libdevice-table
// writes at build time from clang's declarations of libdevice
// (build/generated/tidal/LibdeviceFunctions.inc, utils/libdevice_table/).
// One typing rule and one emitter serve every record; the call goes to
// libdevice's own function, which the NVPTX path links from the toolkit
// (llvm-plugin/LowerMath.cpp) and the cpu target from tidal's host
// definitions (llvm-plugin/LinkHostLibdevice.cpp).
#include "IntrinsicTable.h"

#include "llvm/IR/Module.h"

#include <string>
#include <vector>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// One row of the generated table: types in the Itanium ABI's letters,
// "P" before an output pointer, "PK" before an input pointer.
struct LibdeviceRow {
  const char *Name; // without __nv_
  const char *Return;
  const char *Parameters;
};

const LibdeviceRow Rows[] = {
#define TIDAL_LIBDEVICE_FUNCTION(Name, Return, Parameters) {#Name, Return, Parameters},
#include "tidal/LibdeviceFunctions.inc"
#undef TIDAL_LIBDEVICE_FUNCTION
};

// A row as Python sees it, typed as Numba types libdevice
// (numba/cuda/libdevicefuncs.py): integers by width, signed whatever C's
// signedness; output pointers become results after the return value.
struct LibdeviceSignature {
  std::string Function; // __nv_<name>
  bool ReturnsVoid = false;
  Scalar Return = Scalar::Int32;
  std::vector<Scalar> Inputs;  // the Python arguments
  std::vector<Scalar> Outputs; // the pointer parameters written, in order
  std::vector<bool> IsOutput;  // per C parameter
  bool ReadsMemory = false;    // an input pointer (nan, norm): not callable
};

Scalar scalarOfLetter(char Letter) {
  switch (Letter) {
  case 'a': return Scalar::Int8;
  case 's': case 't': return Scalar::Int16;
  case 'i': case 'j': return Scalar::Int32;
  case 'x': case 'y': return Scalar::Int64;
  case 'f': return Scalar::Float32;
  default: return Scalar::Float64; // 'd'
  }
}

LibdeviceSignature decode(const LibdeviceRow &Row) {
  LibdeviceSignature S;
  S.Function = std::string("__nv_") + Row.Name;
  S.ReturnsVoid = Row.Return[0] == 'v';
  if (!S.ReturnsVoid)
    S.Return = scalarOfLetter(Row.Return[0]);
  for (const char *P = Row.Parameters; *P; ++P) {
    if (*P != 'P') {
      S.Inputs.push_back(scalarOfLetter(*P));
      S.IsOutput.push_back(false);
      continue;
    }
    if (P[1] == 'K') {
      S.ReadsMemory = true;
      P += 2;
      S.IsOutput.push_back(false);
      continue;
    }
    ++P;
    S.Outputs.push_back(scalarOfLetter(*P));
    S.IsOutput.push_back(true);
  }
  return S;
}

// The Python result type: the return value, then the outputs; a tuple when
// there are several.
Type resultType(const LibdeviceSignature &S) {
  std::vector<Type> Parts;
  if (!S.ReturnsVoid)
    Parts.push_back(Type::scalar(S.Return));
  for (Scalar Output : S.Outputs)
    Parts.push_back(Type::scalar(Output));
  if (Parts.size() == 1)
    return Parts[0];
  return Type::tuple(Parts);
}

std::string describe(const LibdeviceSignature &S, const std::string &Python) {
  std::string Text = Python + "(";
  for (size_t I = 0; I < S.Inputs.size(); ++I)
    Text += std::string(I ? ", " : "") + scalarName(S.Inputs[I]);
  return Text + ") -> " + resultType(S).str() + ": libdevice's " + S.Function + ".";
}

// The records and what each one calls, built once from the rows.
struct LibdeviceTable {
  std::vector<LibdeviceSignature> Signatures; // parallel to Records
  std::vector<std::string> Paths, Docs;
  std::vector<IntrinsicRecord> Records;
};

TypedValue typeLibdeviceCall(IntrinsicCall &Call);
TypedValue emitLibdeviceCall(IntrinsicCall &Call, const Type &Result);

const LibdeviceTable &table() {
  static const LibdeviceTable Table = [] {
    LibdeviceTable T;
    for (const LibdeviceRow &Row : Rows) {
      LibdeviceSignature S = decode(Row);
      if (S.ReadsMemory) // nan(tag), norm(n, array): no Python form
        continue;
      T.Paths.push_back(std::string("libdevice.") + Row.Name);
      T.Docs.push_back(describe(S, Row.Name));
      T.Signatures.push_back(std::move(S));
    }
    for (size_t I = 0; I < T.Signatures.size(); ++I)
      T.Records.push_back({T.Paths[I].c_str(), IntrinsicKind::Function, typeLibdeviceCall,
                           emitLibdeviceCall, "",
                           T.Docs[I].c_str()});
    return T;
  }();
  return Table;
}

const LibdeviceSignature &signatureOf(const IntrinsicCall &Call) {
  const LibdeviceTable &Table = table();
  return Table.Signatures[Call.Record - Table.Records.data()];
}

// libdevice.<name>(args): real numbers, which convert to the parameter types
// (as Numba's typing converts them); the result is the return value, then
// the outputs.
TypedValue typeLibdeviceCall(IntrinsicCall &Call) {
  const LibdeviceSignature &S = signatureOf(Call);
  const std::string Python = Call.Record->PythonPath;
  expectArgCount(Call, Python, S.Inputs.size(), S.Inputs.size());
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    const Type &T = Call.Args[I].T;
    if (!T.isScalar() || isComplex(T.Dtype))
      Call.C.typingError(Call.ArgNodes[I], Python + "() argument " + std::to_string(I + 1) +
                                               " must be a real number (it is converted to " +
                                               scalarName(S.Inputs[I]) + "), not " + T.str());
  }
  return TypedValue(resultType(S));
}

// The call of __nv_<name>: the outputs live in stack slots of the entry
// block and are read back into the result tuple.
TypedValue emitLibdeviceCall(IntrinsicCall &Call, const Type &) {
  const LibdeviceSignature &S = signatureOf(Call);
  FunctionCompiler &C = Call.C;
  IRBuilder<> &B = C.builder();
  std::vector<llvm::Type *> ParameterTypes;
  std::vector<Value *> Arguments;
  std::vector<AllocaInst *> Slots;
  BasicBlock &Entry = B.GetInsertBlock()->getParent()->getEntryBlock();
  IRBuilder<> EntryBuilder(&Entry, Entry.getFirstInsertionPt());
  size_t Input = 0, Output = 0;
  for (bool IsOutput : S.IsOutput) {
    if (IsOutput) {
      AllocaInst *Slot = EntryBuilder.CreateAlloca(C.llvmType(S.Outputs[Output++]), nullptr,
                                                   S.Function + ".out");
      Slots.push_back(Slot);
      Arguments.push_back(Slot);
      ParameterTypes.push_back(Slot->getType());
      continue;
    }
    Scalar To = S.Inputs[Input];
    Arguments.push_back(
        C.convert(Call.Args[Input], Type::scalar(To), Call.ArgNodes[Input]).scalar());
    ParameterTypes.push_back(C.llvmType(To));
    ++Input;
  }
  llvm::Type *ReturnType = S.ReturnsVoid ? B.getVoidTy() : C.llvmType(S.Return);
  FunctionCallee Callee = C.module().getOrInsertFunction(
      S.Function, FunctionType::get(ReturnType, ParameterTypes, false));
  if (auto *Declared = dyn_cast<Function>(Callee.getCallee()))
    Declared->addFnAttr(Attribute::NoUnwind);
  CallInst *Value = B.CreateCall(Callee, Arguments);

  std::vector<TypedValue> Parts;
  if (!S.ReturnsVoid)
    Parts.push_back(C.makeScalar(S.Return, Value));
  for (size_t I = 0; I < Slots.size(); ++I)
    Parts.push_back(C.makeScalar(S.Outputs[I], B.CreateLoad(C.llvmType(S.Outputs[I]), Slots[I])));
  return Parts.size() == 1 ? Parts[0] : C.makeTuple(std::move(Parts));
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> libdeviceIntrinsics() { return table().Records; }

} // namespace tidal::frontend
