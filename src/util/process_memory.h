// This process's resident memory, for the per-epoch record (a run that leaks shows it there).
#pragma once

namespace ct {

// Resident set size in MiB from /proc/self/statm; 0 where that file does not exist.
double ResidentMegabytes();

}  // namespace ct
