#include "util/data_paths.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "util/error.h"

namespace ct {
namespace {

// A name with *, ? or [ is a pattern unless a file of that very name exists (data/a[1].h5): the
// literal file wins. A pattern of such characters is written with backslashes (data/a\[1\].h5).
bool IsPattern(const std::string& spec) {
  std::error_code ec;
  return spec.find_first_of("*?[") != std::string::npos && !std::filesystem::exists(spec, ec);
}

// Sorted by bytes, not by the locale: every rank and every run orders the files alike.
std::vector<std::string> Matches(const std::string& key, const std::string& pattern) {
  glob_t found{};
  const int status = glob(pattern.c_str(), GLOB_NOSORT, nullptr, &found);
  std::vector<std::string> paths;
  for (size_t i = 0; status == 0 && i < found.gl_pathc; ++i) paths.emplace_back(found.gl_pathv[i]);
  globfree(&found);
  if (status != 0 && status != GLOB_NOMATCH) {
    throw ConfigError("config key '" + key + "': cannot expand '" + pattern + "' (a directory in it cannot be read)");
  }
  if (paths.empty()) {
    throw ConfigError("config key '" + key + "': '" + pattern + "' matches no file (relative patterns are relative " +
                      "to the working directory " + std::filesystem::current_path().string() + ")");
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Equal for two names of one file (a/./b.h5 and a/b.h5, or a link and its target).
std::string Identity(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : canonical.string();
}

}  // namespace

std::vector<std::string> ExpandDataFiles(const std::string& key, const std::vector<std::string>& specs) {
  std::vector<std::string> paths;
  std::set<std::string> seen;
  for (const std::string& spec : specs) {
    const std::vector<std::string> named = IsPattern(spec) ? Matches(key, spec) : std::vector<std::string>{spec};
    for (const std::string& path : named) {
      if (!seen.insert(Identity(path)).second) {
        throw ConfigError("config key '" + key + "' names '" + path +
                          "' twice (its rows would be trained on twice): list every file once");
      }
      paths.push_back(path);
    }
  }
  return paths;
}

std::string DescribeFiles(const std::vector<std::string>& paths) {
  if (paths.size() == 1) return "'" + paths[0] + "'";
  if (paths.empty()) return "no files";
  return std::to_string(paths.size()) + " files ('" + paths.front() + "' ... '" + paths.back() + "')";
}

}  // namespace ct
