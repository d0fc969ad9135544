#include "util/malloc_tuning.h"

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ct {

void TuneMallocForTraining() {
#if defined(__GLIBC__)
  // Blocks up to 256 MiB come from the heap and are reused; the heap's top is returned to the
  // kernel only beyond 1 GiB free, so a step's temporaries do not go back and forth.
  if (!std::getenv("MALLOC_MMAP_THRESHOLD_")) mallopt(M_MMAP_THRESHOLD, 256 << 20);
  if (!std::getenv("MALLOC_TRIM_THRESHOLD_")) mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace ct
