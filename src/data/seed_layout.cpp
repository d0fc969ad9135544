#include "data/seed_layout.h"

#include <cctype>
#include <cstring>

namespace ct {
namespace {

// Counts root links named sample<digits>.
herr_t CountSample(hid_t, const char* name, const H5L_info_t*, void* count) {
  if (std::strncmp(name, "sample", 6) == 0 && name[6] != '\0') {
    bool digits = true;
    for (const char* c = name + 6; *c; ++c) digits = digits && std::isdigit(static_cast<unsigned char>(*c));
    if (digits) ++*static_cast<int64_t*>(count);
  }
  return 0;
}

std::string SampleName(int64_t i, const std::string& name) { return "sample" + std::to_string(i) + "/" + name; }

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// Every sample is a dataset of its own, and HDF5's metadata cache keeps their object headers: up
// to 32 MiB of them by default, counted as stored but held decoded, several times larger (about
// 170 MB in memory for 32,768 samples). Each header is read once, so a small cache loses nothing
// and keeps convert's memory flat in the number of samples.
H5Id SmallMetadataCache() {
  H5Id fapl(H5_CHECK(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose);
  H5AC_cache_config_t config;
  config.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  H5_CHECK(H5Pget_mdc_config(fapl.get(), &config));
  config.set_initial_size = true;
  config.initial_size = 1 << 20;
  config.min_size = 1 << 20;
  config.max_size = 2 << 20;
  H5_CHECK(H5Pset_mdc_config(fapl.get(), &config));
  return fapl;
}

}  // namespace

SeedLayoutReader::SeedLayoutReader(const std::string& path) : path_(path) {
  SetUpHdf5();
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, SmallMetadataCache().get());
  if (id < 0) {
    throw DataError("cannot open '" + path + "' as an HDF5 file: " + TakeHdf5ErrorStack() +
                    "; give the seed file written one group per sample (sample0/input, sample0/target, ...)");
  }
  file_ = H5Id(id, H5Fclose);
  H5_CHECK(H5Literate(file_.get(), H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, CountSample, &samples_));
  if (samples_ == 0) {
    throw DataError("'" + path +
                    "' has no sample{i} groups at its root, so it is not in the one-group-per-sample "
                    "layout; `clustertrain info " +
                    path +
                    "` lists what it holds (a file that already has 'input' "
                    "and 'target' datasets needs no conversion)");
  }
  for (const char* name : {"input", "target"}) {
    if (H5Lexists(file_.get(), "sample0", H5P_DEFAULT) <= 0 ||
        H5Lexists(file_.get(), SampleName(0, name).c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      throw DataError("'" + path + "' has no dataset '" + SampleName(0, name) +
                      "'; the seed layout is sample0/input, sample0/target, sample1/input, ...");
    }
  }
  H5Id input(H5_CHECK(H5Dopen2(file_.get(), SampleName(0, "input").c_str(), H5P_DEFAULT)), H5Dclose);
  H5Id target(H5_CHECK(H5Dopen2(file_.get(), SampleName(0, "target").c_str(), H5P_DEFAULT)), H5Dclose);
  input_dims_ = DatasetDims(0, "input", input.get());
  target_dims_ = DatasetDims(0, "target", target.get());
  H5Id type(H5_CHECK(H5Dget_type(input.get())), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_FLOAT) {
    throw DataError("'" + path + "': " + SampleName(0, "input") +
                    " is not floating point; convert reads float32 "
                    "or float64 samples");
  }
  stored_type_ = "float" + std::to_string(8 * H5Tget_size(type.get()));
}

std::vector<int64_t> SeedLayoutReader::DatasetDims(int64_t i, const std::string& name, hid_t dataset) const {
  H5Id space(H5_CHECK(H5Dget_space(dataset)), H5Sclose);
  const int rank = H5_CHECK(H5Sget_simple_extent_ndims(space.get()));
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
  std::vector<int64_t> out(dims.begin(), dims.end());
  if (out.empty()) throw DataError("'" + path_ + "': " + SampleName(i, name) + " is a scalar; expected a waveform");
  return out;
}

void SeedLayoutReader::Read(int64_t i, const std::string& name, float* out) const {
  const std::string dataset_name = SampleName(i, name);
  const hid_t id = H5Dopen2(file_.get(), dataset_name.c_str(), H5P_DEFAULT);
  if (id < 0) {
    H5Eclear2(H5E_DEFAULT);
    throw DataError("'" + path_ + "' has no dataset '" + dataset_name + "' but " + std::to_string(samples_) +
                    " sample groups: samples must be numbered sample0 .. sample" + std::to_string(samples_ - 1) +
                    ", each with input and target");
  }
  H5Id dataset(id, H5Dclose);
  const std::vector<int64_t> expected = name == "input" ? input_dims_ : target_dims_;
  const std::vector<int64_t> dims = DatasetDims(i, name, dataset.get());
  if (dims != expected) {
    throw DataError("'" + path_ + "': " + dataset_name + " has shape " + DimsText(dims) + " but sample0/" + name +
                    " has " + DimsText(expected) + "; every sample must have the same shape");
  }
  H5_CHECK(H5Dread(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out));
}

}  // namespace ct
