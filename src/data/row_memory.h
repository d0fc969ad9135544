// Memory for the rows a rank holds and draws its batches from at random.
//
// A shuffled batch gathers its rows from anywhere in the rank's rows: the demo's 128 rows of
// 4 KiB a field from 64-128 MiB. On the usual 4 KiB pages every such row is a page of its own,
// so every row costs a TLB miss and a page-table walk whose entries are seldom in cache. On
// 2 MiB pages (Linux's transparent huge pages, which Debian, Ubuntu and most distributions give
// only to memory that asks for them with madvise) a batch touches a few dozen pages instead.
// The demo's gather took 0.16 against 0.42 ms a step (pip LibTorch; 0.16 against 0.41 with
// Debian's; 1 rank x 2 threads, timeline trace, docs/benchmarks.md).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace ct {

// An uninitialised float32 CPU tensor of `dims`. From 2 MiB up it has a mapping of its own,
// aligned to 2 MiB and advised MADV_HUGEPAGE, released when the tensor is; the kernel still
// gives it 4 KiB pages where transparent huge pages are off ("never") or none is free. Smaller
// tensors come from at::empty. Throws std::bad_alloc when the memory cannot be mapped.
at::Tensor EmptyRows(const std::vector<int64_t>& dims);

// The size of the pages EmptyRows asks for.
constexpr size_t kHugePageBytes = size_t{2} << 20;

}  // namespace ct
