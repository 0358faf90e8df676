#!/bin/sh
# sync-zone.sh ZONE REPLICA: bring REPLICA (a directory: one file per record holding the
# record's JSON line, and `token`, the last change token applied) up to date with ZONE, the way
# a CloudKit app's sync loop does, and survive every failure an app must survive
# (Docs/faults.md):
#   THROTTLED / TRY_AGAIN_LATER / ZONE_BUSY (exit 8): wait retryAfter seconds, retry;
#   CHANGE_TOKEN_EXPIRED (exit 7): throw the replica away, refetch from the start;
#   ZONE_NOT_FOUND (exit 3): the zone was deleted or purged: the replica is empty;
#   INTERNAL_ERROR (exit 1): retry a few times, then give up.
# Like an app, it keeps its own token and moves it only once a page is applied (written with
# a rename), so a run killed at any point loses nothing: the next run fetches that page again.
# It needs only ck, sed, od and grep (no jq); record names may hold anything but '"' and '\'.
zone=$1
replica=$2
: "${CK:=ck}"
mkdir -p "$replica"
failures=0
# A record's file: its name in hex, so '/', '.', or a leading '-' in a name is harmless.
file_of() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
while :; do
  if [ -s "$replica/token" ]; then set -- --since "$(cat "$replica/token")"; else set -- --from-start; fi
  out=$("$CK" --zone "$zone" --format ndjson --error-format json zone changes --no-save "$@" 2>"$replica/.err")
  status=$?
  err=$(cat "$replica/.err")
  case $status in
    0) failures=0 ;;
    7) rm -f "$replica"/*.rec "$replica/token"; continue ;;
    3) rm -f "$replica"/*.rec "$replica/token" "$replica/.err"; exit 0 ;;
    8|1)
      failures=$((failures + 1))
      [ "$failures" -le 20 ] || { echo "sync-zone: giving up: $err" >&2; exit 1; }
      wait=$(printf '%s\n' "$err" | sed -n 's/.*"retryAfter":\([0-9.]*\).*/\1/p')
      sleep "${wait:-0.1}"
      continue ;;
    *) echo "sync-zone: $err" >&2; exit "$status" ;;
  esac
  token=
  more=false
  # Keys are sorted, so a record line starts with {"created": or {"deleted":true, and the
  # zone's closing line with {"moreComing":.
  while IFS= read -r line; do
    case $line in
      '{"moreComing":'*)
        token=$(printf '%s\n' "$line" | sed 's/.*"syncToken":"\([^"]*\)".*/\1/')
        case $line in '{"moreComing":true'*) more=true ;; esac ;;
      '{"deleted":true,'*)
        name=$(printf '%s\n' "$line" | sed 's/.*"recordName":"\([^"]*\)".*/\1/')
        rm -f "$replica/$(file_of "$name").rec" ;;
      '{'*)
        name=$(printf '%s\n' "$line" | sed 's/.*"recordName":"\([^"]*\)".*/\1/')
        f="$replica/$(file_of "$name").rec"
        printf '%s\n' "$line" > "$f.tmp" && mv "$f.tmp" "$f" ;;
    esac
  done <<PAGE
$out
PAGE
  [ -n "$token" ] || { echo "sync-zone: no token in the page" >&2; exit 1; }
  printf '%s\n' "$token" > "$replica/token.tmp" && mv "$replica/token.tmp" "$replica/token"
  [ "$more" = true ] || break
done
rm -f "$replica/.err"
