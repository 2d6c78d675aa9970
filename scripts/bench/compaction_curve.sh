#!/usr/bin/env bash
# compaction_curve.sh: bytes in use per live key over a long run of synthetic blocks, with
# compaction on (default --compact-pages) and off, against a fresh build of the same key
# count; commit time per block in ABBA segments (on, off, off, on, ...).
#
#   scripts/bench/compaction_curve.sh STATETREE TREE ACCOUNTS CONTRACTS SLOTS_PER_CONTRACT WORKDIR OUTDIR \
#       [SEGMENT_BLOCKS=50] [SEGMENTS_PER_ARM=4] [WRAP_BUILD=] [WRAP_TIME=]
#
# TREE: mpt | bintrie. Builds WORKDIR/on, copies it to WORKDIR/off, runs the segments
# (`statetree commit --blocks SEGMENT_BLOCKS --writes 4096 --seed 1 --json`, one JSON file per
# segment in OUTDIR), then builds WORKDIR/fresh with the same accounts and contracts and
# slots-per-contract raised by (keys added by the blocks) / contracts, commits one block on
# it to read its in-use bytes before the block, and deletes the databases.
# WRAP_BUILD / WRAP_TIME: commands prefixed to the builds and to the timed segments (a CPU
# slot or timing lock wrapper); empty: none.
set -euo pipefail
st=$1 tree=$2 accounts=$3 contracts=$4 spc=$5 work=$6 out=$7
seg=${8:-50} per_arm=${9:-4} wrap_build=${10:-} wrap_time=${11:-}
mkdir -p "$work" "$out"
rm -rf "$work/on" "$work/off" "$work/fresh"
$wrap_build "$st" build --tree "$tree" --accounts "$accounts" --contracts "$contracts" \
  --slots-per-contract "$spc" --db "$work/on" --json > "$out/build.json"
cp -a "$work/on" "$work/off"
order=()
for ((i = 0; i < per_arm; i += 2)); do order+=(on off off on); done
n_on=0 n_off=0
for arm in "${order[@]}"; do
  if [ "$arm" = on ]; then k=$n_on; n_on=$((n_on + 1)); cp=16384; else k=$n_off; n_off=$((n_off + 1)); cp=0; fi
  $wrap_time "$st" commit --db "$work/$arm" --blocks "$seg" --writes 4096 --seed 1 --compact-pages "$cp" --json \
    > "$out/$arm.$k.json"
done
# A fresh build of the final key count (the on arm's).
added=$(python3 -c "import json,sys; a=json.load(open('$out/on.0.json')); z=json.load(open('$out/on.$((per_arm-1)).json'));
b0=a['blocks'][0]; print(z['live_keys']-(b0['live_keys']-b0['keys_delta']))")
fresh_spc=$((spc + (added + contracts / 2) / contracts))
$wrap_build "$st" build --tree "$tree" --accounts "$accounts" --contracts "$contracts" \
  --slots-per-contract "$fresh_spc" --db "$work/fresh" --json > "$out/fresh_build.json"
$wrap_build "$st" commit --db "$work/fresh" --blocks 1 --writes 4096 --seed 1 --json > "$out/fresh.json"
du -sb "$work/on" "$work/off" "$work/fresh" > "$out/du.txt"
rm -rf "$work/on" "$work/off" "$work/fresh"
