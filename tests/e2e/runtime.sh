# The cluster runtime seen from outside: self-binding removes the one-thread clamp, clamps a
# launcher imposes are reported with their fix, OpenMP affinity variables are removed, and the
# gradient sync's settings (overlap, bucket size) do not change a single bit of the result.
source "$(dirname "$0")/common.sh"
unset OPENBLAS_CORETYPE  # launch/test.sh may set it, to spare the other tests OpenBLAS's restart
tiny_data "$WORK" 2048
train() {  # train OUTPUT_DIR [launcher and train arguments...]
  local out=$1
  shift
  "$@" --config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5" \
    --set output.dir="$WORK/$out" --set train.epochs=2 >"$WORK/$out.txt" 2>&1 || { cat "$WORK/$out.txt"; fail "$out: run failed"; }
}
threads_of() { grep -o "threads [0-9]*" "$WORK/$1.txt" | head -1 | cut -d' ' -f2; }
cores=$(nproc)

# A plain process uses every core it may (LibTorch alone would use 1 here).
train plain "$BIN" train
grep -q "rank 0/1  local 0/1  cpu  allowed .*  bound .*  threads" "$WORK/plain.txt" || { cat "$WORK/plain.txt"; fail "no rank line"; }
[[ $(threads_of plain) -eq $cores ]] || fail "a single process runs $(threads_of plain) threads on $cores cores"
echo "ok: one process, $(threads_of plain) threads on $cores cores"

# The BLAS the CPU's matrix products run on, named at start (cluster/blas_info.h); a BLAS that the
# loader takes from elsewhere is named too (the Debian build calls sgemm_ from libblas.so.3).
contains "^BLAS: .*\(OpenBLAS\|Math Kernel Library\|BLIS\|reference BLAS\).*; ATen's own CPU kernels: " <"$WORK/plain.txt" ||
  { cat "$WORK/plain.txt"; fail "no BLAS line"; }
"$BIN" --version | contains "^BLAS: .*; ATen's own CPU kernels: " || fail "--version does not name the BLAS"
reference=/usr/lib/x86_64-linux-gnu/blas
if contains "^BLAS: .*sgemm_ from " <"$WORK/plain.txt" && [[ -e $reference/libblas.so.3 ]]; then
  train reference env LD_LIBRARY_PATH=$reference "$BIN" train
  contains "^BLAS: the reference BLAS (by its directory): much slower" <"$WORK/reference.txt" ||
    { cat "$WORK/reference.txt"; fail "the reference BLAS is not named"; }
  echo "ok: the BLAS is named at start (also the reference BLAS through LD_LIBRARY_PATH)"
else
  echo "ok: the BLAS is named at start: $(grep -m1 '^BLAS: ' "$WORK/plain.txt" | cut -c1-80)..."
fi

# OpenBLAS falls back to a kernel older than AVX2 (Prescott) on a CPU it does not know: on a CPU
# with AVX2 the kernel in use is one that uses it, through a restart with OPENBLAS_CORETYPE where
# OpenBLAS fell back (cluster/openblas_kernel.h). A user's own OPENBLAS_CORETYPE is kept, and a
# kernel that leaves the CPU's vector units unused is warned about with the one to set.
older='Unknown|Katmai|Coppermine|Northwood|Prescott|Banias|Atom|Core2|Penryn|Dunnington|Nehalem|Athlon|Opteron|Opteron_SSE3|Barcelona|Nano|Sandybridge|Bobcat|Bulldozer|Piledriver|Steamroller'
kernel=$(grep -m1 "^BLAS: OpenBLAS" "$WORK/plain.txt" | grep -o ", kernel [A-Za-z0-9_]*" | cut -d' ' -f3) || true
if [[ -n $kernel ]] && grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  [[ ! $kernel =~ ^($older)$ ]] || { cat "$WORK/plain.txt"; fail "OpenBLAS runs its $kernel kernel on a CPU with AVX2"; }
  if restart=$(grep -o "restarted itself with OPENBLAS_CORETYPE=[A-Za-z0-9]*" "$WORK/plain.txt"); then
    [[ ${restart##*=} == "$kernel" ]] || { cat "$WORK/plain.txt"; fail "asked OpenBLAS for ${restart##*=}, runs $kernel"; }
    "$BIN" --version | contains "$restart" || fail "--version does not say that OpenBLAS was restarted"
  fi
  train forced env OPENBLAS_CORETYPE=Prescott "$BIN" train
  contains "^BLAS: OpenBLAS.*, kernel Prescott" <"$WORK/forced.txt" || { cat "$WORK/forced.txt"; fail "the user's OPENBLAS_CORETYPE was not kept"; }
  contains "warning: OpenBLAS runs its Prescott kernel, which leaves this CPU's AVX.* unused (OPENBLAS_CORETYPE=Prescott;.*: set OPENBLAS_CORETYPE=[A-Za-z]" \
    <"$WORK/forced.txt" || { cat "$WORK/forced.txt"; fail "no warning for OpenBLAS's Prescott kernel on a CPU with AVX2"; }
  echo "ok: OpenBLAS runs its $kernel kernel here${restart:+ ($restart)}; OPENBLAS_CORETYPE=Prescott is kept and warned about"
fi

# The BLAS per processor: MKL (pip's LibTorch) on an AMD CPU is named in the BLAS line with the
# code path MKL takes there, and not warned about (measured from 1.44x slower than OpenBLAS to
# 1.1x faster); OpenBLAS on AMD is neither. The AMD CPU: a /proc/cpuinfo that says so, bound over
# the real one in a mount namespace of the run's own (the real CPU may be either).
if unshare --mount true 2>/dev/null; then
  sed 's/^vendor_id.*/vendor_id\t: AuthenticAMD/' /proc/cpuinfo >"$WORK/cpuinfo-amd"
  sed 's/^vendor_id.*/vendor_id\t: GenuineIntel/' /proc/cpuinfo >"$WORK/cpuinfo-intel"
  for vendor in amd intel; do
    train "$vendor" unshare --mount sh -c 'mount --bind "$0" /proc/cpuinfo && exec "$@"' "$WORK/cpuinfo-$vendor" "$BIN" train
    ! contains "warning" <"$WORK/$vendor.txt" || { cat "$WORK/$vendor.txt"; fail "a BLAS warning on an $vendor CPU"; }
  done
  if contains "^BLAS: .*Math Kernel Library" <"$WORK/amd.txt"; then
    contains "^BLAS: .*inside LibTorch, code path MKL's one for non-Intel CPUs" <"$WORK/amd.txt" \
      || { cat "$WORK/amd.txt"; fail "MKL's code path on an AMD CPU is not named"; }
    contains "^BLAS: .*inside LibTorch, code path the CPU's best" <"$WORK/intel.txt" \
      || { cat "$WORK/intel.txt"; fail "MKL's code path on an Intel CPU is not named"; }
  else
    ! contains "code path" <"$WORK/amd.txt" || { cat "$WORK/amd.txt"; fail "an MKL code path named for OpenBLAS"; }
  fi
  echo "ok: the BLAS line names MKL's code path per processor, and warns of neither"
fi

if (( cores >= 2 )); then
  # Open MPI binds a 1-rank job to one core by default: warned, with the flag that fixes it.
  train pinned "$MPIEXEC" -n 1 --bind-to core "$BIN" train
  grep -q "warning: rank 0: may use only 1 core.*--bind-to none" "$WORK/pinned.txt" || { cat "$WORK/pinned.txt"; fail "no clamp warning"; }
  train unpinned "$MPIEXEC" -n 1 --bind-to none "$BIN" train
  ! grep -q "warning" "$WORK/unpinned.txt" || { cat "$WORK/unpinned.txt"; fail "warning without a clamp"; }
  [[ $(threads_of unpinned) -eq $cores ]] || fail "--bind-to none: $(threads_of unpinned) threads"
  echo "ok: mpirun's core binding is reported; --bind-to none uses $cores cores"

  # GOMP_CPU_AFFINITY=0 pins every OpenMP thread to CPU 0 at load: removed by a re-exec.
  train gomp env GOMP_CPU_AFFINITY=0 OMP_NUM_THREADS=1 "$BIN" train
  grep -q "removed GOMP_CPU_AFFINITY=0" "$WORK/gomp.txt" || { cat "$WORK/gomp.txt"; fail "GOMP_CPU_AFFINITY not removed"; }
  grep -q "OMP_NUM_THREADS=1 in the environment would clamp" "$WORK/gomp.txt" || fail "OMP_NUM_THREADS=1 not reported"
  [[ $(threads_of gomp) -eq $cores ]] || fail "with GOMP_CPU_AFFINITY=0: $(threads_of gomp) threads"
  echo "ok: OpenMP affinity removed, OMP_NUM_THREADS=1 overridden"
fi

# launch/mpirun.sh: the rank count it chose, --bind-to none, and the command, printed.
CT_RANKS=2 CT_BIN="$BIN" launch/mpirun.sh train --config configs/tiny.yaml --set data.train="$WORK/train.h5" \
  --set data.val="$WORK/val.h5" --set output.dir="$WORK/wrapper" --set train.epochs=1 >"$WORK/wrapper.txt" 2>&1 \
  || { cat "$WORK/wrapper.txt"; fail "launch/mpirun.sh failed"; }
grep -q "mpirun.sh: 2 rank(s) (CT_RANKS): mpirun -np 2 --bind-to none" "$WORK/wrapper.txt" \
  || { cat "$WORK/wrapper.txt"; fail "launch/mpirun.sh did not print its command"; }
grep -q "rank 1/2" "$WORK/wrapper.txt" || fail "launch/mpirun.sh did not start 2 ranks"
launch/mpirun.sh --version 2>&1 | contains "no GPU: one per NUMA domain\|one per GPU" || fail "launch/mpirun.sh: no rank-count reason"
echo "ok: launch/mpirun.sh"

# Two ranks: overlap on or off, one bucket or many: the same sums, so the same bits.
losses() { grep -o '"\(train\|val\)_loss":[^,]*' "$WORK/$1/metrics.jsonl"; }
train overlap "$MPIEXEC" -n 2 "$BIN" train --set runtime.overlap=true
train after "$MPIEXEC" -n 2 "$BIN" train --set runtime.overlap=false
train small "$MPIEXEC" -n 2 "$BIN" train --set runtime.bucket_mb=0.01
grep -q "in 1 bucket(s) of <= 25 MiB, reduced during backward" "$WORK/overlap.txt" || fail "bucket line (overlap)"
grep -q "reduced after backward" "$WORK/after.txt" || fail "bucket line (no overlap)"
grep -Eq "in ([2-9]|[1-9][0-9]+) bucket\(s\) of <= 0.01 MiB" "$WORK/small.txt" || fail "bucket line (small buckets)"
[[ "$(losses overlap)" == "$(losses after)" ]] || fail "overlap changed the losses"
[[ "$(losses overlap)" == "$(losses small)" ]] || fail "bucket size changed the losses"
[[ -n "$(losses overlap)" ]] || fail "no losses recorded"
echo "ok: overlap on/off and 25 MiB / 0.01 MiB buckets give identical losses"
