#include "data/h5_check.h"

#include <H5PLpublic.h>

#include <atomic>
#include <vector>

#include "data/lzf_filter.h"
#include "util/logging.h"

namespace ct {

void SetUpHdf5() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  RegisterLzfDecoder();
}

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

std::vector<std::string> MissingFilters(hid_t dcpl) {
  std::vector<std::string> missing;
  const int count = H5_CHECK(H5Pget_nfilters(dcpl));
  for (int i = 0; i < count; ++i) {
    unsigned flags = 0;
    size_t values = 0;
    char name[64] = {0};
    const H5Z_filter_t id =
        H5_CHECK(H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &values, nullptr, sizeof(name), name, nullptr));
    // H5Zfilter_avail looks for a plugin (HDF5_PLUGIN_PATH, else HDF5's default folder) and loads it.
    const htri_t available = H5Zfilter_avail(id);
    H5Eclear2(H5E_DEFAULT);  // a plugin search that found nothing leaves its errors behind
    if (available > 0) continue;
    missing.push_back((name[0] ? std::string(name) + " " : std::string()) + "(filter " + std::to_string(id) + ")");
  }
  return missing;
}

std::string MissingFilterAdvice(const std::vector<std::string>& missing) {
  std::string searched;
  unsigned places = 0;
  if (H5PLsize(&places) < 0) places = 0;
  for (unsigned i = 0; i < places; ++i) {
    char place[4096] = {0};
    if (H5PLget(i, place, sizeof(place)) > 0) searched += (searched.empty() ? "" : ", ") + std::string(place);
  }
  bool lzf = false;
  for (const std::string& filter : missing) {
    lzf = lzf || filter.find("(filter " + std::to_string(kLzfFilterId) + ")") != std::string::npos;
  }
  return "this HDF5 library has no plugin for it (searched: " + (searched.empty() ? "nowhere" : searched) +
         "; HDF5_PLUGIN_PATH sets where to look): " +
         (lzf ? "rebuild clustertrain with liblzf, whose decoder it then registers itself (Debian: apt-get install "
                "liblzf-dev, which launch/setup.sh does), "
              : "install the filter's HDF5 plugin, ") +
         "or rewrite the file with gzip compression, which every HDF5 reads: h5repack -f GZIP=4 IN.h5 OUT.h5 (or in "
         "h5py, create_dataset(..., compression='gzip'))";
}

namespace {
std::atomic<bool> write_left_open{false};
}  // namespace

bool Hdf5WriteLeftOpen() { return write_left_open.load(); }
void NoteHdf5WriteLeftOpen() { write_left_open.store(true); }

void ThrowHdf5Error(const char* call, const char* file, int line) {
  // The source location is for developers (the rank's log file); users get HDF5's own words.
  spdlog::debug("HDF5 call {} failed at {}", call, Where(file, line));
  const std::string text(call);
  throw DataError("HDF5's " + text.substr(0, text.find('(')) + " failed: " + TakeHdf5ErrorStack());
}

}  // namespace ct
