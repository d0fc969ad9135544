// A dataset stored with a filter this HDF5 cannot apply (a compression whose plugin is missing)
// is refused when it is opened, with a message that names the dataset, the filter and the way
// out, instead of HDF5's "can't read data" deep inside the first collective read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "data/h5_file.h"
#include "data/lzf_filter.h"
#include "error_of.h"

namespace ct {
namespace {

constexpr H5Z_filter_t kTestFilter = 32099;  // not assigned by The HDF Group: no plugin exists

// A filter whose chunks really need it: each byte is stored inverted.
size_t InvertBytes(unsigned, size_t, const unsigned[], size_t nbytes, size_t*, void** buf) {
  auto* bytes = static_cast<unsigned char*>(*buf);
  for (size_t i = 0; i < nbytes; ++i) bytes[i] = static_cast<unsigned char>(~bytes[i]);
  return nbytes;
}

// Writes rows [0, rows) x 8 of value row + col/10 to `path`, chunked 4 rows, through the test filter.
void WriteInverted(const std::string& path, hsize_t rows) {
  const H5Z_class2_t invert = {H5Z_CLASS_T_VERS, kTestFilter, 1, 1, "invert", nullptr, nullptr, InvertBytes};
  ASSERT_GE(H5Zregister(&invert), 0);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t dims[2] = {rows, 8}, chunk[2] = {4, 8};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_filter(dcpl, kTestFilter, H5Z_FLAG_MANDATORY, 0, nullptr);
  const hid_t dataset = H5Dcreate2(file, "x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  std::vector<float> values(rows * 8);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i / 8) + static_cast<float>(i % 8) / 10;
  EXPECT_GE(H5Dwrite(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  H5Dclose(dataset);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
}

TEST(H5Filters, ADatasetWhoseFilterIsMissingIsRefusedWithTheWayOut) {
  SetUpHdf5();
  const std::string path = testing::TempDir() + "ct_filter_" + std::to_string(getpid()) + ".h5";
  WriteInverted(path, 10);
  {
    // While the filter is registered the rows read back.
    ParallelH5File file(path, ParallelH5File::Mode::kRead, MPI_COMM_NULL);
    EXPECT_EQ(file.FloatRows("x").Str(), "[10, 8]");
    std::vector<float> row(8);
    file.ReadRows("x", 3, 1, row.data());
    EXPECT_FLOAT_EQ(row[5], 3.5f);
  }
  ASSERT_GE(H5Zunregister(kTestFilter), 0);
  ParallelH5File file(path, ParallelH5File::Mode::kRead, MPI_COMM_NULL);
  const std::string message = test::ErrorOf<DataError>([&] { file.FloatRows("x"); });
  EXPECT_NE(message.find("dataset 'x' in '" + path + "' is stored with invert (filter 32099)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("no plugin for it (searched: "), std::string::npos) << message;
  EXPECT_NE(message.find("HDF5_PLUGIN_PATH"), std::string::npos) << message;
  EXPECT_NE(message.find("h5repack -f GZIP=4 IN.h5 OUT.h5"), std::string::npos) << message;
  std::remove(path.c_str());
}

// h5py's LZF (filter 32000) is decoded by clustertrain itself where the build has liblzf (the
// decoding is checked end to end on h5py's own files in tests/e2e/data_formats.sh).
TEST(H5Filters, LzfIsAvailableWhereTheBuildHasItsDecoder) {
  SetUpHdf5();
  EXPECT_EQ(H5Zfilter_avail(kLzfFilterId) > 0, LzfDecoderBuilt());
}

}  // namespace
}  // namespace ct
