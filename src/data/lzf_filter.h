// h5py's LZF compression (HDF5 filter 32000), which h5py has built in and writes with
// create_dataset(..., compression='lzf'). HDF5 has no such filter of its own, and the plugin
// Debian packages for parallel HDF5 (hdf5-plugin-lzf) does not load: it is linked against
// neither libhdf5 nor liblzf. So clustertrain registers a decoder of its own, on liblzf, where
// the build found it (CT_HAVE_LZF). Reading only: clustertrain writes no LZF.
#pragma once

namespace ct {

constexpr int kLzfFilterId = 32000;

// Whether this build has the decoder (liblzf was found at configure time).
bool LzfDecoderBuilt();

// Registers the decoder with HDF5 in this process (once; later calls do nothing).
void RegisterLzfDecoder();

}  // namespace ct
