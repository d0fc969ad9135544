// Progress marks for the hang watchdog (train/hang_watchdog.h): what this rank is doing and
// when it last moved. Process-wide, so that code left of train/ (a collective HDF5 read of a
// large file) can show that it is still moving without knowing about the watchdog.
//
// Only the thread that runs collectives may beat: a background thread that beats would keep a
// rank "alive" while its main thread waits for ever in a collective.
#pragma once

namespace ct {

// Entering `phase` (a string literal, named in the watchdog's message), now.
void Heartbeat(const char* phase);
// Still moving, in the same phase.
void Heartbeat();

struct HeartbeatReading {
  double seconds_since = 0;
  const char* phase = "";
};
HeartbeatReading LastHeartbeat();

}  // namespace ct
