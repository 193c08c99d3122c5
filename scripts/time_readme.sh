#!/usr/bin/env bash
# Follow the README word for word on a fresh clone and time every command (what the README's
# "How long each command takes" paragraph reports). Usage, from anywhere:
#     bash scripts/time_readme.sh [REPOSITORY (default: this clone)] [WORKDIR (default: a new temp dir)]
# Prints one "STEP name rc seconds" line per command; the full output goes to WORKDIR/walk.log.
set -uo pipefail
repo="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
work="${2:-$(mktemp -d)}"
export BRRR_CACHE_DIR="$work/cache"          # a new reader: no measured peaks yet
steps="$work/steps.txt"
step() {
  local name="$1"; shift
  local start end; start=$(date +%s.%N)
  "$@" >>"$work/walk.log" 2>&1; local rc=$?
  end=$(date +%s.%N)
  printf 'STEP %-28s rc=%s %7.1f s\n' "$name" "$rc" "$(echo "$end - $start" | bc)" | tee -a "$steps"
}
step "git clone" git clone -q "$repo" "$work/brrr"
cd "$work/brrr" || exit 1
step "make book" make book
step "make test" make test
step "brrr --version" .venv/bin/brrr --version
step "brrr info" .venv/bin/brrr info
step "brrr info --refresh" .venv/bin/brrr info --refresh
step "brrr roofline --quick" .venv/bin/brrr roofline --quick --no-progress --out "$work/roofline_quick.png"
step "brrr roofline" .venv/bin/brrr roofline --no-progress --out "$work/roofline.png"
step "brrr record --quick" .venv/bin/brrr record --quick --out "$work/quick-records"
step "make book-quick" make book-quick
step "make publish" make publish
grep -h "full book built" _build/book.log
echo "steps: $steps; log: $work/walk.log"
