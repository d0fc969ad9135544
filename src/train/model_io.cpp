#include "train/model_io.h"

#include <torch/serialize.h>

#include <fstream>
#include <iterator>

#include "util/atomic_file.h"
#include "util/error.h"

namespace ct {

void SaveStateDict(const std::vector<NamedTensor>& state, const std::string& path) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const NamedTensor& item : state) dict.insert(item.name, item.tensor.detach().cpu().contiguous());
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  WriteFileAtomically(path, std::string_view(bytes.data(), bytes.size()));
}

c10::Dict<std::string, at::Tensor> LoadStateDict(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read state dict '" + path + "'");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue value = torch::pickle_load(bytes);
  if (!value.isGenericDict()) throw Error("'" + path + "' does not hold a dict of tensors");
  c10::Dict<std::string, at::Tensor> state;
  for (const auto& item : value.toGenericDict()) state.insert(item.key().toStringRef(), item.value().toTensor());
  return state;
}

}  // namespace ct
