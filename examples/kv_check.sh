#!/bin/sh
# kv_check.sh SERVER LOAD: starts the key-value server on a free loopback
# port, runs the load generator against it for a second (it checks every
# answer), then has it shut the server down and checks that the server
# exits cleanly. ctest runs this for kv_server; so does tools/package
# --check, with the programs built against the installed packages.
set -u
server=$1
load=$2
dir=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "kv_check: FAILED: $*"
    echo "--- server output:"
    cat "$dir/server.log"
    exit 1
}

"$server" --port 0 --port-file "$dir/port" --threads 2 --max-inflight 8 >"$dir/server.log" 2>&1 &
pid=$!
tries=0
while [ ! -s "$dir/port" ]; do
    kill -0 "$pid" 2>/dev/null || fail "the server exited at start"
    tries=$((tries + 1))
    [ "$tries" -le 100 ] || fail "the server did not listen within 10 s"
    sleep 0.1
done
port=$(cat "$dir/port")
echo "kv_check: server on 127.0.0.1:$port"

"$load" --port "$port" --seconds 1 --connections 4 --shutdown || fail "the load generator failed"

# SHUTDOWN stops the server; a watchdog kills it after 10 s.
(sleep 10 && kill "$pid") >/dev/null 2>&1 &
watchdog=$!
wait "$pid"
status=$?
pid=
kill "$watchdog" 2>/dev/null
cat "$dir/server.log"
[ "$status" -eq 0 ] || fail "the server exited with status $status (killed after 10 s: 143)"
echo "kv_check: OK"
