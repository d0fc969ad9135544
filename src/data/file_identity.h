// Every rank must read the same file under the same path. A node with a stale or partial copy
// (a local scratch copy, a lagging file system) would otherwise deadlock HDF5's collective
// reads, or train on other bytes than its peers.
#pragma once

#include <mpi.h>

#include <string>

namespace ct {

// What a rank sees at `path`: "size 1234, checksum 0123456789abcdef" (the size and an FNV-1a hash
// of its first and last 64 KiB), or why it cannot read it.
std::string DescribeFileForIdentity(const std::string& path);

// Collective over comm: every rank describes what it sees at `path`; when they differ, every
// rank throws the same DataError naming which ranks and hosts see what.
void AgreeOnFileIdentity(const std::string& path, MPI_Comm comm);

}  // namespace ct
