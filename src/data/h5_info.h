// `clustertrain info FILE`: datasets, shapes, dtypes, chunking, compression and sizes.
#pragma once

#include <string>

namespace ct {

std::string DescribeH5File(const std::string& path);

}  // namespace ct
