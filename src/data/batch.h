// A batch of rows: the named fields of data.fields (default `input` and `target`), paired row by
// row, in the order the schema lists them.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

namespace ct {

// One field's row shape, without the row dimension: {"input", {1024}}.
struct FieldDims {
  std::string name;
  std::vector<int64_t> dims;
};

struct Batch {
  std::vector<std::string> names;   // the fields, in schema order
  std::vector<at::Tensor> tensors;  // [B, ...] each, one per name

  int64_t Rows() const { return tensors.empty() ? 0 : tensors[0].size(0); }
  bool Has(const std::string& name) const;
  // The field `name`; throws ct::Error naming the fields there are when it is absent.
  const at::Tensor& operator[](const std::string& name) const;
  // The same rows of every field through `f` (index_select, narrow, to(device), ...).
  template <class F>
  Batch Map(F&& f) const {
    Batch out;
    out.names = names;
    out.tensors.reserve(tensors.size());
    for (const at::Tensor& t : tensors) out.tensors.push_back(f(t));
    return out;
  }
};

// "'input' [1024], 'target' [1024]": for messages.
std::string DescribeFields(const std::vector<FieldDims>& fields);

}  // namespace ct
