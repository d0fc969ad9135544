#!/usr/bin/env bash
# The relocation proof for bench/gpu_check.sh, without a GPU: a minimal Debian 12 root (made with
# debootstrap, holding only Python's torch with LibTorch's CMake files, CMake, ninja and a
# compiler: what a bare GPU machine has) gets a copy of the working tree and .gpu-deps/, and
# runs `bench/gpu_check.sh cpu` inside: unpack the carried packages without installing them,
# configure, build, run the unit and MPI tests.
#
#   bench/bare_root.sh [ROOT]     (root, default /srv/bare-root; made on first use, ~5 min)
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-/srv/bare-root}
if [[ ! -x $root/usr/bin/cmake ]]; then
  debootstrap --variant=minbase --include=python3-torch,libtorch-dev,cmake,ninja-build,g++,binutils \
    bookworm "$root" http://deb.debian.org/debian
fi
[[ -d .gpu-deps ]] || bench/gpu_check.sh prepare
# Nothing of this machine's /usr/local or /opt inside: only what debootstrap installed.
rm -rf "$root/src" && mkdir -p "$root/src"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp -p --parents -t "$root/src"
cp -r .gpu-deps "$root/src/"
echo "bare_root: $root has $(chroot "$root" dpkg-query -f '${binary:Package}\n' -W | wc -l) packages;" \
  "no MPI: $(chroot "$root" sh -c 'command -v mpirun || echo none'), no HDF5: $(chroot "$root" sh -c 'ls /usr/lib/x86_64-linux-gnu/libhdf5* 2>/dev/null || echo none')"
# A mount namespace of its own: /proc, /sys and /dev for hwloc and Open MPI, gone when it ends.
unshare -m bash -c "
  mount -t proc proc '$root/proc' && mount --rbind /sys '$root/sys' && mount --rbind /dev '$root/dev' &&
  exec chroot '$root' env -i HOME=/root PATH=/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 \
    CT_GPU_BUILD_DIR=/var/tmp/ct-build bash -c 'cd /src && bench/gpu_check.sh cpu'"
