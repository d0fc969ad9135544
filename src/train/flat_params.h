// Parameters moved into flat buffers laid out as their gradient buckets: each bucket's
// parameters are copied into one contiguous buffer, in the order of the bucket's flat gradient
// buffer, and become views of it. An optimizer (train/optimizer.h) then updates a few flat
// buffers with vectorised passes instead of a loop of small ones per parameter tensor.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "comm/gradient_sync.h"

namespace ct {

class FlatParams {
 public:
  struct Group {
    at::Tensor params;  // flat: the group's parameters, one after another
    at::Tensor grads;   // flat, the same layout: the bucket's gradient buffer
  };

  // Throws ct::Error if a parameter belongs to no bucket or a bucket's parameters do not fill
  // its gradient buffer. `storage`: where each bucket's parameters go (a buffer of its size, e.g.
  // node-shared memory), or empty for new buffers; `copy_values`: whether this rank copies the
  // parameters' values there (false: another rank sharing the storage does).
  FlatParams(std::vector<at::Tensor> params, std::vector<GradientBucket> buckets, std::vector<at::Tensor> storage = {},
             bool copy_values = true);

  std::vector<Group>& Groups() { return groups_; }
  const std::vector<Group>& Groups() const { return groups_; }
  const std::vector<at::Tensor>& Params() const { return params_; }
  // Parameter `param`'s place in `flat`, a buffer of its group's layout, with its shape.
  at::Tensor View(const at::Tensor& flat, size_t param) const;
  size_t GroupOf(size_t param) const { return group_of_[param]; }
  // A zero buffer in each group's layout (moments, momentum).
  std::vector<at::Tensor> ZerosPerGroup() const;

 private:
  std::vector<at::Tensor> params_;
  std::vector<Group> groups_;
  std::vector<size_t> group_of_;
  std::vector<int64_t> offset_of_;
};

// Every parameter in one bucket of its own gradient buffer, each .grad aliasing its place (a
// model trained without a GradientSync: `bench step`, tests).
std::vector<GradientBucket> OwnGradients(const std::vector<at::Tensor>& params);

}  // namespace ct
