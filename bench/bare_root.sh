#!/usr/bin/env bash
# The relocation proof for bench/gpu_check.sh, without a GPU, in a root made with debootstrap
# that holds only what a bare machine has; it gets a copy of the working tree and .gpu-deps/.
#
#   bench/bare_root.sh [ROOT]            Debian 12 (default /srv/bare-root): python3-torch with
#                                        LibTorch's CMake files, CMake, ninja, a compiler; runs
#                                        `bench/gpu_check.sh cpu` (unpack, configure, build, unit
#                                        and MPI tests)
#   bench/bare_root.sh --device [ROOT]   as the device machine is (default /srv/trixie-root): a
#                                        root that is NOT Debian 12 (Debian 13, another glibc and
#                                        Python), torch from pip (a CUDA build) in a venv at
#                                        /opt/torch/.venv, this machine's CUDA toolkit bound in at
#                                        /usr/local/cuda; runs `bench/gpu_check.sh run`, which must
#                                        build and then report its GPU stages as "no GPU"
# Each root is made on first use (~5 min; the pip torch another few minutes). Root only.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=cpu
[[ "${1:-}" == "--device" ]] && { mode=device; shift; }
if [[ $mode == cpu ]]; then
  root=${1:-/srv/bare-root}
  if [[ ! -x $root/usr/bin/cmake ]]; then
    debootstrap --variant=minbase --include=python3-torch,libtorch-dev,cmake,ninja-build,g++,binutils \
      bookworm "$root" http://deb.debian.org/debian
  fi
  python=/usr/bin/python3
  command="bench/gpu_check.sh cpu"
else
  root=${1:-/srv/trixie-root}
  if [[ ! -x $root/usr/bin/cmake ]]; then
    debootstrap --variant=minbase --include=python3,python3-venv,cmake,ninja-build,g++,binutils,ca-certificates \
      trixie "$root" http://deb.debian.org/debian
  fi
  python=/opt/torch/.venv/bin/python3
  if [[ ! -x $root$python ]]; then
    # PyPI as this machine reaches it (its pip settings and certificates).
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
    [[ -f /etc/pip.conf ]] && cp /etc/pip.conf "$root/etc/pip.conf"
    chroot "$root" bash -c "python3 -m venv /opt/torch/.venv && /opt/torch/.venv/bin/pip install -q torch==${CT_TORCH_PIP_VERSION:-2.13.0} numpy"
  fi
  # Time limits scaled from the device's 16 cores to this machine's.
  command="OUT=/src/gpu-out CT_GPU_COMPILE=0 CT_GPU_TIME_SCALE=$(( (16 + $(nproc) - 1) / $(nproc) )) bench/gpu_check.sh run"
fi
[[ -d .gpu-deps ]] || bench/gpu_check.sh prepare
# Nothing of this machine's /usr/local or /opt inside: only what was installed above.
rm -rf "$root/src" && mkdir -p "$root/src"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp -p --parents -t "$root/src"
cp -r .gpu-deps "$root/src/"
echo "bare_root: $root ($(. "$root/etc/os-release" && echo "$PRETTY_NAME")) has" \
  "$(chroot "$root" dpkg-query -f '${binary:Package}\n' -W | wc -l) packages;" \
  "no MPI: $(chroot "$root" sh -c 'command -v mpirun || echo none'), no HDF5: $(chroot "$root" sh -c 'ls /usr/lib/x86_64-linux-gnu/libhdf5* 2>/dev/null || echo none')"
cuda_mount=""
if [[ $mode == device ]]; then
  mkdir -p "$root/usr/local/cuda"
  cuda_mount="mount --rbind /usr/local/cuda '$root/usr/local/cuda' &&"
fi
# A mount namespace of its own: /proc, /sys and /dev for hwloc and Open MPI, gone when it ends.
# The venv's bin first on PATH, as on the device; the CUDA toolkit's nvcc after it.
unshare -m bash -c "
  mount -t proc proc '$root/proc' && mount --rbind /sys '$root/sys' && mount --rbind /dev '$root/dev' && $cuda_mount
  exec chroot '$root' env -i HOME=/root PATH=$(dirname "$python"):/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/cuda/bin \
    LANG=C.UTF-8 CT_GPU_BUILD_DIR=/var/tmp/ct-build bash -c 'cd /src && $command'"
