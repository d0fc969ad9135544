// This process's resident memory, for the per-epoch record (a run that leaks shows it there).
#pragma once

namespace ct {

// Resident set size in MiB from /proc/self/statm; 0 where that file does not exist.
double ResidentMegabytes();

// The peak resident set size in bytes (VmHWM, /proc/self/status); 0 where it cannot be read.
double PeakResidentBytes();
// Lowers the peak to the current resident size (Linux: "5" into /proc/self/clear_refs), so that
// PeakResidentBytes() measures what follows; false where the kernel does not allow it.
bool ResetPeakResident();

}  // namespace ct
