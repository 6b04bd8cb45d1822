#!/bin/sh
# scripts/fuzz.sh - build the libFuzzer targets (fuzz/fuzz_*.c) against the
# library compiled with clang + ASan/UBSan in build/fuzz/, seed a corpus per
# target from the shipped and test files, and run each for SECONDS.
#   sh scripts/fuzz.sh [SECONDS] [TARGET...]     (make fuzz FUZZ_SECONDS=N)
# FUZZ_JOBS=N runs N targets at a time (default 1); FUZZ_BUILD_ONLY=1 only
# builds (then reproduce with build/fuzz/bin/fuzz_<t> FILE). Per target:
# build/fuzz/logs/<t>.log (the tail has libFuzzer's final stats), the grown
# corpus in build/fuzz/corpus/<t>/, crash inputs in build/fuzz/crashes/.
# Exit status 1 when any target found a crash, leak or timeout.
set -u
SECONDS_EACH=${1:-60}
[ $# -gt 0 ] && shift
TARGETS=${*:-"topo_json topo_xml topo_smi nccltests p2pmatrix native_json native_csv kineto chakra flightrec nccllog"}
JOBS=${FUZZ_JOBS:-1}
B=build/fuzz
CLANG=${FUZZ_CC:-clang}
command -v "$CLANG" >/dev/null || { echo "fuzz: $CLANG not found (apt-get install clang)" >&2; exit 1; }

# The library, compiled by the main Makefile's own rules into build/fuzz.
SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
make --no-print-directory BUILD=$B CC="$CLANG" SANFLAGS="$SAN" CFLAGS="-O1 -g" LTO=0 $B/libconveyor.a || exit 1
PKG_CFLAGS=$(pkg-config --cflags glib-2.0 gio-2.0 libcjson)
PKG_LIBS=$(pkg-config --libs glib-2.0 gio-2.0 libcjson)
mkdir -p $B/bin $B/logs $B/crashes
for t in $TARGETS; do
    $CLANG -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror -I. $PKG_CFLAGS \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
        -o $B/bin/fuzz_$t fuzz/fuzz_$t.c $B/libconveyor.a $PKG_LIBS -lcsv -lm || exit 1
done

[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

# seeds_for TARGET: the files that seed TARGET's corpus.
seeds_for() {
    case $1 in
    topo_json) ls topologies/*.json topologies/fabrics/*.json tests/data/topo/*.json tests/bad_input/topo/* ;;
    topo_xml) ls tests/data/nccl-topo/*.xml ;;
    topo_smi) ls tests/data/smi-topo/*.txt tests/bad_input/smi-topo/* ;;
    nccltests) ls tests/data/nccltests/*.txt tests/data/nccl-debug/*.txt tests/bad_input/nccltests/* ;;
    p2pmatrix) ls tests/data/nccltests/*p2p* tests/data/nccltests/*P2P* tests/bad_input/nccltests/p2p* ;;
    native_json) ls fuzz/seeds/native_json/* docs/examples/two-rank-overlap.json tests/bad_input/trace/*.json ;;
    native_csv) ls fuzz/seeds/native_csv/* tests/bad_input/trace/*.csv ;;
    kineto) ls fuzz/seeds/kineto/* tests/data/traces/kineto_old_style.json tests/data/traces/bad/*.json ;;
    chakra) ls fuzz/seeds/chakra/* tests/data/traces/jsonized.json tests/data/traces/bad/*.et ;;
    flightrec) ls tests/data/traces/flightrec/* tests/bad_input/flightrec/* ;;
    nccllog) ls tests/data/traces/nccl-log/job-8rank.log tests/bad_input/nccl-log/* ;;
    esac 2>/dev/null
}

run_one() {
    t=$1
    mkdir -p $B/corpus/$t
    seeds_for "$t" | while read -r f; do cp -f "$f" "$B/corpus/$t/seed-$(basename "$f")"; done
    # -rss_limit_mb: the gzip readers may legitimately inflate a few hundred MB.
    t0=$(date +%s)
    # fuzz/lsan.supp: GLib's own quark-table leak, matched on frames inside GLib (hence the slower unwinding)
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:fast_unwind_on_malloc=0 \
        LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan.supp UBSAN_OPTIONS=print_stacktrace=1 \
        $B/bin/fuzz_$t -max_total_time="$SECONDS_EACH" -max_len=65536 -timeout=20 -rss_limit_mb=4096 \
        -print_final_stats=1 -artifact_prefix=$B/crashes/$t- $B/corpus/$t > $B/logs/$t.log 2>&1
    rc=$?
    secs=$(($(date +%s) - t0))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' $B/logs/$t.log)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' $B/logs/$t.log | tail -1)
    echo "fuzz_$t: rc=$rc ${secs}s execs=${execs:-?} ${cov:-cov: ?}"
    return $rc
}

fail=0
if [ "$JOBS" -le 1 ]; then
    for t in $TARGETS; do run_one "$t" || fail=1; done
else
    # Simple batches of JOBS targets in parallel.
    set -- $TARGETS
    while [ $# -gt 0 ]; do
        pids=""; n=0
        while [ $# -gt 0 ] && [ $n -lt "$JOBS" ]; do
            run_one "$1" & pids="$pids $!"; n=$((n + 1)); shift
        done
        for p in $pids; do wait "$p" || fail=1; done
    done
fi
ls $B/crashes 2>/dev/null | grep -q . && echo "fuzz: inputs kept in $B/crashes/:" && ls $B/crashes
exit $fail
