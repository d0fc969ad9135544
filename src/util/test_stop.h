// A test hook: CT_TEST_STOP_AT=PHASE makes the rank CT_TEST_STOP_RANK (the launcher's rank,
// default 1) stop itself with SIGSTOP on entering PHASE, as a rank stuck there would be, so
// that a test can show that the start-up deadline and the hang watchdog cover that phase on a
// machine of any speed (tests/e2e/failures.sh). Unset, it does nothing.
#pragma once

namespace ct {

void StopHereForATest(const char* phase);

}  // namespace ct
