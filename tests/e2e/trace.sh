# output.trace.steps: every rank's timeline, read with Python's own JSON reader
# (tests/e2e/check_trace.py) and, where it is installed, Perfetto's trace_processor; `clustertrain
# trace summary|merge`; a traced run trains exactly as an untraced one; misuse is refused.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 2048
# 2 ranks x 32 rows: 32 steps an epoch, so steps 30-34 hold epoch 1's end (validation,
# checkpoint). Blocks of 32 rows: the block reader reads a window of 16 blocks twice an epoch.
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5" --set train.epochs=2
  --set data.sharding=blocks --set data.block_rows=32 --set runtime.bucket_mb=0.05)
run() {  # run NAME [train arguments...]
  local name=$1
  shift
  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/$name" "$@" >"$WORK/$name.txt" 2>&1 ||
    { cat "$WORK/$name.txt"; fail "$name: run failed"; }
}
run traced --set 'output.trace.steps=[30, 34]'
run plain
"$PY" tests/e2e/runs.py same "$WORK/traced" "$WORK/plain" --weights >/dev/null || fail "tracing changed the results"
[[ ! -e "$WORK/plain/trace" ]] || fail "a trace without output.trace.steps"
contains "trace of global steps 30-34: $WORK/traced/trace/rank-<r>.json" <"$WORK/traced.txt" ||
  { cat "$WORK/traced.txt"; fail "no trace line"; }
buckets=$(grep -o "gradients in [0-9]* bucket" "$WORK/traced.txt" | grep -o "[0-9]*")
parameters=$(grep -o "[0-9]* parameters" "$WORK/traced.txt" | grep -o "[0-9]*")
(( buckets > 1 )) || fail "runtime.bucket_mb=0.05 gave $buckets bucket(s)"
echo "ok: a traced run trains as an untraced one ($buckets buckets, $parameters parameters)"

"$BIN" trace summary "$WORK/traced" >"$WORK/summary.txt"
"$BIN" trace summary "$WORK/traced" --json >"$WORK/summary.json"
contains "^forward  *10 " <"$WORK/summary.txt" || { cat "$WORK/summary.txt"; fail "summary table"; }
[[ $("$BIN" trace merge "$WORK/traced") == "$WORK/traced/trace/merged.json" ]] || fail "merge output path"
"$PY" tests/e2e/check_trace.py "$WORK/traced" 30 34 "$buckets" "$parameters" "$WORK/summary.json"
cat "$WORK/summary.txt"

# Perfetto's own importer, where its trace_processor_shell is installed (the perfetto PyPI package
# downloads it from Google's storage on first use, which a machine without internet cannot).
shell=${CT_TRACE_PROCESSOR_SHELL:-$(command -v trace_processor_shell || true)}
if [[ -n "$shell" ]]; then
  echo "select count(*) as steps from slice where name = 'step';" >"$WORK/steps.sql"
  "$shell" -q "$WORK/steps.sql" "$WORK/traced/trace/merged.json" >"$WORK/tp.txt" 2>&1 || { cat "$WORK/tp.txt"; fail "trace_processor"; }
  contains "^10$" <"$WORK/tp.txt" || { cat "$WORK/tp.txt"; fail "trace_processor counts other than 10 step slices"; }
  echo "ok: Perfetto's trace_processor reads merged.json: 10 step slices"
else
  echo "part skipped: Perfetto's trace_processor_shell is not installed (set CT_TRACE_PROCESSOR_SHELL)"
fi

# A window past the run's last step: a warning, no files.
run late --set 'output.trace.steps=[500, 510]'
contains "warning: output.trace.steps=\[500, 510\]: no step of the window ran in this run" <"$WORK/late.txt" ||
  { cat "$WORK/late.txt"; fail "no warning for a window the run never reached"; }
[[ ! -e "$WORK/late/trace" ]] || fail "a trace for a window the run never reached"

# Misuse: one message each, naming the key or the file and what to do.
rc=0
"$BIN" train "${T[@]}" --set output.dir="$WORK/bad" --set 'output.trace.steps=[5, 2]' >"$WORK/bad.txt" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "steps [5, 2]: exit $rc"
contains "config key 'output.trace.steps' (--set .*): needs 1 <= first <= last" <"$WORK/bad.txt" || { cat "$WORK/bad.txt"; fail "bad steps message"; }
rc=0
"$BIN" trace summary "$WORK/plain" >"$WORK/none.txt" 2>&1 || rc=$?
[[ $rc -eq 3 ]] || fail "summary of an untraced run: exit $rc"
contains "no trace in $WORK/plain: .*output.trace.steps" <"$WORK/none.txt" || { cat "$WORK/none.txt"; fail "no-trace message"; }
rm "$WORK/traced/trace/rank-1.json"
rc=0
"$BIN" trace merge "$WORK/traced" >"$WORK/missing.txt" 2>&1 || rc=$?
[[ $rc -eq 3 ]] && contains "lacks rank-1.json (the run had 2 ranks)" <"$WORK/missing.txt" ||
  { cat "$WORK/missing.txt"; fail "a missing rank file: exit $rc"; }
echo "ok: bad steps, an untraced run and a missing rank file are refused with their reason"
