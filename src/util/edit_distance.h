// Levenshtein distance, for "did you mean ...?" suggestions (config keys, subcommands).
#pragma once

#include <cstddef>
#include <string>

namespace ct {

size_t EditDistance(const std::string& a, const std::string& b);

}  // namespace ct
