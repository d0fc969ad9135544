// Teardown calls that may block until peers act (ncclCommAbort and ncclCommDestroy can wait for
// the other ranks): run them with a deadline, so that a fatal path always reaches its exit.
#pragma once

#include <chrono>
#include <functional>

namespace ct {

// Runs `call` on a detached thread and waits at most `limit` for it to return. Returns whether it
// did; if not, the caller goes on (to _Exit or MPI_Abort) and the blocked call dies with the
// process. `call` must own everything it uses (it may outlive the caller's frame).
bool RunWithin(std::chrono::milliseconds limit, std::function<void()> call);

}  // namespace ct
