// The table of configuration keys. Internal to util/config*.cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <vector>

#include "util/config.h"

namespace ct {

struct ConfigKey {
  std::string name;       // "train.lr"
  std::string type_name;  // "number > 0"
  std::string help;
  // Converts and range-checks `value` and stores it. `where` names the source
  // ("configs/x.yaml:12" or "--set") for the error message.
  std::function<void(Config&, const YAML::Node& value, const std::string& where)> set;
  std::function<YAML::Node(const Config&)> get;
};

const std::vector<ConfigKey>& ConfigKeys();

}  // namespace ct
