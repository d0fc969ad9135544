#include "cluster/blas_info.h"

#include <ATen/Version.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cluster/openblas_kernel.h"

namespace ct {
namespace {

// `key=value` from LibTorch's build settings, or "".
std::string BuildSetting(const std::string& config, const std::string& key) {
  const size_t at = config.find(key + "=");
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() + 1;
  return config.substr(begin, config.find_first_of(", \n", begin) - begin);
}

// The line of LibTorch's configuration that starts with `prefix` (after "  - "), or "".
std::string ConfigLine(const std::string& config, const std::string& prefix) {
  const size_t at = config.find("  - " + prefix);
  if (at == std::string::npos) return "";
  const size_t begin = at + 4;
  return config.substr(begin, config.find('\n', begin) - begin);
}

// A symbol of the library `handle` or its dependencies: not of any library loaded (Debian's
// LibTorch also links libopenblas.so.0 itself, whichever libblas.so.3 provides sgemm_).
template <class F>
F Symbol(void* handle, const char* name) {
  return reinterpret_cast<F>(dlsym(handle, name));
}

// What the library holding sgemm_ says of itself ("" if it does not say).
std::string SelfDescription(void* lib) {
  if (auto config = Symbol<char* (*)()>(lib, "openblas_get_config")) {
    std::string text = config();
    if (auto parallel = Symbol<int (*)()>(lib, "openblas_get_parallel")) {
      const int mode = parallel();
      text += mode == 2 ? " (OpenMP threads)" : mode == 1 ? " (pthreads)" : " (single-threaded)";
    }
    if (auto core = Symbol<char* (*)()>(lib, "openblas_get_corename")) text += std::string(", kernel ") + core();
    return text;
  }
  if (auto version = Symbol<const char* (*)()>(lib, "bli_info_get_version_str")) {
    std::string text = std::string("BLIS ") + version();
    auto arch = Symbol<int (*)()>(lib, "bli_arch_query_id");
    auto arch_name = Symbol<const char* (*)(int)>(lib, "bli_arch_string");
    if (arch && arch_name) text += std::string(", kernel ") + arch_name(arch());
    const char* threads = std::getenv("BLIS_NUM_THREADS");
    return text +
           (threads ? std::string(", BLIS_NUM_THREADS=") + threads : ", single-threaded (BLIS_NUM_THREADS unset)");
  }
  return "";
}

// The file of the library the loader binds sgemm_ to, or "" where no library provides it.
std::string SgemmFile() {
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info info{};
  if (!sgemm || !dladdr(sgemm, &info) || !info.dli_fname) return "";
  return info.dli_fname;
}

// The library the loader binds sgemm_ to, and what it says of itself.
std::string ExternalBlas() {
  const std::string sgemm_file = SgemmFile();
  if (sgemm_file.empty()) return "no sgemm_ found in the process";
  std::error_code ec;
  const std::string file = std::filesystem::canonical(sgemm_file, ec).string();
  const std::string from = "sgemm_ from " + (ec ? sgemm_file : file);
  void* lib = dlopen(sgemm_file.c_str(), RTLD_NOW | RTLD_NOLOAD);  // already loaded: a handle, nothing loaded
  const std::string self = lib ? SelfDescription(lib) : "";
  if (lib) dlclose(lib);
  if (!self.empty()) return self + ", " + from;
  // Debian's alternatives keep each BLAS in a directory of its name.
  if (file.find("/blis") != std::string::npos) return "BLIS (by its directory; it does not name itself), " + from;
  if (file.find("/blas/") != std::string::npos) {
    return "the reference BLAS (by its directory): much slower than OpenBLAS, BLIS or MKL, " + from;
  }
  return from + " (a BLAS that does not name itself)";
}

}  // namespace

std::string OpenBlasKernel() {
  const std::string sgemm_file = SgemmFile();
  void* lib = sgemm_file.empty() ? nullptr : dlopen(sgemm_file.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return "";
  const auto core = Symbol<char* (*)()>(lib, "openblas_get_corename");
  const std::string kernel = core ? core() : "";
  dlclose(lib);
  return kernel;
}

std::string DescribeBlas() {
  const std::string config = at::show_config();
  const std::string blas = BuildSetting(config, "BLAS_INFO");
  std::string text;
  if (blas == "mkl") {
    const std::string mkl = ConfigLine(config, "Intel(R) oneAPI Math Kernel Library");
    const char* isa = std::getenv("MKL_ENABLE_INSTRUCTIONS");
    // MKL picks its kernels by the CPU's vendor: on AMD it runs the path for processors not
    // Intel's (MKL_VERBOSE=1 names it "Intel(R) Architecture processors"), whatever is asked.
    const std::string asked = isa ? std::string("MKL_ENABLE_INSTRUCTIONS=") + isa : "";
    const std::string path = CpuVendor() == "AuthenticAMD"
                                 ? "MKL's one for non-Intel CPUs" + (isa ? " (" + asked + " set)" : std::string()) +
                                       " (docs/benchmarks.md compares it with OpenBLAS)"
                                 : (isa ? asked : std::string("the CPU's best"));
    text = (mkl.empty() ? std::string("MKL") : mkl) + " inside LibTorch, code path " + path;
  } else {
    text = ExternalBlas();
  }
  const std::string capability = ConfigLine(config, "CPU capability usage: ");
  return "BLAS: " + text + (capability.empty() ? "" : "; ATen's own CPU kernels: " + capability.substr(22));
}

std::string CpuVendor() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("vendor_id", 0) != 0) continue;
    const size_t colon = line.find(':');
    const size_t begin = colon == std::string::npos ? std::string::npos : line.find_first_not_of(' ', colon + 1);
    return begin == std::string::npos ? "" : line.substr(begin);
  }
  return "";
}

std::string BlasMismatch() {
  const std::string kernel = OpenBlasKernel();
  const CpuVectorUnits cpu = ThisCpuVectorUnits();
  if (const std::string better = OpenBlasKernelToForce(kernel, cpu); !better.empty()) {
    const std::string forced = std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "";
    const std::string why = forced.empty()
                                ? "this OpenBLAS does not know the CPU"
                                : "OPENBLAS_CORETYPE=" + forced + (forced == better ? ", which it lacks" : "");
    const std::string fix = forced == better ? "install OpenBLAS 0.3.25 or later, or build against pip's LibTorch (MKL)"
                                             : "set OPENBLAS_CORETYPE=" + better;
    return "OpenBLAS runs its " + kernel + " kernel, which leaves this CPU's " + (cpu.avx512 ? "AVX-512" : "AVX2") +
           " unused (" + why +
           "; the demo's step ran 4.8x slower on a 5th-generation Xeon, docs/benchmarks.md): " + fix;
  }
  return "";
}

}  // namespace ct
