#!/bin/sh
# sync-zone.sh ZONE REPLICA: bring REPLICA (a directory, one file per record holding the
# record's JSON line) up to date with ZONE, the way a CloudKit app's sync loop does, and
# survive every failure an app must survive (Docs/faults.md):
#   THROTTLED / TRY_AGAIN_LATER / ZONE_BUSY (exit 8): wait retryAfter seconds, retry;
#   CHANGE_TOKEN_EXPIRED (exit 7): throw the replica away, refetch from the start;
#   ZONE_NOT_FOUND (exit 3): the zone was deleted or purged: the replica is empty;
#   INTERNAL_ERROR, NETWORK_FAILURE (exit 1): retry a few times, then give up.
# It needs only ck, sed and grep (no jq), and plain record names (no '"' or '\').
zone=$1
replica=$2
: "${CK:=ck}"
mkdir -p "$replica"
from=""
failures=0
while :; do
  out=$("$CK" --zone "$zone" --format ndjson --error-format json zone changes $from 2>"$replica.err")
  status=$?
  err=$(cat "$replica.err")
  case $status in
    0) failures=0 ;;
    7) rm -f "$replica"/*.json; from=--from-start; continue ;;
    3) rm -f "$replica"/*.json; exit 0 ;;
    8|1)
      failures=$((failures + 1))
      [ "$failures" -le 20 ] || { echo "sync-zone: giving up: $err" >&2; exit 1; }
      wait=$(printf '%s\n' "$err" | sed -n 's/.*"retryAfter":\([0-9.]*\).*/\1/p')
      sleep "${wait:-0.1}"
      continue ;;
    *) echo "sync-zone: $err" >&2; exit "$status" ;;
  esac
  from=""
  printf '%s\n' "$out" | while IFS= read -r line; do
    case $line in
      '') ;;
      *'"syncToken":'*) ;;   # the zone's closing line: {moreComing, syncToken, zoneID}
      *)
        name=$(printf '%s\n' "$line" | sed 's/.*"recordName":"\([^"]*\)".*/\1/')
        case $line in
          '{"deleted":true,'*) rm -f "$replica/$name.json" ;;
          *) printf '%s\n' "$line" > "$replica/$name.json" ;;
        esac ;;
    esac
  done
  printf '%s\n' "$out" | grep -q '"moreComing":true' || break
done
rm -f "$replica.err"
