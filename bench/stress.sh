#!/usr/bin/env bash
# ck's reliability checks at scale (`make stress`): concurrent writers and readers, then the
# durability suites `make test` skips — kill -9 at random moments and a crash at every disk
# operation, a full disk at every one, planted links, index and paging answers against scans —
# and the loops it also runs, on this ck. Prints what it checks, writes the figures to bench/out/stress.txt, and
# exits non-zero on the first broken promise.
# Environment: CK=path/to/ck (default .build/debug/ck, the binary `make test`
# ran), STRESS_TESTS (the XCTest suites to
# run, a --filter expression: the Makefile's STRESS_TESTS and SCALED_TESTS), SCALE=10 (how many
# times longer the random loops run than once, and the concurrent writes than 900; 1 in CI),
# WRITERS=8, PER_WRITER=100*SCALE, UPDATERS=4, PER_UPDATER=25*SCALE.
set -euo pipefail
cd "$(dirname "$0")/.."
CK=${CK:-$PWD/.build/debug/ck}
SCALE=${SCALE:-10}
TESTS=${STRESS_TESTS:?"which XCTest suites to run: run this with 'make stress'"}
WRITERS=${WRITERS:-8}; PER_WRITER=${PER_WRITER:-$((100 * SCALE))}
UPDATERS=${UPDATERS:-4}; PER_UPDATER=${PER_UPDATER:-$((25 * SCALE))}
OUT=$PWD/bench/out; mkdir -p "$OUT"; LOG=$OUT/stress.txt; : > "$LOG"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ck-stress.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export CK_DATA_DIR=$WORK/data
[ -x "$CK" ] || { echo "stress: no ck binary at $CK (run 'make debug')" >&2; exit 1; }

say() { echo "$*" | tee -a "$LOG"; }
fail() { say "FAIL: $*"; exit 1; }
json_field() { sed -n "s/.*\"$1\": *\([^,}]*\).*/\1/p" | head -1 | tr -d '"'; }
say "ck stress, $(date -u +%Y-%m-%d), $(nproc 2>/dev/null || echo '?') cores"

# --- Many processes writing one zone while a watcher follows its change feed.
"$CK" account signin alice@example.com >/dev/null
"$CK" zone create Z >/dev/null
"$CK" --zone Z record save --type Counter --name hot n=0 >/dev/null
say "concurrency: $WRITERS writers x $PER_WRITER records, $UPDATERS updaters x $PER_UPDATER forced updates of one record, a watcher following the feed"
start=$(date +%s%N)
writer() { for ((i = 0; i < PER_WRITER; i++)); do "$CK" --device "w$1" --zone Z record save --type Item --name "w$1-$i" n=$i >/dev/null || echo "w$1-$i" >> "$WORK/failed"; done; }
updater() { for ((i = 0; i < PER_UPDATER; i++)); do "$CK" --device "u$1" --zone Z record save --name hot --force n=$i >/dev/null || echo "u$1-$i" >> "$WORK/failed"; done; }
watcher() {
  while [ ! -e "$WORK/stop" ]; do
    "$CK" --device watcher --zone Z zone changes --limit 200 --format ndjson > "$WORK/wpage" || echo "watch" >> "$WORK/failed"
    grep '"recordName"' "$WORK/wpage" >> "$WORK/seen" || true
    tail -1 "$WORK/wpage" | sed -n 's/.*"syncToken":"\([^"]*\)".*/\1/p' >> "$WORK/tokens"
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
# The watcher drains the feed; what it has then must be exactly the zone (names and tags).
while "$CK" --device watcher --zone Z zone changes --format ndjson > "$WORK/page"; do
  grep '"recordName"' "$WORK/page" >> "$WORK/seen" || true
  grep -q '"moreComing":true' "$WORK/page" || break
done
sed -n 's/.*"recordChangeTag":"\([^"]*\)".*"recordName":"\([^"]*\)".*/\2 \1/p' "$WORK/seen" | awk '{ tag[$1] = $2 } END { for (n in tag) print n, tag[n] }' | sort > "$WORK/replica"
"$CK" --zone Z export | sed -n 's/.*"recordChangeTag":"\([^"]*\)".*"recordName":"\([^"]*\)".*/\2 \1/p' | sort > "$WORK/truth"
missed=$(comm -13 "$WORK/replica" "$WORK/truth" | wc -l)
[ "$missed" = 0 ] || fail "the watcher's replica misses or has stale $missed records"
ntok=$(sort -u "$WORK/tokens" | grep -c . || true)
while read -r t; do
  "$CK" --zone Z zone changes --since "$t" --no-save >/dev/null || fail "token fetched during the run is no longer usable: $t"
done < <(sort -u "$WORK/tokens")
say "  ok: $((WRITERS * PER_WRITER + UPDATERS * PER_UPDATER)) concurrent writes, 0 lost updates ($have records, history gapless per fsck); watcher replica: 0 missed or stale; $ntok tokens all usable; ${secs}s"

# --- The test loops on this ck: a crash at every disk operation, a full disk at every one,
# random kill -9 of every kind of write (SCALE times as many), index and paging answers against
# scans, readers beside writers (SCALE times as long), hostile paths and planted links. Their
# checks are the store's promises (Tests/CKTestSupport/StorePromises.swift).
say "test loops (x$SCALE): crash points, full disk, kill -9, index and paging against scans, concurrent reader, hostile paths"
CK_TEST_BINARY=$CK CK_STRESS_SCALE=$SCALE swift test --disable-swift-testing \
  --filter "$TESTS" > "$WORK/tests.txt" 2>&1 \
  || { grep -E "error:|failed" "$WORK/tests.txt" | head -20 | tee -a "$LOG"; fail "a test loop broke a promise (see above)"; }
grep '^STRESS' "$WORK/tests.txt" | sed 's/^STRESS /  /' | tee -a "$LOG"
say "  ok: $(grep -E 'Executed [0-9]+ tests' "$WORK/tests.txt" | tail -1 | sed 's/^[[:space:]]*//')"
