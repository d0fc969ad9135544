#include "data/lzf_filter.h"

#include <hdf5.h>

#if CT_HAVE_LZF
#include <lzf.h>

#include <cerrno>
#endif

namespace ct {

#if CT_HAVE_LZF
namespace {

// HDF5's filter callback, decoding one chunk: *buf holds `nbytes` of LZF; on success *buf is
// replaced by the decoded chunk and its size returned. 0 tells HDF5 the chunk is unreadable.
size_t DecodeLzfChunk(unsigned flags, size_t values, const unsigned value[], size_t nbytes, size_t* buf_size,
                      void** buf) {
  if ((flags & H5Z_FLAG_REVERSE) == 0) return 0;  // encoding: not offered (encoder_present = 0)
  // h5py stores the chunk's decoded size in bytes as the third value; older writers may not.
  size_t out_size = values >= 3 && value[2] > 0 ? value[2] : 4 * nbytes;
  for (int attempt = 0; attempt < 8; ++attempt) {
    void* out = H5allocate_memory(out_size, false);
    if (out == nullptr) return 0;
    const unsigned decoded = lzf_decompress(*buf, static_cast<unsigned>(nbytes), out, static_cast<unsigned>(out_size));
    if (decoded > 0) {
      H5free_memory(*buf);
      *buf = out;
      *buf_size = out_size;
      return decoded;
    }
    const int why = errno;
    H5free_memory(out);
    if (why != E2BIG) return 0;  // corrupt data
    out_size *= 2;               // the guess was too small
  }
  return 0;
}

}  // namespace

bool LzfDecoderBuilt() { return true; }

void RegisterLzfDecoder() {
  static const bool registered = [] {
    H5Z_class2_t lzf{};
    lzf.version = H5Z_CLASS_T_VERS;
    lzf.id = static_cast<H5Z_filter_t>(kLzfFilterId);
    lzf.encoder_present = 0;  // reading only
    lzf.decoder_present = 1;
    lzf.name = "lzf (clustertrain's decoder)";
    lzf.filter = DecodeLzfChunk;
    return H5Zregister(&lzf) >= 0;  // HDF5 copies the class
  }();
  (void)registered;
}
#else
bool LzfDecoderBuilt() { return false; }
void RegisterLzfDecoder() {}
#endif

}  // namespace ct
