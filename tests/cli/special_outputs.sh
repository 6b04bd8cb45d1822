# tests/cli/special_outputs.sh - sourced by cases.sh (inside run.sh: $C,
# pass, fail). An output path that is a FIFO (or /dev/null, /dev/stdout) is
# written in place: the temporary-file-and-rename that guards regular files
# replaced such a path with a regular file (as root, `-o /dev/null` broke
# /dev/null). Each writer gets a FIFO with a reader; the FIFO must still be a
# FIFO afterwards and the reader must have got the output.
sp_dir=$(mktemp -d)
sp_check() { # NAME MARKER -- ARGS (ARGS use $sp_dir/fifo)
    name=$1; marker=$2; shift 3
    rm -f "$sp_dir/fifo" "$sp_dir/got"
    mkfifo "$sp_dir/fifo"
    cat "$sp_dir/fifo" > "$sp_dir/got" &
    reader=$!
    timeout 120 "$C" "$@" > /dev/null 2>&1
    rc=$?
    # a writer that never opened the FIFO leaves the reader waiting: open it
    # once; if the FIFO was replaced (the bug), nothing can: stop the reader
    if kill -0 "$reader" 2>/dev/null; then
        if [ -p "$sp_dir/fifo" ]; then timeout 5 sh -c ': > "$1"' sh "$sp_dir/fifo"; else kill "$reader" 2>/dev/null; fi
    fi
    wait "$reader" 2>/dev/null
    if [ "$rc" = 0 ] && [ -p "$sp_dir/fifo" ] && grep -q -- "$marker" "$sp_dir/got"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL special-output-$name: exit $rc, FIFO kept: $([ -p "$sp_dir/fifo" ] && echo yes || echo no), output received: $(wc -c < "$sp_dir/got") bytes" >&2
    fi
}
sp_check workload '"ops"' -- workload --model llama2-7b --gpus 8 --tp 8 --seq 256 --topo dgx-h100 -o "$sp_dir/fifo"
sp_check replay-timeline traceEvents -- replay --topo dgx-a100 --gpus 2 --timeline "$sp_dir/fifo" docs/examples/two-rank-overlap.json
sp_check collective-timeline traceEvents -- collective --topo dgx-h100 -b 1M -e 1M --timeline "$sp_dir/fifo"
sp_check topo-import '"nodes"' -- topo import tests/data/nccl-topo/dgx-a100-like.xml -o "$sp_dir/fifo"
sp_check sweep point -- sweep tests/data/sweep/collective-ctas.json -o "$sp_dir/fifo"
sp_check calibrate-fit '{' -- calibrate fit calibrate/data/h200-2026-11-29/calibration.jsonl -o "$sp_dir/fifo"
if command -v gnuplot > /dev/null 2>&1; then
    sp_check collective-plot '<svg' -- collective --topo dgx-h100 -b 1M -e 4M -f 2 --plot "$sp_dir/fifo"
    sp_check p2p-plot '<svg' -- p2p --topo dgx1-v100 --compare tests/data/nccltests/11-dgx1-v100-8gpu-hybridcubemesh-p2p-bidir-matrix.txt --plot "$sp_dir/fifo"
fi
# a symbolic link (as /dev/stdout -> /proc/self/fd/1): written through,
# the link kept (a rename replaced the link itself)
: > "$sp_dir/target"
ln -s "$sp_dir/target" "$sp_dir/link"
"$C" workload --model llama2-7b --gpus 8 --tp 8 --seq 256 --topo dgx-h100 -o "$sp_dir/link" > /dev/null 2>&1
if [ -L "$sp_dir/link" ] && grep -q '"ops"' "$sp_dir/target"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL special-output-symlink: the link was replaced or its target not written" >&2
fi
# "-" is standard output: the output alone there (FILTER, given the file it
# went to as $1, reads it back), the report on stderr; no file named "-" is
# made; two outputs cannot both be "-"
dash_check() { # NAME FILTER -- ARGS
    name=$1; filter=$2; shift 3
    rm -f ./-
    "$C" "$@" 2> "$sp_dir/err" > "$sp_dir/out"; rc=$?
    if [ "$rc" = 0 ] && sh -c "$filter" sh "$sp_dir/out" > /dev/null 2>&1 && [ ! -e ./- ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL dash-output-$name: exit $rc, stdout fails '$filter' or a file '-' was made" >&2
    fi
    rm -f ./-
}
tl_ok='head -c 40 "$1" | grep -q traceEvents && [ "$(tail -c 3 "$1")" = "]}" ]'
dash_check workload "\"$C\" replay --topo dgx-h100 \"\$1\"" -- workload --model llama2-7b --gpus 8 --tp 8 --seq 256 --topo dgx-h100 -o -
dash_check replay-timeline "$tl_ok" -- replay --topo dgx-a100 --gpus 2 --timeline - docs/examples/two-rank-overlap.json
dash_check scale-timeline "$tl_ok" -- scale --model llama3-8b --systems dgx-h100:8 --seq 256 --timeline -
dash_check topo-import "cp \"\$1\" \"\$1.json\" && \"$C\" topo show \"\$1.json\"" -- topo import tests/data/nccl-topo/dgx-a100-like.xml -o -
dash_check sweep 'head -1 "$1" | grep -qx point,max_ctas,busbw_at_max,nchannels_at_max,algo_at_max,busbw_at_max_lo80,busbw_at_max_hi80,band_regime,band_kind' -- sweep tests/data/sweep/collective-ctas.json -o -
if command -v gnuplot > /dev/null 2>&1; then
    svg_ok='head -1 "$1" | grep -q "^<?xml" && tail -2 "$1" | grep -q "^</svg>"'
    dash_check scale-plot "$svg_ok" -- scale --model llama3-8b --systems dgx-h100:8/16 --seq 256 --plot -
    dash_check validate-plot "$svg_ok" -- validate --topo dgx-a100 --plot - tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt
fi
check dash-output-two 2 "only one output can be '-'" -- collective --topo dgx-a100 -b 1M -e 1M --plot - --timeline -
rm -rf "$sp_dir"
