#!/usr/bin/env bash
# Builds the fuzz preset and runs each libFuzzer target for SECONDS (default
# 60), one after the other (one core each; the machines are shared).
# Usage: tests/fuzz/run.sh [SECONDS] [extra libFuzzer flags, e.g. -runs=1000000]
# Seeds are copied at run time from presets/ and tests/data (no duplicated
# files); what a target learns stays in build/fuzz/corpus/<target>, and any
# crashing input is written to build/fuzz/crashes/ -- copy it into
# tests/data/fuzz-regressions/<target>/ so the Catch2 suite replays it.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds="${1:-60}"
shift || true

if ! command -v clang++ >/dev/null; then
    echo "error: the fuzz preset needs clang++ and libFuzzer: apt-get install clang libclang-rt-14-dev" >&2
    exit 1
fi
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

mkdir -p build/fuzz/crashes
status=0
for target in preset hfimport deck profilertrace snapshot launchimport; do
    corpus="build/fuzz/corpus/$target"
    mkdir -p "$corpus"
    # Every JSON file of presets/ and tests/data seeds every target: a deck
    # slide is a preset, and a preset is a malformed HF config worth trying.
    find presets tests/data -name '*.json' -exec cp -n {} "$corpus"/ \;
    # The snapshot fixtures (pickles, one gzipped) seed the snapshot importer.
    [[ $target == snapshot ]] && cp -n tests/data/snapshots/*.pickle* "$corpus"/
    # Launch scripts and torchtitan TOML configs seed the launch importers.
    [[ $target == launchimport ]] && cp -n tests/data/launch/*.sh tests/data/launch/*.toml "$corpus"/
    # Launch files are a few KB; longer ones only slow the argument reader
    # (each argument looked up among the known flags).
    max_len=65536
    [[ $target == launchimport ]] && max_len=16384
    echo "== fuzz_$target for ${seconds}s"
    if ! build/fuzz/tests/fuzz/fuzz_"$target" "$corpus" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
        -print_final_stats=1 -artifact_prefix="build/fuzz/crashes/$target-" "$@"; then
        echo "fuzz_$target found a problem: see build/fuzz/crashes/" >&2
        status=1
    fi
done
exit "$status"
