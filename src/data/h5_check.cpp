#include "data/h5_check.h"

#include <vector>

#include "util/logging.h"

namespace ct {

void SilenceHdf5Printing() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string TakeHdf5ErrorStack() {
  std::vector<std::string> lines;
  auto collect = [](unsigned, const H5E_error2_t* error, void* data) -> herr_t {
    auto* out = static_cast<std::vector<std::string>*>(data);
    out->push_back(std::string(error->desc ? error->desc : "?") + " [" + (error->func_name ? error->func_name : "?") +
                   "]");
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, &lines);
  H5Eclear2(H5E_DEFAULT);
  if (lines.empty()) return "no HDF5 error message";
  // The outermost entry says what failed, the innermost why (for a file: the OS's errno text);
  // the ones between repeat the first in HDF5's internal terms.
  std::string text = lines.front() + (lines.size() > 1 ? "; " + lines.back() : "");
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text;
}

std::string Hdf5TypeName(hid_t type) {
  const size_t bits = 8 * H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      return "float" + std::to_string(bits);
    case H5T_INTEGER:
      return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(bits);
    case H5T_STRING:
      return "string";
    case H5T_COMPOUND:
      return "compound";
    case H5T_ENUM:
      return "enum";
    case H5T_ARRAY:
      return "array";
    case H5T_VLEN:
      return "variable-length";
    case H5T_OPAQUE:
      return "opaque";
    default:
      return "non-numeric";
  }
}

std::string OpenFailureAdvice(const std::string& stack) {
  if (stack.find("lock") != std::string::npos) {
    return "HDF5 could not lock the file, which some parallel and network file systems do not support: set "
           "HDF5_USE_FILE_LOCKING=FALSE in the job's environment (or wait for the program that holds a lock on it)";
  }
  return "check that the path is an HDF5 file readable on every node";
}

void ThrowHdf5Error(const char* call, const char* file, int line) {
  // The source location is for developers (the rank's log file); users get HDF5's own words.
  spdlog::debug("HDF5 call {} failed at {}", call, Where(file, line));
  const std::string text(call);
  throw DataError("HDF5's " + text.substr(0, text.find('(')) + " failed: " + TakeHdf5ErrorStack());
}

}  // namespace ct
