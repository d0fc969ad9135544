#include "data/batch.h"

#include "util/error.h"

namespace ct {

bool Batch::Has(const std::string& name) const {
  for (const std::string& n : names) {
    if (n == name) return true;
  }
  return false;
}

const at::Tensor& Batch::operator[](const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return tensors[i];
  }
  std::string there;
  for (const std::string& n : names) there += (there.empty() ? "'" : ", '") + n + "'";
  throw ConfigError("the batch has no field '" + name + "' (it has " + there +
                    "); map it to a dataset in data.fields, e.g. data.fields: {" + name + ": <dataset>, ...}");
}

std::string DescribeFields(const std::vector<FieldDims>& fields) {
  std::string text;
  for (const FieldDims& f : fields) {
    text += (text.empty() ? "'" : ", '") + f.name + "' [";
    for (size_t i = 0; i < f.dims.size(); ++i) text += (i ? ", " : "") + std::to_string(f.dims[i]);
    text += "]";
  }
  return text;
}

}  // namespace ct
