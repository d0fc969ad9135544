#include "data/h5_check.h"

#include <vector>

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

void ThrowHdf5Error(const char* call, const char* file, int line) {
  throw DataError(std::string(call) + " failed at " + Where(file, line) + ": " + TakeHdf5ErrorStack());
}

}  // namespace ct
