// Files that are either the old complete version or the new complete version, never half
// written: write to "<path>.tmp", flush, fsync, rename over <path>, fsync the directory.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace ct {

void WriteFileAtomically(const std::string& path, std::string_view bytes);

// For writers that produce the file themselves (HDF5): the temporary name to write to, and the
// step that makes it visible under its real name.
std::string TemporaryPathFor(const std::string& path);
void CommitTemporaryFile(const std::string& path);

// The room a file of `bytes` needs where `path` is to be written: "" when the file system holding
// its directory has that much free (or cannot say), else what is missing and the way out, for an
// error before anything is written.
std::string SpaceProblem(const std::string& path, double bytes);

// Runs `write`, which produces TemporaryPathFor(path) (on every rank, collectively). When it fails
// with a DataError, the temporary is removed (where `remove_temporary`: one rank of those sharing
// it) and the error rethrown as "<who>: cannot write '<path>': " with the full disk as the cause
// where that is why (HDF5 over MPI-IO says only "file write failed").
void WriteTemporaryOrRemoveIt(const std::string& who, const std::string& path, bool remove_temporary,
                              const std::function<void()>& write);

// For a failed write whose library does not say why (HDF5 over MPI-IO: "file write failed"):
// "it reached this process's file-size limit of 4 MiB (ulimit -f) ..." when the temporary is as large as
// ulimit -f allows, "the file system holding '<dir>' is full (12 KiB free)" when it has less than
// 4 MiB left, else "".
std::string NoRoomNote(const std::string& path);

}  // namespace ct
