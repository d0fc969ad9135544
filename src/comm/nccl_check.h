// NCCL_CHECK / CUDA_CHECK: throw ct::CommError with the call, file:line, rank, host and the
// library's own error string (as nccl-tests' src/common.h does).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "util/error.h"

#define NCCL_CHECK(call)                                                                                  \
  do {                                                                                                    \
    ncclResult_t ct_nccl_rc_ = (call);                                                                    \
    if (ct_nccl_rc_ != ncclSuccess) {                                                                     \
      throw ::ct::CommError(std::string(#call) + " failed at " + ::ct::Where(__FILE__, __LINE__) + ": " + \
                            ncclGetErrorString(ct_nccl_rc_));                                             \
    }                                                                                                     \
  } while (0)

#define CUDA_CHECK(call)                                                                                  \
  do {                                                                                                    \
    cudaError_t ct_cuda_rc_ = (call);                                                                     \
    if (ct_cuda_rc_ != cudaSuccess) {                                                                     \
      throw ::ct::CommError(std::string(#call) + " failed at " + ::ct::Where(__FILE__, __LINE__) + ": " + \
                            cudaGetErrorString(ct_cuda_rc_));                                             \
    }                                                                                                     \
  } while (0)
