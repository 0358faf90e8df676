#!/usr/bin/env bash
# ck's reliability checks (`make stress`): concurrent writers and crashes. Prints what it checks
# and exits non-zero on the first broken promise. Figures go to bench/out/stress.txt.
# Environment: CK=path/to/ck (default .build/release/ck), WRITERS=8, PER_WRITER=1000,
# UPDATERS=4, PER_UPDATER=250, CRASHES=20, CRASH_RECORDS=5000.
set -euo pipefail
cd "$(dirname "$0")/.."
CK=${CK:-$PWD/.build/release/ck}
WRITERS=${WRITERS:-8}; PER_WRITER=${PER_WRITER:-1000}
UPDATERS=${UPDATERS:-4}; PER_UPDATER=${PER_UPDATER:-250}
CRASHES=${CRASHES:-20}; CRASH_RECORDS=${CRASH_RECORDS:-5000}
OUT=$PWD/bench/out; mkdir -p "$OUT"; LOG=$OUT/stress.txt; : > "$LOG"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ck-stress.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export CK_DATA_DIR=$WORK/data
[ -x "$CK" ] || { echo "stress: no ck binary at $CK (run 'make build')" >&2; exit 1; }

say() { echo "$*" | tee -a "$LOG"; }
fail() { say "FAIL: $*"; exit 1; }
json_field() { sed -n "s/.*\"$1\": *\([^,}]*\).*/\1/p" | head -1 | tr -d '"'; }

"$CK" account signin alice@example.com >/dev/null
"$CK" zone create Z C >/dev/null
"$CK" --zone Z record save --type Counter --name hot n=0 >/dev/null

# --- Concurrency: WRITERS x PER_WRITER saves and UPDATERS x PER_UPDATER forced updates of one
# record, all at once, while a watcher keeps fetching changes and keeping every token it gets.
say "concurrency: $WRITERS writers x $PER_WRITER records, $UPDATERS updaters x $PER_UPDATER forced updates of one record"
start=$(date +%s%N)
writer() { for ((i = 0; i < PER_WRITER; i++)); do "$CK" --device "w$1" --zone Z record save --type Item --name "w$1-$i" n=$i >/dev/null || echo "w$1-$i" >> "$WORK/failed"; done; }
updater() { for ((i = 0; i < PER_UPDATER; i++)); do "$CK" --device "u$1" --zone Z record save --name hot --force n=$i >/dev/null || echo "u$1-$i" >> "$WORK/failed"; done; }
watcher() {
  while [ ! -e "$WORK/stop" ]; do
    "$CK" --device watcher --zone Z zone changes --limit 200 | json_field syncToken >> "$WORK/tokens" || echo "watch" >> "$WORK/failed"
    sleep 0.2
  done
}
watcher & wpid=$!
pids=()
for ((w = 0; w < WRITERS; w++)); do writer $w & pids+=($!); done
for ((u = 0; u < UPDATERS; u++)); do updater $u & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
touch "$WORK/stop"; wait $wpid
secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
[ ! -s "$WORK/failed" ] || fail "$(wc -l < "$WORK/failed") commands failed: $(head -3 "$WORK/failed" | tr '\n' ' ')"
expected_records=$((WRITERS * PER_WRITER + 1))
expected_entries=$((WRITERS * PER_WRITER + 1 + UPDATERS * PER_UPDATER))
have=$("$CK" --zone Z record list --format ndjson | wc -l)
[ "$have" = "$expected_records" ] || fail "expected $expected_records records, found $have"
fsck=$("$CK" fsck --dry-run) || fail "fsck found problems after concurrent writes: $fsck"
entries=$(echo "$fsck" | json_field historyEntries)
[ "$entries" = "$expected_entries" ] || fail "history holds $entries entries, expected exactly $expected_entries (one per write)"
ntok=$(sort -u "$WORK/tokens" | grep -c . || true)
while read -r t; do
  "$CK" --zone Z zone changes --since "$t" --no-save >/dev/null || fail "token fetched during the run is no longer usable: $t"
done < <(sort -u "$WORK/tokens")
say "  ok: $have records, $entries history entries (gapless, per fsck), $ntok tokens all usable, ${secs}s"

# --- Crashes: kill -9 a bulk import at random moments; fsck repairs; acknowledged saves stay.
say "crash: kill -9 during 'ck import' of $CRASH_RECORDS records, $CRASHES times"
repaired=0
for ((r = 0; r < CRASHES; r++)); do
  awk -v n="$CRASH_RECORDS" -v r="$r" 'BEGIN { for (i = 0; i < n; i++) printf "{\"recordName\":\"c%d-%d\",\"recordType\":\"ToDoItem\",\"fields\":{\"title\":{\"value\":\"Task %d\"},\"priority\":{\"value\":%d}}}\n", r, i, i, i % 10 }' > "$WORK/crash.ndjson"
  "$CK" --zone C import "$WORK/crash.ndjson" --format ndjson > "$WORK/ack" 2>/dev/null &
  pid=$!
  sleep "$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.3f", 0.05 + rand() * 0.8 }')"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  out=$("$CK" fsck) || fail "round $r: fsck could not repair: $out"
  n=$(echo "$out" | grep -c '"repaired": true' || true)
  repaired=$((repaired + n))
  again=$("$CK" fsck --dry-run) || fail "round $r: problems remain after repair: $again"
  # Every record acknowledged on stdout (complete lines) before the kill must be present.
  { grep '}$' "$WORK/ack" || true; } | sed -n 's/.*"recordName":"\([^"]*\)".*/\1/p' | sort > "$WORK/acked"
  "$CK" --zone C export | sed -n 's/.*"recordName":"\([^"]*\)".*/\1/p' | sort > "$WORK/present"
  missing=$(comm -23 "$WORK/acked" "$WORK/present" | wc -l)
  [ "$missing" = 0 ] || fail "round $r: $missing acknowledged records are missing after the crash"
  say "  round $r: $(wc -l < "$WORK/acked") acknowledged, all present; fsck repaired $n problem(s)"
done
say "  ok: $CRASHES crashes, $repaired problems repaired, no acknowledged record lost, no torn file left"
