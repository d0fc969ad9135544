#include "model/torchscript_model.h"

#include <c10/core/GradMode.h>

#include <functional>
#include <map>
#include <sstream>

#include "util/atomic_file.h"
#include "util/error.h"

namespace ct {
namespace {

const char* kConvention =
    "forward(self, x) must return the reconstruction (a Tensor shaped like the target rows), a tuple "
    "(recon, mu, logvar), or a dict {'recon': ..., 'mu': ..., 'logvar': ...}; see README, 'Bring your own model'";

std::string Shape(at::IntArrayRef sizes) {
  std::ostringstream out;
  out << sizes;
  return out.str();
}

}  // namespace

TorchScriptModel::TorchScriptModel(const std::string& path, const std::vector<int64_t>& input_dims,
                                   const std::vector<int64_t>& target_dims)
    : path_(path) {
  const std::string where = "model.path='" + path + "'";
  try {
    module_ = torch::jit::load(path, c10::Device(c10::kCPU));
    mould_ = module_.deepcopy();
  } catch (const c10::Error& e) {
    throw ConfigError(where + " cannot be loaded as a TorchScript module: " + e.what_without_backtrace() +
                      "; save one in Python with torch.jit.script(model).save(path) (see configs/torchscript/)");
  }
  const auto forward = module_.find_method("forward");
  if (!forward) throw ConfigError(where + " has no forward method; " + kConvention);
  const size_t inputs = forward->function().getSchema().arguments().size() - 1;  // without self
  if (inputs != 1) {
    throw ConfigError(where + ": forward takes " + std::to_string(inputs) +
                      " inputs besides self, but "
                      "clustertrain calls forward(x) with one batch of input rows; " +
                      kConvention);
  }
  int64_t elements = 0;
  std::ostringstream names;  // the architecture: parameter names and shapes
  for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
    if (!p.value.requires_grad()) ++frozen_;
    elements += p.value.numel();
    names << p.name << Shape(p.value.sizes()) << ";";
  }
  if (Parameters().empty()) {
    throw ConfigError(where + " has no parameters that require gradients: nothing to train");
  }
  char fingerprint[160];
  std::snprintf(fingerprint, sizeof(fingerprint), "torchscript module (%zu parameter tensors, %lld values, #%016zx)",
                module_.named_parameters().size(), static_cast<long long>(elements),
                std::hash<std::string>{}(names.str()));
  fingerprint_ = fingerprint;

  // Probe: two zero rows in eval mode, to find a wrong convention or shape now, on every rank
  // alike, and not in the first training step.
  std::vector<int64_t> probe_dims = input_dims;
  probe_dims.insert(probe_dims.begin(), 2);
  VaeOutput out;
  {
    c10::NoGradGuard no_grad;
    module_.eval();
    try {
      out = Unpack(module_.forward({at::zeros(probe_dims)}));
    } catch (const c10::Error& e) {
      throw ConfigError(where + ": forward failed on a batch of input rows shaped " + Shape(probe_dims) + ": " +
                        e.what_without_backtrace());
    }
    module_.train();
  }
  std::vector<int64_t> expected = target_dims;
  expected.insert(expected.begin(), 2);
  if (out.recon.sizes().vec() != expected) {
    throw ConfigError(where + ": forward returned a reconstruction shaped " + Shape(out.recon.sizes()) +
                      " for input rows " + Shape(probe_dims) + "; it must match the target rows " + Shape(expected));
  }
  if (out.mu.defined() && (out.mu.dim() != 2 || out.mu.size(0) != 2 || out.mu.sizes() != out.logvar.sizes())) {
    throw ConfigError(where + ": mu and logvar must both be [B, latent]; forward returned " + Shape(out.mu.sizes()) +
                      " and " + Shape(out.logvar.sizes()));
  }
}

VaeOutput TorchScriptModel::Unpack(const c10::IValue& out) const {
  auto tensor = [&](const c10::IValue& v, const char* what) {
    if (!v.isTensor()) {
      throw ConfigError("model.path='" + path_ + "': " + what + " is a " + v.tagKind() + ", not a Tensor; " +
                        kConvention);
    }
    return v.toTensor();
  };
  if (out.isTensor()) return {out.toTensor(), {}, {}};
  if (out.isTuple()) {
    const auto& items = out.toTupleRef().elements();
    if (items.size() != 3) {
      throw ConfigError("model.path='" + path_ + "': forward returned a tuple of " + std::to_string(items.size()) +
                        " values; " + kConvention);
    }
    return {tensor(items[0], "recon"), tensor(items[1], "mu"), tensor(items[2], "logvar")};
  }
  if (out.isGenericDict()) {
    VaeOutput result;
    for (const auto& item : out.toGenericDict()) {
      const std::string key = item.key().isString() ? item.key().toStringRef() : "?";
      if (key == "recon")
        result.recon = tensor(item.value(), "recon");
      else if (key == "mu")
        result.mu = tensor(item.value(), "mu");
      else if (key == "logvar")
        result.logvar = tensor(item.value(), "logvar");
      else
        throw ConfigError("model.path='" + path_ + "': forward's dict has key '" + key + "'; " + kConvention);
    }
    if (!result.recon.defined() || result.mu.defined() != result.logvar.defined()) {
      throw ConfigError("model.path='" + path_ + "': forward's dict needs 'recon', and 'mu' and 'logvar' together; " +
                        kConvention);
    }
    return result;
  }
  throw ConfigError("model.path='" + path_ + "': forward returned a " + out.tagKind() + "; " + kConvention);
}

std::string TorchScriptModel::Describe() const {
  return fingerprint_ + " from " + path_ + (frozen_ ? ", " + std::to_string(frozen_) + " frozen" : std::string());
}

VaeOutput TorchScriptModel::Forward(const at::Tensor& x) { return Unpack(module_.forward({x})); }

std::vector<at::Tensor> TorchScriptModel::Parameters() {
  std::vector<at::Tensor> trained;
  for (const at::Tensor& p : module_.parameters(/*recurse=*/true)) {
    if (p.requires_grad()) trained.push_back(p);
  }
  return trained;
}

std::vector<NamedTensor> TorchScriptModel::State() {
  std::vector<NamedTensor> state;
  for (const auto& p : module_.named_parameters(/*recurse=*/true)) state.push_back({p.name, p.value, false});
  for (const auto& b : module_.named_buffers(/*recurse=*/true)) state.push_back({b.name, b.value, true});
  return state;
}

void TorchScriptModel::SaveArtifacts(const std::string& run_dir) const {
  // On the CPU, so that Python loads it on any machine: the mould with the trained values.
  torch::jit::Module copy = mould_.deepcopy();
  c10::NoGradGuard no_grad;
  std::map<std::string, at::Tensor> trained;
  for (const auto& p : module_.named_parameters(/*recurse=*/true)) trained[p.name] = p.value;
  for (const auto& b : module_.named_buffers(/*recurse=*/true)) trained[b.name] = b.value;
  for (const auto& p : copy.named_parameters(/*recurse=*/true)) p.value.copy_(trained.at(p.name));
  for (const auto& b : copy.named_buffers(/*recurse=*/true)) b.value.copy_(trained.at(b.name));
  const std::string path = run_dir + "/model.ts";
  copy.save(TemporaryPathFor(path));
  CommitTemporaryFile(path);
}

}  // namespace ct
