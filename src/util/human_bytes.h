// Sizes as people read them: "512.0 KiB", "1.4 GiB", "381.5 TiB".
#pragma once

#include <string>

namespace ct {

std::string HumanBytes(double bytes);

}  // namespace ct
