// The seed's one-group-per-sample layout (sample0/input, sample0/target, sample1/..., as h5py
// wrote it), read sample by sample by one process. Only `clustertrain convert` and the I/O
// benchmark use it: training reads the contiguous layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/h5_check.h"

namespace ct {

class SeedLayoutReader {
 public:
  // Opens `path` with HDF5's POSIX driver (no MPI: each rank reads its own samples), counts the
  // sample{i} groups and checks sample0's datasets. Throws DataError naming what is wrong.
  explicit SeedLayoutReader(const std::string& path);

  int64_t Samples() const { return samples_; }
  // Shape of one sample's input / target, e.g. {1024}; and their stored dtype ("float64").
  const std::vector<int64_t>& InputDims() const { return input_dims_; }
  const std::vector<int64_t>& TargetDims() const { return target_dims_; }
  const std::string& StoredType() const { return stored_type_; }

  // Reads sample{i}/<name> ("input" or "target") as float32 into out. Checks its shape.
  void Read(int64_t i, const std::string& name, float* out) const;

 private:
  std::vector<int64_t> DatasetDims(int64_t i, const std::string& name, hid_t dataset) const;

  std::string path_;
  H5Id file_;
  int64_t samples_ = 0;
  std::vector<int64_t> input_dims_;
  std::vector<int64_t> target_dims_;
  std::string stored_type_;
};

}  // namespace ct
