#!/bin/sh
# Record testdata/versions/<version>/ for each VERSION given (1.30 1.32 1.34 1.35 1.36 1.37).
#
# The inputs (crd.yaml, desc.txt, steps) of every case live in testdata/versions/1.37/, the
# engine's default version; they are copied to each other version's tree first, so every
# version replays the same inputs. Then a fresh oracle of that version runs all the cases:
#   1.30, 1.32       build/oracle-1.30/oracle, build/oracle-1.32/oracle (./build.sh 1.30|1.32)
#   1.34 ... 1.37    /work/shared/oracle/bin/oracle (v0.37.2) with --emulated-version=1.3X
# ORACLE137 overrides the path of the v0.37.2 oracle. Each server listens on loopback only
# and is stopped by its PID.
set -e
cd "$(dirname "$0")/../.."
ROOT=$PWD
SRC=testdata/versions/1.37
ORACLE137=${ORACLE137:-/work/shared/oracle/bin/oracle}
[ $# -gt 0 ] || { echo "usage: $0 VERSION..." >&2; exit 2; }
for v in "$@"; do
  case "$v" in
  1.30|1.32) BIN=$ROOT/build/oracle-$v/oracle; EXTRA= ;;
  1.34|1.35|1.36|1.37) BIN=$ORACLE137; EXTRA="-- --emulated-version=$v" ;;
  *) echo "$0: unknown version $v" >&2; exit 2 ;;
  esac
  [ -x "$BIN" ] || { echo "$0: $BIN missing (tools/oracle-old/build.sh $v)" >&2; exit 1; }
  DST=testdata/versions/$v
  if [ "$v" != 1.37 ]; then
    rm -rf "$DST"
    for c in "$SRC"/*/; do
      c=$(basename "$c")
      mkdir -p "$DST/$c"
      find "$SRC/$c" -maxdepth 1 -type f -exec cp {} "$DST/$c/" \;
    done
  fi
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  LOG=$(mktemp)
  # shellcheck disable=SC2086
  "$BIN" serve --port "$PORT" $EXTRA >"$LOG" 2>&1 &
  PID=$!
  trap 'kill $PID 2>/dev/null; rm -f "$LOG"' EXIT
  i=0
  until grep -q ready "$LOG"; do
    i=$((i+1)); [ $i -lt 600 ] || { cat "$LOG"; echo "$0: $v did not start" >&2; exit 1; }
    kill -0 $PID 2>/dev/null || { cat "$LOG"; exit 1; }
    sleep 0.1
  done
  echo "== $v: $(curl -s "http://127.0.0.1:$PORT/version" | tr -d '\n ' )"
  "$BIN" case --server "http://127.0.0.1:$PORT" "$DST"
  kill $PID; wait $PID || true
  trap - EXIT
  rm -f "$LOG"
done
