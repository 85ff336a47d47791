#!/bin/bash
# Regenerates test/runtime/Inputs/cuda_cpp/*.ll, clang's NVVM IR for the
# CUDA C++ examples (examples/cuda_cpp/*.cu), which CpuRaisedCudaTest.cpp
# raises (tidal-raise-nvvm), lowers for the host and runs. Run from the
# repository root after changing an example.
set -euo pipefail
for source in examples/cuda_cpp/*.cu; do
  name=$(basename "$source" .cu)
  clang-19 -x cuda --cuda-device-only -nocudainc -nocudalib -emit-llvm -S -O1 \
    -Wno-unknown-cuda-version -I cxx/include "$source" -o - |
    grep -v '^; ModuleID\|^source_filename' > "test/runtime/Inputs/cuda_cpp/$name.ll"
done
