#include "data/h5_check.h"

#include <vector>

namespace ct {

void SilenceHdf5Printing() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string TakeHdf5ErrorStack() {
  std::vector<std::string> lines;
  auto collect = [](unsigned, const H5E_error2_t* error, void* data) -> herr_t {
    auto* out = static_cast<std::vector<std::string>*>(data);
    out->push_back(std::string(error->desc ? error->desc : "?") + " [" +
                   (error->func_name ? error->func_name : "?") + "]");
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, &lines);
  H5Eclear2(H5E_DEFAULT);
  std::string text;
  for (size_t i = 0; i < lines.size() && i < 3; ++i) text += (i ? "; " : "") + lines[i];
  return text.empty() ? "no HDF5 error message" : text;
}

void ThrowHdf5Error(const char* call, const char* file, int line) {
  throw DataError(std::string(call) + " failed at " + Where(file, line) + ": " + TakeHdf5ErrorStack());
}

}  // namespace ct
