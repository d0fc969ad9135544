// The MPI world of this process: RAII init/finalize, rank, size, and the ranks on this node.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

namespace ct {

class MpiWorld {
 public:
  MpiWorld(int* argc, char*** argv);
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int Rank() const { return rank_; }
  int Size() const { return size_; }
  int LocalRank() const { return local_rank_; }  // rank among the processes on this node
  int LocalSize() const { return local_size_; }
  const std::string& Host() const { return host_; }
  MPI_Comm Comm() const { return MPI_COMM_WORLD; }
  MPI_Comm LocalComm() const { return local_comm_; }      // the ranks on this node
  MPI_Comm AgreementComm() const { return agree_comm_; }  // a copy of the world for cluster/agree.h

  // Host values over all ranks (collective; the same answer on every rank).
  bool AnyRank(bool value) const;  // true if `value` is true on some rank
  double MaxOverRanks(double value) const;
  double SumOverRanks(double value) const;
  int64_t MinOverRanks(int64_t value) const;
  int64_t MaxOverRanks(int64_t value) const;
  // Every rank's `count` floats, rank after rank, into `all` on `root` (count x Size() floats
  // there; ignored elsewhere).
  void GatherFloats(const float* mine, int count, float* all, int root) const;
  void Barrier() const;

  // Ends every rank of the job now (the fatal path). Never returns.
  [[noreturn]] void Abort(int exit_code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::string host_;
  MPI_Comm local_comm_ = MPI_COMM_NULL;
  MPI_Comm agree_comm_ = MPI_COMM_NULL;
};

}  // namespace ct
