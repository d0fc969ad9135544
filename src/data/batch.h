// A batch of rows: input and target, paired row by row.
#pragma once

#include <ATen/ATen.h>

namespace ct {

struct Batch {
  at::Tensor input;   // [B, ...]
  at::Tensor target;  // [B, ...]
};

}  // namespace ct
