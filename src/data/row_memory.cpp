#include "data/row_memory.h"

#include <c10/util/accumulate.h>
#include <sys/mman.h>

#include <new>

namespace ct {
namespace {

size_t RoundUp(size_t bytes, size_t multiple) { return (bytes + multiple - 1) / multiple * multiple; }

}  // namespace

at::Tensor EmptyRows(const std::vector<int64_t>& dims) {
  const size_t bytes = static_cast<size_t>(c10::multiply_integers(dims)) * sizeof(float);
  if (bytes < kHugePageBytes) return at::empty(dims, at::kFloat);
  // One page more than needed is mapped, so that a 2 MiB boundary lies inside; what lies before
  // it and after the rows' last 2 MiB is unmapped again.
  const size_t size = RoundUp(bytes, kHugePageBytes);
  void* mapped = mmap(nullptr, size + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  char* const start = static_cast<char*>(mapped);
  char* const aligned = reinterpret_cast<char*>(RoundUp(reinterpret_cast<uintptr_t>(start), kHugePageBytes));
  if (aligned > start) munmap(start, static_cast<size_t>(aligned - start));
  char* const end = start + size + kHugePageBytes;
  if (end > aligned + size) munmap(aligned + size, static_cast<size_t>(end - (aligned + size)));
#ifdef MADV_HUGEPAGE
  // Advice only: where the kernel has no transparent huge pages the rows stay on 4 KiB pages.
  madvise(aligned, size, MADV_HUGEPAGE);
#endif
  return at::from_blob(
      aligned, dims, [size](void* data) { munmap(data, size); }, at::TensorOptions().dtype(at::kFloat));
}

}  // namespace ct
