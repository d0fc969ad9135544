#include "model/torchscript_model.h"

#include <c10/core/GradMode.h>

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

#include "model/precision.h"
#include "model/vae_loss.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace ct {
namespace {

const char* kConvention =
    "forward(self, batch: Dict[str, Tensor]) must return a Dict[str, Tensor] with a scalar 'loss' (scalar "
    "metrics and batched outputs besides); a VAE's forward(self, x) may instead return the reconstruction (a "
    "Tensor shaped like the target rows), a tuple (recon, mu, logvar), or a dict {'recon': ..., 'mu': ..., "
    "'logvar': ...}; see README, 'Any model'";

std::string Shape(at::IntArrayRef sizes) {
  std::ostringstream out;
  out << sizes;
  return out.str();
}

bool TakesADict(const torch::jit::Method& forward) {
  const auto& arguments = forward.function().getSchema().arguments();
  return arguments.size() == 2 && arguments[1].type()->kind() == c10::TypeKind::DictType;
}

}  // namespace

TorchScriptModel::TorchScriptModel(const std::string& path, const std::vector<FieldDims>& fields, double beta)
    : path_(path), beta_(beta) {
  LoadAndFingerprint();
  Probe(fields);
}

void TorchScriptModel::LoadAndFingerprint() {
  const std::string where = "model.path='" + path_ + "'";
  try {
    module_ = torch::jit::load(path_, c10::Device(c10::kCPU));
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
                      " inputs besides self, but clustertrain calls forward(batch) with one dict of batch fields "
                      "(or forward(x) with the 'input' rows); " +
                      kConvention);
  }
  dict_contract_ = TakesADict(*forward);
  if (!dict_contract_) metric_names_ = VaeMetricNames();
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
}

// Two zero rows of every field in eval mode, to find a wrong convention or shape now, on every
// rank alike, and not in the first training step; the dict contract's metric names come from it.
void TorchScriptModel::Probe(const std::vector<FieldDims>& fields) {
  const std::string where = "model.path='" + path_ + "'";
  Batch probe;
  for (const FieldDims& f : fields) {
    std::vector<int64_t> dims = f.dims;
    dims.insert(dims.begin(), 2);
    probe.names.push_back(f.name);
    probe.tensors.push_back(at::zeros(dims));
  }
  if (!dict_contract_ && !probe.Has("input")) {
    throw ConfigError(where + ": forward(x) takes the batch field 'input', but data.fields has " +
                      DescribeFields(fields) +
                      "; name the model's input 'input' in data.fields, or write forward(self, batch: Dict[str, "
                      "Tensor]) to take every field by name");
  }
  c10::NoGradGuard no_grad;
  module_.eval();
  VaeOutput vae;
  try {
    if (dict_contract_) {
      Forward(probe, Precision::kFp32);  // checks the result and learns the metrics' names
    } else {
      vae = UnpackVae(module_.forward({probe["input"]}));
    }
  } catch (const c10::Error& e) {
    throw ConfigError(where + ": forward failed on a probe batch of two zero rows of " + DescribeFields(fields) + ": " +
                      e.what_without_backtrace());
  }
  module_.train();
  if (dict_contract_) return;
  // A VAE convention: the reconstruction must be shaped like the target rows.
  if (probe.Has("target") && vae.recon.sizes() != probe["target"].sizes()) {
    throw ConfigError(where + ": forward returned a reconstruction shaped " + Shape(vae.recon.sizes()) +
                      " for input rows " + Shape(probe["input"].sizes()) + "; it must match the target rows " +
                      Shape(probe["target"].sizes()));
  }
  if (vae.mu.defined() && (vae.mu.dim() != 2 || vae.mu.size(0) != 2 || vae.mu.sizes() != vae.logvar.sizes())) {
    throw ConfigError(where + ": mu and logvar must both be [B, latent]; forward returned " + Shape(vae.mu.sizes()) +
                      " and " + Shape(vae.logvar.sizes()));
  }
}

ModelOutput TorchScriptModel::Forward(const Batch& batch, Precision precision) {
  const c10::DeviceType device = batch.tensors[0].device().type();
  if (dict_contract_) {
    c10::Dict<std::string, at::Tensor> fields;
    for (size_t i = 0; i < batch.names.size(); ++i) fields.insert(batch.names[i], batch.tensors[i]);
    // The whole forward, loss included, under autocast: as `with torch.autocast(...)` in Python.
    const AutocastScope autocast(precision == Precision::kBf16, device);
    return UnpackDict(module_.forward({fields}), batch.Rows(), /*probing=*/!probed_);
  }
  VaeOutput out;
  {
    const AutocastScope autocast(precision == Precision::kBf16, device);
    out = UnpackVae(module_.forward({batch["input"]}));
  }
  return VaeObjective(out, batch, beta_);
}

// The dict contract's result. While probing, its scalar entries name the metrics; afterwards
// every forward must return those (in training mode too).
ModelOutput TorchScriptModel::UnpackDict(const c10::IValue& value, int64_t rows, bool probing) {
  const std::string where = "model.path='" + path_ + "': forward";
  if (!value.isGenericDict()) {
    throw ConfigError(where + " returned a " + value.tagKind() + ", not a Dict[str, Tensor]; " + kConvention);
  }
  ModelOutput out;
  std::vector<std::pair<std::string, at::Tensor>> scalars;
  for (const auto& item : value.toGenericDict()) {
    const std::string key = item.key().isString() ? item.key().toStringRef() : "?";
    if (!item.value().isTensor()) {
      throw ConfigError(where + "'s entry '" + key + "' is a " + item.value().tagKind() + ", not a Tensor; " +
                        kConvention);
    }
    const at::Tensor& t = item.value().toTensor();
    if (t.dim() == 0) {
      if (key == "loss") {
        out.loss = InDtype(t, at::kFloat);
      } else {
        scalars.emplace_back(key, t);
      }
    } else if (t.size(0) == rows) {
      if (key == "loss") {
        throw ConfigError(where + " returned 'loss' shaped " + Shape(t.sizes()) +
                          ", one value per row: the loss must be a scalar, the batch mean (return "
                          "loss.mean())");
      }
      out.output_names.push_back(key);
      out.outputs.push_back(t);
    } else {
      throw ConfigError(where + " returned '" + key + "' shaped " + Shape(t.sizes()) + " for a batch of " +
                        std::to_string(rows) +
                        " rows: an entry is a scalar (the loss, a metric: a batch mean) or batched (first dimension "
                        "the batch's rows: an output predict writes); reduce it or drop it");
    }
  }
  if (!out.loss.defined()) {
    throw ConfigError(where + " returned no 'loss' (entries: " + [&] {
      std::string keys;
      for (const auto& item : value.toGenericDict()) {
        keys +=
            (keys.empty() ? "'" : ", '") + (item.key().isString() ? item.key().toStringRef() : std::string("?")) + "'";
      }
      return keys.empty() ? std::string("none") : keys;
    }() + "); add result['loss'] = <the batch mean loss, a scalar tensor>");
  }
  if (probing) {
    for (const auto& [name, t] : scalars) metric_names_.push_back(name);
    probed_ = true;
  }
  out.metrics.reserve(metric_names_.size());
  for (const std::string& name : metric_names_) {
    const auto it = std::find_if(scalars.begin(), scalars.end(), [&](const auto& s) { return s.first == name; });
    if (it == scalars.end()) {
      throw ConfigError(where + " returned no metric '" + name +
                        "', which it returned on the probe batch (in eval mode); return the same scalar entries in "
                        "training and eval mode");
    }
    out.metrics.push_back(InDtype(it->second, at::kFloat));
  }
  return out;
}

VaeOutput TorchScriptModel::UnpackVae(const c10::IValue& out) const {
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
        throw ConfigError("model.path='" + path_ + "': forward(x)'s dict has key '" + key +
                          "'; a forward that returns a loss and metrics takes the batch as a dict: " + kConvention);
    }
    if (!result.recon.defined() || result.mu.defined() != result.logvar.defined()) {
      throw ConfigError("model.path='" + path_ + "': forward's dict needs 'recon', and 'mu' and 'logvar' together; " +
                        kConvention);
    }
    return result;
  }
  throw ConfigError("model.path='" + path_ + "': forward returned a " + out.tagKind() + "; " + kConvention);
}

std::optional<double> TorchScriptModel::LossFromMetricSums(const std::vector<double>& sums, double rows) const {
  if (dict_contract_) return std::nullopt;
  return VaeLossFromSums(sums, rows, beta_);
}

std::string TorchScriptModel::Describe() const {
  return fingerprint_ + " from " + path_ + (dict_contract_ ? ", forward(batch) -> dict" : ", forward(x), VAE loss") +
         (frozen_ ? ", " + std::to_string(frozen_) + " frozen" : std::string());
}

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
