// Conversions to bfloat16 that LLVM's `bfloat` does not round once on
// every target (IntrinsicsBFloat16.cpp): an integer's sitofp goes through
// float32 on NVPTX before sm_90 and on the host, rounding twice.
#ifndef TIDAL_FRONTEND_BFLOAT16_H
#define TIDAL_FRONTEND_BFLOAT16_H

#include "llvm/IR/IRBuilder.h"

namespace tidal::frontend {

// The integer X (signed or not) as the nearest bfloat16, ties to even,
// rounded once.
llvm::Value *integerToBFloat16(llvm::IRBuilder<> &B, llvm::Value *X, bool Signed);

} // namespace tidal::frontend

#endif
