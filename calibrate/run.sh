#!/bin/sh
# calibrate/run.sh [OUTDIR] - build (make calibrate) and run every calibration
# microbenchmark on every GPU of this machine, in bounded time (about 3-4
# minutes on one GPU; P2P and NCCL only with two or more GPUs; GEMM needs cuBLAS).  Writes
#   OUTDIR/calibration.jsonl      one JSON record per measurement point
#   OUTDIR/nccl-<coll>.txt        nccl-tests-format logs (>= 2 GPUs)
#   OUTDIR/machine.txt            driver/CUDA versions, nvidia-smi -q, topo -m, command
#   OUTDIR/run.log                the programs' stderr
# Then: conveyor calibrate fit OUTDIR/calibration.jsonl OUTDIR/nccl-*.txt -o params.json
# QUICK=1 runs a smoke version (fewer sizes and repeats).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-calibration-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out" || { echo "run.sh: cannot create $out" >&2; exit 2; }
out=$(cd "$out" && pwd)
q=""; [ "${QUICK:-0}" = 1 ] && q="-q"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "run.sh: no NVIDIA GPU visible here (nvidia-smi missing or failing); nothing measured" >&2
    exit 3
fi
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
[ "$ngpu" -ge 1 ] || { echo "run.sh: nvidia-smi lists no GPU; nothing measured" >&2; exit 3; }

# -k: a program that does not build here (no NCCL headers, no cuBLAS) is
# skipped below; the others still run
(cd "$here" && make --no-print-directory -k -j"$(nproc 2>/dev/null || echo 4)" calibrate) ||
    echo "run.sh: make calibrate failed for some programs; running the ones that built" >&2
bin="$here/build/calibrate"
[ -x "$bin/d2d" ] || { echo "run.sh: $bin/d2d missing (no nvcc?)" >&2; exit 1; }

{
    echo "# conveyor calibration run"
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname)"
    echo "command: $0 $*${q:+ (QUICK=1)}"
    echo "conveyor_commit: $(cd "$here" && git rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "gpus: $ngpu"
    echo "driver_version: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
    echo "cuda_driver_api: $(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)"
    echo "nvcc: $( (command -v nvcc >/dev/null && nvcc --version || /usr/local/cuda/bin/nvcc --version) 2>/dev/null | tail -2 | tr '\n' ' ')"
    echo "nccl_header: $(sed -n 's/^#define NCCL_VERSION_CODE *\([0-9]*\).*/\1/p' /usr/local/cuda/include/nccl.h 2>/dev/null | head -1)"
    echo; echo "## nvidia-smi -L"; nvidia-smi -L
    echo; echo "## nvidia-smi topo -m"; nvidia-smi topo -m 2>&1 || echo "(not available)"
    echo; echo "## nvidia-smi -q"; nvidia-smi -q
} > "$out/machine.txt" 2>&1

jsonl="$out/calibration.jsonl"; log="$out/run.log"
: > "$jsonl"; : > "$log"
fail=0
# step NAME SECONDS CMD...: bounded by timeout; a failure is logged, not fatal
step() {
    name=$1; limit=$2; shift 2
    if [ ! -x "$1" ]; then
        echo "run.sh: $name skipped: $1 was not built" | tee -a "$log" >&2
        fail=$((fail + 1)); return
    fi
    echo "run.sh: $name (limit ${limit}s)" | tee -a "$log" >&2
    t0=$(date +%s)
    timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
    rc=$?
    echo "run.sh: $name rc=$rc in $(( $(date +%s) - t0 ))s" | tee -a "$log" >&2
    [ "$rc" = 0 ] || fail=$((fail + 1))
}
step launch 30 "$bin/launch" -d -1 -o "$jsonl" $q
step d2d 75 "$bin/d2d" -d -1 -o "$jsonl" $q
step h2d 75 "$bin/h2d" -d -1 -o "$jsonl" $q
step reduce 60 "$bin/reduce" -d -1 -o "$jsonl" $q
step flag 30 "$bin/flag" -d -1 -o "$jsonl" $q
step gemm 240 "$bin/gemm" -d -1 -o "$jsonl" $q
step overlap 60 "$bin/overlap" -d -1 -o "$jsonl" $q
if [ "$ngpu" -ge 2 ]; then
    step p2p 240 "$bin/p2p" -d -1 -o "$jsonl" $q
    step nccl 240 "$bin/nccl" -o "$out/nccl-" $q
else
    echo "run.sh: one GPU: P2P matrix and NCCL sweeps skipped" | tee -a "$log" >&2
fi
echo "run.sh: $(wc -l < "$jsonl") records in $jsonl; $fail step(s) failed (see $log)" >&2
[ -x "$here/build/conveyor" ] && "$here/build/conveyor" calibrate fit "$jsonl" $(ls "$out"/nccl-*.txt 2>/dev/null) \
    -o "$out/params.json" > "$out/fit.txt" 2>&1 && echo "run.sh: fit -> $out/params.json, $out/fit.txt" >&2
[ "$fail" = 0 ]
