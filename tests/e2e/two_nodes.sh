# A 2-node job on this one host: two "nodes" with their own hostnames (UTS namespaces) and their
# own networks (network namespaces joined by a veth pair), so Open MPI between them sees two
# hosts and talks TCP, as across a network. mpirun starts on node A from a hostfile and reaches
# node B through a launch agent in place of ssh (tests/nodes/rsh_agent.sh: a fresh environment,
# as ssh gives). 2 ranks a node. Checked: the gradient-sync tests (N ranks equal 1 rank) pass
# across the nodes; the placement report shows both hosts, local ranks from 0 on each and each
# node's 2 ranks on their own cores; the 2-node run equals the same 4 ranks on one host bit for
# bit, also where node-b's /dev/shm is too small for the split Adam (it all-gathers, and the log
# says so for node-b alone), and 1 rank on node-a with 2 on node-b (only node-b splits Adam)
# equals 3 unsplit ranks; node-b with another BLAS kernel has its own BLAS line; SIGUSR1 to
# mpirun stops every rank on both nodes at one step with a checkpoint (exit 75) and the resumed
# run equals the uninterrupted one; a rank killed on node B ends the job.
# Extra argument: the mpi_tests binary. Skipped, with the reason, where namespaces cannot be made.
source "$(dirname "$0")/common.sh"
source tests/nodes/checks.sh
need_python
MPI_TESTS=$5
NODES="$WORK/nodes"
tests/nodes/fake_nodes.sh start "$NODES" node-a node-b || exit $?
trap 'tests/nodes/fake_nodes.sh stop "$NODES"; rm -rf "$WORK"' EXIT
export CT_NODES_DIR="$NODES"
printf 'node-a slots=2\nnode-b slots=2\n' >"$WORK/hostfile"
# What a user types on a 2-node allocation, started on the first node.
MPI_FLAGS=(--mca plm_rsh_agent "$PWD/tests/nodes/rsh_agent.sh" --mca btl self,vader,tcp --bind-to none)
MPIRUN=(tests/nodes/on_node.sh "$NODES" node-a "$MPIEXEC" --hostfile "$WORK/hostfile" -n 4 "${MPI_FLAGS[@]}")
tiny_data "$WORK" 4096  # 32 steps an epoch at 4 ranks x 32 rows

# 1. Gradients across the nodes equal a 1-rank run's (the bucketed and plain sync tests).
timeout 300 "${MPIRUN[@]}" "$MPI_TESTS" --gtest_filter='GradientSync.*:BucketedSync.*' --gtest_color=no >"$WORK/grad.txt" 2>&1 \
  || { cat "$WORK/grad.txt"; fail "the gradient-sync tests failed across two nodes"; }
[[ $(grep -c "PASSED.*tests\?\.$" "$WORK/grad.txt") -eq 4 ]] || { cat "$WORK/grad.txt"; fail "not every rank passed"; }
echo "ok: gradient sync over TCP between node-a and node-b equals the 1-rank result (4 ranks)"

T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5"
   --set train.epochs=3 --set output.checkpoint_every=0)

# 2. Placement: two hosts, local ranks from 0 on each, each node splits its own 2 cores.
timeout 300 "${MPIRUN[@]}" "$BIN" train "${T[@]}" --set output.dir="$WORK/two" >"$WORK/two.txt" 2>&1 \
  || { cat "$WORK/two.txt"; fail "the 2-node run failed"; }
two_node_placement "$WORK/two.txt"
echo "ok: placement: 2 ranks on node-a and 2 on node-b, local ranks 0 and 1 on each, each on its own core"

# The same 4 ranks on one host compute the very same run: only the transport differs.
"$MPIEXEC" -n 4 --bind-to none "$BIN" train "${T[@]}" --set output.dir="$WORK/one" >/dev/null 2>&1 || fail "the 1-host run failed"
same_run "$WORK/two" "$WORK/one" 3 || fail "the 2-node run differs from the same ranks on one host"
echo "ok: the 2-node run equals 4 ranks on one host bit for bit"

# 2b. A node whose /dev/shm cannot hold the split Adam's one copy (node-b's: a 256 KiB tmpfs in a
# mount namespace of its own, which on_node.sh enters) all-gathers instead, and trains the same
# numbers; rank 0's log names each node's way with its ranks and host. Open MPI's own shared
# memory goes to $WORK meanwhile.
if touch "$NODES/mnt-node-b" &&
   unshare --mount="$NODES/mnt-node-b" --propagation private mount -t tmpfs -o size=256k tmpfs /dev/shm 2>/dev/null; then
  rc=0
  timeout 300 "${MPIRUN[@]}" --mca btl_vader_backing_directory "$WORK" "$BIN" train "${T[@]}" \
    --set output.dir="$WORK/shm" >"$WORK/shm.txt" 2>&1 || rc=$?
  umount "$NODES/mnt-node-b" && rm -f "$NODES/mnt-node-b"
  [[ $rc -eq 0 ]] || { cat "$WORK/shm.txt"; fail "the 2-node run with node-b's /dev/shm full failed"; }
  grep -q "ranks 0-1 (node-a): optimizer: Adam .*split over the node's 2 ranks .*in shared memory" "$WORK/shm.txt" &&
    grep -q "ranks 2-3 (node-b): optimizer: Adam .*then they all-gather the parameters; no shared memory: rank 0 of the node: /dev/shm has 256.0 KiB free" "$WORK/shm.txt" ||
    { cat "$WORK/shm.txt"; fail "the log does not name node-a's shared and node-b's all-gathered Adam"; }
  same_run "$WORK/two" "$WORK/shm" 3 || fail "node-b's all-gathered Adam changed the run"
  echo "ok: node-b's /dev/shm full: its ranks all-gather, the log names both nodes' ways, the run is the same bit for bit"
else
  rm -f "$NODES/mnt-node-b"
  echo "note: no mount namespace with its own /dev/shm here: the per-node fallback was not run"
fi

# 2c. Uneven nodes (1 rank on node-a, 2 on node-b): node-b's ranks split Adam, node-a's one rank
# updates all of it alone, and the run equals the same 3 ranks on one host unsplit, bit for bit.
# One thread a rank in both: node-a's lone rank would take both its cores, and OpenBLAS's sgemm
# gives other last bits at 1 and 2 threads on some CPUs (0.3.21 on an AMD EPYC, Zen and Haswell
# kernels; not on the Xeons measured), so only equal threads per rank can compare bit for bit.
printf 'node-a slots=1\nnode-b slots=2\n' >"$WORK/uneven-hosts"
timeout 300 tests/nodes/on_node.sh "$NODES" node-a "$MPIEXEC" --hostfile "$WORK/uneven-hosts" -n 3 \
  "${MPI_FLAGS[@]}" "$BIN" train "${T[@]}" --set runtime.threads=1 --set output.dir="$WORK/uneven" >"$WORK/uneven.txt" 2>&1 ||
  { cat "$WORK/uneven.txt"; fail "the uneven 2-node run failed"; }
grep -q "rank 0 (node-a): optimizer: Adam over 1 flat buffer(s), one vectorised pass over the buffers on the rank's threads$" "$WORK/uneven.txt" &&
  grep -q "ranks 1-2 (node-b): optimizer: Adam .*split over the node's 2 ranks .*in shared memory" "$WORK/uneven.txt" ||
  { cat "$WORK/uneven.txt"; fail "the log does not name node-a's whole and node-b's split Adam"; }
"$MPIEXEC" -n 3 --bind-to none "$BIN" train "${T[@]}" --set runtime.shard_optimizer=false --set runtime.threads=1 \
  --set output.dir="$WORK/three" >/dev/null 2>&1 || fail "the 3-rank run on one host failed"
same_run "$WORK/uneven" "$WORK/three" 3 || fail "the uneven 2-node run differs from 3 unsplit ranks on one host"
echo "ok: uneven nodes (1 + 2 ranks): node-b splits Adam, node-a does not, the run equals 3 unsplit ranks bit for bit"

# 2d. Nodes of different kinds in one job: node-b's ranks run OpenBLAS's Sandybridge kernel (MKL's
# AVX path in the pip build), as on an older CPU, and the start-up BLAS line is one per node.
ON_NODE_B='[[ $(hostname) != node-b ]] || export OPENBLAS_CORETYPE=Sandybridge MKL_ENABLE_INSTRUCTIONS=AVX; exec "$@"'
timeout 300 "${MPIRUN[@]}" bash -c "$ON_NODE_B" _ "$BIN" train "${T[@]}" --set train.epochs=1 \
  --set output.dir="$WORK/kinds" >"$WORK/kinds.txt" 2>&1 || { cat "$WORK/kinds.txt"; fail "the 2-node run with node-b's other BLAS kernel failed"; }
grep -q "ranks 0-1 (node-a): BLAS: " "$WORK/kinds.txt" &&
  grep -qE "ranks 2-3 \(node-b\): BLAS: .*(kernel Sandybridge|MKL_ENABLE_INSTRUCTIONS=AVX)" "$WORK/kinds.txt" ||
  { cat "$WORK/kinds.txt"; fail "the log does not name each node's BLAS"; }
echo "ok: node-b with another BLAS kernel: the start-up BLAS line names each node's"

# 3. Preemption: SIGUSR1 to mpirun (what Slurm's --signal reaches) goes to every rank on both
# nodes; all stop at one step with a checkpoint, exit 75, and the resumed run equals run 2.
# The ranks hold at step 40 (epoch 2) until the signal comes.
hold_run() {  # hold_run NAME: starts a held run in the background; sets job and waits for it
  CT_TEST_HOLD_AT_STEP=40 "${MPIRUN[@]}" -x CT_TEST_HOLD_AT_STEP "$BIN" train "${T[@]}" \
    --set output.dir="$WORK/$1" >"$WORK/$1.txt" 2>&1 &
  job=$!
  wait_for_line "$WORK/$1.txt" "held at global step 40" "$job"
}
hold_run pre
kill -USR1 "$job"
rc=0
timeout 120 tail --pid="$job" -f /dev/null || fail "the job still ran 120 s after SIGUSR1"
wait "$job" || rc=$?
[[ $rc -eq 75 ]] || { cat "$WORK/pre.txt"; fail "exit code $rc after SIGUSR1 to mpirun, expected 75"; }
timeout 300 "${MPIRUN[@]}" "$BIN" train "${T[@]}" --set output.dir="$WORK/pre" --resume auto >"$WORK/resumed.txt" 2>&1 \
  || { cat "$WORK/resumed.txt"; fail "the resumed 2-node run failed"; }
grep -q "resumed from .*, step 40;" "$WORK/resumed.txt" || { cat "$WORK/resumed.txt"; fail "not resumed at step 40"; }
same_run "$WORK/two" "$WORK/pre" 3 || fail "the preempted and resumed run differs from the uninterrupted one"
echo "ok: SIGUSR1 to mpirun: both nodes stopped at step 40 (exit 75); resumed, equal to the uninterrupted run"

# 4. A rank killed on node B ends every rank on both nodes.
hold_run killed
victim=$(grep -oE "node-b  rank 3/4 .* pid [0-9]+" "$WORK/killed.txt" | grep -oE "[0-9]+$")
[[ -n "$victim" ]] || { cat "$WORK/killed.txt"; fail "no pid for rank 3"; }
ranks=$(grep -oE "  pid [0-9]+" "$WORK/killed.txt" | grep -oE "[0-9]+")
kill -9 "$victim"
timeout 60 tail --pid="$job" -f /dev/null || fail "the job still ran 60 s after rank 3 on node-b was killed"
rc=0
wait "$job" || rc=$?
[[ $rc -ne 0 ]] || fail "the job exited 0 after a rank was killed"
ranks_ended $ranks
echo "ok: rank 3 killed on node-b: mpirun exited $rc and no rank on either node is left"
