#include "cluster/agree.h"

#include <chrono>
#include <climits>
#include <exception>
#include <string>
#include <thread>

#include "cluster/mpi_check.h"
#include "util/error.h"

namespace ct {
namespace {

constexpr auto kPeerWait = std::chrono::seconds(5);  // for peers when this rank failed alone

}  // namespace

void RunAgreed(const MpiWorld& world, const std::function<void()>& body) {
  std::exception_ptr failure;
  std::string message;
  int code = kExitOk;
  try {
    body();
  } catch (const Error& e) {
    failure = std::current_exception();
    message = e.what();
    code = e.ExitCode();
  } catch (const std::exception& e) {
    failure = std::current_exception();
    message = e.what();
    code = kExitFailure;
  }
  const MPI_Comm comm = world.AgreementComm();
  int mine = failure ? world.Rank() : INT_MAX;
  int first = INT_MAX;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm, &request));
  const auto deadline = std::chrono::steady_clock::now() + kPeerWait;
  for (int done = 0;;) {
    MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) break;
    // Peers that did not fail always arrive; a rank that failed alone stops waiting for peers
    // stuck in a collective it left.
    if (failure && std::chrono::steady_clock::now() > deadline) std::rethrow_exception(failure);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (first == INT_MAX) return;
  // Everyone is here: the first failing rank's message and code, to all.
  int header[2] = {static_cast<int>(message.size()), code};
  MPI_CHECK(MPI_Bcast(header, 2, MPI_INT, first, comm));
  message.resize(static_cast<size_t>(header[0]));
  MPI_CHECK(MPI_Bcast(message.data(), header[0], MPI_CHAR, first, comm));
  throw Error(message + (first == 0 ? "" : " (found on rank " + std::to_string(first) + ")"), header[1],
              /*agreed=*/true);
}

}  // namespace ct
