// Shared by the cpu-target kernel tests (CpuKernelTest.cpp,
// CpuKernelWarpTest.cpp): the marker declarations their IR uses, and
// compileMarkers, which lowers marker IR with tidal::runHostPipeline and
// compiles it with CpuModule.
#ifndef TIDAL_TEST_RUNTIME_CPUKERNELTESTING_H
#define TIDAL_TEST_RUNTIME_CPUKERNELTESTING_H

#include "tidal/Passes.h"
#include "tidal/runtime/CpuTarget.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tidal::runtime::testkit {

// Declarations of every marker the kernels below use.
inline constexpr const char *Markers = R"(
declare i32 @tidal.tid.x()
declare i32 @tidal.tid.y()
declare i32 @tidal.tid.z()
declare i32 @tidal.ntid.x()
declare i32 @tidal.ntid.y()
declare i32 @tidal.ntid.z()
declare i32 @tidal.ctaid.x()
declare i32 @tidal.ctaid.y()
declare i32 @tidal.ctaid.z()
declare i32 @tidal.nctaid.x()
declare i32 @tidal.nctaid.y()
declare void @tidal.syncthreads()
declare i32 @tidal.syncthreads.count(i32)
declare i32 @tidal.syncthreads.and(i32)
declare i32 @tidal.syncthreads.or(i32)
declare ptr @tidal.shared.array(i64, i64)
declare ptr @tidal.shared.dynamic()
declare ptr @tidal.local.array(i64, i64)
declare ptr @tidal.const.array(ptr)
declare i32 @tidal.atomic.add.i32(ptr, i32)
declare i32 @tidal.atomic.max.i32(ptr, i32)
declare float @tidal.atomic.add.f32(ptr, float)
declare i32 @tidal.atomic.inc.u32(ptr, i32)
declare i32 @tidal.atomic.cas.i32(ptr, i32, i32)
declare i32 @tidal.laneid()
declare i32 @tidal.shfl.down.i32(i32, i32, i32)
declare i32 @tidal.shfl.idx.i32(i32, i32, i32)
declare float @tidal.shfl.xor.f32(i32, float, i32)
declare i1 @tidal.vote.any(i32, i1)
declare i1 @tidal.vote.all(i32, i1)
declare i32 @tidal.vote.ballot(i32, i1)
declare i32 @tidal.match.any.i32(i32, i32)
declare i32 @tidal.activemask()
declare void @tidal.syncwarp(i32)
declare void @tidal.bounds.error(ptr, i64, i64, i32)
declare void @tidal.assert.fail(ptr)
declare float @tidal.math.sin.f32(float)
declare float @tidal.math.tan.f32(float)
declare double @tidal.math.pow.f64(double, double)
declare double @tidal.math.rsqrt.f64(double)
declare void @tidal.print(ptr, ...)
declare void @tidal.threadfence()
)";

inline std::unique_ptr<CpuModule> compileMarkers(const std::string &Body,
                                          const std::string &Name,
                                          bool Debug = false) {
  static const std::unique_ptr<llvm::TargetMachine> Host =
      createHostTargetMachine();
  auto Context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic Diagnostic;
  std::string Text = Markers + Body;
  if (Debug)
    Text += "\n!llvm.module.flags = !{!1000}\n!1000 = !{i32 1, !\"tidal.debug\", i32 1}\n";
  std::unique_ptr<llvm::Module> M =
      llvm::parseAssemblyString(Text, Diagnostic, *Context);
  if (!M) {
    std::string Message;
    llvm::raw_string_ostream Stream(Message);
    Diagnostic.print(Name.c_str(), Stream);
    ADD_FAILURE() << "test IR does not parse: " << Stream.str();
    return nullptr;
  }
  M->setModuleIdentifier(Name);
  std::string Error;
  if (!tidal::runHostPipeline(*M, *Host, Error)) {
    ADD_FAILURE() << "host pipeline failed: " << Error;
    return nullptr;
  }
  return CpuModule::compile(std::move(M), std::move(Context));
}

} // namespace tidal::runtime::testkit

#endif
