#include "data/h5_info.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "data/h5_check.h"
#include "util/human_bytes.h"

namespace ct {
namespace {

std::string DimsText(const std::vector<hsize_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// "virtual dataset: 4 mappings from 4 files (part-0.h5, part-1.h5, ...)".
std::string VirtualLayout(hid_t dcpl) {
  size_t count = 0;
  H5_CHECK(H5Pget_virtual_count(dcpl, &count));
  std::vector<std::string> files;
  for (size_t i = 0; i < count; ++i) {
    char name[4096] = {0};
    if (H5Pget_virtual_filename(dcpl, i, name, sizeof(name)) < 0) continue;
    if (std::find(files.begin(), files.end(), name) == files.end()) files.push_back(name);
  }
  std::string listed;
  for (size_t i = 0; i < files.size() && i < 3; ++i) listed += (i ? ", " : "") + files[i];
  if (files.size() > 3) listed += ", ...";
  return "virtual dataset: " + std::to_string(count) + (count == 1 ? " mapping" : " mappings") + " from " +
         std::to_string(files.size()) + (files.size() == 1 ? " file" : " files") + " (" + listed + ")";
}

void DescribeDataset(hid_t dataset, const std::string& name, std::ostringstream& out) {
  H5Id type(H5_CHECK(H5Dget_type(dataset)), H5Tclose);
  H5Id space(H5_CHECK(H5Dget_space(dataset)), H5Sclose);
  const int rank = H5_CHECK(H5Sget_simple_extent_ndims(space.get()));
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
  H5Id dcpl(H5_CHECK(H5Dget_create_plist(dataset)), H5Pclose);

  std::string layout = "contiguous";
  if (H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
    std::vector<hsize_t> chunk(static_cast<size_t>(rank));
    H5_CHECK(H5Pget_chunk(dcpl.get(), rank, chunk.data()));
    hsize_t chunk_bytes = H5Tget_size(type.get());
    for (hsize_t c : chunk) chunk_bytes *= c;
    layout = "chunks " + DimsText(chunk) + " (" + HumanBytes(static_cast<double>(chunk_bytes)) + ")";
  } else if (H5Pget_layout(dcpl.get()) == H5D_COMPACT) {
    layout = "compact";
  } else if (H5Pget_layout(dcpl.get()) == H5D_VIRTUAL) {
    layout = VirtualLayout(dcpl.get());
  }
  std::string filters;
  const int nfilters = H5Pget_nfilters(dcpl.get());
  for (int i = 0; i < nfilters; ++i) {
    unsigned flags = 0;
    size_t nvalues = 0;
    char filter_name[64] = {0};
    H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nvalues, nullptr,
                                     sizeof(filter_name), filter_name, nullptr);
    filters += (filters.empty() ? "" : ", ") + std::string(id == H5Z_FILTER_DEFLATE ? "gzip" : filter_name);
    if (H5Zfilter_avail(id) <= 0) filters += " (filter " + std::to_string(id) + ": no plugin here, unreadable)";
    H5Eclear2(H5E_DEFAULT);
  }
  hsize_t logical = H5Tget_size(type.get());
  for (hsize_t d : dims) logical *= d;
  out << "  /" << name << "  " << Hdf5TypeName(type.get()) << " " << DimsText(dims) << "  " << layout
      << "  compression: " << (filters.empty() ? "none" : filters) << "  size "
      << HumanBytes(static_cast<double>(logical))
      << (H5Pget_layout(dcpl.get()) == H5D_VIRTUAL
              ? std::string(" (stored in its source files)")
              : " (stored " + HumanBytes(static_cast<double>(H5Dget_storage_size(dataset))) + ")")
      << "\n";
}

struct Walk {
  std::ostringstream* out;
  std::string prefix;
  int groups_listed = 0;
};

herr_t Visit(hid_t group, const char* name, const H5L_info_t*, void* data) {
  auto* walk = static_cast<Walk*>(data);
  hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  if (object < 0) return 0;
  H5Id handle(object, H5Oclose);
  const std::string full = walk->prefix + name;
  if (H5Iget_type(object) == H5I_DATASET) {
    DescribeDataset(object, full, *walk->out);
  } else if (H5Iget_type(object) == H5I_GROUP) {
    // One-group-per-sample files can have millions of groups: show a few, then summarise.
    if (++walk->groups_listed > 4) return 0;
    Walk inner{walk->out, full + "/", 0};
    H5Literate(object, H5_INDEX_NAME, H5_ITER_INC, nullptr, Visit, &inner);
  }
  return 0;
}

}  // namespace

std::string DescribeH5File(const std::string& path) {
  SetUpHdf5();
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) {
    const std::string stack = TakeHdf5ErrorStack();
    throw DataError("cannot open '" + path + "' as an HDF5 file: " + stack + "; " + OpenFailureAdvice(stack));
  }
  H5Id file(id, H5Fclose);
  std::ostringstream out;
  hsize_t file_size = 0;
  H5Fget_filesize(file.get(), &file_size);
  out << path << " (" << HumanBytes(static_cast<double>(file_size)) << ")\n";
  Walk walk{&out, "", 0};
  H5Literate(file.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, Visit, &walk);
  if (walk.groups_listed > 4) {
    H5G_info_t info;
    H5Gget_info(file.get(), &info);
    out << "  ... " << info.nlinks
        << " top-level entries; groups beyond the first 4 not shown. A one-group-per-sample\n"
        << "  file is slow to train from: `clustertrain convert` writes the contiguous layout.\n";
  }
  return out.str();
}

}  // namespace ct
