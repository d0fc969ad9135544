#include "cluster/mpi_world.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "cluster/mpi_check.h"
#include "util/error.h"

namespace ct {

void ThrowMpiError(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw CommError(std::string(call) + " failed at " + Where(file, line) + ": " + text);
}

MpiWorld::MpiWorld(int* argc, char*** argv) {
  // SERIALIZED: the MPI backend's communication thread and the main thread both call MPI, never
  // at the same time (MpiCommunicator drains its thread before the main thread calls).
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  if (provided < MPI_THREAD_SERIALIZED) {
    throw CommError("this MPI library provides thread level " + std::to_string(provided) +
                    ", below MPI_THREAD_SERIALIZED, which the MPI backend's communication thread needs; use an MPI "
                    "built with thread support (Open MPI and MPICH are by default)");
  }
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));

  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int length = 0;
  MPI_CHECK(MPI_Get_processor_name(name, &length));
  host_.assign(name, static_cast<size_t>(length));
  SetProcessIdentity(rank_, host_);

  // Ranks that share memory are the ranks on this node.
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local_comm_));
  MPI_CHECK(MPI_Comm_rank(local_comm_, &local_rank_));
  MPI_CHECK(MPI_Comm_size(local_comm_, &local_size_));
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &agree_comm_));
  MPI_Comm_set_errhandler(agree_comm_, MPI_ERRORS_RETURN);
}

MpiWorld::~MpiWorld() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (local_comm_ != MPI_COMM_NULL) MPI_Comm_free(&local_comm_);
  if (agree_comm_ != MPI_COMM_NULL) MPI_Comm_free(&agree_comm_);
  MPI_Finalize();
}

bool MpiWorld::AnyRank(bool value) const {
  if (size_ == 1) return value;
  int any = value ? 1 : 0;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  return any != 0;
}

double MpiWorld::MaxOverRanks(double value) const {
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return value;
}

int64_t MpiWorld::MinOverRanks(int64_t value) const {
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD));
  return value;
}

int64_t MpiWorld::MaxOverRanks(int64_t value) const {
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD));
  return value;
}

void MpiWorld::GatherFloats(const float* mine, int count, float* all, int root) const {
  MPI_CHECK(MPI_Gather(mine, count, MPI_FLOAT, all, count, MPI_FLOAT, root, MPI_COMM_WORLD));
}

double MpiWorld::SumOverRanks(double value) const {
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  return value;
}

void MpiWorld::Barrier() const { MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); }

void MpiWorld::Abort(int exit_code) const {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort should not return; make sure.
}

}  // namespace ct
