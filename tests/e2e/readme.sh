# The README's commands still work as written: every command in its ```bash blocks names files
# that exist, and is accepted by what it calls -- `train` commands resolve their config and
# --set keys (--print-config, no training), other subcommands and Python scripts know every
# option given (their --help), launchers and Slurm scripts exist. Running them is the job of
# launch/quickstart.sh and of the tests that train the same configs (pe.sh, resume.sh, ...);
# this catches a README that drifted from the code, in a second.
source "$(dirname "$0")/common.sh"
ROOT=$PWD  # ctest runs the e2e tests in the repository root

# The README's commands, one per line: continuations joined, comments dropped.
mapfile -t COMMANDS < <(awk '/^```bash/{f=1; next} /^```/{f=0} f' README.md \
  | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | sed -e 's/[[:space:]]#.*$//' -e 's/[[:space:]]*$//' | grep -v '^$')
[[ ${#COMMANDS[@]} -ge 10 ]] || fail "found only ${#COMMANDS[@]} commands in README.md's bash blocks"

# knows_options HELP_TEXT ARGS...: every --option of ARGS appears in HELP_TEXT.
knows_options() {
  local help=$1 word
  shift
  for word in "$@"; do
    [[ $word == --* || $word =~ ^-[a-z]$ ]] || continue
    grep -q -- "${word%%=*}\b" <<<"$help" || return 1
  done
}

for command in "${COMMANDS[@]}"; do
  mapfile -t words < <(xargs printf '%s\n' <<<"$command")  # words as the shell splits them: quotes honoured
  # mpirun -np N [--bind-to none] build/clustertrain SUB ...: the part after the launcher.
  if [[ ${words[0]} == mpirun ]]; then
    while [[ ${#words[@]} -gt 0 && ${words[0]} != build/clustertrain ]]; do words=("${words[@]:1}"); done
    [[ ${#words[@]} -gt 0 ]] || fail "README: an mpirun command without build/clustertrain: $command"
  fi
  case ${words[0]} in
    build/clustertrain)
      sub=${words[1]}
      args=("${words[@]:2}")
      if [[ $sub == train ]]; then
        "$BIN" train "${args[@]}" --print-config >"$WORK/print.txt" 2>&1 \
          || { cat "$WORK/print.txt"; fail "README: \`$command\` does not resolve its config"; }
      else
        knows_options "$("$BIN" "$sub" --help 2>&1)" "${args[@]}" || fail "README: \`$command\`: unknown option"
      fi
      ;;
    /usr/bin/python3 | python3)
      script=${words[1]}
      [[ -f $ROOT/$script ]] || fail "README: \`$command\`: no $script"
      if [[ "$PY_OK" == "TRUE" ]]; then
        knows_options "$("$PY" "$ROOT/$script" --help 2>&1)" "${words[@]:2}" || fail "README: \`$command\`: unknown option"
      fi
      ;;
    launch/*.sh) [[ -x $ROOT/${words[0]} ]] || fail "README: \`$command\`: ${words[0]} is not an executable script" ;;
    sbatch) [[ -f $ROOT/${words[1]} ]] || fail "README: \`$command\`: no ${words[1]}" ;;
    tensorboard) ;;  # another program (pip install tensorboard)
    *) fail "README: a command this test does not know how to check: $command" ;;
  esac
  echo "ok: $command"
done
echo "all ${#COMMANDS[@]} README commands checked"
