#include "util/file_kind.h"

#include <filesystem>

namespace ct {

std::string RegularFileProblem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  const std::string quoted = "'" + path + "'";
  switch (status.type()) {
    case fs::file_type::regular:
      return "";
    case fs::file_type::not_found:
      return quoted + " does not exist";
    case fs::file_type::directory:
      return quoted + " is a directory";
    case fs::file_type::fifo:
      return quoted + " is a FIFO (named pipe), not a regular file";
    case fs::file_type::character:
      return quoted + " is a character device, not a regular file";
    case fs::file_type::block:
      return quoted + " is a block device, not a regular file";
    case fs::file_type::socket:
      return quoted + " is a socket, not a regular file";
    default:
      return quoted + " cannot be examined (" + (ec ? ec.message() : std::string("unknown file type")) + ")";
  }
}

}  // namespace ct
