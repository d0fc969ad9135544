// data/row_memory: the rows a rank gathers its batches from lie on memory that asks for 2 MiB
// pages, hold what is written to them, and give the memory back with the tensor.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "data/row_memory.h"

namespace ct {
namespace {

// The VmFlags of the mapping in /proc/self/smaps that holds `address`, "" where none does.
std::string MappingFlags(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  bool found = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
      inside = begin <= at && at < end;  // a mapping's first line: "begin-end perms offset ..."
      found = found || inside;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return found ? "VmFlags: (none listed)" : "";
}

bool KernelHasTransparentHugePages() { return std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good(); }

TEST(RowMemory, LargeRowsAreAlignedTo2MiBAndAdvisedHugePages) {
  const at::Tensor rows = EmptyRows({4096, 2, 512});  // 16 MiB
  EXPECT_EQ(rows.sizes(), at::IntArrayRef({4096, 2, 512}));
  EXPECT_EQ(rows.scalar_type(), at::kFloat);
  EXPECT_TRUE(rows.is_contiguous());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(rows.data_ptr()) % kHugePageBytes, 0u);
  if (!KernelHasTransparentHugePages()) GTEST_SKIP() << "this kernel has no transparent huge pages";
  const std::string flags = MappingFlags(rows.data_ptr());
  ASSERT_FALSE(flags.empty()) << "the rows' address is in no mapping of /proc/self/smaps";
  EXPECT_NE((flags + " ").find(" hg "), std::string::npos) << "no MADV_HUGEPAGE (hg) in " << flags;
}

TEST(RowMemory, HoldsWhatIsWrittenUpToTheLastRow) {
  const int64_t rows = 1000, length = 1027;  // 3.9 MiB: not a whole number of 2 MiB pages
  at::Tensor held = EmptyRows({rows, length});
  const at::Tensor values = at::arange(rows * length, at::kFloat).reshape({rows, length});
  held.copy_(values);
  EXPECT_TRUE(at::equal(held, values));
  const at::Tensor index = at::tensor({999, 0, 500}, at::kLong);
  EXPECT_TRUE(at::equal(held.index_select(0, index), values.index_select(0, index)));
}

TEST(RowMemory, SmallRowsComeFromTheAllocator) {
  const at::Tensor rows = EmptyRows({16, 1024});  // 64 KiB
  EXPECT_EQ(rows.sizes(), at::IntArrayRef({16, 1024}));
  EXPECT_EQ(rows.scalar_type(), at::kFloat);
  EXPECT_EQ(rows.numel(), 16 * 1024);
}

TEST(RowMemory, TheMappingGoesWithTheTensor) {
  const void* address = nullptr;
  {
    const at::Tensor rows = EmptyRows({1024, 1024});  // 4 MiB
    address = rows.data_ptr();
    ASSERT_FALSE(MappingFlags(address).empty());
  }
  EXPECT_TRUE(MappingFlags(address).empty()) << "the rows' 2 MiB mapping outlived their tensor";
}

}  // namespace
}  // namespace ct
