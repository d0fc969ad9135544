// HDF5 error handling: RAII handles and H5_CHECK, which throws ct::DataError with the HDF5
// function and HDF5's own error stack (HDF5's automatic printing is turned off); the call's
// source location goes to the rank's log. Code that reads a user's file wraps these with the
// file, the dataset and the fix (no message a user sees quotes our source).
#pragma once

#include <hdf5.h>

#include <exception>
#include <string>
#include <vector>

#include "util/error.h"

namespace ct {

// Turns off HDF5's own stderr printing (errors come back through H5_CHECK instead) and registers
// the filters clustertrain brings (h5py's LZF decoder, data/lzf_filter.h). Before any file is opened.
void SetUpHdf5();

// The innermost messages of HDF5's current error stack, then clears it.
std::string TakeHdf5ErrorStack();

// "float32", "int16", "uint8", "string", "compound", "enum" (h5py's bool), ...
std::string Hdf5TypeName(hid_t type);

// What to do when H5Fopen of an existing file failed with HDF5's error `stack`: turn off HDF5's
// file locking where the file system has no locks (or another program holds one), else check
// the file.
std::string OpenFailureAdvice(const std::string& stack);

// The filters (compression, shuffle, ...) of a dataset's creation property list that this HDF5
// library cannot apply because it has no plugin for them: "lzf (filter 32000)", ... Empty when
// every filter is built in or its plugin was found.
std::vector<std::string> MissingFilters(hid_t dcpl);

// How to read a dataset whose filters `missing` (MissingFilters) this HDF5 lacks: where HDF5
// looked for plugins, the Debian package where there is one, and how to rewrite the file with gzip.
std::string MissingFilterAdvice(const std::vector<std::string>& missing);

[[noreturn]] void ThrowHdf5Error(const char* call, const char* file, int line);

template <class T>
T H5Checked(T value, const char* call, const char* file, int line) {
  if (value < 0) ThrowHdf5Error(call, file, line);
  return value;
}

// Whether this process left a file it was writing open: unwinding from an error, or its close
// failed. HDF5 closes such a file itself as MPI finalizes, and one whose writes failed crashes it
// (HDF5 1.10), so the fatal path then ends the process without finalizing (cmd/run_with_mpi.cpp).
bool Hdf5WriteLeftOpen();
void NoteHdf5WriteLeftOpen();

// A hid_t that closes itself. Each kind of handle has its own close function.
class H5Id {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Id() = default;
  H5Id(hid_t id, Closer close) : id_(id), close_(close) {}
  H5Id(H5Id&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  H5Id& operator=(H5Id&& other) noexcept {
    if (this != &other) {
      Reset();
      id_ = other.id_;
      close_ = other.close_;
      other.id_ = -1;
    }
    return *this;
  }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  ~H5Id() { Reset(); }

  hid_t get() const { return id_; }
  // The handle, no longer closed by this object.
  hid_t Release() {
    const hid_t id = id_;
    id_ = -1;
    return id;
  }
  void Reset() {
    // Closing a file opened with MPI-IO is collective. A rank unwinding from an error must not
    // enter it: its peers are elsewhere, and it would wait forever instead of reaching the
    // fatal path's MPI_Abort. Every error is fatal, so the leaked handle does not matter.
    if (id_ >= 0 && close_ && std::uncaught_exceptions() == 0) close_(id_);
    id_ = -1;
  }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

}  // namespace ct

#define H5_CHECK(call) ::ct::H5Checked((call), #call, __FILE__, __LINE__)
