// Files that are either the old complete version or the new complete version, never half
// written: write to "<path>.tmp", flush, fsync, rename over <path>, fsync the directory.
#pragma once

#include <string>
#include <string_view>

namespace ct {

void WriteFileAtomically(const std::string& path, std::string_view bytes);

// For writers that produce the file themselves (HDF5): the temporary name to write to, and the
// step that makes it visible under its real name.
std::string TemporaryPathFor(const std::string& path);
void CommitTemporaryFile(const std::string& path);

// For a failed write whose library does not say why (HDF5 over MPI-IO: "file write failed"):
// "the file system holding '<dir>' is full (12 KiB free)" when it has less than 4 MiB left, else "".
std::string DiskFullNote(const std::string& path);

}  // namespace ct
