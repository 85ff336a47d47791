// compileCuda (CudaCompiler.h): a CompilerInstance with the cc1 arguments
// the clang driver gives `clang -x cuda --cuda-device-only -nocudainc
// -nocudalib -O1`, the source as an in-memory file, the diagnostics printed
// into a string, and EmitLLVMOnlyAction. Results are cached in memory as
// bitcode, by file name, source and options, for the process.

#include "CudaCompiler.h"
#include "DeviceBinding.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tidal::cxx {
namespace {

// The text of a kernel parameter's type for KernelParametersMetadata.
std::string describeParameter(clang::ASTContext &AST, clang::QualType Type) {
  clang::QualType Canonical = Type.getCanonicalType();
  auto Scalar = [&](clang::QualType T) -> std::string {
    const auto *Builtin = T->getAs<clang::BuiltinType>();
    if (!Builtin)
      return "";
    if (Builtin->getKind() == clang::BuiltinType::Bool)
      return "bool";
    unsigned Bits = static_cast<unsigned>(AST.getTypeSize(T));
    if (Builtin->isInteger())
      return (Builtin->isSignedInteger() ? "int" : "uint") + std::to_string(Bits);
    if (Builtin->isFloatingPoint() && (Bits == 16 || Bits == 32 || Bits == 64))
      return "float" + std::to_string(Bits);
    return "";
  };
  // A struct of numbers, by value or through a pointer: a record dtype of
  // the same layout ("struct P{x:float32@0,n:int32@4;8}", DeviceBinding.h).
  const clang::Type *Underlying = Canonical.getTypePtr();
  if (const auto *Pointer = Canonical->getAs<clang::PointerType>())
    Underlying = Pointer->getPointeeType().getCanonicalType().getTypePtr();
  if (Underlying->isRecordType()) {
    std::string Why;
    std::string Text = bindingType(AST, Type, /*AllowVoid=*/false, Why);
    return Text.empty() ? "?" + Type.getAsString(AST.getPrintingPolicy()) + " (" + Why + ")"
                        : Text;
  }
  if (const auto *Pointer = Canonical->getAs<clang::PointerType>()) {
    clang::QualType Pointee = Pointer->getPointeeType();
    std::string Element = Scalar(Pointee.getUnqualifiedType());
    if (!Element.empty())
      return (Pointee.isConstQualified() ? "const " : "") + Element + "*";
  } else {
    std::string Element = Scalar(Canonical.getUnqualifiedType());
    if (!Element.empty())
      return Element;
  }
  return "?" + Type.getAsString(AST.getPrintingPolicy());
}

// Records each __global__ function defined in the translation unit: its
// symbol, its name as written, and its parameters' types.
class KernelRecorder : public clang::ASTConsumer,
                       public clang::RecursiveASTVisitor<KernelRecorder> {
public:
  struct Kernel {
    std::string Symbol, Name;
    std::vector<std::string> Parameters, ParameterNames;
  };
  std::vector<Kernel> Kernels;
  // The __device__ functions and how they bind (DeviceBinding.h).
  std::vector<DeviceFunctionBinding> DeviceFunctions;

  void HandleTranslationUnit(clang::ASTContext &Context) override {
    AST = &Context;
    Names = std::make_unique<clang::ASTNameGenerator>(Context);
    TraverseDecl(Context.getTranslationUnitDecl());
    if (!Context.getDiagnostics().hasErrorOccurred())
      DeviceFunctions = bindTranslationUnit(Context);
  }

  // Instances of kernel templates too: those the source instantiates
  // (CuPy's name_expressions become explicit instantiations, raw.py).
  bool shouldVisitTemplateInstantiations() const { return true; }

  bool VisitFunctionDecl(clang::FunctionDecl *F) {
    if (!F->hasAttr<clang::CUDAGlobalAttr>() || !F->doesThisDeclarationHaveABody() ||
        F->isDependentContext() || F->getTemplatedKind() == clang::FunctionDecl::TK_FunctionTemplate)
      return true;
    Kernel K;
    K.Symbol = Names->getName(F);
    K.Name = F->getNameAsString();
    if (F->getTemplateSpecializationArgs()) { // scale<float, 3>, as clang prints it
      K.Name.clear();
      llvm::raw_string_ostream Stream(K.Name);
      F->getNameForDiagnostic(Stream, AST->getPrintingPolicy(), /*Qualified=*/true);
    }
    for (const clang::ParmVarDecl *P : F->parameters()) {
      K.Parameters.push_back(describeParameter(*AST, P->getType()));
      K.ParameterNames.push_back(P->getNameAsString());
    }
    Kernels.push_back(std::move(K));
    return true;
  }

private:
  clang::ASTContext *AST = nullptr;
  std::unique_ptr<clang::ASTNameGenerator> Names;
};

// Makes clang emit the `static` and `inline` __device__ functions the
// file defines, and the explicit instances of its __device__ function
// templates, which it would emit only where the file calls them, so
// that cuda.include and declare_device can bind them: each gets an
// implicit `used` before the code generator sees it (a consumer ahead of
// it), and Marked keeps their symbols, whose @llvm.used entries
// dropUsedMarks removes again after code generation (nothing keeps them
// alive that the file did not ask to).
class EmitStaticAndInline : public clang::ASTConsumer {
public:
  explicit EmitStaticAndInline(std::vector<std::string> *Marked) : Marked(Marked) {}

  void Initialize(clang::ASTContext &Context) override {
    AST = &Context;
    Names = std::make_unique<clang::ASTNameGenerator>(Context);
  }

  bool HandleTopLevelDecl(clang::DeclGroupRef Group) override {
    for (clang::Decl *D : Group)
      visit(D);
    return true;
  }

private:
  void visit(clang::Decl *D) {
    if (auto *Namespace = llvm::dyn_cast<clang::NamespaceDecl>(D)) {
      for (clang::Decl *Inner : Namespace->decls())
        visit(Inner);
      return;
    }
    if (auto *Linkage = llvm::dyn_cast<clang::LinkageSpecDecl>(D)) {
      for (clang::Decl *Inner : Linkage->decls())
        visit(Inner);
      return;
    }
    auto *F = llvm::dyn_cast<clang::FunctionDecl>(D);
    // An explicit instance of a __device__ function template
    // (`template __device__ decltype(f<float>) f<float>;`, cuda.include's
    // name_expressions): clang emits it only where the file calls it (its
    // body is instantiated at the end of the file).
    if (F && F->getTemplateSpecializationKind() == clang::TSK_ExplicitInstantiationDefinition &&
        F->hasAttr<clang::CUDADeviceAttr>() && !F->hasAttr<clang::CUDAGlobalAttr>() &&
        !F->hasAttr<clang::UsedAttr>() && !llvm::isa<clang::CXXMethodDecl>(F) &&
        AST->getSourceManager().isInMainFile(F->getLocation())) {
      F->addAttr(clang::UsedAttr::CreateImplicit(*AST));
      Marked->push_back(Names->getName(F));
      return;
    }
    if (!F || !F->doesThisDeclarationHaveABody() || !F->hasAttr<clang::CUDADeviceAttr>() ||
        F->hasAttr<clang::CUDAGlobalAttr>() || F->hasAttr<clang::UsedAttr>() ||
        F->isDependentContext() || F->isTemplated() || llvm::isa<clang::CXXMethodDecl>(F) ||
        !(F->getStorageClass() == clang::SC_Static || F->isInlined()) ||
        !AST->getSourceManager().isInMainFile(F->getLocation()))
      return;
    F->addAttr(clang::UsedAttr::CreateImplicit(*AST));
    Marked->push_back(Names->getName(F));
  }

  clang::ASTContext *AST = nullptr;
  std::unique_ptr<clang::ASTNameGenerator> Names;
  std::vector<std::string> *Marked;
};

// Removes from @llvm.used (and @llvm.compiler.used) the functions of
// Marked (EmitStaticAndInline's); the arrays go when empty.
void dropUsedMarks(llvm::Module &M, const std::vector<std::string> &Marked) {
  if (Marked.empty())
    return;
  for (const char *Name : {"llvm.used", "llvm.compiler.used"}) {
    llvm::GlobalVariable *Used = M.getGlobalVariable(Name);
    if (!Used || !Used->hasInitializer())
      continue;
    auto *Array = llvm::dyn_cast<llvm::ConstantArray>(Used->getInitializer());
    if (!Array)
      continue;
    std::vector<llvm::Constant *> Kept;
    for (llvm::Value *Operand : Array->operands()) {
      auto *G = llvm::dyn_cast<llvm::GlobalValue>(Operand->stripPointerCasts());
      if (G && std::find(Marked.begin(), Marked.end(), G->getName().str()) != Marked.end())
        continue;
      Kept.push_back(llvm::cast<llvm::Constant>(Operand));
    }
    if (Kept.size() == Array->getNumOperands())
      continue;
    std::string Section = Used->getSection().str();
    Used->eraseFromParent();
    if (Kept.empty())
      continue;
    auto *Type = llvm::ArrayType::get(Kept.front()->getType(), Kept.size());
    auto *Replacement = new llvm::GlobalVariable(M, Type, false, llvm::GlobalValue::AppendingLinkage,
                                                 llvm::ConstantArray::get(Type, Kept), Name);
    Replacement->setSection(Section);
  }
}

// EmitLLVMOnlyAction with a KernelRecorder beside clang's code generator.
class RecordingAction : public clang::EmitLLVMOnlyAction {
public:
  RecordingAction(llvm::LLVMContext *Context, KernelRecorder *Recorder,
                  std::vector<std::string> *Marked)
      : EmitLLVMOnlyAction(Context), Recorder(Recorder), Marked(Marked) {}

protected:
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &Compiler,
                                                        llvm::StringRef InFile) override {
    std::vector<std::unique_ptr<clang::ASTConsumer>> Consumers;
    Consumers.push_back(std::make_unique<EmitStaticAndInline>(Marked));
    Consumers.push_back(EmitLLVMOnlyAction::CreateASTConsumer(Compiler, InFile));
    Consumers.push_back(std::make_unique<ForwardingConsumer>(Recorder));
    return std::make_unique<clang::MultiplexConsumer>(std::move(Consumers));
  }

private:
  // The recorder outlives the action: the multiplexer owns this forwarder.
  struct ForwardingConsumer : clang::ASTConsumer {
    explicit ForwardingConsumer(KernelRecorder *Target) : Target(Target) {}
    void HandleTranslationUnit(clang::ASTContext &Context) override {
      Target->HandleTranslationUnit(Context);
    }
    KernelRecorder *Target;
  };
  KernelRecorder *Recorder;
  std::vector<std::string> *Marked;
};

// KernelParametersMetadata: one node per kernel.
void attachKernels(llvm::Module &M, const std::vector<KernelRecorder::Kernel> &Kernels) {
  llvm::LLVMContext &Context = M.getContext();
  llvm::NamedMDNode *Node = M.getOrInsertNamedMetadata(KernelParametersMetadata);
  for (const KernelRecorder::Kernel &K : Kernels) {
    std::vector<llvm::Metadata *> Fields = {llvm::MDString::get(Context, K.Symbol),
                                            llvm::MDString::get(Context, K.Name)};
    for (size_t I = 0; I < K.Parameters.size(); ++I) {
      Fields.push_back(llvm::MDString::get(Context, K.Parameters[I]));
      Fields.push_back(llvm::MDString::get(Context, K.ParameterNames[I]));
    }
    Node->addOperand(llvm::MDNode::get(Context, Fields));
  }
}

// The files a compile read besides its main file (which is in memory):
// the prelude and the user's headers; clang's own system headers come with
// the build (buildIdentity).
class ReadFiles : public clang::DependencyCollector {
public:
  explicit ReadFiles(std::string MainFile) : MainFile(std::move(MainFile)) {}
  bool sawDependency(llvm::StringRef Filename, bool FromModule, bool IsSystem, bool IsModuleFile,
                     bool IsMissing) override {
    return !IsSystem && !IsMissing && Filename != MainFile && Filename != "<built-in>" &&
           !Filename.starts_with("<");
  }

private:
  std::string MainFile;
};

std::unique_ptr<llvm::Module> compileUncached(llvm::LLVMContext &Context, llvm::StringRef Source,
                                          llvm::StringRef FileName,
                                          llvm::ArrayRef<std::string> Options, std::string &Error,
                                          std::vector<std::string> *Read = nullptr) {
  std::string Diagnostics;
  llvm::raw_string_ostream DiagnosticStream(Diagnostics);
  auto DiagnosticOptions = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  DiagnosticOptions->ShowCarets = true;
  DiagnosticOptions->ShowColors = false;
  auto *Printer = new clang::TextDiagnosticPrinter(DiagnosticStream, DiagnosticOptions.get());

  std::string Name = FileName.str();
  std::vector<const char *> Arguments = {
      "-triple", "nvptx64-nvidia-cuda", "-aux-triple", "x86_64-pc-linux-gnu",
      "-aux-target-cpu", "x86-64", "-fcuda-is-device", "-fcuda-allow-variadic-functions",
      "-target-cpu", "sm_70", "-target-feature", "+ptx85", "-emit-llvm", "-O1",
      "-mframe-pointer=all", "-fgnuc-version=4.2.1", "-nogpulib", "-std=c++17",
      "-resource-dir", TIDAL_CLANG_RESOURCE_DIR,
      "-internal-isystem", TIDAL_CLANG_RESOURCE_DIR "/include",
      "-I", TIDAL_CXX_PRELUDE_DIR, "-include", "tidal_cuda.h",
      "-x", "cuda"};
  for (const std::string &Option : Options)
    Arguments.push_back(Option.c_str());
  Arguments.push_back(Name.c_str());

  auto Compiler = std::make_unique<clang::CompilerInstance>();
  Compiler->createDiagnostics(Printer, /*ShouldOwnClient=*/true);
  // ExecuteAction's "N errors generated" goes nowhere: Error has them.
  Compiler->setVerboseOutputStream(std::make_unique<llvm::raw_null_ostream>());
  clang::DiagnosticsEngine &Engine = Compiler->getDiagnostics();
  Engine.setIgnoreAllWarnings(true);
  if (!clang::CompilerInvocation::CreateFromArgs(Compiler->getInvocation(), Arguments, Engine)) {
    Error = "invalid CUDA C++ options: " + DiagnosticStream.str();
    return nullptr;
  }
  Compiler->getInvocation().getPreprocessorOpts().addRemappedFile(
      Name, llvm::MemoryBuffer::getMemBufferCopy(Source, Name).release());
  auto Files = std::make_shared<ReadFiles>(Name);
  Compiler->addDependencyCollector(Files);
  KernelRecorder Recorder;
  std::vector<std::string> Marked;
  RecordingAction Action(&Context, &Recorder, &Marked);
  if (!Compiler->ExecuteAction(Action) || Engine.hasErrorOccurred()) {
    Error = DiagnosticStream.str();
    if (Error.empty())
      Error = "clang could not compile " + Name;
    return nullptr;
  }
  std::unique_ptr<llvm::Module> M = Action.takeModule();
  if (Read)
    *Read = Files->getDependencies();
  if (!M)
    Error = "clang produced no module for " + Name;
  else {
    dropUsedMarks(*M, Marked);
    attachKernels(*M, Recorder.Kernels);
    attachBindings(*M, Recorder.DeviceFunctions);
  }
  return M;
}

// Bitcode of earlier compiles, keyed by file name, options and source.
struct Cache {
  std::mutex Lock;
  std::map<std::string, std::string> Bitcode;
};

Cache &getCache() {
  static Cache TheCache;
  return TheCache;
}

std::atomic<uint64_t> MemoryHits{0}, DiskHits{0}, DiskWrites{0}, Compiles{0};

std::string sha256Hex(llvm::StringRef Data) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(Data)), /*LowerCase=*/true);
}

// This build of the compiler: LLVM's version and the file this code is in
// (its path, size and time), so that a rebuilt tidal never reads bitcode an
// older one wrote (its clang options, its binding metadata).
const std::string &buildIdentity() {
  static const std::string Identity = [] {
    std::string Text = LLVM_VERSION_STRING;
    Dl_info Info;
    struct stat File;
    if (dladdr(reinterpret_cast<void *>(&compileCuda), &Info) && Info.dli_fname &&
        stat(Info.dli_fname, &File) == 0)
      Text += std::string("|") + Info.dli_fname + "|" + std::to_string(File.st_size) + "|" +
              std::to_string(File.st_mtim.tv_sec) + "." + std::to_string(File.st_mtim.tv_nsec);
    return Text;
  }();
  return Identity;
}

// The on-disk cache's root, whose cxx/ holds the entries: TIDAL_CACHE_DIR,
// else the user's cache folder's tidal/ (~/.cache/tidal); "" when
// TIDAL_CXX_CACHE=0 or no folder is known.
std::string diskCacheRoot() {
  if (const char *Switch = std::getenv("TIDAL_CXX_CACHE"); Switch && std::string(Switch) == "0")
    return "";
  llvm::SmallString<256> Path;
  if (const char *Root = std::getenv("TIDAL_CACHE_DIR"); Root && *Root) {
    Path = Root;
  } else if (const char *Xdg = std::getenv("XDG_CACHE_HOME"); Xdg && *Xdg) {
    Path = Xdg;
    llvm::sys::path::append(Path, "tidal");
  } else if (const char *Home = std::getenv("HOME"); Home && *Home) {
    Path = Home;
    llvm::sys::path::append(Path, ".cache", "tidal");
  } else {
    return "";
  }
  return std::string(Path);
}

// Why Path (Root, or a folder or file below it) could have been written by
// someone else, or "": each of Root's folders down to Path, and Path, must
// be owned by this user and not writable by group or others. What does
// not exist is not checked (there is nothing to load).
std::string distrust(llvm::StringRef Root, llvm::StringRef Path) {
  std::vector<std::string> Chain{Root.str()};
  llvm::StringRef Rest = Path.substr(std::min(Path.size(), Root.size()));
  llvm::SmallString<256> Current(Root);
  for (auto Part = llvm::sys::path::begin(Rest), End = llvm::sys::path::end(Rest); Part != End;
       ++Part) {
    if (*Part == "/")
      continue;
    llvm::sys::path::append(Current, *Part);
    Chain.push_back(std::string(Current));
  }
  const uid_t Me = geteuid();
  for (const std::string &Step : Chain) {
    struct stat Info;
    if (stat(Step.c_str(), &Info) != 0)
      return errno == ENOENT || errno == ENOTDIR ? "" : Step + " cannot be checked (" + std::strerror(errno) + ")";
    if (Info.st_uid != Me)
      return Step + " is owned by uid " + std::to_string(Info.st_uid) +
             ", not by this user (uid " + std::to_string(Me) + ")";
    if (Info.st_mode & (S_IWGRP | S_IWOTH)) {
      char Mode[8];
      std::snprintf(Mode, sizeof Mode, "%04o", static_cast<unsigned>(Info.st_mode & 07777));
      std::string Who = (Info.st_mode & S_IWGRP) && (Info.st_mode & S_IWOTH) ? "group and others"
                        : (Info.st_mode & S_IWGRP)                          ? "group"
                                                                            : "others";
      return Step + " is writable by " + Who + " (mode " + Mode + ")";
    }
  }
  return "";
}

// The reasons not yet handed to takeCacheWarnings, and those ever given.
struct CacheWarnings {
  std::mutex Lock;
  std::vector<std::string> Pending;
  std::set<std::string> Given;
};

CacheWarnings &getCacheWarnings() {
  static CacheWarnings Warnings;
  return Warnings;
}

void warnUntrusted(const std::string &Folder, const std::string &Why) {
  CacheWarnings &W = getCacheWarnings();
  std::string Text = "not using the compiled CUDA C++ cache in " + Folder + ": " + Why +
                     ": anyone who can write there could run code in this process; compiling "
                     "instead, and writing nothing there";
  std::lock_guard<std::mutex> Guard(W.Lock);
  if (W.Given.insert(Text).second)
    W.Pending.push_back(std::move(Text));
}

// An entry on disk: "TIDAL-CXX 1", the key's digest, the number of files
// read, a line "digest path" per file, the bitcode's digest, then the
// bitcode. It is used only when every file read still has its digest (an
// edited header is a miss) and the bitcode is whole.
constexpr llvm::StringLiteral EntryMagic = "TIDAL-CXX 1";

std::unique_ptr<llvm::Module> loadEntry(llvm::LLVMContext &Context, const std::string &Path,
                                        const std::string &Key, llvm::StringRef FileName,
                                        std::string &Bitcode) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!Buffer)
    return nullptr;
  llvm::StringRef Rest = (*Buffer)->getBuffer();
  auto line = [&Rest]() {
    auto [Line, After] = Rest.split('\n');
    Rest = After;
    return Line;
  };
  if (line() != EntryMagic || line() != Key)
    return nullptr;
  unsigned long long Count = 0;
  if (llvm::getAsUnsignedInteger(line(), 10, Count) || Count > 100000)
    return nullptr;
  for (unsigned long long I = 0; I < Count; ++I) {
    auto [Digest, File] = line().split(' ');
    auto Content = llvm::MemoryBuffer::getFile(File, /*IsText=*/false,
                                               /*RequiresNullTerminator=*/false);
    if (!Content || sha256Hex((*Content)->getBuffer()) != Digest)
      return nullptr; // a header edited, moved or gone
  }
  llvm::StringRef BitcodeDigest = line();
  if (sha256Hex(Rest) != BitcodeDigest)
    return nullptr;
  auto M = llvm::parseBitcodeFile(llvm::MemoryBufferRef(Rest, FileName), Context);
  if (!M) {
    llvm::consumeError(M.takeError());
    return nullptr;
  }
  Bitcode = Rest.str();
  return std::move(*M);
}

// Writes an entry (a temporary file renamed over the entry, so that a reader
// sees a whole one); a folder that cannot be written leaves no entry.
void saveEntry(const std::string &Folder, const std::string &Path, const std::string &Key,
               const std::vector<std::string> &Read, const std::string &Bitcode) {
  std::string Text = EntryMagic.str() + "\n" + Key + "\n";
  std::string Files;
  size_t Count = 0;
  for (const std::string &File : Read) {
    auto Content = llvm::MemoryBuffer::getFile(File, /*IsText=*/false,
                                               /*RequiresNullTerminator=*/false);
    if (!Content || File.find('\n') != std::string::npos)
      return; // a file that cannot be read back cannot be checked
    Files += sha256Hex((*Content)->getBuffer()) + " " + File + "\n";
    ++Count;
  }
  Text += std::to_string(Count) + "\n" + Files + sha256Hex(Bitcode) + "\n" + Bitcode;
  // Folders tidal makes are the user's alone; the entry is not writable
  // by others whatever the umask.
  if (llvm::sys::fs::create_directories(Folder, /*IgnoreExisting=*/true,
                                        llvm::sys::fs::perms::owner_all))
    return;
  llvm::SmallString<256> Temporary;
  int FD = -1;
  if (llvm::sys::fs::createUniqueFile(Path + ".%%%%%%.tmp", FD, Temporary,
                                      llvm::sys::fs::OF_None,
                                      llvm::sys::fs::owner_read | llvm::sys::fs::owner_write |
                                          llvm::sys::fs::group_read |
                                          llvm::sys::fs::others_read))
    return;
  {
    llvm::raw_fd_ostream Out(FD, /*shouldClose=*/true);
    Out << Text;
    Out.close();
    if (Out.has_error()) {
      Out.clear_error();
      llvm::sys::fs::remove(Temporary);
      return;
    }
  }
  if (llvm::sys::fs::rename(Temporary, Path))
    llvm::sys::fs::remove(Temporary);
  else
    ++DiskWrites;
}

} // namespace

CacheCounts cacheCounts() {
  return {MemoryHits.load(), DiskHits.load(), DiskWrites.load(), Compiles.load()};
}

std::vector<std::string> takeCacheWarnings() {
  CacheWarnings &W = getCacheWarnings();
  std::lock_guard<std::mutex> Guard(W.Lock);
  return std::exchange(W.Pending, {});
}

std::unique_ptr<llvm::Module> compileCuda(llvm::LLVMContext &Context, llvm::StringRef Source,
                                          llvm::StringRef FileName,
                                          llvm::ArrayRef<std::string> Options, std::string &Error) {
  std::string Key = FileName.str();
  for (const std::string &Option : Options)
    Key += '\0' + Option;
  Key += '\1' + Source.str();
  Cache &TheCache = getCache();
  {
    std::lock_guard<std::mutex> Guard(TheCache.Lock);
    auto Found = TheCache.Bitcode.find(Key);
    if (Found != TheCache.Bitcode.end()) {
      auto M = llvm::parseBitcodeFile(
          llvm::MemoryBufferRef(Found->second, FileName), Context);
      if (M) {
        ++MemoryHits;
        return std::move(*M);
      }
      Error = llvm::toString(M.takeError());
      return nullptr;
    }
  }
  // On disk, from an earlier process: the key's digest names the entry.
  const std::string Root = diskCacheRoot();
  llvm::SmallString<256> FolderPath(Root);
  llvm::sys::path::append(FolderPath, "cxx");
  std::string Folder = Root.empty() ? "" : std::string(FolderPath);
  const std::string Digest = sha256Hex(buildIdentity() + '\2' + Key);
  llvm::SmallString<256> Path(Folder);
  llvm::sys::path::append(Path, Digest + ".tcxx");
  if (!Folder.empty())
    if (std::string Why = distrust(Root, Path); !Why.empty()) {
      warnUntrusted(Folder, Why);
      Folder.clear(); // neither read nor written
    }
  std::string EntryBitcode; // the entry's, kept in memory as read
  if (!Folder.empty())
    if (std::unique_ptr<llvm::Module> M =
            loadEntry(Context, std::string(Path), Digest, FileName, EntryBitcode)) {
      ++DiskHits;
      std::lock_guard<std::mutex> Guard(TheCache.Lock);
      TheCache.Bitcode.emplace(std::move(Key), std::move(EntryBitcode));
      return M;
    }
  std::vector<std::string> Read;
  std::unique_ptr<llvm::Module> M =
      compileUncached(Context, Source, FileName, Options, Error, &Read);
  ++Compiles;
  if (M) {
    std::string Bitcode;
    llvm::raw_string_ostream Stream(Bitcode);
    llvm::WriteBitcodeToFile(*M, Stream);
    if (!Folder.empty())
      saveEntry(Folder, std::string(Path), Digest, Read, Stream.str());
    std::lock_guard<std::mutex> Guard(TheCache.Lock);
    TheCache.Bitcode.emplace(std::move(Key), std::move(Stream.str()));
  }
  return M;
}

} // namespace tidal::cxx
