#include "train/model_io.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/serialize.h>

#include <fstream>
#include <iterator>

#include "util/atomic_file.h"
#include "util/error.h"

namespace ct {

// torch.save's zip layout holding a plain dict of tensors. torch::pickle_save would wrap the
// dict in torch.jit._pickle.restore_type_tag, which torch.load's weights-only unpickler (the
// default since PyTorch 2.6) refuses; so the pickle is written without type tags.
void SaveStateDict(const std::vector<NamedTensor>& state, const std::string& path) {
  c10::Dict<std::string, at::Tensor> dict;
  // Copies: a parameter may be a view of a flat buffer (FlatAdam), whose whole storage would
  // otherwise go into the file with it.
  for (const NamedTensor& item : state)
    dict.insert(item.name, item.tensor.detach().cpu().clone(at::MemoryFormat::Contiguous));
  std::vector<char> pickle;
  torch::jit::Pickler pickler([&](const char* data, size_t size) { pickle.insert(pickle.end(), data, data + size); },
                              /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
                              /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(c10::IValue(dict));
  pickler.stop();
  std::string bytes;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(), writer);
  writer.writeEndOfFile();
  WriteFileAtomically(path, bytes);
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
