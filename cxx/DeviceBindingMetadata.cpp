// DeviceBinding.h's module metadata, written by compileCuda and read by
// tidal-bind and the linking of foreign functions (python/src/
// ForeignLinking.cpp). LLVM only, no Clang: _tidal compiles it too.

#include "DeviceBinding.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"

namespace tidal::cxx {

void attachBindings(llvm::Module &M, const std::vector<DeviceFunctionBinding> &Bindings) {
  llvm::LLVMContext &Context = M.getContext();
  llvm::NamedMDNode *Node = M.getOrInsertNamedMetadata(DeviceFunctionsMetadata);
  auto Text = [&](const std::string &S) -> llvm::Metadata * {
    return llvm::MDString::get(Context, S);
  };
  for (const DeviceFunctionBinding &B : Bindings) {
    std::vector<llvm::Metadata *> Fields = {Text(B.Symbol),   Text(B.QualifiedName),
                                            Text(B.Declaration), Text(B.Reason),
                                            Text(std::string(B.Defined ? "1" : "0") +
                                                 (B.ExternC ? "c" : "")),
                                            Text(B.ReturnType)};
    for (size_t I = 0; I < B.ParameterTypes.size(); ++I) {
      Fields.push_back(Text(B.ParameterTypes[I]));
      Fields.push_back(Text(B.ParameterNames[I]));
    }
    Node->addOperand(llvm::MDNode::get(Context, Fields));
  }
}

std::vector<DeviceFunctionBinding> readBindings(const llvm::Module &M) {
  std::vector<DeviceFunctionBinding> Bindings;
  const llvm::NamedMDNode *Node = M.getNamedMetadata(DeviceFunctionsMetadata);
  if (!Node)
    return Bindings;
  for (const llvm::MDNode *N : Node->operands()) {
    auto Text = [&](unsigned I) {
      return llvm::cast<llvm::MDString>(N->getOperand(I))->getString().str();
    };
    DeviceFunctionBinding B;
    B.Symbol = Text(0);
    B.QualifiedName = Text(1);
    B.Declaration = Text(2);
    B.Reason = Text(3);
    std::string Flags = Text(4);
    B.Defined = !Flags.empty() && Flags[0] == '1';
    B.ExternC = Flags.find('c') != std::string::npos;
    B.ReturnType = Text(5);
    for (unsigned I = 6; I + 1 < N->getNumOperands(); I += 2) {
      B.ParameterTypes.push_back(Text(I));
      B.ParameterNames.push_back(Text(I + 1));
    }
    Bindings.push_back(std::move(B));
  }
  return Bindings;
}

} // namespace tidal::cxx
