#include "cluster/agree.h"

#include <climits>
#include <string>

#include "cluster/mpi_check.h"
#include "util/error.h"

namespace ct {

void RunAgreed(MPI_Comm comm, const std::function<void()>& body) {
  std::string message;
  int code = kExitOk;
  try {
    body();
  } catch (const Error& e) {
    message = e.what();
    code = e.ExitCode();
  } catch (const std::exception& e) {
    message = e.what();
    code = kExitFailure;
  }
  int rank = 0;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  int first = code == kExitOk ? INT_MAX : rank;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == INT_MAX) return;
  // The first failing rank's message and code, to everyone.
  int header[2] = {static_cast<int>(message.size()), code};
  MPI_CHECK(MPI_Bcast(header, 2, MPI_INT, first, comm));
  message.resize(static_cast<size_t>(header[0]));
  MPI_CHECK(MPI_Bcast(message.data(), header[0], MPI_CHAR, first, comm));
  throw Error(message + (first == 0 ? "" : " (found on rank " + std::to_string(first) + ")"), header[1],
              /*agreed=*/true);
}

}  // namespace ct
