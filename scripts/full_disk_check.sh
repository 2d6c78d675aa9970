#!/usr/bin/env bash
# full_disk_check.sh [STATETREE] [tmpfs|ext4]: build and commit on a real, small filesystem
# that runs full (a 64 MiB tmpfs, or a 64 MiB loop-mounted ext4 image), for the arena store
# at both page sizes and for RocksDB. Each failing command must exit 2 with "no space left
# on device: need N bytes, have M", and the state before it must still verify and answer
# `get`; an arena ending in a partial page must open; RocksDB must answer verify / get /
# read-bench on a full disk. Needs root (mount); not part of the test suite. Exit 0 if
# every step did what it should.
set -uo pipefail
BIN=$(realpath "${1:-build/statetree}")
FS=${2:-tmpfs}
M=$(mktemp -d /tmp/statetree-full-XXXXXX)
cleanup() { umount "$M" 2>/dev/null; rm -rf "$M" "$M.img"; }
trap cleanup EXIT
if [ "$FS" = ext4 ]; then
  truncate -s 64M "$M.img" && mkfs.ext4 -q -F "$M.img" && mount -o loop "$M.img" "$M" || exit 1
else
  mount -t tmpfs -o size=64m tmpfs "$M" || exit 1
fi
echo "# $FS at $M: $(df -h --output=size,avail "$M" | tail -1)"
bad=0
STATE=(--tree mpt --accounts 40000 --contracts 100 --slots-per-contract 400)
KEY=(--address 0x0000000000000000000000000000000000000001)

# run WANT CMD...: runs CMD, prints it, its exit status and its last stderr line; WANT is
# the exit status it must have (or "any").
run() {
  local want=$1; shift
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  echo "\$ statetree ${*:2}  -> exit $rc"
  [ -n "$err" ] && echo "$err" | tail -n 1 | sed 's/^/    /'
  if [ "$want" != any ] && [ "$rc" != "$want" ]; then echo "    ^ UNEXPECTED: wanted exit $want"; bad=$((bad + 1)); fi
  if [ "$rc" = 2 ] && [ "$want" = 2 ] && ! grep -q "no space left on device: need [0-9]* bytes, have [0-9]*" <<<"$err"; then
    echo "    ^ UNEXPECTED: no 'no space left on device: need N bytes, have M'"; bad=$((bad + 1))
  fi
  return "$rc"
}
# fill KIB: leaves about KIB KiB free. A deleted arena's space comes back only once the
# kernel has torn down the io_uring rings that registered it (after the process exits, in
# the background), so wait until the free space stops changing first.
fill() {
  rm -f "$M/filler"
  local avail n prev=-1
  for _ in $(seq 1 50); do
    avail=$(df --output=avail -k "$M" | tail -n 1)
    [ "$avail" = "$prev" ] && break
    prev=$avail
    sleep 0.2
  done
  n=$((avail - $1))
  [ "$n" -gt 0 ] && fallocate -l "${n}K" "$M/filler"
  echo "# filled: $(df --output=avail -k "$M" | tail -n 1) KiB free"
}

for ps in 4096 16384; do
  echo "## arena, $ps-byte pages"
  rm -rf "$M/db" "$M/filler"
  fill 6000
  run 2 "$BIN" build "${STATE[@]}" --page-size "$ps" --db "$M/db"
  rm -rf "$M/db" "$M/filler"
  run 0 "$BIN" build "${STATE[@]}" --page-size "$ps" --db "$M/db"
  fill 8000
  for i in $(seq 1 40); do
    run any "$BIN" commit --db "$M/db" --blocks 1 --writes 4096
    rc=$?
    [ "$rc" = 0 ] && continue
    [ "$rc" != 2 ] && { echo "    ^ UNEXPECTED: a commit on a full disk must exit 2"; bad=$((bad + 1)); }
    break
  done
  [ "$rc" = 0 ] && { echo "    ^ UNEXPECTED: 40 commits fitted; the disk never ran full"; bad=$((bad + 1)); }
  echo "    pages.arena: $(stat -c %s "$M/db/pages.arena") bytes ($(($(stat -c %s "$M/db/pages.arena") % ps)) past the last whole page)"
  run 0 "$BIN" verify --db "$M/db"
  run 0 "$BIN" get --db "$M/db" "${KEY[@]}"
  rm -f "$M/filler"
  truncate -s "+$((ps / 2 + 1000))" "$M/db/pages.arena"  # what an interrupted growth left before
  run 0 "$BIN" verify --db "$M/db"
  run 0 "$BIN" commit --db "$M/db" --blocks 1 --writes 4096
  run 0 "$BIN" verify --db "$M/db"
done

echo "## rocksdb"
rm -rf "$M/db" "$M/filler"
fill 14000
run 2 "$BIN" build "${STATE[@]}" --store rocksdb --db "$M/db"
rm -rf "$M/db" "$M/filler"
run 0 "$BIN" build "${STATE[@]}" --store rocksdb --db "$M/db"
fill 0
run 2 "$BIN" build "${STATE[@]}" --store rocksdb --db "$M/db2"
run 0 "$BIN" verify --db "$M/db"
run 0 "$BIN" get --db "$M/db" "${KEY[@]}"
run 0 "$BIN" read-bench --db "$M/db" --keys 64 --qd 1 --reps 1
echo "# $bad unexpected"
[ "$bad" = 0 ]
