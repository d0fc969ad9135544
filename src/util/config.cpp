#include "util/config.h"

#include <fmt/format.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "util/config_schema.h"
#include "util/data_paths.h"
#include "util/edit_distance.h"
#include "util/error.h"
#include "util/file_kind.h"

namespace ct {
namespace {

const ConfigKey* FindKey(const std::string& name) {
  for (const auto& key : ConfigKeys()) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

bool IsSection(const std::string& prefix) {
  for (const auto& key : ConfigKeys()) {
    if (key.name.rfind(prefix + ".", 0) == 0) return true;
  }
  return false;
}

[[noreturn]] void UnknownKey(const std::string& name, const std::string& where) {
  std::string best;
  size_t best_distance = 4;  // suggest only close matches
  for (const auto& key : ConfigKeys()) {
    size_t d = EditDistance(name, key.name);
    if (d < best_distance) {
      best_distance = d;
      best = key.name;
    }
  }
  std::string hint =
      best.empty() ? "run `clustertrain train --help-config` for the list of keys" : "did you mean '" + best + "'?";
  throw ConfigError("unknown config key '" + name + "' (" + where + "): " + hint);
}

std::string Location(const std::string& path, const YAML::Node& node) {
  return path + ":" + std::to_string(node.Mark().line + 1);
}

// YAML's null (`key: null`, `key: ~`, `key:`) means "not set", as in any YAML config: the key
// keeps (or, from --set, returns to) its default.
void ResetToDefault(const ConfigKey& key, Config& config, const std::string& where) {
  key.set(config, key.get(Config{}), where);
}

// Walks a YAML mapping; every leaf must be a known key.
void ApplyMapping(const YAML::Node& node, const std::string& prefix, const std::string& path, Config& config,
                  std::set<std::string>& seen) {
  if (!node.IsMap()) {
    throw ConfigError("config file " + Location(path, node) + ": '" +
                      (prefix.empty() ? std::string("the top level") : prefix) +
                      "' must be a mapping of keys to values");
  }
  for (const auto& item : node) {
    const std::string name = (prefix.empty() ? "" : prefix + ".") + item.first.as<std::string>();
    const std::string where = Location(path, item.first);
    if (const ConfigKey* key = FindKey(name)) {
      if (!seen.insert(name).second) throw ConfigError("config key '" + name + "' appears twice (" + where + ")");
      if (item.second.IsNull()) {
        ResetToDefault(*key, config, where);
      } else {
        key->set(config, item.second, where);
      }
    } else if (IsSection(name) && item.second.IsNull()) {
      continue;  // an empty section: every key in it keeps its default
    } else if (IsSection(name) && item.second.IsMap()) {
      ApplyMapping(item.second, name, path, config, seen);
    } else if (IsSection(name)) {
      throw ConfigError("config key '" + name + "' (" + where + ") is a section, not a value: nest its keys under it");
    } else {
      UnknownKey(name, where);
    }
  }
}

void ApplyOverride(const std::string& assignment, Config& config) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError("--set '" + assignment + "': expected section.key=value, e.g. --set train.epochs=5");
  }
  const std::string name = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  const std::string where = "--set " + assignment;
  const ConfigKey* key = FindKey(name);
  if (!key) UnknownKey(name, where);
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError("config key '" + name + "' (" + where + "): cannot parse '" + text + "' as YAML: " + e.msg);
  }
  if (value.IsNull() && !text.empty()) {
    ResetToDefault(*key, config, where);  // --set data.val=null (or ~): not set
    return;
  }
  if (value.IsNull()) value = YAML::Node(text);  // "--set output.dir=" style empties stay strings
  key->set(config, value, where);
}

// `how_to_make`: how a user creates such a file, for the message when it is missing.
void CheckPathReadable(const std::string& key, const std::string& path, const std::string& how_to_make) {
  if (path.empty()) {
    throw ConfigError("config key '" + key + "' is not set: give the HDF5 file in the config or with --set " + key +
                      "=PATH (`clustertrain make-data` writes a synthetic one)");
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError("config key '" + key + "': '" + path + "' is a directory; give the file in it (" + how_to_make +
                      ")");
  }
  if (!std::filesystem::exists(path, ec)) {
    throw ConfigError("config key '" + key + "': file '" + path +
                      "' does not exist (relative paths are "
                      "relative to the working directory " +
                      std::filesystem::current_path().string() + "); " + how_to_make + " or fix the path");
  }
  if (const std::string problem = RegularFileProblem(path); !problem.empty()) {
    throw ConfigError("config key '" + key + "': " + problem +
                      "; HDF5 and LibTorch read regular files only: copy the data into a file and give its path");
  }
}

void ValidateRelations(const Config& c) {
  if (c.output.dir.empty()) throw ConfigError("config key 'output.dir' is empty: give a run directory");
  if (c.train.on_nonfinite == OnNonFinite::kSkip && c.train.nan_check_every == 0) {
    throw ConfigError(
        "config key 'train.on_nonfinite' is skip, but steps are checked only at epoch ends "
        "(train.nan_check_every=0): set train.nan_check_every (1 checks every step)");
  }
  if (c.model.kind == ModelKind::kTorchScript && c.model.path.empty()) {
    throw ConfigError(
        "config key 'model.kind' is torchscript, but model.path is empty: give the module file "
        "(torch.jit.script(model).save(path) in Python; see configs/torchscript/)");
  }
  if (c.train.autotune.max < c.train.autotune.min) {
    throw ConfigError("config keys 'train.autotune.min' (" + std::to_string(c.train.autotune.min) +
                      ") and 'train.autotune.max' (" + std::to_string(c.train.autotune.max) +
                      "): the search runs from min up to max; give max >= min");
  }
  if (c.data.val_fraction > 0 && !c.data.val.empty()) {
    throw ConfigError(
        "config keys 'data.val' and 'data.val_fraction' are both set: validate on a file (data.val) or "
        "on a fraction of data.train (data.val_fraction), not both");
  }
  if (!c.data.fields.empty() && (c.data.input_key != "input" || c.data.target_key != "target")) {
    throw ConfigError(
        "config keys 'data.fields' and 'data.input_key'/'data.target_key' are both set: name every dataset in "
        "data.fields (e.g. {input: strain, target: clean}) and leave the two keys out");
  }
  for (const auto& [name, dataset] : c.data.fields) {
    const bool identifier = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
                            std::all_of(name.begin(), name.end(), [](char ch) {
                              return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
                            });
    if (!identifier) {
      throw ConfigError("config key 'data.fields': field name '" + name +
                        "' is not a name a model can use (letters, digits and _, not starting with a digit)");
    }
    if (dataset.empty()) {
      throw ConfigError("config key 'data.fields': field '" + name +
                        "' names no dataset; give the HDF5 dataset it is "
                        "read from (h5ls FILE lists them)");
    }
  }
  if (c.train.monitor.rfind("val/", 0) != 0 && c.train.monitor.rfind("train/", 0) != 0) {
    throw ConfigError("config key 'train.monitor' is '" + c.train.monitor +
                      "': name a recorded value as val/<name> or train/<name>, e.g. val/loss (the default) or "
                      "val/mae_chirp_mass");
  }
  if (c.train.plateau.min_lr >= c.train.lr) {
    throw ConfigError("config key 'train.plateau.min_lr' (" + std::to_string(c.train.plateau.min_lr) +
                      ") must be below train.lr (" + std::to_string(c.train.lr) + ")");
  }
}

// YAML text from `source` ("config file configs/x.yaml"); a syntax error names its line, and a
// tab in that line's indentation (or the one before), which YAML forbids and yaml-cpp reports
// only as "illegal map value" or the like.
YAML::Node ParseYaml(const std::string& yaml, const std::string& source) {
  try {
    return YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    std::string message = source + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg;
    std::istringstream lines(yaml);
    int number = 0;
    bool tab = false;
    for (std::string line; std::getline(lines, line) && number <= e.mark.line; ++number) {
      const std::string indent = line.substr(0, line.find_first_not_of(" \t"));
      if (number >= e.mark.line - 1 && indent.find('\t') != std::string::npos) tab = true;
    }
    if (tab) message += "; YAML does not allow tabs in indentation: indent with spaces";
    throw ConfigError(message);
  }
}

}  // namespace

std::vector<DataField> DataFields(const DataConfig& data) {
  if (data.fields.empty()) return {{"input", data.input_key}, {"target", data.target_key}};
  std::vector<DataField> fields;
  for (const auto& [name, dataset] : data.fields) fields.push_back({name, dataset});
  return fields;
}

void CheckInputFiles(const Config& config) {
  auto check_data = [](const std::string& key, const std::vector<std::string>& specs) {
    if (specs.empty()) CheckPathReadable(key, "", "");
    for (const std::string& path : ExpandDataFiles(key, specs)) {
      CheckPathReadable(key, path, "create it with `clustertrain make-data --out " + path + "`");
    }
  };
  check_data("data.train", config.data.train);
  if (config.data.val_fraction == 0) check_data("data.val", config.data.val);
  if (config.model.kind == ModelKind::kTorchScript) {
    CheckPathReadable("model.path", config.model.path,
                      "save the module there from Python with torch.jit.script(model).save(path) (see "
                      "configs/torchscript/make_model.py)");
  }
}

Config LoadConfig(const std::string& path, const std::vector<std::string>& overrides) {
  Config config;
  std::set<std::string> seen;
  if (!path.empty()) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    if (!file) throw ConfigError("cannot read config file '" + path + "': check the path (see configs/ for examples)");
    const YAML::Node root = ParseYaml(text.str(), "config file " + path);
    if (!root.IsNull()) ApplyMapping(root, "", path, config, seen);
  }
  for (const auto& assignment : overrides) ApplyOverride(assignment, config);
  ValidateRelations(config);
  return config;
}

Config LoadConfigText(const std::string& yaml, const std::string& source, const std::vector<std::string>& overrides) {
  Config config;
  std::set<std::string> seen;
  const YAML::Node root = ParseYaml(yaml, source);
  if (!root.IsNull()) ApplyMapping(root, "", source, config, seen);
  for (const auto& assignment : overrides) ApplyOverride(assignment, config);
  ValidateRelations(config);
  return config;
}

std::string ConfigToYaml(const Config& config) {
  // Keys of a section are adjacent in the table, so the nesting can be emitted in one pass:
  // close the sections the next key leaves, open the ones it enters.
  YAML::Emitter out;
  out << YAML::BeginMap;
  std::vector<std::string> open;
  for (const auto& key : ConfigKeys()) {
    std::vector<std::string> parts;
    std::stringstream stream(key.name);
    for (std::string part; std::getline(stream, part, '.');) parts.push_back(part);
    const std::vector<std::string> sections(parts.begin(), parts.end() - 1);
    size_t common = 0;
    while (common < open.size() && common < sections.size() && open[common] == sections[common]) ++common;
    for (size_t i = open.size(); i > common; --i) out << YAML::EndMap;
    for (size_t i = common; i < sections.size(); ++i) out << YAML::Key << sections[i] << YAML::Value << YAML::BeginMap;
    open = sections;
    out << YAML::Key << parts.back() << YAML::Value;
    const YAML::Node value = key.get(config);
    if (value.IsSequence() || value.IsMap()) out << YAML::Flow;
    out << value;
  }
  for (size_t i = 0; i < open.size(); ++i) out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::vector<std::pair<std::string, std::string>> ConfigValues(const Config& config) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const auto& key : ConfigKeys()) {
    YAML::Emitter value;
    value << YAML::Flow << key.get(config);
    std::string text = value.c_str();
    // Numbers as people write them: 0.004, not 0.0040000000000000001.
    char* end = nullptr;
    const double number = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size()) text = fmt::format("{:.15g}", number);
    values.emplace_back(key.name, text);
  }
  return values;
}

std::string ConfigKeyHelp() {
  const Config defaults;
  std::ostringstream out;
  out << "Configuration keys (YAML sections, or --set section.key=value):\n";
  for (const auto& key : ConfigKeys()) {
    YAML::Emitter value;
    value << YAML::Flow << key.get(defaults);
    out << "  " << key.name << "  (" << key.type_name << "; default " << value.c_str() << ")\n"
        << "      " << key.help << "\n";
  }
  return out.str();
}

}  // namespace ct
