#!/usr/bin/env bash
# The C++ sources against .clang-format (Debian's clang-format, 14 on Debian 12).
#   launch/format.sh          check: lists the files that differ and exits 1 (launch/test.sh runs this)
#   launch/format.sh --fix    reformat them in place
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format: clang-format not found (apt-get install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find src tests -name '*.cpp' -o -name '*.h')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  echo "format: ${#files[@]} files formatted"
  exit 0
fi
if ! clang-format --dry-run -Werror "${files[@]}" 2>/tmp/ct-format.$$; then
  grep -o "^[^:]*\.\(cpp\|h\)" /tmp/ct-format.$$ | sort -u | sed 's/^/format: differs from .clang-format: /' >&2
  rm -f /tmp/ct-format.$$
  echo "format: run launch/format.sh --fix" >&2
  exit 1
fi
rm -f /tmp/ct-format.$$
echo "format: ${#files[@]} C++ files match .clang-format ($(clang-format --version | grep -o 'version [0-9.]*'))"
