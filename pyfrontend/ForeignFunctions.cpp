// Calls to foreign functions (ForeignFunctions.h): typing reads the callee's
// __tidal_foreign__ description (python/tidal/cuda/foreign.py), picks the
// overload the arguments fit best and records it in the type map
// (callForeignFunction); emission declares the symbol, calls it with
// Numba's ABI or the C ABI, and names the symbol and the code to link in
// the module's metadata (emitForeignCall).
#include "ForeignFunctions.h"
#include "FunctionCompiler.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"

#include <limits>
#include <memory>

using namespace llvm;

namespace tidal::frontend {

namespace {

// "struct NAME{field:type@offset,...;size}" as a record layout.
bool parseRecord(const std::string &Text, ForeignParameter &Out) {
  size_t Open = Text.find('{'), Semicolon = Text.rfind(';');
  if (Text.rfind("struct ", 0) != 0 || Open == std::string::npos ||
      Semicolon == std::string::npos || Text.back() != '}' || Semicolon < Open)
    return false;
  Out.RecordName = Text.substr(7, Open - 7);
  auto Layout = std::make_shared<RecordLayout>();
  std::string Fields = Text.substr(Open + 1, Semicolon - Open - 1);
  size_t Start = 0;
  while (Start < Fields.size()) {
    size_t End = Fields.find(',', Start);
    std::string Field = Fields.substr(Start, End == std::string::npos ? std::string::npos
                                                                      : End - Start);
    size_t Colon = Field.find(':'), At = Field.find('@');
    if (Colon == std::string::npos || At == std::string::npos || At < Colon)
      return false;
    RecordField F;
    F.Name = Field.substr(0, Colon);
    if (!scalarFromName(Field.substr(Colon + 1, At - Colon - 1), F.Type))
      return false;
    F.Offset = static_cast<unsigned>(std::stoul(Field.substr(At + 1)));
    Layout->Fields.push_back(F);
    if (End == std::string::npos)
      break;
    Start = End + 1;
  }
  Layout->Size = static_cast<unsigned>(std::stoul(Text.substr(Semicolon + 1)));
  for (const RecordField &F : Layout->Fields)
    Layout->Align = std::max(Layout->Align, F.elementAlign());
  Out.Record = std::move(Layout);
  return !Out.Record->Fields.empty();
}

} // namespace

bool parseForeignParameter(const std::string &Text, ForeignParameter &Out) {
  Out.Text = Text;
  std::string Name = Text;
  Out.Const = Name.rfind("const ", 0) == 0;
  if (Out.Const)
    Name = Name.substr(6);
  Out.Pointer = !Name.empty() && Name.back() == '*';
  if (Out.Pointer)
    Name.pop_back();
  if (Name.rfind("struct ", 0) == 0)
    return parseRecord(Name, Out) && (Out.Pointer || !Out.Const);
  return scalarFromName(Name, Out.Element) && !isComplex(Out.Element) &&
         (Out.Pointer || !Out.Const);
}

const char *cxxScalarName(Scalar S) {
  switch (S) {
  case Scalar::Bool: return "bool";
  case Scalar::Int8: return "signed char";
  case Scalar::Int16: return "short";
  case Scalar::Int32: return "int";
  case Scalar::Int64: return "long long";
  case Scalar::UInt8: return "unsigned char";
  case Scalar::UInt16: return "unsigned short";
  case Scalar::UInt32: return "unsigned int";
  case Scalar::UInt64: return "unsigned long long";
  case Scalar::Float16: return "half";
  case Scalar::Float32: return "float";
  case Scalar::Float64: return "double";
  default: return nullptr;
  }
}

std::string foreignParameterText(const ForeignParameter &P) {
  if (P.Record)
    return P.Text;
  return (P.Const ? "const " : "") + std::string(scalarName(P.Element)) + (P.Pointer ? "*" : "");
}

// The fields of a record layout as a user reads them.
std::string describeRecord(const std::string &Name, const RecordLayout &Layout) {
  std::string Out = "struct " + Name + " {";
  for (size_t I = 0; I < Layout.Fields.size(); ++I)
    Out += (I ? ", " : "") + Layout.Fields[I].Name + ": " + scalarName(Layout.Fields[I].Type) +
           " at " + std::to_string(Layout.Fields[I].Offset);
  return Out + "} (" + std::to_string(Layout.Size) + " bytes)";
}

// The record layout matches the struct: the same numbers at the same
// offsets, the same size (the names may differ).
bool sameLayout(const RecordLayout &Struct, const RecordLayout &Record) {
  if (Struct.Size != Record.Size || Struct.Fields.size() != Record.Fields.size())
    return false;
  for (size_t I = 0; I < Struct.Fields.size(); ++I)
    if (Struct.Fields[I].Type != Record.Fields[I].Type ||
        Struct.Fields[I].Offset != Record.Fields[I].Offset ||
        !Record.Fields[I].Shape.empty())
      return false;
  return true;
}


namespace {

std::vector<PyObject *> sequenceItems(PyObject *Sequence, const PyRef &Keep) {
  std::vector<PyObject *> Items;
  (void)Keep;
  for (Py_ssize_t I = 0; I < PySequence_Fast_GET_SIZE(Sequence); ++I)
    Items.push_back(PySequence_Fast_GET_ITEM(Sequence, I));
  return Items;
}

PyRef fastSequence(PyObject *O, const char *What) {
  return PyRef::check(PySequence_Fast(O, What));
}

// The cost of passing an argument of type Argument to P: 0 for an exact
// match, more for each conversion a C++ caller would make (widening before
// int-to-float before narrowing), -1 when it cannot be passed; Why says
// why not.
int passingCost(const Type &Argument, const ForeignParameter &P, std::string &Why) {
  if (P.Record && !P.Pointer) { // by value: a copy of a record
    if (!Argument.isRecord() || !sameLayout(*P.Record, *Argument.Record)) {
      Why = "takes " + describeRecord(P.RecordName, *P.Record) +
            " by value: a record of that layout, not " + Argument.str();
      return -1;
    }
    return 0;
  }
  if (P.Record) {
    bool IsRecord = Argument.isRecord() || Argument.hasRecordElements();
    if (!IsRecord || !sameLayout(*P.Record, *Argument.Record)) {
      Why = "takes a pointer to " + describeRecord(P.RecordName, *P.Record) +
            ": a record or record array of that layout, not " + Argument.str();
      return -1;
    }
    if (Argument.ReadOnly && !P.Const) {
      Why = "writes through its pointer: a read-only record needs a const parameter";
      return -1;
    }
    return 0;
  }
  if (P.Pointer && Argument.isPointer()) { // a CPointer, or a voidptr to any pointer
    if (!Argument.isVoidPointer() && Argument.Dtype != P.Element) {
      Why = "takes a pointer to " + std::string(scalarName(P.Element)) + ", not " + Argument.str();
      return -1;
    }
    return 0;
  }
  if (P.Pointer) {
    if (!Argument.isArray() || Argument.Record) {
      Why = "takes an array of " + std::string(scalarName(P.Element)) + " (its data's address), not " +
            Argument.str();
      return -1;
    }
    if (Argument.Dtype != P.Element) {
      Why = "takes an array of " + std::string(scalarName(P.Element)) + ", not of " +
            scalarName(Argument.Dtype);
      return -1;
    }
    if (Argument.ReadOnly && !P.Const) {
      Why = "writes through its pointer: a read-only array needs a const parameter";
      return -1;
    }
    return 0;
  }
  if (!Argument.isScalar() || isComplex(Argument.Dtype)) {
    Why = "takes a number (" + std::string(scalarName(P.Element)) + "), not " + Argument.str();
    return -1;
  }
  Scalar From = Argument.Dtype, To = P.Element;
  if (From == To)
    return 0;
  if (To == Scalar::Bool)
    return 4;
  bool FromFloat = isFloat(From), ToFloat = isFloat(To);
  unsigned FromBits = bitWidth(From), ToBits = bitWidth(To);
  if (FromFloat == ToFloat) {
    bool SameSign = FromFloat || From == Scalar::Bool || isSigned(From) == isSigned(To);
    return SameSign && FromBits <= ToBits ? 1 : 3;
  }
  return FromFloat ? 4 : 2;
}

struct Candidate {
  ForeignFunction Function;
  std::string Reason; // why it cannot be bound at all
};

Candidate readCandidate(PyObject *Entry, const std::string &Shown) {
  PyRef Fields = fastSequence(Entry, "a foreign function's candidate must be a tuple");
  std::vector<PyObject *> Items = sequenceItems(Fields.get(), Fields);
  if (Items.size() != 6)
    throw std::runtime_error("internal error: a foreign function's candidate has " +
                             std::to_string(Items.size()) + " fields, not 6");
  Candidate C;
  ForeignFunction &F = C.Function;
  F.Shown = Shown;
  F.Symbol = PyRef::borrow(Items[0]).str();
  F.NumbaABI = PyRef::borrow(Items[1]).str() == "numba";
  std::string Result = PyRef::borrow(Items[2]).str();
  C.Reason = PyRef::borrow(Items[4]).isNone() ? "" : PyRef::borrow(Items[4]).str();
  F.Declared = PyRef::borrow(Items[5]).str();
  if (!C.Reason.empty())
    return C;
  F.HasResult = Result != "void";
  F.ResultText = Result;
  ForeignParameter Returned;
  if (F.HasResult && Result.rfind("struct ", 0) == 0) {
    if (!parseForeignParameter(Result, Returned) || Returned.Pointer)
      C.Reason = "its result type '" + Result + "' is not a struct of numbers";
    else if (F.NumbaABI)
      C.Reason = "Numba's ABI returns numbers, not structs (abi='c' returns them)";
    else
      F.ResultRecord = Returned.Record;
  } else if (F.HasResult && (!scalarFromName(Result, F.Result) || isComplex(F.Result))) {
    C.Reason = "its result type '" + Result + "' is not a real number";
  }
  PyRef Params = fastSequence(Items[3], "a foreign function's parameters must be a list");
  for (PyObject *P : sequenceItems(Params.get(), Params)) {
    ForeignParameter Parameter;
    std::string Text = PyRef::borrow(P).str();
    if (!parseForeignParameter(Text, Parameter) && C.Reason.empty())
      C.Reason = "parameter type '" + Text + "' is not a number, a struct of numbers or a "
                 "pointer to either";
    F.Parameters.push_back(Parameter);
  }
  return C;
}

std::vector<ForeignLink> readLinks(PyObject *Links) {
  std::vector<ForeignLink> Out;
  PyRef Items = fastSequence(Links, "a foreign function's links must be a list");
  for (PyObject *Item : sequenceItems(Items.get(), Items)) {
    PyRef Fields = fastSequence(Item, "a link must be a tuple");
    std::vector<PyObject *> Parts = sequenceItems(Fields.get(), Fields);
    if (Parts.size() != 4)
      throw std::runtime_error("internal error: a link has " + std::to_string(Parts.size()) +
                               " fields, not 4");
    ForeignLink L;
    L.Kind = PyRef::borrow(Parts[0]).str();
    L.Name = PyRef::borrow(Parts[1]).str();
    if (PyBytes_Check(Parts[2])) {
      L.Payload.assign(PyBytes_AS_STRING(Parts[2]), PyBytes_GET_SIZE(Parts[2]));
    } else {
      Py_ssize_t Size = 0;
      const char *Text = PyUnicode_AsUTF8AndSize(Parts[2], &Size);
      if (!Text)
        throw PythonErrorSet();
      L.Payload.assign(Text, Size);
    }
    PyRef Options = fastSequence(Parts[3], "a link's options must be a sequence");
    for (PyObject *O : sequenceItems(Options.get(), Options))
      L.Options.push_back(PyRef::borrow(O).str());
    Out.push_back(std::move(L));
  }
  return Out;
}

// The C++ type of an argument as a forwarding function takes it exactly:
// "float", "long long", "const double *" for a read-only float64 array;
// "" for one C++ has no type for here (a record, a tuple, a complex number,
// float16, whose prelude type is not a number tidal binds).
std::string cxxArgumentType(const Type &T) {
  const char *Name = T.Record ? nullptr : cxxScalarName(T.Dtype);
  if (!Name || T.Dtype == Scalar::Float16)
    return "";
  if (T.isScalar())
    return Name;
  if (T.isArray())
    return (T.ReadOnly ? "const " : "") + std::string(Name) + " *";
  if (T.isPointer())
    return T.isVoidPointer() ? "void *" : std::string(Name) + " *";
  return "";
}

std::string argumentTypesText(const std::vector<TypedValue> &Args) {
  std::string Out = "(";
  for (size_t I = 0; I < Args.size(); ++I)
    Out += (I ? ", " : "") + Args[I].T.str();
  return Out + ")";
}

} // namespace

TypedValue FunctionCompiler::callForeignFunction(PyObject *Callee, PyObject *Node,
                                                 std::vector<TypedValue> &Args,
                                                 std::vector<PyObject *> &ArgNodes,
                                                 std::vector<std::string> &Keywords) {
  // (name as called, [candidates], [links], why there are none)
  PyRef Description = PyRef::borrow(Callee).attr("__tidal_foreign__");
  PyRef Fields = fastSequence(Description.get(), "__tidal_foreign__ must be a tuple");
  std::vector<PyObject *> Items = sequenceItems(Fields.get(), Fields);
  if (Items.size() != 4)
    throw std::runtime_error("internal error: __tidal_foreign__ has " +
                             std::to_string(Items.size()) + " fields, not 4");
  std::string Shown = PyRef::borrow(Items[0]).str();
  if (!Keywords.empty())
    typingError(ArgNodes[Args.size() - Keywords.size()],
                "foreign function '" + Shown + "' takes its arguments by position only");
  std::vector<Candidate> Candidates;
  PyRef List = fastSequence(Items[1], "foreign candidates must be a list");
  for (PyObject *Entry : sequenceItems(List.get(), List))
    Candidates.push_back(readCandidate(Entry, Shown));
  if (Candidates.empty())
    typingError(Node, PyRef::borrow(Items[3]).str());

  // The bindable candidates that take these arguments, the cheapest first.
  const Candidate *Best = nullptr;
  std::vector<const Candidate *> Tied;
  int BestCost = std::numeric_limits<int>::max();
  std::string Mismatches;
  size_t Bindable = 0;
  for (const Candidate &C : Candidates) {
    if (!C.Reason.empty())
      continue;
    ++Bindable;
    const ForeignFunction &F = C.Function;
    std::string Why;
    int Cost = 0;
    if (F.Parameters.size() != Args.size()) {
      Why = "takes " + std::to_string(F.Parameters.size()) + " arguments, not " +
            std::to_string(Args.size());
      Cost = -1;
    }
    for (size_t I = 0; Cost >= 0 && I < Args.size(); ++I) {
      int One = passingCost(Args[I].T, F.Parameters[I], Why);
      if (One < 0) {
        Why = "argument " + std::to_string(I + 1) + ": " + Why;
        Cost = -1;
      } else {
        Cost += One;
      }
    }
    if (Cost < 0) {
      Mismatches += "\n  " + F.Declared + ": " + Why;
      continue;
    }
    if (Cost < BestCost) {
      BestCost = Cost;
      Best = &C;
      Tied.clear();
    } else if (Cost == BestCost) {
      Tied.push_back(&C);
    }
  }
  // A template among the overloads, and no overload bound so far takes the
  // arguments exactly: C++'s own choice for their types, compiled for this
  // call (CxxFunction.__tidal_instance__ in foreign.py); where C++ cannot
  // make the call either, an overload that takes the arguments with a
  // conversion still does.
  // Why no template instance is made for these arguments, when C++ has no
  // type for one of them: said in place of the template's reason below.
  std::string NoInstance;
  if ((!Best || BestCost > 0) && PyObject_HasAttrString(Callee, "__tidal_instance__")) {
    PyRef CxxTypes = PyRef::check(PyTuple_New(static_cast<Py_ssize_t>(Args.size())));
    for (size_t I = 0; I < Args.size(); ++I) {
      std::string CxxType = cxxArgumentType(Args[I].T);
      if (CxxType.empty() && NoInstance.empty())
        NoInstance = "tidal makes C++ template instances from numbers and arrays of numbers, "
                     "and argument " + std::to_string(I + 1) + " is " + Args[I].T.str();
      PyTuple_SET_ITEM(CxxTypes.get(), static_cast<Py_ssize_t>(I),
                       PyRef::check(PyUnicode_FromString(CxxType.c_str())).release());
    }
    PyObject *Answer =
        NoInstance.empty()
            ? PyObject_CallMethod(Callee, "__tidal_instance__", "(O)", CxxTypes.get())
            : Py_NewRef(Py_None);
    if (!NoInstance.empty() && !Best && !Bindable)
      typingError(Node, "cannot call '" + Shown + "' with arguments " + argumentTypesText(Args) +
                            ": " + NoInstance);
    if (!Answer) {
      if (!PyErr_ExceptionMatches(PyExc_TypeError))
        throw PythonErrorSet();
      PyObject *Type, *Value, *Traceback;
      PyErr_Fetch(&Type, &Value, &Traceback);
      PyRef Why = PyRef::steal(Value ? PyObject_Str(Value) : nullptr);
      Py_XDECREF(Type);
      Py_XDECREF(Value);
      Py_XDECREF(Traceback);
      if (!Best)
        typingError(Node, "cannot call '" + Shown + "' with arguments " +
                              argumentTypesText(Args) + ": " +
                              (Why ? Why.str() : std::string("C++ cannot make the call")));
    } else if (PyRef Instance = PyRef::steal(Answer); !Instance.isNone()) {
      PyRef InstanceFields =
          fastSequence(Instance.get(), "__tidal_instance__ must return a tuple");
      std::vector<PyObject *> InstanceItems = sequenceItems(InstanceFields.get(), InstanceFields);
      PyRef InstanceList = fastSequence(InstanceItems.at(1), "foreign candidates must be a list");
      std::vector<PyObject *> Entries = sequenceItems(InstanceList.get(), InstanceList);
      if (Entries.size() != 1)
        throw std::runtime_error("internal error: __tidal_instance__ gave " +
                                 std::to_string(Entries.size()) + " candidates, not 1");
      Candidate Made = readCandidate(Entries[0], Shown);
      std::string Why;
      for (size_t I = 0; I < Args.size(); ++I)
        if (Made.Function.Parameters.size() != Args.size() ||
            passingCost(Args[I].T, Made.Function.Parameters[I], Why) != 0)
          throw std::runtime_error("internal error: the C++ forwarder " +
                                   Made.Function.Declared + " does not take " +
                                   argumentTypesText(Args) + " exactly");
      return recordForeignCall(Node, Made.Function, InstanceItems.at(2), Args);
    }
  }
  if (!Bindable) {
    std::string Message = "cannot call '" + Shown + "':";
    for (const Candidate &C : Candidates)
      Message += (Candidates.size() > 1 ? "\n  " : " ") + C.Function.Declared +
                 " cannot be bound: " + C.Reason;
    typingError(Node, Message);
  }
  if (!Best) {
    // The candidates that cannot be bound say why too (a template without
    // an instance for these types, ...).
    for (const Candidate &C : Candidates)
      if (!C.Reason.empty())
        Mismatches += "\n  " + C.Function.Declared + ": cannot be bound: " +
                      (!NoInstance.empty() && C.Reason.rfind("a template", 0) == 0 ? NoInstance
                                                                                : C.Reason);
    typingError(Node, "no '" + Shown + "' takes arguments " + argumentTypesText(Args) + ":" +
                          Mismatches);
  }
  if (!Tied.empty()) {
    std::string Message = "call of '" + Shown + "' with arguments " + argumentTypesText(Args) +
                          " is ambiguous between\n  " + Best->Function.Declared;
    for (const Candidate *C : Tied)
      Message += "\n  " + C->Function.Declared;
    typingError(Node, Message + "\nconvert the arguments to pick one");
  }
  return recordForeignCall(Node, Best->Function, Items[2], Args);
}

TypedValue FunctionCompiler::recordForeignCall(PyObject *Node, const ForeignFunction &Function,
                                               PyObject *Links,
                                               const std::vector<TypedValue> &Args) {
  auto Chosen = std::make_shared<ForeignFunction>(Function);
  Chosen->Links = readLinks(Links);
  CallTarget &Target = Typing.Calls[Node];
  Target.Result = Chosen->resultType();
  Target.ArgumentOrder.clear();
  for (size_t I = 0; I < Args.size(); ++I)
    Target.ArgumentOrder.push_back(I);
  Target.Foreign = std::move(Chosen);
  return TypedValue(Target.Result);
}

// A struct of numbers as clang lays it out in LLVM IR: the fields' memory
// types in order, with byte arrays where the offsets leave gaps (packed
// where natural alignment would not put them there); one identified type
// per list of elements in the context, which the linker maps clang's
// %struct.X to (the same elements).
llvm::StructType *FunctionCompiler::recordStructType(const RecordLayout &Layout) {
  std::vector<llvm::Type *> Elements;
  unsigned Position = 0, MostAligned = 1;
  bool Packed = false;
  for (const RecordField &Field : Layout.Fields)
    if (Field.Offset % Field.elementAlign())
      Packed = true;
  for (const RecordField &Field : Layout.Fields) {
    unsigned FieldAlign = Packed ? 1 : Field.elementAlign();
    MostAligned = std::max(MostAligned, FieldAlign);
    unsigned Natural = (Position + FieldAlign - 1) / FieldAlign * FieldAlign;
    if (Field.Offset > Natural)
      Elements.push_back(ArrayType::get(B.getInt8Ty(), Field.Offset - Position));
    Elements.push_back(llvmMemoryType(Field.Type));
    Position = Field.Offset + Field.elementSize();
  }
  unsigned Rounded = (Position + MostAligned - 1) / MostAligned * MostAligned;
  if (Layout.Size > Rounded)
    Elements.push_back(ArrayType::get(B.getInt8Ty(), Layout.Size - Position));
  std::string Name = Packed ? "tidal.foreign.packed" : "tidal.foreign.struct";
  for (llvm::Type *T : Elements) {
    std::string Text;
    raw_string_ostream Stream(Text);
    T->print(Stream);
    Name += "." + Stream.str();
  }
  if (llvm::StructType *Known = llvm::StructType::getTypeByName(Ctx, Name))
    return Known;
  return llvm::StructType::create(Ctx, Elements, Name, Packed);
}

namespace {

// Adds Fields to the named metadata Name unless a node with the same
// first Key fields is there already.
void addUnique(Module &M, const char *Name, const std::vector<std::string> &Fields, size_t Key) {
  NamedMDNode *Node = M.getOrInsertNamedMetadata(Name);
  for (const MDNode *Existing : Node->operands()) {
    bool Same = Existing->getNumOperands() >= Key;
    for (size_t I = 0; Same && I < Key; ++I)
      Same = cast<MDString>(Existing->getOperand(I))->getString() == Fields[I];
    if (Same)
      return;
  }
  std::vector<Metadata *> Operands;
  for (const std::string &F : Fields)
    Operands.push_back(MDString::get(M.getContext(), F));
  Node->addOperand(MDNode::get(M.getContext(), Operands));
}

} // namespace

TypedValue FunctionCompiler::emitForeignCall(PyObject *Node, const CallTarget &Target,
                                             std::vector<TypedValue> &Args,
                                             std::vector<PyObject *> &ArgNodes) {
  const ForeignFunction &F = *Target.Foreign;
  std::vector<llvm::Type *> Parameters;
  llvm::Type *Pointer = PointerType::get(Ctx, 0);
  if (F.NumbaABI)
    Parameters.push_back(Pointer);
  for (const ForeignParameter &P : F.Parameters)
    Parameters.push_back(P.Pointer || P.Record ? Pointer : llvmType(P.Element));
  llvm::Type *Result = F.NumbaABI        ? B.getInt32Ty()
                       : F.ResultRecord ? recordStructType(*F.ResultRecord)
                       : F.HasResult    ? llvmType(F.Result)
                                        : B.getVoidTy();
  FunctionType *CallType = FunctionType::get(Result, Parameters, false);
  // A struct by value is clang's `ptr byval(%struct) align A`: the callee
  // gets a copy of the record the pointer points to.
  unsigned First = F.NumbaABI ? 1 : 0;
  auto addByValue = [&](auto &Target) {
    for (size_t I = 0; I < F.Parameters.size(); ++I)
      if (const ForeignParameter &P = F.Parameters[I]; P.Record && !P.Pointer) {
        unsigned Index = First + static_cast<unsigned>(I);
        Target.addParamAttr(Index, Attribute::getWithByValType(Ctx, recordStructType(*P.Record)));
        Target.addParamAttr(Index, Attribute::getWithAlignment(Ctx, Align(P.Record->Align)));
      }
  };
  llvm::Function *Callee = M.getFunction(F.Symbol);
  if (!Callee) {
    Callee = llvm::Function::Create(CallType, GlobalValue::ExternalLinkage, F.Symbol, M);
    addByValue(*Callee);
  } else if (Callee->getFunctionType() != CallType) {
    std::string Was, Now;
    raw_string_ostream WasStream(Was), NowStream(Now);
    Callee->getFunctionType()->print(WasStream);
    CallType->print(NowStream);
    fail("CompileError", Node,
         "foreign function '" + F.Shown + "' (symbol '" + F.Symbol + "', " + F.Declared +
             ") is called as " + NowStream.str() + " here and as " + WasStream.str() +
             " elsewhere in this kernel: one symbol needs one signature");
  }

  std::vector<Value *> CallArgs;
  AllocaInst *ResultSlot = nullptr;
  if (F.NumbaABI) {
    ResultSlot = entryAlloca(llvmMemoryType(F.Result), "foreign.result");
    CallArgs.push_back(ResultSlot);
  }
  for (size_t I = 0; I < Args.size(); ++I) {
    const ForeignParameter &P = F.Parameters[I];
    if (P.Pointer || P.Record)
      CallArgs.push_back(Args[I].Parts[0]); // the array's data, the record's address
    else
      CallArgs.push_back(convert(Args[I], frontend::Type::scalar(P.Element), ArgNodes[I]).scalar());
  }
  CallInst *Call = B.CreateCall(Callee, CallArgs);
  addByValue(*Call);

  // What the linking step needs: the symbol, where it is first called, and
  // the code that defines it.
  SourceLocation Where = locate(Node);
  std::vector<std::string> Use = {F.Symbol,   F.Shown,
                                  F.Declared, F.NumbaABI ? "numba" : "c",
                                  Where.File, std::to_string(Where.Line),
                                  std::to_string(Where.Column), Where.SourceLine,
                                  F.ResultRecord ? F.ResultText
                                  : F.HasResult  ? scalarName(F.Result)
                                                 : "void"};
  for (const ForeignParameter &P : F.Parameters)
    Use.push_back(foreignParameterText(P));
  addUnique(M, ForeignCallsMetadata, Use, 1);
  for (const ForeignLink &L : F.Links) {
    std::vector<std::string> Fields = {L.Kind, L.Name, L.Payload};
    Fields.insert(Fields.end(), L.Options.begin(), L.Options.end());
    addUnique(M, ForeignLinksMetadata, Fields, Fields.size());
  }

  if (!F.HasResult)
    return TypedValue(frontend::Type::none());
  if (F.ResultRecord) {
    // The struct returned, in memory: a record is its address.
    AllocaInst *Slot = entryAlloca(Result, "foreign.record");
    Slot->setAlignment(Align(F.ResultRecord->Align));
    B.CreateAlignedStore(Call, Slot, Align(F.ResultRecord->Align));
    TypedValue Record(F.resultType());
    Record.Parts.push_back(Slot);
    return Record;
  }
  llvm::Value *Returned = Call;
  if (F.NumbaABI) {
    Returned = B.CreateLoad(llvmMemoryType(F.Result), ResultSlot, "foreign.value");
    if (F.Result == Scalar::Bool)
      Returned = B.CreateICmpNE(Returned, ConstantInt::get(Returned->getType(), 0));
  }
  return makeScalar(F.Result, Returned);
}

} // namespace tidal::frontend
