// data.train and data.val name one file, a list of files, or glob patterns (`data/bank-*.h5`):
// the files, in the order given, each pattern's matches sorted by name.
#pragma once

#include <string>
#include <vector>

namespace ct {

// The files `specs` name, for config key `key`. Throws ConfigError naming the key and the spec
// when a pattern matches no file or a file is named twice (its rows would be trained on twice).
// Does not check that plain paths exist (CheckInputFiles does, with its advice).
std::vector<std::string> ExpandDataFiles(const std::string& key, const std::vector<std::string>& specs);

// For messages: "'a.h5'", or "4 files ('bank-0.h5' ... 'bank-3.h5')".
std::string DescribeFiles(const std::vector<std::string>& paths);

}  // namespace ct
