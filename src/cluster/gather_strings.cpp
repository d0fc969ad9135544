#include "cluster/gather_strings.h"

#include <algorithm>

#include "cluster/mpi_check.h"

namespace ct {
namespace {

// Splits the concatenation `all` at `lengths` into strings.
std::vector<std::string> Split(const std::vector<char>& all, const std::vector<int>& lengths) {
  std::vector<std::string> result;
  size_t offset = 0;
  for (int length : lengths) {
    result.emplace_back(all.data() + offset, static_cast<size_t>(length));
    offset += static_cast<size_t>(length);
  }
  return result;
}

std::vector<int> Offsets(const std::vector<int>& lengths, int* total) {
  std::vector<int> offsets(lengths.size(), 0);
  *total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = *total;
    *total += lengths[r];
  }
  return offsets;
}

}  // namespace

std::vector<std::string> AllGatherStrings(MPI_Comm comm, const std::string& mine) {
  int size = 1;
  MPI_CHECK(MPI_Comm_size(comm, &size));
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<size_t>(size));
  MPI_CHECK(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm));
  int total = 0;
  std::vector<int> offsets = Offsets(lengths, &total);
  std::vector<char> all(static_cast<size_t>(std::max(total, 1)));
  MPI_CHECK(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, comm));
  return Split(all, lengths);
}

std::vector<std::string> GatherStrings(MPI_Comm comm, const std::string& mine, int root) {
  int size = 1, rank = 0;
  MPI_CHECK(MPI_Comm_size(comm, &size));
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<size_t>(size));
  MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm));
  int total = 0;
  std::vector<int> offsets = Offsets(lengths, &total);
  std::vector<char> all(rank == root ? static_cast<size_t>(std::max(total, 1)) : 1);
  MPI_CHECK(
      MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, root, comm));
  if (rank != root) return {};
  return Split(all, lengths);
}

std::string BroadcastString(MPI_Comm comm, const std::string& text, int root) {
  int rank = 0;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  auto length = static_cast<int64_t>(text.size());
  MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT64_T, root, comm));
  std::string result = rank == root ? text : std::string(static_cast<size_t>(length), '\0');
  if (length > 0) MPI_CHECK(MPI_Bcast(result.data(), static_cast<int>(length), MPI_CHAR, root, comm));
  return result;
}

}  // namespace ct
