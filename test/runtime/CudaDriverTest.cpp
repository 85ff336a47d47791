// The CUDA driver loader on machines without a GPU: a missing library, the
// toolkit's stub library, and the process-wide driver never crash and say why.
#include "tidal/runtime/CudaDriver.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using tidal::runtime::CudaDriver;

namespace {

bool fileExists(const std::string &Path) {
  struct stat Info;
  return stat(Path.c_str(), &Info) == 0;
}

std::string cudaHome() {
  const char *Home = std::getenv("CUDA_HOME");
  return Home && *Home ? Home : "/usr/local/cuda";
}

TEST(CudaDriver, MissingLibraryIsNotUsableAndSaysWhere) {
  CudaDriver Driver = CudaDriver::open("/nonexistent/libcuda.so.1");
  EXPECT_FALSE(Driver.usable());
  EXPECT_EQ(Driver.deviceCount(), 0);
  EXPECT_EQ(Driver.libraryPath(), "/nonexistent/libcuda.so.1");
  EXPECT_NE(Driver.reason().find("cannot open /nonexistent/libcuda.so.1"),
            std::string::npos)
      << Driver.reason();
  EXPECT_EQ(Driver.reason().find('\n'), std::string::npos) << "one line";
}

TEST(CudaDriver, LibraryWithoutTheEntryPointsIsNotUsable) {
  // libm opens fine but is no CUDA driver.
  CudaDriver Driver = CudaDriver::open("libm.so.6");
  EXPECT_FALSE(Driver.usable());
  EXPECT_NE(Driver.reason().find("has no cuInit"), std::string::npos)
      << Driver.reason();
}

TEST(CudaDriver, ToolkitStubLibraryReportsStubLibrary) {
  const std::string Stub = cudaHome() + "/lib64/stubs/libcuda.so";
  if (!fileExists(Stub))
    GTEST_SKIP() << "no CUDA toolkit stub driver at " << Stub;
  CudaDriver Driver = CudaDriver::open(Stub);
  EXPECT_FALSE(Driver.usable());
  EXPECT_EQ(Driver.libraryPath(), Stub);
  EXPECT_NE(Driver.reason().find("cuInit failed: CUDA_ERROR_STUB_LIBRARY"),
            std::string::npos)
      << Driver.reason();
  EXPECT_EQ(Driver.describeError(100),
            "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
  EXPECT_EQ(Driver.describeError(123456), "CUDA error 123456");
}

// Runs in a fresh process (below): the process-wide driver reads
// TIDAL_CUDA_DRIVER once, when it is first used.
[[noreturn]] void openProcessDriverFromNonexistentPath() {
  setenv("TIDAL_CUDA_DRIVER", "/nonexistent", 1);
  const CudaDriver &Driver = CudaDriver::get();
  if (Driver.usable() || Driver.libraryPath() != "/nonexistent" ||
      Driver.reason().find("/nonexistent") == std::string::npos) {
    std::fprintf(stderr, "usable %d, library '%s', reason '%s'\n",
                 int(Driver.usable()), Driver.libraryPath().c_str(),
                 Driver.reason().c_str());
    std::exit(1);
  }
  std::exit(0);
}

TEST(CudaDriverDeathTest, TidalCudaDriverPointsAtTheLibrary) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(openProcessDriverFromNonexistentPath(),
              testing::ExitedWithCode(0), "");
}

// Runs in a fresh process (below): a driver initialised, then a fork. The
// child is marked and its requireNotForked() throws the fork error; the
// parent is not.
[[noreturn]] void forkAfterInit() {
  CudaDriver Driver = CudaDriver::open(TIDAL_MOCK_CUDA_LIBRARY);
  if (!Driver.usable() || CudaDriver::forkedAfterInit())
    std::exit(2);
  pid_t Child = fork();
  if (Child == 0) {
    try {
      CudaDriver::requireNotForked();
    } catch (const tidal::runtime::CudaDriverError &Error) {
      bool Named = std::string(Error.what()).rfind("CUDA initialized before forking", 0) == 0 &&
                   Error.call() == "fork" && Error.errorName() == "CUDA_ERROR_NOT_INITIALIZED";
      _exit(CudaDriver::forkedAfterInit() && Named ? 0 : 3);
    }
    _exit(4);
  }
  int Status = 0;
  waitpid(Child, &Status, 0);
  if (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0) {
    std::fprintf(stderr, "child status %d\n", Status);
    std::exit(1);
  }
  CudaDriver::requireNotForked(); // the parent can go on
  std::exit(CudaDriver::forkedAfterInit() ? 5 : 0);
}

TEST(CudaDriverDeathTest, ChildForkedAfterInitCannotUseTheDriver) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(forkAfterInit(), testing::ExitedWithCode(0), "");
}

TEST(CudaDriver, ProcessDriverIsConsistent) {
  const CudaDriver &Driver = CudaDriver::get();
  EXPECT_EQ(&Driver, &CudaDriver::get());
  const char *Override = std::getenv("TIDAL_CUDA_DRIVER");
  EXPECT_EQ(Driver.libraryPath(),
            Override && *Override ? Override : "libcuda.so.1");
  if (Driver.usable()) {
    EXPECT_GE(Driver.deviceCount(), 1);
    EXPECT_TRUE(Driver.reason().empty()) << Driver.reason();
  } else {
    EXPECT_FALSE(Driver.reason().empty());
  }
}

} // namespace
