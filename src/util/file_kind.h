// Input files must be regular files: HDF5, LibTorch and YAML open them and read them at offsets,
// and opening a FIFO blocks until a writer comes (clustertrain info on a FIFO waited forever),
// while /dev/zero reads as an endless file.
#pragma once

#include <string>

namespace ct {

// "" when `path` is a regular file (after links); else what it is, for a message:
// "'x' does not exist", "'x' is a directory", "'x' is a FIFO (named pipe), not a regular file", ...
std::string RegularFileProblem(const std::string& path);

}  // namespace ct
