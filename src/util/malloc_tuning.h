// glibc's allocator, tuned for a training loop before anything is allocated.
//
// By default glibc serves every block over 128 KiB with its own mmap and returns it with munmap
// on free, raising that threshold only after it sees such a block freed. A training step makes
// and frees the same large temporaries (activations, gradients: 0.5-2 MiB here) every step, so
// until the threshold has adapted (the whole first epoch of the demo), and for ever in a loop
// whose pattern never teaches it, each one costs fresh zeroed pages and their page faults: the
// demo's first epoch ran at 9,300 samples/s instead of 16,600 (2 cores, Intel Xeon). A fixed
// threshold keeps such blocks in the heap, where the next step reuses them.
#pragma once

namespace ct {

// Sets M_MMAP_THRESHOLD and M_TRIM_THRESHOLD, unless the user set MALLOC_MMAP_THRESHOLD_ or
// MALLOC_TRIM_THRESHOLD_ (glibc's own variables, which then win). No-op on other C libraries.
void TuneMallocForTraining();

}  // namespace ct
