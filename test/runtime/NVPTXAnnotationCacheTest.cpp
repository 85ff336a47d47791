// forgetNVPTXAnnotations (tidal/Passes.h). LLVM 19's NVPTX backend caches
// what it reads of !nvvm.annotations by the Module's and each function's
// address, and forgets a module only when the PTX printer finishes it. A
// module optimised with the NVPTX passes and dropped unprinted (clang's
// module of a .cu file, an inspect_llvm(), a failed lowering) used to leave
// its entries behind: a later module at the same address, whose kernel sat
// where one of the old module's device functions was, lost its .entry (a
// CI failure: "cuModuleGetFunction ... named symbol not found").

#include "tidal/Passes.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

using namespace llvm;

namespace {

TargetMachine &nvptxMachine() {
  static std::unique_ptr<TargetMachine> Machine = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    std::string Error;
    const Target *T = TargetRegistry::lookupTarget("nvptx64-nvidia-cuda", Error);
    return std::unique_ptr<TargetMachine>(T->createTargetMachine(
        "nvptx64-nvidia-cuda", "sm_75", "", TargetOptions(), std::nullopt));
  }();
  return *Machine;
}

// The same function @f, a device function in one and a kernel in the other.
const char *DeviceFunction = R"(
target triple = "nvptx64-nvidia-cuda"
define void @f(ptr %p) {
  store i32 1, ptr %p
  ret void
}
)";
const char *Kernel = R"(
target triple = "nvptx64-nvidia-cuda"
define void @f(ptr %p) {
  store i32 1, ptr %p
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @f, !"kernel", i32 1}
)";

std::unique_ptr<Module> parse(const char *Text, LLVMContext &Context) {
  SMDiagnostic Error;
  std::unique_ptr<Module> M = parseAssemblyString(Text, Error, Context);
  EXPECT_TRUE(M) << Error.getMessage().str();
  M->setDataLayout(nvptxMachine().createDataLayout());
  return M;
}

// O3 with the NVPTX target's passes (NVVMIntrRange reads each function's
// annotations), as lowerForNVPTX and clang run it; nothing printed.
void optimise(Module &M) {
  PassBuilder Builder(&nvptxMachine());
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  Builder.registerModuleAnalyses(MAM);
  Builder.registerCGSCCAnalyses(CGAM);
  Builder.registerFunctionAnalyses(FAM);
  Builder.registerLoopAnalyses(LAM);
  Builder.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  Builder.buildPerModuleDefaultPipeline(OptimizationLevel::O3).run(M, MAM);
}

std::string ptxOf(Module &M) {
  SmallString<0> PTX;
  raw_svector_ostream Stream(PTX);
  legacy::PassManager Printer;
  EXPECT_FALSE(nvptxMachine().addPassesToEmitFile(Printer, Stream, nullptr,
                                                  CodeGenFileType::AssemblyFile));
  Printer.run(M);
  return std::string(PTX.str());
}

// The hazard needs the allocator to give a new module and its kernel the
// addresses of a dropped module and one of its device functions. glibc's
// does so in a fresh process when nothing runs between the two (checked by
// hand: without forgetNVPTXAnnotations, every round of this loop lost its
// .entry), but the printer that forgetting runs allocates in between, so
// with it the addresses rarely come back, and a test cannot make them. What
// is checked: forgetting leaves only declarations, runs the printer on them
// (its stream outlives it: it once did not, and crashed), and later
// modules keep their kernels; the count of rounds that met the hazard is
// printed.
TEST(NVPTXAnnotationCache, ForgettingLeavesDeclarationsAndLaterModulesKeepTheirKernels) {
  LLVMContext Context;
  int Hazards = 0;
  for (int Round = 0; Round < 20; ++Round) {
    const void *OldModule, *OldFunction;
    {
      std::unique_ptr<Module> Old = parse(DeviceFunction, Context);
      optimise(*Old);
      OldModule = Old.get();
      OldFunction = Old->getFunction("f");
      tidal::forgetNVPTXAnnotations(*Old, nvptxMachine());
      ASSERT_TRUE(Old->getFunction("f"));
      EXPECT_TRUE(Old->getFunction("f")->isDeclaration());
      EXPECT_TRUE(Old->named_metadata_empty());
    }
    std::unique_ptr<Module> New = parse(Kernel, Context);
    if (New.get() == OldModule && New->getFunction("f") == OldFunction)
      ++Hazards;
    EXPECT_NE(ptxOf(*New).find(".entry f("), std::string::npos) << "round " << Round;
  }
  std::printf("[ hazards  ] %d of 20 rounds reused the old module's and function's addresses\n",
              Hazards);
}

} // namespace
