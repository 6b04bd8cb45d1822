# Command-line cases (sourced by run.sh). check NAME RC PATTERN -- ARGS
check version 0 '^conveyor [0-9]+\.[0-9]+' -- --version
check help 0 'commands:' -- --help
check no-args 2 'usage' --
check unknown-command 2 "unknown command 'frobnicate'" -- frobnicate
check demo-bad-option 2 'Unknown option' -- demo --no-such-option
check demo-runs 0 'events/s' -- demo -n 1000
check topo-list 0 'dgx-h100 +8 ' -- topo list
check workload-model-list 0 '^llama3-405b +126 +16384 +128 +8 +53248 +128256 +- +405\.9 ' -- workload --model list
check scale-model-list 0 '^mixtral-8x7b +32 +4096 +32 +8 +14336 +32000 +8 top-2 +46\.7 ' -- scale --model list
check topo-show-dgx-h100 0 'nvlink +28 pairs' -- topo show dgx-h100
check topo-show-nodes4 0 '4 node\(s\) x 8 GPU\(s\) = 32 ranks' -- topo show dgx-h100 --nodes 4
check topo-show-net-devices 0 '8 NIC\(s\) x 400 Gb/s per server, each 4 network devices of 100 Gb/s to NCCL' -- topo show aws-p5
check topo-show-no-p2p-staged 0 'staged +1 pairs' -- topo show pcie-gen3-2gpu
check topo-dot 0 '^graph "dgx1-v100"' -- topo dot dgx1-v100
check topo-bad-file 2 'negative-bandwidth\.json:12:73: ' -- topo show tests/bad_input/topo/negative-bandwidth.json
check topo-set-unknown-key 2 'no such parameter' -- topo show dgx-h100 --set turbo=1
check topo-set-bad-value 2 'pcie.gen: must be in \[3, 6\]' -- topo show dgx-h100 --set pcie.gen=7
check topo-set-xsocket-bad 2 'xsocket.GBps: must be in \[0.001, 1000\]' -- topo show pcie-gen4-8gpu-2socket --set xsocket.GBps=0
check topo-set-xsocket-undeclared 2 'xsocket.GBps' -- topo show dgx-h100 --set xsocket.GBps=20
check topo-directory 2 'tests/: a directory, not a topology file' -- topo show tests/
check topo-unknown-name 2 "unknown topology 'dgx-z'" -- topo show dgx-z
check topo-import 0 '"nvlink_gen":[[:space:]]*3' -- topo import tests/data/nccl-topo/dgx-a100-like.xml
check topo-import-missing 2 'no-such\.xml' -- topo import tests/data/nccl-topo/no-such.xml
# nvidia-smi topo -m (tests/data/smi-topo, hand-made in the layout of real outputs)
check topo-import-smi 0 '"nvlink.links":[[:space:]]*18' -- topo import tests/data/smi-topo/dgx-h100-like.txt
check topo-import-smi-guess 0 'H100-SXM: GPU kind guessed from NV18' -- topo import tests/data/smi-topo/dgx-h100-like.txt
check topo-import-smi-nics 0 'not modelled \(NODE/SYS to every GPU\): NIC8 \(mlx5_bond_0\), NIC9' -- topo import tests/data/smi-topo/dgx-h100-like.txt
check topo-import-smi-given 0 'NICs of 800 Gb/s|"model":[[:space:]]*"H200"' -- topo import tests/data/smi-topo/dgx-h100-like.txt --gpu H200 --nic-gbps 800 --cpu amd
check topo-import-smi-no-kind 2 'pcie-2gpu-spaces\.txt:1:1: .*--gpu NAME' -- topo import tests/data/smi-topo/pcie-2gpu-spaces.txt
check topo-import-smi-kind 0 '"model":[[:space:]]*"RTX 4090"' -- topo import tests/data/smi-topo/pcie-2gpu-spaces.txt --gpu 'RTX 4090'
check topo-import-smi-bridged-pairs 0 '"links":[[:space:]]*12,' -- topo import tests/data/smi-topo/h100-nvl-pairs-like.txt --gpu H100-PCIe
check topo-import-bad-gpu 2 'no such GPU kind \(known: V100-SXM2' -- topo import tests/data/smi-topo/dgx-h100-like.txt --gpu Z100
check topo-import-xml-gpu-sm 2 'names the H100-SXM \(sm_90\); the file.s GPUs are sm_80' -- topo import tests/data/nccl-topo/dgx-a100-like.xml --gpu H100
check topo-import-xml-note 0 'sm_80.*topo import --gpu NAME' -- topo import tests/data/nccl-topo/dgx-a100-like.xml
check topo-import-bad-cpu 2 '--cpu via: expected intel, amd or arm' -- topo import tests/data/smi-topo/dgx-h100-like.txt --cpu via
check topo-import-bad-nic 2 '--nic-gbps 5000: expected' -- topo import tests/data/smi-topo/dgx-h100-like.txt --nic-gbps 5000
# an imported description of a shipped system simulates as the shipped one does
# (same NVLinks, switches, NICs): the sweep's rows, not its device names
import_same() { # NAME IMPORTED SHIPPED -- collective ARGS (topo import takes $imp_opts too)
    name=$1; f=$2; t=$3; shift 4
    # shellcheck disable=SC2086
    tmp=$(mktemp); "$C" topo import "$f" $imp_opts -o "$tmp" 2>/dev/null
    a=$("$C" "$@" --topo "$tmp" 2>&1 | grep -v '^#' | cksum); b=$("$C" "$@" --topo "$t" 2>&1 | grep -v '^#' | cksum)
    n=$("$C" "$@" --topo "$tmp" 2>&1 | grep -vc '^#')
    if [ "$a" = "$b" ] && [ "$n" -gt 2 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name: $f and $t differ" >&2; fi
    rm -f "$tmp"
}
import_same import-smi-dgx-h100 tests/data/smi-topo/dgx-h100-like.txt dgx-h100 -- collective --nodes 2 -g 8 -b 1M -e 1G -f 32
import_same import-smi-dgx1-mesh tests/data/smi-topo/dgx1-v100-like.txt dgx1-v100 -- collective -g 8 -b 1M -e 1G -f 32
# a GB200 tray's matrix, its kind and NVLink domain given: two trays over multi-node NVLink as the shipped rack
imp_opts="--gpu GB200 --cpu arm --nvl-domain 18"
import_same import-smi-gb200-mnnvl tests/data/smi-topo/gb200-tray-like.txt gb200-nvl72 -- collective --nodes 2 -b 1M -e 4G -f 64
imp_opts=""
check topo-import-nvl-domain-no-switch 2 '--nvl-domain 18: the GPUs have no NVSwitch' -- topo import tests/data/smi-topo/dgx1-v100-like.txt --nvl-domain 18
sp=$(mktemp); "$C" topo import tests/data/smi-topo/gb200-tray-like.txt --gpu GB200 --nvl-domain 18 -o "$sp" 2>/dev/null
check topo-import-nvl-domain 0 'domain of 18 server' -- topo show "$sp"
rm -f "$sp"
sp=$(mktemp); "$C" topo import tests/data/smi-topo/dgx1-v100-like.txt -o "$sp" 2>/dev/null
check topo-import-xsocket-param 0 'p2p_xsocket=off pcie.gen=3 pxn=on xsocket.GBps=38.4' -- topo show "$sp" --set xsocket.GBps=38.4
rm -f "$sp"
sp=$(mktemp); "$C" topo import tests/data/nccl-topo/dgx-a100-like.xml --gpu A100 -o "$sp" 2>/dev/null
check topo-import-xml-scale 0 'A100-SXM4 +8 +8 +1 +1' -- scale --model llama3-8b --systems "$sp:8" --gpus 8
rm -f "$sp"
check validate-explain 0 'explain: +134217728 +Ring +Simple +24 +n0\.gpu0->n0\.nvsw +87% +59017 +208\.31$' -- validate --topo dgx-a100 --explain tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt
check validate-applies-log-env 0 "environment from the log's NCCL INFO lines: NCCL_ALGO=ring NCCL_MAX_NCHANNELS=8" -- validate --topo dgx-h100 tests/data/nccl-debug/dgx-h100-allreduce-env.txt
check validate-nccl-version 0 '^# NCCL 2\.19\.3 in the log \(line 6\); the tuner follows NCCL 2\.30\.7' -- validate --topo dgx-a100 tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt
check validate-log-env-round-trip 0 'summary: points=3 median_abs_err=0\.00%' -- validate --topo dgx-h100 tests/data/nccl-debug/dgx-h100-allreduce-env.txt
check collective-h100 0 '# Avg bus bandwidth' -- collective --topo dgx-h100 -b 1M -e 64M -f 4
check collective-explain 0 'explain: .*NVLS' -- collective --topo dgx-h100 -b 256M -e 256M --explain
check collective-explain-band 0 'explain: .*NVLS .*[0-9.]+ \[[0-9.]+-[0-9.]+\] nvlink' -- collective --topo dgx-h100 -b 256M -e 256M --explain
check collective-launch-us-nan 2 "--launch-us: expected microseconds in 0..1e6, got 'nan'" -- collective --topo dgx-h100 --launch-us nan
check collective-launch-channel-us-bad 2 "--launch-channel-us: expected microseconds in 0..1e6, got '-1'" -- collective --topo dgx-h100 --launch-channel-us -1
# no per-channel host cost: 24 channels x 0.1 us less than the default (368.35 GB/s at 1 GiB)
check collective-launch-channel-us-zero 0 '368\.52 ' -- collective --topo dgx-h100 -b 1G -e 1G --algo ring --launch-channel-us 0
check collective-proto-none-left 2 "'\^LL,LL128,Simple' leaves no protocol" -- collective --topo dgx-h100 --proto '^LL,LL128,Simple'
check collective-g-zero 2 '-g must be in 1..1024' -- collective --topo dgx-h100 -g 0
check collective-f-one-steps-bytes 0 'step: 1048576\(bytes\)' -- collective --topo dgx-h100 -b 1M -e 3M -f 1
check collective-f-negative 2 '-f, -n, -w and -c must be >= 0' -- collective --topo dgx-h100 -f -1
check collective-algo-other-collective-empty 0 '# Avg bus bandwidth' -- collective --topo dgx-h100 -b 1M -e 1M --algo 'allreduce:ring;broadcast:^ring,tree,nvls,nvlstree,collnetdirect,collnetchain,pat'
check collective-proto-default-first 0 'explain: .* Ring +LL +24' -- collective --topo dgx-h100 --op all_gather -b 1M -e 1M --explain --proto '^LL128;allreduce:LL128'
check replay-group-beyond-ranks 2 "group '0' names rank 1, but the trace has 1 rank \(a rank of a larger job: replicate it with --ranks 2\)" -- replay --topo dgx-h100 --gpus 1 tests/data/traces/kineto_old_style.json
check replay-peer-beyond-ranks 2 'rank 0 op 2: a send with rank 1, but the trace has 1 rank' -- replay --topo dgx-a100 --gpus 1 tests/data/traces/jsonized.json
# a collective group on a topology with endpoint limits (servers, no end nodes, on its routes): group_shape read node FAB_NONE (ASan SEGV; found by fuzzing)
check replay-endpoint-limits 0 "^step time: [0-9.]+ ms" -- replay --topo tests/data/topo/endpoint-limits.json --gpus 2 docs/examples/two-rank-overlap.json
check replay-g-zero 2 '-g must be in 1..1024' -- replay --topo dgx-a100 --gpus 2 -g 0 docs/examples/two-rank-overlap.json
check collective-empty-redop 2 "unknown -o op ''" -- collective --topo dgx-h100 -o ''
check scale-sizes-trailing-garbage 2 "bad sizes '8..16x'" -- scale --model llama2-7b --systems dgx-h100:8..16x
check replay-g-negative 2 '-g must be in 1..1024' -- replay --topo dgx-a100 --gpus 2 -g -1 docs/examples/two-rank-overlap.json
check validate-max-error-nan 2 '--max-error must be a percentage' -- validate --topo dgx-a100 --max-error nan tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt
# nccl-tests' own flags: -t threads (header), -r root (simulated and printed), -c (header); -m, -G modelled
check collective-nccltests-header-flags 0 '^# nThread 2 nGpus 4 minBytes 1048576 maxBytes 1048576 .* agg iters: 1 validation: 0 graph: 0' -- collective --topo dgx-h100 -t 2 -g 4 -c 0 -z 1 -a 3 -b 1M -e 1M
check collective-root 0 '^ +1048576 +262144 +float +none +5 ' -- collective --topo dgx-h100 --op broadcast -r 5 -b 1M -e 1M
check collective-root-out-of-range 2 '-r 8: the system has ranks 0..7' -- collective --topo dgx-h100 --op reduce -r 8
check collective-graph-negative 2 '-G must be in 0..1000000' -- collective --topo dgx-h100 -G -1
# -G 1: the calls run from a CUDA graph: each is faster by exactly its host launch (2.5 us + 0.1 us
# per channel: 1 channel at 8 B, 16 at 16 MiB on a DGX H100), and validate reads "graph: 1" back
gr=$(mktemp)
"$C" collective --topo dgx-h100 -b 8 -e 16M -f 2097152 > "$gr"
"$C" collective --topo dgx-h100 -b 8 -e 16M -f 2097152 -G 1 >> "$gr"
if awk '!/^#/ && NF > 10 { t[n++] = $6 } END { exit !(n == 4 && t[0] - t[2] > 2.59 && t[0] - t[2] < 2.61 && t[1] - t[3] > 4.09 && t[1] - t[3] < 4.11) }' "$gr"; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL collective-graph-no-host-launch: $(grep -v '^#' "$gr" | awk '{print $1, $6}' | tr '\n' ' ')" >&2; fi
"$C" collective --topo dgx-h100 -b 1M -e 1M -G 1 > "$gr"
check validate-graph 0 'max_abs_err=0\.0[01]%' -- validate --topo dgx-h100 "$gr"
rm -f "$gr"
check collective-agg-alltoall-not-modelled 2 '-m other than 1 is not modelled for alltoall' -- collective --topo dgx-h100 --op alltoall -m 4
# -m 4: one group of four, run as NCCL's planner aggregates it (one collective of 4 x S, a quarter each)
t4=$("$C" collective --topo dgx-h100 -b 1M -e 1M -m 4 | awk '!/^#/ && NF > 10 { print $6 }')
t1=$("$C" collective --topo dgx-h100 -b 4M -e 4M | awk '!/^#/ && NF > 10 { print $6 }')
if awk -v a="$t4" -v b="$t1" 'BEGIN { d = 4 * a - b; exit !(b > 0 && (d < 0 ? -d : d) <= 0.01 * 4 + 0.001 * b) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL collective-agg-quarter: -m 4 at 1M $t4 us, 4M alone $t1 us" >&2; fi
m4=$(mktemp)
"$C" collective --topo dgx-h100 -b 1M -e 1M -m 4 > "$m4"
check validate-agg-iters 0 'max_abs_err=0\.0[01]%' -- validate --topo dgx-h100 "$m4"
# its NCCL log (one opCount per group of four, across servers) replays in the sweep's time
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL "$C" collective --topo dgx-h100 --nodes 2 -b 64K -e 16M -f 16 -m 4 -n 2 -w 0 -c 0 > "$m4" 2>&1
want=$(awk '!/^#/ && NF > 10 && $1 ~ /^[0-9]+$/ { s += 2 * 4 * ($6 + $10) } END { printf "%.3f", s }' "$m4")
replay_near nccllog-agg-groups "$want" 0.001 '576 of them of its function, type and root' -- --topo dgx-h100 --nodes 2 "$m4"
rm -f "$m4"
check collective-bad-blocking 2 '-z 0 or 1' -- collective --topo dgx-h100 -z 2
# a mesh: NCCL's NVLink rings, not rank order (which went through host memory on the DGX-1)
check topo-show-mesh-rings 0 '^rings \(NVLink mesh, NCCL.s search\): 6 at 20\.0 GB/s each' -- topo show dgx1-v100
check collective-dgx1-nvlink-rings 0 'explain: +1073741824 +Ring +Simple +12 +n0\.gpu[0-9]->n0\.gpu[0-9] ' -- collective --topo dgx1-v100 -b 1G -e 1G --explain
# -d all / -o all: one table over nccl-tests' types and reductions (fp8 only from sm 9.0; NVLS only where the switch reduces)
check collective-all-types 0 '^ +1048576 +524288 +bfloat16 +sum ' -- collective --topo dgx-a100 -b 1M -e 1M -d all
check collective-all-types-fp8-on-h100 0 '^ +1048576 +1048576 +f8e4m3 +sum ' -- collective --topo dgx-h100 -b 1M -e 1M -d all
check collective-all-ops-nvls 0 'explain: +2097152 +NVLS ' -- collective --topo dgx-h100 -b 2M -e 2M -d int32 -o all --explain
check collective-all-ops-ring 0 'explain: +2097152 +Ring ' -- collective --topo dgx-h100 -b 2M -e 2M -d int32 -o all --explain
check collective-max-nvls 0 'explain: +2097152 +NVLS ' -- collective --topo dgx-h100 -b 2M -e 2M -d int32 -o max --explain
check collective-all-ops-allgather-none 0 '^ +1048576 +65536 +half +none ' -- collective --topo dgx-a100 --op all_gather -b 1M -e 1M -o all -d half
check collective-every-root 0 '^ +67108864 +16777216 +float +none +7 ' -- collective --topo dgx1-v100 --op broadcast -r -1 -b 64M -e 64M
check collective-threads-gpus-divide 2 '-t 3 x -g 4 does not divide the system.s 8 ranks' -- collective --topo dgx-h100 -t 3 -g 4 -b 1M -e 1M
check collective-too-many-rows 2 'rows; at most 65536' -- collective --topo dgx-h100 -N 1024 --op reduce -d all -o all -r -1 -b 1 -e 4096 -i 1
check validate-topo-short-t 0 'summary: points=25' -- validate -t dgx-a100 tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt
# validate reads a -d all / -o all / -r -1 table sweep by sweep (round trip: our own output)
check validate-all-types-round-trip 0 '^summary: points=40 median_abs_err=0\.0[01]%' -- validate --topo dgx-a100 tests/data/nccltests/conveyor-dgx-a100-all-types.txt
check validate-all-types-sweep-names 0 '^# sweep 10: bfloat16 sum, root -1 \(table rows 37-40\)' -- validate --topo dgx-a100 tests/data/nccltests/conveyor-dgx-a100-all-types.txt
check validate-all-types-plot-refused 2 'draws one sweep' -- validate --topo dgx-a100 --plot /tmp/conveyor-val-all.svg tests/data/nccltests/conveyor-dgx-a100-all-types.txt
# the wider types' sweeps start below the first one's (sizes round down to whole elements): still new sweeps
check validate-all-types-small-sizes 0 '^summary: points=' -- validate --topo dgx-a100 tests/data/nccltests/conveyor-dgx-a100-all-types-small.txt
check collective-all-plot-refused 2 'take one type, one reduction and one root' -- collective --topo dgx-a100 -d all --plot /tmp/conveyor-all.svg
# the setup slice says how it adds up: 8 GPUs x (2.5 + 16 NVLS channels x 0.1) us, NVLS base latency 0
check collective-timeline-setup-detail 0 'host launch 8 GPUs x \(2\.50 us \+ 16 channels x 0\.10 us\) = 32\.80 us, then NCCL.s NVLS/Simple base latency 0\.00 us' -- collective --topo dgx-h100 -g 8 -b 64M -e 64M --timeline /dev/stdout
check collective-timeline-bad-path 2 '/nonexistent/t\.json: cannot write' -- collective --topo dgx-h100 -b 1M -e 1M --timeline /nonexistent/t.json
check collective-csv-band 0 'busbw_lo_GBps,busbw_hi_GBps' -- collective --topo dgx-h100 -b 1M -e 1M --format csv
check scale-uneven-dp-groups 0 'dgx-h100 +H100-SXM +72 +1 +2 +36' -- scale --model llama3-8b --systems dgx-h100:72 --tp 1 --pp 2 --sp --zero 1 --global-batch 576 --seq 256
check scale-auto 0 'fastest of [0-9]+ layouts that fit' -- scale --model llama2-7b --systems dgx-h100:16 --seq 256 --auto
# without a layout that fits, --auto says so (not "fastest of 0") and names what would lower the estimate
check scale-auto-none-fits 0 '^# dgx-h100 8 GPUs: no layout fits 90% of 80 GiB \(--auto\): the layout rule.s, 1[0-9][0-9]\.[0-9] GiB a GPU, simulated and flagged \(--zero 1, --sp, --recompute would lower the estimate\)$' -- scale --model llama3-70b --systems dgx-h100:8 --seq 256 --global-batch 8 --auto
# the mem_GiB column is the estimate `workload` prints for the same layout (text, CSV and JSON agree)
wm=$("$C" workload --model llama2-7b --gpus 16 --tp 2 --pp 2 --seq 256 --global-batch 16 -o /dev/null 2>&1 | sed -n 's/.*busiest GPU \([0-9.]*\) GiB of 80$/\1/p')
sm=$("$C" scale --model llama2-7b --systems dgx-h100:16 --tp 2 --pp 2 --seq 256 --global-batch 16 | awk '$1 == "dgx-h100" { print $8 }')
sc=$("$C" scale --model llama2-7b --systems dgx-h100:16 --tp 2 --pp 2 --seq 256 --global-batch 16 --format csv | awk -F, 'NR == 1 { ok = $27 == "memory_gib" && $28 == "hbm_gib" } NR == 2 && ok { printf "%.1f %s", $27, $28 }')
sj=$("$C" scale --model llama2-7b --systems dgx-h100:16 --tp 2 --pp 2 --seq 256 --global-batch 16 --format json | sed -n 's/.*"memory_gib": \([0-9.]*\), "hbm_gib": \([0-9.]*\).*/\1 \2/p' | awk '{ printf "%.1f %s", $1, $2 }')
if [ -n "$wm" ] && [ "$sm" = "$wm" ] && [ "$sc" = "$wm 80.00" ] && [ "$sj" = "$wm 80.00" ]; then pass=$((pass + 1))
else fail=$((fail + 1)); echo "FAIL scale-memory-column: workload '$wm', text '$sm', csv '$sc', json '$sj'" >&2; fi
# a ZeRO-3 row takes the ZeRO-3 rows' error band (topologies/accuracy/training.json), not the Megatron rows'
check scale-zero3-band 0 'step_ms 80% of a ZeRO-3/FSDP row: where it fell for 80% of [0-9]+ DeepSpeed ZeRO-3 rows' -- scale --model llama2-7b --systems dgx-h100:8 --seq 256 --zero 3
z3=$("$C" scale --model llama2-7b --systems dgx-h100:8 --seq 256 --zero 3 --format csv | tail -1)
dd=$("$C" scale --model llama2-7b --systems dgx-h100:8 --seq 256 --zero 1 --format csv | tail -1)
# (the band printed is lo-hi: p10-p90 widened by leave-one-row-out, scripts/bands.awk; errbar_review.sh)
zb=$(sed -n 's/.*"training-zero3", "n": [0-9]*, "p10": [-0-9.]*, "p50": [-0-9.]*, "p90": [-0-9.]*, "lo": \([-0-9.]*\), "hi": \([-0-9.]*\).*/\1 \2/p' topologies/accuracy/training.json)
db=$(sed -n 's/.*"training", "n": [0-9]*, "p10": [-0-9.]*, "p50": [-0-9.]*, "p90": [-0-9.]*, "lo": \([-0-9.]*\), "hi": \([-0-9.]*\).*/\1 \2/p' topologies/accuracy/training.json)
if echo "$z3 $zb;$dd $db" | awk -F';' '{ for (i = 1; i <= 2; i++) { split($i, f, / /); split(f[1], c, /,/)
        if (!(c[17] > 0 && (c[17] / c[9] - 1 - f[2]) ^ 2 < 1e-6 && (c[18] / c[9] - 1 - f[3]) ^ 2 < 1e-6)) exit 1 } }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL scale-zero3-band-csv: $z3 ($zb) / $dd ($db)" >&2; fi
check scale-pp-not-dividing 2 'dgx-h100 with 72 GPUs: no layout with tp 4 pp 8' -- scale --model llama3-8b --systems dgx-h100:72 --tp 4 --pp 8 --seq 256
check scale-interleaved-too-deep 2 "no layout with tp 8 pp 16 .*under interleaved:V, pp at least 2 and at most layers / V" -- scale --model llama3-405b --systems dgx-h100:8192 --tp 8 --pp 16 --max-gpus 8192 --schedule interleaved:8
# Llama 3 405B's layout: 126 layers on pp 16 x 2 chunks, the first and the last chunk one layer short
check workload-uneven-chunks 0 "uneven chunks of 3,4 \| 4,4 \| .* \| 4,3 layers" -- workload --model llama3-405b --topo dgx-h100 --tp 8 --pp 16 --dp 1 --schedule interleaved:2 --seq 128 --global-batch 16 -o /dev/null
check scale-system-colon-fabric 0 'dgx-h100@ib-hdr +H100-SXM +16 ' -- scale --model llama2-7b --systems dgx-h100:ib-hdr:16 --seq 256
check scale-system-two-fabrics 2 "two fabrics" -- scale --model llama2-7b --systems dgx-h100@ib-ndr:ib-hdr --seq 256
# a 400G NIC on an HDR fabric runs at the port's 200 (test_topo: nic_links_at_port_rate), and topo show says so
check topo-show-nic-port-rate 0 "8 NIC\(s\) x 200 Gb/s per server \(400 Gb/s NICs at the ib-hdr ports' rate\)" -- topo show dgx-h100 --nodes 2 --fabric ib-hdr
check scale-system-empty-after-colon 2 "nothing after ':'" -- scale --model llama2-7b --systems dgx-h100: --seq 256
check scale-band 0 'step_ms 80%: where the published step fell' -- scale --model llama2-7b --systems dgx-h100:8 --seq 256
# exposed communication by fabric: the net% column's footer names the fabrics; a 16-GPU DGX H100
# step waits on InfiniBand for part of it, one NVL72 rack never does
check scale-net-footer 0 '^# net%: the part of exposed% .*\(dgx-h100 NVLink \+ ib-ndr\)' -- scale --model llama2-7b --systems dgx-h100:8/16 --seq 256
check scale-net-json-ib 0 '"exposed_net_frac": 0\.[0-9]*[1-9][0-9]*, "server_fabric": "NVLink", "net_fabric": "ib-ndr"' -- scale --model llama2-7b --systems dgx-h100:16 --seq 256 --format json
# two NVL72 racks: the rack is one NVLink domain, the network joins the two
check scale-net-two-racks 0 '^# net%: .*\(gb200-nvl72 NVLink \+ ib-ndr\)' -- scale --model llama3-8b --systems gb200-nvl72:72/144 --seq 512
check scale-net-json-nvl72 0 '"exposed_net_frac": 0\.0000, "server_fabric": "NVLink", "net_fabric": ""' -- scale --model llama2-7b --systems gb200-nvl72:16 --seq 256 --format json
check scale-breakdown 0 '^#   dgx-h100 16: exposed [0-9.]+%: dp_grad [0-9.]+% \([0-9.]+%\), tp_ar [0-9.]+% \([0-9.]+%\); idle 0\.0%$' -- scale --model llama2-7b --systems dgx-h100:8/16 --seq 256 --breakdown
check scale-breakdown-compute 0 '^#   dgx-h100 16: compute [0-9.]+%: optimizer_adam [0-9.]+%, mlp_bwd [0-9.]+%, .*, 3 more$' -- scale --model llama2-7b --systems dgx-h100:8/16 --seq 256 --breakdown
# with a pipeline, the bubbles are idle time
check scale-breakdown-idle 0 '^#   dgx-h100 16: exposed .*; idle [1-9][0-9]*\.[0-9]%$' -- scale --model llama2-7b --systems dgx-h100:16 --tp 4 --pp 4 --seq 256 --breakdown
check scale-breakdown-json-compute 0 '"compute_frac": 0\.[0-9]+, "idle_frac": 0\.[0-9]+, "compute_by_name": \[\{"name": "optimizer_adam", "frac": 0\.[0-9]+\}' -- scale --model llama2-7b --systems dgx-h100:16 --seq 256 --breakdown --format json
check replay-compute-by-name 0 '^  fwd +0\.500 +41\.7%$' -- replay --topo dgx-h100 --gpus 2 docs/examples/two-rank-overlap.json
check scale-breakdown-json 0 '"exposed_by_name": \[\{"name": "dp_grad", "frac": 0\.[0-9]+, "net_frac": 0\.[0-9]+\}' -- scale --model llama2-7b --systems dgx-h100:16 --seq 256 --breakdown --format json
# one point's step as a Perfetto trace, with each GPU's exposed-communication track
check scale-timeline 0 '"cat":"exposed","name":"exposed: network","pid":[0-9]+,"tid":9999' -- scale --model gpt-1.7b --systems dgx-h100:16 --seq 128 --timeline /dev/stdout
check scale-timeline-two-points 2 '--timeline writes one point.s step; 2 points given' -- scale --model gpt-1.7b --systems dgx-h100:8/16 --seq 128 --timeline /tmp/conveyor-never.json
check scale-timeline-auto 2 '--timeline writes one layout.s step; --auto tries several' -- scale --model gpt-1.7b --systems dgx-h100:16 --seq 128 --auto --timeline /tmp/conveyor-never.json
check scale-timeline-bad-path 2 '/nonexistent/t\.json' -- scale --model gpt-1.7b --systems dgx-h100:8 --seq 128 --timeline /nonexistent/t.json
check scale-breakdown-csv 2 '--breakdown is for --format text or json' -- scale --model llama2-7b --systems dgx-h100:16 --seq 256 --breakdown --format csv
# NCCL debug logs (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL): one combined log or a directory of per-process logs
check replay-nccllog 0 'NCCL log: 1 file\(s\), 175 NCCL INFO lines, 8 ranks, 7 communicators, 72 calls replayed \(the log' -- replay --topo dgx-h100 --nodes 2 --gpus 4 tests/data/traces/nccl-log/job-8rank.log
# NCCL_DEBUG_TIMESTAMP_LEVELS=INFO puts NCCL_DEBUG_TIMESTAMP_FORMAT's "[%F %T] " before each line: read the same
ts=$(mktemp)
sed 's/^node/[2026-05-05 06:16:47] node/' tests/data/traces/nccl-log/job-8rank.log > "$ts"
check replay-nccllog-timestamps 0 '8 ranks, 7 communicators, 72 calls replayed' -- replay --topo dgx-h100 --nodes 2 --gpus 4 "$ts"
rm -f "$ts"
check replay-nccllog-dir 0 'NCCL log: 8 file\(s\), 175 NCCL INFO lines, 8 ranks' -- replay --topo dgx-h100 --nodes 2 --gpus 4 tests/data/traces/nccl-log/per-rank
check replay-nccllog-ops 0 'AllReduce +[0-9.]+ +[0-9.]+%' -- replay --topo dgx-h100 --nodes 2 --gpus 4 tests/data/traces/nccl-log/job-8rank.log
check replay-nccllog-too-few-gpus 2 '8 ranks' -- replay --topo dgx-h100 --gpus 4 tests/data/traces/nccl-log/job-8rank.log
same_output replay-nccllog-deterministic -- replay --topo dgx-h100 --nodes 2 --gpus 4 tests/data/traces/nccl-log/job-8rank.log --format json
# NCCL_DEBUG_SUBSYS=INIT,COLL on a simulated sweep prints every call nccl-tests makes (warm-up 1 at the largest and
# the smallest size, 2 out-of-place and 2 in-place per size); replayed, that log takes 5 times each size's time
rt=$(mktemp)
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL "$C" collective --topo dgx-h100 --nodes 2 -b 1M -e 4M -f 4 -n 2 -w 1 -c 0 > "$rt" 2>&1
want=$(awk '!/^#/ && !/NCCL INFO/ && NF > 10 { s += ($1 == 1048576 || $1 == 4194304 ? 5 : 4) * $6 } END { printf "%.3f", s }' "$rt")
calls=$(grep -c 'NCCL INFO AllReduce: opCount' "$rt")
[ "$calls" = 160 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL nccllog-roundtrip-calls: $calls calls" >&2; }
replay_near nccllog-roundtrip "$want" 0.001 "" -- --topo dgx-h100 --nodes 2 "$rt"
rm -f "$rt"
# an alltoall sweep logs each call as a group of one send to and one receive from every rank: the replay runs
# each group as the all_to_all it is, in the sweep's time (5 calls per size as above)
rt=$(mktemp)
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL "$C" collective --topo dgx-h100 --nodes 2 --op alltoall -b 64K -e 1M -f 16 -n 2 -w 1 -c 0 > "$rt" 2>&1
want=$(awk '!/^#/ && !/NCCL INFO/ && NF > 10 { s += 5 * $6 } END { printf "%.3f", s }' "$rt")
replay_near nccllog-alltoall-roundtrip "$want" 0.001 '; 10 groups of sends/receives to every rank replayed as all_to_all' \
    -- --topo dgx-h100 --nodes 2 "$rt"
rm -f "$rt"
# a sendrecv sweep's Send/Recv pairs replay as the sweep runs them, LL's flags on the wire included (1-16 KiB)
rt=$(mktemp)
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL "$C" collective --topo dgx-h100 --nodes 2 --op sendrecv -b 1K -e 256K -f 4 -n 1 -w 0 -c 0 > "$rt" 2>&1
want=$(awk '!/^#/ && !/NCCL INFO/ && NF > 10 { s += 2 * $6 } END { printf "%.3f", s }' "$rt")
replay_near nccllog-sendrecv-roundtrip "$want" 0.001 "" -- --topo dgx-h100 --nodes 2 "$rt"
rm -f "$rt"
# gather and scatter (nccl-tests' gather_perf/scatter_perf; NCCL 2.28's Gather/Scatter lines, which NCCL and the
# importer turn into sends and receives): the replay of a sweep's log takes the sweep's time, the root's blocks
# queueing on its links as in the sweep (1 KiB-64 MiB: LL and Simple)
for op in gather scatter; do
    rt=$(mktemp)
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL "$C" collective --topo dgx-h100 --nodes 2 --op $op -b 1K -e 64M -f 16 -n 1 -w 0 -c 0 > "$rt" 2>&1
    want=$(awk '!/^#/ && !/NCCL INFO/ && NF > 10 { s += 2 * $6 } END { printf "%.3f", s }' "$rt")
    got=$("$C" replay --topo dgx-h100 --nodes 2 "$rt" --format json 2>/dev/null | sed -n 's/^{"step_time_s": \([0-9.e-]*\),.*/\1/p')
    gx=$("$C" replay --exact --topo dgx-h100 --nodes 2 "$rt" --format json 2>/dev/null | sed -n 's/^{"step_time_s": \([0-9.e-]*\),.*/\1/p')
    if grep -q "Collective test concluded: ${op}_perf" "$rt" && grep -qE "NCCL INFO (Gather|Scatter): opCount 0 " "$rt" &&
        awk -v g="$got" -v w="$want" 'BEGIN { d = g * 1e6 - w; exit !(w > 0 && (d < 0 ? -d : d) < 0.001 * w) }' &&
        awk -v g="$gx" -v w="$want" 'BEGIN { d = g * 1e6 - w; exit !(w > 0 && (d < 0 ? -d : d) < 0.001 * w) }'; then
        pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL nccllog-$op-roundtrip: replay $got s, sweep $want us" >&2; fi
    rm -f "$rt"
done
# with INIT, NCCL's rings and trees for all ranks against the system's: on the system that wrote them, all the same;
# a ring edited, named with its line
rt=$(mktemp)
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL "$C" collective --topo dgx-h100 --nodes 2 -b 1M -e 1M -n 1 -w 0 -c 0 > "$rt" 2>&1
check replay-nccllog-rings 0 '^# rings: the log has 24 ring channels of 24 .*: 24 of the 24 compared in the same order$' -- replay --topo dgx-h100 --nodes 2 "$rt"
check replay-nccllog-trees 0 '^# trees: the log.s Trees lines give 384 \(rank, channel\) pairs; 384 of the 384 on this system.s ranks and 24 channels the same$' -- replay --topo dgx-h100 --nodes 2 "$rt"
sed 's/Channel 00\/24 :   0   7   6/Channel 00\/24 :   0   6   7/' "$rt" > "$rt.b"
check replay-nccllog-rings-differ 0 '^# rings: channel 0 \(line [0-9]+\): NCCL 0 6 7 5 .*, conveyor 0 7 6 5 ' -- replay --topo dgx-h100 --nodes 2 "$rt.b"
rm -f "$rt" "$rt.b"
# an all-to-all whose sizes differ on one pair (an all-to-all-v) stays grouped sends and receives; started in NCCL's
# p2p order (round i: rank + i) they take what the alltoall takes chunk by chunk (collective --exact), 32 ranks, 4 MiB
rt=$(mktemp)
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL "$C" collective --topo dgx-h100 --nodes 4 --op alltoall -b 4M -e 4M -n 1 -w 0 -c 0 > "$rt" 2>&1
sed -E '/^node0:10000:10000 \[0\] NCCL INFO Send: opCount 0 .* root 1 comm/ s/count 32768 /count 32767 /; /^node0:10001:10001 \[1\] NCCL INFO Recv: opCount 0 .* root 0 comm/ s/count 32768 /count 32767 /' "$rt" > "$rt.v"
want=$("$C" collective --topo dgx-h100 --nodes 4 --op alltoall -b 4M -e 4M --exact 2>/dev/null | awk '!/^#/ && NF > 10 { printf "%.3f", 2 * $6 }')
got=$("$C" replay --topo dgx-h100 --nodes 4 "$rt.v" --format json 2>"$rt.err" | sed -n 's/^{"step_time_s": \([0-9.e-]*\),.*/\1/p')
if ! grep -q 'replayed as all_to_all' "$rt.err" && [ "$(diff "$rt" "$rt.v" | grep -c '^>')" = 2 ] &&
    awk -v g="$got" -v w="$want" 'BEGIN { d = g * 1e6 - w; exit !(w > 0 && (d < 0 ? -d : d) < 0.02 * w) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL nccllog-alltoallv-sends: replay $got s, collective --exact $want us" >&2; fi
rm -f "$rt" "$rt.v" "$rt.err"
# on one node NCCL 2.27+ prints opCount 0 for every call (no proxy work, no increment), as `collective` writes
# it there: each iteration's group of sends/receives still replays as one all-to-all, in the sweep's time
rt=$(mktemp)
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL "$C" collective --topo dgx-h100 --op alltoall -b 64K -e 64M -f 8 -n 2 -w 0 -c 0 > "$rt" 2>&1
want=$(awk '!/^#/ && NF > 10 && $1 ~ /^[0-9]+$/ { s += 2 * ($6 + $10) } END { printf "%.3f", s }' "$rt")
[ "$(grep -c 'opCount 0 ' "$rt")" -gt 0 ] && [ "$(grep -c 'opCount [1-9]' "$rt")" = 0 ] && pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAIL nccllog-one-node-opcount-0-written: an opCount other than 0" >&2; }
replay_near nccllog-one-node-opcount-0 "$want" 0.001 '16 groups of sends/receives to every rank replayed as all_to_all' \
    -- --topo dgx-h100 "$rt"
rm -f "$rt"
# with TUNING too, the replay sets NCCL's choices in the log against its own tuner's (here its own, so all agree)
rt=$(mktemp)
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING "$C" collective --topo dgx-h100 -b 8 -e 1G -f 8 -n 1 -w 0 -c 0 > "$rt" 2>&1
check replay-nccllog-tuner 0 '# tuner: shapes=10 algo_proto_match=10 channels_match=10' -- replay --topo dgx-h100 "$rt"
sed 's/Bytes -> Algo NVLS proto SIMPLE/Bytes -> Algo RING proto SIMPLE/' "$rt" > "$rt.b"
check replay-nccllog-tuner-differs 0 'NVLS/Simple/16  \(differs\)' -- replay --topo dgx-h100 "$rt.b"
rm -f "$rt" "$rt.b"
# across servers the replay's groups take NVLSTree where NCCL (and `collective`) would
rt=$(mktemp)
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING "$C" collective --topo dgx-h100 --nodes 2 -b 8 -e 1G -f 8 -n 1 -w 0 -c 0 > "$rt" 2>&1
check replay-nccllog-tuner-nvlstree 0 'NVLS_TREE/SIMPLE/16 +NVLSTree/Simple/16$' -- replay --topo dgx-h100 --nodes 2 "$rt"
check replay-nccllog-tuner-2-nodes 0 '# tuner: shapes=10 algo_proto_match=10 channels_match=10' -- replay --topo dgx-h100 --nodes 2 "$rt"
rm -f "$rt"
# PyTorch Flight Recorder dumps: the ranks' windows lined up, communication replayed, the recorded durations compared
check replay-flightrec 0 'flight recorder: 4 files, 32 entries: 22 collectives and 4 sends/receives replayed \(communication only: a dump records no compute\); 2 not in every member.s window; 4 of kinds not replayed \(e\.g\. nccl:coalesced\)' -- replay --topo dgx-h100 --gpus 4 tests/data/traces/flightrec
check replay-flightrec-durations 0 'against the [0-9]+ traced kernel durations: median \|error\|' -- replay --topo dgx-h100 --gpus 4 tests/data/traces/flightrec
# per shape: the sample's nine 32 MiB all_reduces over 2 ranks (tp 4 + 3 per group after the windows are lined up, dp 1 + 1), traced median 0.25 ms
check replay-traced-shapes 0 '^  all_reduce +33554432 +2 +1 +9 +250\.0 +[0-9.]+ +[-+][0-9.]+%$' -- replay --topo dgx-h100 --gpus 4 tests/data/traces/flightrec
check replay-flightrec-one-rank 0 '^step time: [0-9.]+ ms' -- replay --topo dgx-h100 --gpus 4 --ranks 4 tests/data/traces/flightrec/nccl_trace_rank_1
check replay-net-column 0 'exposed_ms exposed_net_ms +idle_ms' -- replay --topo dgx-h100 --gpus 2 docs/examples/two-rank-overlap.json
check replay-exposed-by-name 0 '^  ar2 +0\.199 +100\.0% +0\.000$' -- replay --topo dgx-h100 --gpus 2 docs/examples/two-rank-overlap.json
check replay-exposed-by-name-json 0 '^  \{"name": "ar2", "exposed_s_per_rank": 0\.000198' -- replay --topo dgx-h100 --gpus 2 docs/examples/two-rank-overlap.json --format json
# NCCL's channel knobs from the environment (docs/collectives.md, "Channel knobs")
export NCCL_MAX_NCHANNELS=2
check collective-max-nchannels 0 'explain: +1073741824 +Ring +Simple +2 ' -- collective --topo dgx-a100 -b 1G -e 1G --explain
unset NCCL_MAX_NCHANNELS
export NCCL_NVLS_ENABLE=0
check collective-nvls-disabled 0 'explain: +1073741824 +Ring ' -- collective --topo dgx-h100 -b 1G -e 1G --explain
unset NCCL_NVLS_ENABLE
export NCCL_MAX_CTAS=abc
check collective-bad-max-ctas 2 "environment NCCL_MAX_CTAS='abc'" -- collective --topo dgx-h100 -b 1M -e 1M
check scale-bad-max-ctas 2 "environment NCCL_MAX_CTAS='abc'" -- scale --model llama3-8b --systems dgx-h100:8 --seq 256
unset NCCL_MAX_CTAS
export NCCL_P2P_LEVEL=bogus
check collective-bad-p2p-level 2 "environment NCCL_P2P_LEVEL='bogus'" -- collective --topo dgx-h100 -b 1M -e 1M
unset NCCL_P2P_LEVEL
export NCCL_P2P_DISABLE=1
check collective-p2p-disable-shm 0 'explain: .*Ring .*n0\.cpu0->n0\.cpu1 .*pcie' -- collective --topo dgx-h100 -b 1G -e 1G --algo ring --explain
check collective-p2p-disable-nvls-kept 0 'explain: .*NVLS .*nvlink' -- collective --topo dgx-h100 -b 1G -e 1G --explain
check collective-p2p-disable-mnnvl 2 'below NVL on an NVLink domain across servers \(gb200-nvl72, 2 nodes\) is not modelled' -- collective --topo gb200-nvl72 --nodes 2 -b 1M -e 1M
check topo-show-p2p-disable 0 'staged +28 pairs' -- topo show dgx-h100
check p2p-ignores-nccl-p2p-disable 0 'P2P \(Peer-to-Peer\) GPU Bandwidth Latency Test' -- p2p --topo gb200-nvl72 --nodes 2
unset NCCL_P2P_DISABLE
export NCCL_P2P_LEVEL=nvl
check collective-p2p-level-lowercase 2 "NCCL_P2P_LEVEL='nvl': not a level NCCL knows \(NCCL would ignore it\)" -- collective --topo dgx-h100 -b 1M -e 1M
unset NCCL_P2P_LEVEL
export NCCL_P2P_DISABLE=true
check collective-p2p-disable-true-is-not-1 0 '368\.35 ' -- collective --topo dgx-h100 -b 1G -e 1G --algo ring
unset NCCL_P2P_DISABLE
# NCCL_DEBUG=INFO: NCCL's ENV and TUNING lines in NCCL's format, skipped by validate
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ENV,TUNING NCCL_MAX_NCHANNELS=16
check collective-nccl-debug-tuning 0 'node0:10000:10000 \[0\] NCCL INFO AllReduce: 1073741824 Bytes -> Algo NVLS proto SIMPLE channel\{Lo\.\.Hi\}=\{0\.\.15\}' -- collective --topo dgx-h100 -b 1G -e 1G
check collective-nccl-debug-env 0 'NCCL INFO NCCL_MAX_NCHANNELS set by environment to 16\.' -- collective --topo dgx-h100 -b 1G -e 1G
# tuning.cc's table: 21 algorithm/protocol columns; AllReduce's NVLS/Simple cell carries NCCL's 25 us hwLat
check collective-nccl-debug-table 0 'NCCL INFO Latency/AlgBw \|    Tree/    LL \|(.*\|){19}     PAT/Simple \|$' -- collective --topo dgx-h100 -b 1G -e 1G
check collective-nccl-debug-table-nvls 0 'NCCL INFO     AllReduce \|( +[0-9.]+/ *[0-9.]+ \|){14}    25\.0/ *[1-9][0-9.]* \|' -- collective --topo dgx-h100 -b 1G -e 1G
# NCCL_ALGO=ring: NCCL zeroes the other algorithms' bandwidth in its table and keeps their latency
export NCCL_ALGO=ring
check collective-nccl-debug-table-masked 0 'NCCL INFO     AllReduce \|( +[0-9.]+/ *[0-9.]+ \|){14}    25\.0/   0\.0 \|' -- collective --topo dgx-h100 -b 1G -e 1G
unset NCCL_ALGO
unset NCCL_MAX_NCHANNELS
rt=$(mktemp); "$C" collective --topo dgx-a100 -b 1K -e 256M -f 4 > "$rt"
unset NCCL_DEBUG NCCL_DEBUG_SUBSYS
check validate-skips-nccl-info 0 'median_abs_err=0.00%.*sizes >= 1MiB: median 0.00% p90 0.00%' -- validate --topo dgx-a100 "$rt"
rm -f "$rt"
# NCCL_DEBUG=INFO with NCCL's default subsystems (INIT,BOOTSTRAP,ENV): what NCCL's init logs, from the
# rings, trees and transports the simulation runs (one process per rank with -g 1, per server with -g 8)
export NCCL_DEBUG=INFO
check collective-nccl-init-comm 0 '^node1:10008:10008 \[0\] NCCL INFO comm 0x[0-9a-f]+ rank 8 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0$' -- collective --topo dgx-h100 --nodes 2 -b 1M -e 1M
check collective-nccl-init-ring 0 '^node0:10000:10000 \[0\] NCCL INFO Channel 23/24 :(  +[0-9]+){16}$' -- collective --topo dgx-h100 --nodes 2 -b 1M -e 1M
check collective-nccl-init-net-send 0 'NCCL INFO Channel 00/0 : [0-7]\[[0-7]\] -> 8\[0\] \[send\] via NET/IB/0/GDRDMA$' -- collective --topo dgx-h100 --nodes 2 -b 1M -e 1M
check collective-nccl-init-net-receive 0 '^node1:10008:10008 \[0\] NCCL INFO Channel 00/0 : [0-7]\[[0-7]\] -> 8\[0\] \[receive\] via NET/IB/0/GDRDMA$' -- collective --topo dgx-h100 --nodes 2 -b 1M -e 1M
check collective-nccl-init-trees 0 '^node1:10008:10008 \[0\] NCCL INFO Trees \[0\] 9/-1/-1->8->0 ' -- collective --topo dgx-h100 --nodes 2 -b 1M -e 1M
check collective-nccl-init-complete 0 'NCCL INFO ncclCommInitRank comm 0x[0-9a-f]+ rank 15 nranks 16 cudaDev 7 nvmlDev 7 busId 88000 commId 0x[0-9a-f]+ - Init COMPLETE$' -- collective --topo dgx-h100 --nodes 2 -b 1M -e 1M
check collective-nccl-init-p2p-read 0 'NCCL INFO Channel 00/0 : 0\[0\] -> 1\[1\] via P2P/CUMEM/read$' -- collective --topo dgx-a100 -b 1M -e 1M
check collective-nccl-init-p2p-direct 0 'NCCL INFO Channel 00/0 : 0\[0\] -> 1\[1\] via P2P/direct pointer$' -- collective --topo dgx-h100 -g 8 -b 1M -e 1M
check collective-nccl-init-shm 0 'NCCL INFO Channel 00 : 0\[0\] -> 1\[1\] via SHM/direct/direct$' -- collective --topo pcie-gen3-2gpu -b 1M -e 1M
check collective-nccl-init-mnnvl 0 'NCCL INFO Channel 00/0 : 3\[3\] -> 4\[0\] via P2P/MNNVL$' -- collective --topo gb200-nvl72 --nodes 2 -b 1M -e 1M
check collective-nccl-init-efa 0 '\[send\] via NET/Libfabric/[0-9]+/GDRDMA$' -- collective --topo aws-p5 --nodes 2 -b 1M -e 1M
# a real NCCL log (NVIDIA/nccl issue #676: two DGX A100 servers, one GPU each): NCCL printed these trees
check collective-nccl-init-trees-real-log-rank0 0 '^node0:10000:10000 \[0\] NCCL INFO Trees \[0\] 1/-1/-1->0->-1 \[1\] -1/-1/-1->0->1$' -- collective --topo dgx-a100 --gpus 1 --nodes 2 -b 1M -e 1M
check collective-nccl-init-trees-real-log-rank1 0 '^node1:10001:10001 \[0\] NCCL INFO Trees \[0\] -1/-1/-1->1->0 \[1\] 0/-1/-1->1->-1$' -- collective --topo dgx-a100 --gpus 1 --nodes 2 -b 1M -e 1M
# routes through private servers (endpoint limits): their hops have no nodes (ASan heap-buffer-overflow in coll_conn_of)
check collective-nccl-init-endpoint-limits 0 'NCCL INFO ncclCommInitRank comm 0x[0-9a-f]+ rank 1 nranks 2 .* - Init COMPLETE$' -- collective --topo tests/data/topo/endpoint-limits.json -b 1M -e 1M
same_output collective-nccl-init-deterministic -- collective --topo dgx-h100 --nodes 2 -b 1M -e 1M
# validate reads rank 0's ring lines back and compares them with the rings it simulates: the same on a
# round trip; one line with two ranks swapped differs
rt=$(mktemp); "$C" collective --topo dgx-h100 --nodes 2 -b 1M -e 16M -f 4 > "$rt"
unset NCCL_DEBUG
check validate-rings-round-trip 0 '^# rings: the log has 24 ring channels of 24 .*: 24 of the 24 compared in the same order$' -- validate --topo dgx-h100 --nodes 2 "$rt"
check validate-rings-round-trip-rows 0 'summary: points=3 median_abs_err=0\.00%' -- validate --topo dgx-h100 --nodes 2 "$rt"
sed -i 's/\(Channel 05\/24 : *0 *\)\([0-9]*\)\( *\)\([0-9]*\)/\1\4\3\2/' "$rt"
check validate-rings-differ 0 '^# rings: channel 5 \(line [0-9]+\): NCCL 0 ([0-9]+) ([0-9]+) .*, conveyor 0 \2 \1 ' -- validate --topo dgx-h100 --nodes 2 "$rt"
check validate-rings-differ-count 0 ': 23 of the 24 compared in the same order$' -- validate --topo dgx-h100 --nodes 2 "$rt"
rm -f "$rt"
check validate-trees-shipped-log 0 '^# trees: the log.s Trees lines give 96 \(rank, channel\) pairs; 96 of the 96 on this system.s ranks and 24 channels the same$' -- validate --topo dgx-h100 --gpus 2 --nodes 2 tests/data/nccl-debug/dgx-h100-4rank-init.txt
# rank 1's channel 0 with its parent edited: that one pair differs and is named
rt=$(mktemp); sed 's/\(\[1\] NCCL INFO Trees \[0\] [-0-9]*\/[-0-9]*\/[-0-9]*->1->\)[-0-9]*/\13/' tests/data/nccl-debug/dgx-h100-4rank-init.txt > "$rt"
check validate-trees-differ 0 '^# trees: rank 1 channel 0 \(line [0-9]+\): NCCL [-0-9]+/[-0-9]+/[-0-9]+->1->3, conveyor [-0-9]+/[-0-9]+/[-0-9]+->1->[-0-9]+$' -- validate --topo dgx-h100 --gpus 2 --nodes 2 "$rt"
check validate-trees-differ-count 0 '; 95 of the 96 on this system.s ranks and 24 channels the same$' -- validate --topo dgx-h100 --gpus 2 --nodes 2 "$rt"
rm -f "$rt"
check validate-rings-shipped-log 0 '^# rings: the log has 24 ring channels of 24 .*: 24 of the 24 compared in the same order$' -- validate --topo dgx-h100 --gpus 2 --nodes 2 tests/data/nccl-debug/dgx-h100-4rank-init.txt
# a log with NCCL's TUNING lines: validate compares NCCL's choice with its tuner's (one line edited)
check validate-tuner-lines 0 'tuner: +33554432 +Ring/Simple/24 +NVLS/Simple/16  \(differs\)' -- validate --topo dgx-h100 tests/data/nccl-debug/dgx-h100-allreduce-tuning.txt
check validate-tuner-summary 0 'tuner: sizes=5 algo_proto_match=4 channels_match=4' -- validate --topo dgx-h100 tests/data/nccl-debug/dgx-h100-allreduce-tuning.txt
# a log with NCCL's Latency/AlgBw table (three AllReduce cells edited): validate compares it with conveyor's
check validate-tuner-table-cell 0 'tuner table: Ring/Simple +56\.0/180\.0 +56\.0/211\.9  \(differs\)' -- validate --topo dgx-h100 tests/data/nccl-debug/dgx-h100-allreduce-latbw.txt
check validate-tuner-table-one-side 0 'tuner table: NVLSTree/Simple +40\.0/100\.0 +0\.0/0\.0  \(enabled on one side\)' -- validate --topo dgx-h100 tests/data/nccl-debug/dgx-h100-allreduce-latbw.txt
check validate-tuner-table-summary 0 'tuner table: pairs=8 both=7 lat_within_10%=6 algbw_within_10%=6' -- validate --topo dgx-h100 tests/data/nccl-debug/dgx-h100-allreduce-latbw.txt
# Tree on one node is NCCL's chain: offered (NCCL_ALGO=Tree works), never the tuner's pick on 8x H100
check collective-tree-one-node 0 'explain: +1073741824 +Tree +Simple +24 ' -- collective --topo dgx-h100 --algo tree -b 1G -e 1G --explain
# NVLS only for reductions the switch does (ncclNvlsSupported): prod goes to the ring
check collective-prod-no-nvls 0 'explain: +1073741824 +Ring ' -- collective --topo dgx-h100 -b 1G -e 1G -o prod --explain
check collective-prod-nvls-refused 2 'cannot run this reduction and type in the NVSwitch' -- collective --topo dgx-h100 -b 1G -e 1G -o prod --algo nvls
check collective-help-env 0 'NCCL_MAX_CTAS, NCCL_MIN_CTAS' -- collective --help
export NCCL_ALGO=warp
check scale-bad-nccl-algo 2 "unknown algorithm 'warp'" -- scale --model llama3-8b --systems dgx-h100:8 --seq 256
unset NCCL_ALGO
export NCCL_BUFFSIZE=4M
check collective-bad-buffsize 2 "environment NCCL_BUFFSIZE='4M'" -- collective --topo dgx-a100 -b 1M -e 1M
# NCCL reads its integers with strtoll base 0 (ncclLoadParam): 0x10000 is 64 KiB, 010 is 8;
# the hex and decimal runs agree and differ from the default 4 MiB buffer
env_same() {
    name=$1; var=$2; a=$3; b=$4; shift 5
    d=$("$C" "$@" 2>&1 | cksum)
    x=$(env "$var=$a" "$C" "$@" 2>&1 | cksum); y=$(env "$var=$b" "$C" "$@" 2>&1 | cksum)
    if [ "$x" = "$y" ] && [ "$x" != "$d" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name: $var=$a and $b differ, or equal the default" >&2; fi
}
unset NCCL_BUFFSIZE
env_same collective-hex-buffsize NCCL_BUFFSIZE 0x10000 65536 -- collective --topo dgx-a100 --nodes 2 -b 64M -e 64M --proto simple
env_same collective-octal-channels NCCL_MAX_NCHANNELS 010 8 -- collective --topo dgx-a100 -b 64M -e 64M
export NCCL_MAX_NCHANNELS=08
check collective-bad-octal-channels 2 "environment NCCL_MAX_NCHANNELS='08'" -- collective --topo dgx-a100 -b 1M -e 1M
unset NCCL_MAX_NCHANNELS
export NCCL_NET_OVERHEAD=abc
check collective-bad-net-overhead 2 "environment NCCL_NET_OVERHEAD='abc'" -- collective --topo dgx-a100 --nodes 4 -b 8K -e 8K
export NCCL_NET_OVERHEAD=0
# no proxy work per step: a 32-rank Ring/LL all_gather of 8 KiB is under 31 x 2 us (the AMD default)
check collective-net-overhead-zero 0 " 8192 +64 +float +none +-1 +[1-5][0-9]\.[0-9]+ " -- collective --topo dgx-a100 --nodes 4 --op all_gather -b 8K -e 8K --algo ring --proto LL
export NCCL_NET_OVERHEAD=5000
# 5 us per network step: the node-boundary rank's 31 sends take at least 155 us
check collective-net-overhead-5us 0 " 8192 +64 +float +none +-1 +1[5-9][0-9]\.[0-9]+ " -- collective --topo dgx-a100 --nodes 4 --op all_gather -b 8K -e 8K --algo ring --proto LL
unset NCCL_NET_OVERHEAD
export NCCL_CROSS_NIC=3
check collective-bad-cross-nic 2 "environment NCCL_CROSS_NIC='3': expected 0, 1 or 2" -- collective --topo dgx-a100 --nodes 2 -b 1M -e 1M
export NCCL_CROSS_NIC=1
# rings leave a server on another rail than they came in by: on 36 DGX A100 (static ECMP, two
# leaf groups) their hops collide on spines, an LL128 all_gather of 1 GiB falls from the rail
# bound (about 179 GB/s busbw, rings on one NIC: NCCL's default) to under 160
check collective-cross-nic 0 " 10737[0-9]+ +[0-9]+ +float +none +-1 +[0-9.]+ +[0-9.]+ +1[0-5][0-9]\.[0-9]+ " -- collective --topo dgx-a100 --nodes 36 --op all_gather -b 1G -e 1G --proto LL128
unset NCCL_CROSS_NIC
check collective-rail-rings 0 " 10737[0-9]+ +[0-9]+ +float +none +-1 +[0-9.]+ +[0-9.]+ +1[7-9][0-9]\.[0-9]+ " -- collective --topo dgx-a100 --nodes 36 --op all_gather -b 1G -e 1G --proto LL128
check collective-csv 0 '^size,count' -- collective --topo dgx-a100 -b 1K -e 1M -f 32 --format csv
check collective-bad-op 2 "unknown --op 'allmix'" -- collective --topo dgx-h100 --op allmix
check collective-bad-size 2 'bad size' -- collective --topo dgx-h100 -b 12Q
check collective-absurd-size 2 'absurd' -- collective --topo dgx-h100 -e 1E
check collective-bad-algo 2 "unknown algorithm 'warp'" -- collective --topo dgx-h100 --algo warp
check collective-nvls-on-pcie 2 'no enabled algorithm' -- collective --topo pcie-gen4-4gpu --algo nvls -b 1M -e 1M
check collective-no-topo 2 'topo is required' -- collective -b 1M
check workload-default-topo 0 'workload llama2-7b on dgx-h100 \(H100-SXM\)' -- workload --model llama2-7b --gpus 8 --tp 8 --pp 1 --seq 256 -o /dev/null
check collective-collnetchain 0 '# Avg bus bandwidth' -- collective --topo pcie-gen5-8gpu-2socket --nodes 2 --fabric ib-ndr --algo collnetchain -b 1M -e 4M -f 4
check collective-collnetdirect-pcie 2 'no enabled algorithm' -- collective --topo pcie-gen5-8gpu-2socket --nodes 2 --fabric ib-ndr --algo collnetdirect -b 1M -e 1M
check collective-alltoall 0 'alltoall_perf' -- collective --topo dgx-h100 --op alltoall -b 1M -e 16M -f 4
check collective-sendrecv-2node 0 'sendrecv_perf' -- collective --topo dgx-h100 --nodes 2 --op sendrecv -b 1M -e 16M -f 4
check collective-broadcast 0 'broadcast_perf' -- collective --topo dgx-a100 --op broadcast -b 1M -e 16M -f 4
check validate-a100 0 'summary: points=25' -- validate --topo dgx-a100 tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt
check validate-rank-mismatch 2 'use --nodes/--gpus' -- validate --topo dgx-h100 tests/data/nccltests/23-rtx2080ti-2gpu-pcie3-noP2P-allreduce.txt
check validate-bad-log 2 'truncated|expected' -- validate --topo dgx-a100 tests/bad_input/nccltests/truncated-row.txt
check validate-max-error 1 'summary' -- validate --topo dgx-a100 --max-error 0.001 tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt
# file 17's 8x RTX 4090 box through host memory: the ring is bound by the link between the
# sockets (NCCL's AMD_BW, 16 GB/s); the issue's bar, median <= 10% at >= 1 MiB
check validate-shm-two-sockets 0 'summary' -- validate --topo pcie-gen4-8gpu-2socket --max-error 10 tests/data/nccltests/17-rtx4090-8gpu-pcie-noP2P-stock-driver-allreduce.txt
check p2p-dgx-h100 0 'Bidirectional P2P=Enabled Bandwidth Matrix' -- p2p --topo dgx-h100
check p2p-compare-bad-file 2 'bad_p2p_input' -- p2p --topo pcie-gen3-2gpu --compare tests/bad_input/nonexistent_bad_p2p_input.txt
same_output determinism-collective -- collective --topo dgx-h100 --nodes 2 -b 8 -e 256M -f 8 --explain
same_output determinism-alltoall -- collective --topo dgx-a100 --nodes 2 --op alltoall -b 1M -e 32M -f 4
same_output determinism-p2p -- p2p --topo dgx1-v100
check set-adaptive-routing 0 'alltoall_perf' -- collective --topo dgx-h100 --nodes 2 --op alltoall -b 1M -e 1M --set adaptive_routing=off
check set-adaptive-routing-bad 2 'expected on or off' -- collective --topo dgx-h100 --nodes 2 -b 1M -e 1M --set adaptive_routing=maybe
check validate-p2p-log 0 'summary: bi_bw_enabled' -- validate --topo pcie-gen3-2gpu tests/data/nccltests/22-rtx2080ti-2gpu-pcie3-noP2P-p2pBandwidthLatencyTest.txt
# round trip: our own nccl-tests output fed to validate on the same system gives 0% error
# (>= 1 MiB; small sizes differ by the 2-decimal rounding of printed bandwidths)
rt=$(mktemp); "$C" collective --topo dgx-a100 -b 1K -e 256M -f 4 > "$rt"
check validate-round-trip 0 'median_abs_err=0.00%.*sizes >= 1MiB: median 0.00% p90 0.00%' -- validate --topo dgx-a100 "$rt"
rm -f "$rt"
check calibrate-fit-synthetic 0 'd2d_copy/gpu0/d2d/ce: alpha 5\.0[0-9]* us  beta 20\.0[0-9]* GB/s' -- calibrate fit tests/data/calibration/synthetic.jsonl
check calibrate-fit-bad 2 'truncated-line\.jsonl:3:[0-9]+: not valid JSON' -- calibrate fit tests/bad_input/calibration/truncated-line.jsonl
# the measured H200 set (calibrate/data/h200-2026-11-29): GEMM shape model, applied through --set calibration=
H200P=calibrate/data/h200-2026-11-29/params.json
# a log of several nccl-tests runs: every run fitted, repeated ones (two all_reduce runs) in one group
check calibrate-fit-runs-ag 0 '^nccl/all_gather/8r/float: alpha [0-9.]+ us' -- calibrate fit tests/data/nccltests/formats/three-runs-allreduce-allreduce-allgather.txt
check calibrate-fit-runs-ar 0 '^  points 7, slope' -- calibrate fit tests/data/nccltests/formats/three-runs-allreduce-allreduce-allgather.txt
check calibrate-fit-gemm 0 'gemm/bf16: best square 823\.4 TFLOP/s; shape model eff 711\.3 TFLOP/s, k0 182' -- calibrate fit calibrate/data/h200-2026-11-29/calibration.jsonl
check calibrate-fit-gemm-bad 2 'gemm-missing-k\.jsonl:2: gemm record: "k"' -- calibrate fit tests/bad_input/calibration/gemm-missing-k.jsonl
check topo-show-calibration 0 'GEMM bf16 711\.3 TFLOP/s k0 182 HBM copy 2116\.3 GB/s' -- topo show hgx-h200 --set calibration=$H200P
check scale-sm-share-bad 2 'gpu.sm_share: 0 or 1' -- scale --model llama3-8b --systems dgx-h100:8 --set gpu.sm_share=2
check scale-sm-share-off 0 'dgx-h100' -- scale --model llama3-8b --systems dgx-h100:16 --set gpu.sm_share=0
check scale-calibration-wrong-gpu 2 'exceeds GPU 0.s PCIe rate' -- scale --model llama3-8b --systems dgx-a100:8 --set calibration=$H200P
# a GEMM rate under 1% of the datasheet (1e-300 FLOP/s overflowed the kernel times; found by fuzzing)
check scale-calibration-gemm-too-slow 2 "gemm-eff-1e-300\.params\.json: calibration GEMM bf16 0\.0 TFLOP/s is under 1% of H200" -- scale --model llama3-8b --systems hgx-h200:8 --set calibration=tests/data/calibration/gemm-eff-1e-300.params.json
check sweep-replay-base 0 '^5,0.25,4,' -- sweep tests/data/sweep/replay-compute-scale.json -j 2
# two ranks on two servers: the exposed all_reduce is all on the network (then step_ms's band: band2_review.sh)
check sweep-replay-net 0 '^0,2,[0-9.]+,([0-9.]+),\1,[0-9.]+,[0-9.]+,network,held out$' -- sweep tests/data/sweep/replay-net.json -j 1
check sweep-int8-no-nvls 0 '^1,int8,368\.351,Ring' -- sweep tests/data/sweep/collective-datatype-nvls.json -j 2
# 8 GPUs x 24 channels x 0.1 us = 19.2 us more than without; 1 us per channel: 192 us
# roots 0 and 5 of DGX-1's symmetric NVLink rings: the same busbw, both Ring
out=$("$C" sweep tests/data/sweep/collective-root.json 2>&1)
if printf '%s\n' "$out" | awk -F, 'NR == 2 { a = $3; ok = $2 == 0 && $4 == "Ring" } NR == 3 { b = $3; ok = ok && $2 == 5 && $4 == "Ring" }
    END { exit !(NR == 3 && ok && a == b && a + 0 > 0) }'; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL sweep-root: roots 0 and 5 differ in:" >&2; printf '%s\n' "$out" >&2; fi
check sweep-root-out-of-range 2 'root: expected an integer in 0\.\.7' -- sweep tests/data/sweep/collective-root-bad.json
check sweep-launch-channel 0 '^1,0\.1,68\.744,24,Ring$' -- sweep tests/data/sweep/collective-launch-channel.json
check sweep-p2p-level 0 '^2,LOC,20\.343' -- sweep tests/data/sweep/collective-p2p-level.json
check sweep-nccl-knobs 0 '^1,2,44\.334,2,Ring' -- sweep tests/data/sweep/collective-ctas.json -j 2
check sweep-nccl-bad-nvls 2 "nvls: expected on or off, got 'maybe'" -- sweep tests/data/sweep/collective-bad-nvls.json
check sweep-replay-needs-trace 2 'needs a trace' -- sweep tests/data/sweep/replay-no-trace.json
. "$(dirname "$0")/determinism.sh"
. "$(dirname "$0")/sweep_review.sh"
. "$(dirname "$0")/bad_inputs.sh"
. "$(dirname "$0")/special_outputs.sh"
. "$(dirname "$0")/limits.sh"
. "$(dirname "$0")/scale_layouts.sh"
. "$(dirname "$0")/meta_scale_review.sh"
. "$(dirname "$0")/options_review.sh"
. "$(dirname "$0")/topo_review.sh"
. "$(dirname "$0")/traces_review.sh"
. "$(dirname "$0")/moe_review.sh"
. "$(dirname "$0")/errbar_review.sh"
. "$(dirname "$0")/output_review.sh"
. "$(dirname "$0")/band2_review.sh"
. "$(dirname "$0")/log_review.sh"
. "$(dirname "$0")/plot_review.sh"
wl=$(mktemp --suffix=.json)
check workload-llama2-tp8 0 'wrote .*: 8 ranks' -- workload --model llama2-7b --gpus 8 --tp 8 --seq 256 --topo dgx-h100 -o "$wl"
check workload-replays 0 'step time: [0-9.]+ ms' -- replay --topo dgx-h100 "$wl"
rm -f "$wl"
check workload-bad-layout 2 'tp\*pp\*dp\*cp = 2\*2\*1\*1 = 4 but --gpus is 8' -- workload --model llama2-7b --gpus 8 --tp 2 --pp 2 --dp 1 --topo dgx-h100 -o /dev/null
check workload-heads-tp 2 'divisible by tp \(3\)' -- workload --model llama2-7b --gpus 3 --tp 3 --topo dgx-h100 -o /dev/null
check workload-pp-over-layers 2 'pp \(33\) must be at most the layers \(32\)' -- workload --model llama2-7b --gpus 33 --pp 33 --topo dgx-h100 -o /dev/null
wl=$(mktemp --suffix=.json)
check workload-uneven-stages 0 '1F1B, uneven stages of 2,3,3,2 layers' -- workload --model custom --layers 10 --hidden 1024 --heads 16 --gpus 4 --pp 4 --seq 256 --topo dgx-h100 -o "$wl"
check workload-uneven-replays 0 'step time: [0-9.]+ ms' -- replay --topo dgx-h100 --gpus 4 "$wl"
rm -f "$wl"
check workload-uneven-fuse 0 'uneven stages of 2,3,3,2 layers' -- workload --model custom --layers 10 --hidden 1024 --heads 16 --gpus 4 --pp 4 --layer-fuse 2 --topo dgx-h100 -o /dev/null
check workload-fuse-too-big 2 'layer fuse \(11\) must be in 1..layers \(10\)' -- workload --model custom --layers 10 --hidden 1024 --heads 16 --gpus 4 --pp 4 --layer-fuse 11 --topo dgx-h100 -o /dev/null
check workload-reuse-distance-bad 2 "reuse-distance 'x': expected a number of parameters" -- workload --model gpt3-175b --gpus 8 --zero 3 --reuse-distance x --topo dgx-h100 -o /dev/null
check workload-zero3-per-param-needs-zero3 2 "per-parameter ZeRO-3 fetching \(DeepSpeed of 2021\) needs --zero 3" -- workload --model gpt3-175b --gpus 8 --zero3-per-param --topo dgx-h100 -o /dev/null
check workload-zero3-per-param 0 "wrote .*: 8 ranks" -- workload --model gpt-1.7b --gpus 8 --zero 3 --zero3-per-param --seq 256 --topo dgx-a100 -o "$wl"
# an explicit 0 is an error, not "not given" (GOption's ints have no unset state; it ran with the default)
check opt-zero-tp 2 '^conveyor workload: --tp: expected a whole number in 1\.\.' -- workload --model llama2-7b --gpus 8 --tp 0 --topo dgx-h100 -o /dev/null
check opt-zero-nodes 2 '^conveyor collective: --nodes: expected a whole number in 1\.\.131072, got .0.' -- collective --topo dgx-h100 -N 0
check opt-zero-topo-gpus 2 'expected one topology name or file and --nodes/--gpus >= 1' -- topo show dgx-h100 --gpus 0
check opt-zero-ranks 2 '--ranks in 1\.\.1048576' -- replay --topo dgx-a100 --gpus 2 --ranks 0 docs/examples/two-rank-overlap.json
check opt-nan-nic-gbps 2 '--nic-gbps nan: expected 0\.008 \.\. 3200 Gb/s' -- topo import tests/data/nccl-topo/pcie-only.xml --nic-gbps nan
check opt-preset-layers 2 'describe --model custom; .llama2-7b. is a preset' -- workload --model llama2-7b --gpus 8 --layers 5 --topo dgx-h100 -o /dev/null
# a UTF-8 byte order mark (Windows editors) is read as whitespace
bom=$(mktemp --suffix=.csv)
printf '\357\273\277rank,kind,dur_us\n0,compute,5\n' > "$bom"
check trace-csv-bom 0 '^step time: 0\.005 ms' -- replay --topo dgx-a100 --gpus 1 "$bom"
rm -f "$bom"
check workload-trace-over-memory 2 "would hold about [0-9]+ M ops .* more than 3/4 of this machine" -- workload --model gpt3-175b --recompute --zero 3 --zero3-per-param --gpus 65536 --topo dgx-a100 -o /dev/null
check workload-reuse-distance-range 2 'expected 1 to 1e15 parameters' -- workload --model gpt3-175b --gpus 8 --zero 3 --reuse-distance 0 --topo dgx-h100 -o /dev/null
check workload-unknown-model 2 "unknown model 'gpt-5'" -- workload --model gpt-5 --gpus 8 --topo dgx-h100 -o /dev/null
wl=$(mktemp --suffix=.json)
check workload-interleaved 0 'interleaved 1F1B \(2 model chunks of 4 layers per pp rank\)' -- workload --model llama2-7b --gpus 8 --tp 2 --pp 4 --seq 256 --schedule interleaved:2 --topo dgx-h100 -o "$wl"
check workload-interleaved-replays 0 'step time: [0-9.]+ ms' -- replay --topo dgx-h100 "$wl"
rm -f "$wl"
check workload-interleaved-v1 2 "schedule 'interleaved:1': interleaving needs V >= 2" -- workload --model llama2-7b --gpus 4 --pp 4 --schedule interleaved:1 --topo dgx-h100 -o /dev/null
check workload-interleaved-not-int 2 "schedule 'interleaved:x': V must be an integer >= 2" -- workload --model llama2-7b --gpus 4 --pp 4 --schedule interleaved:x --topo dgx-h100 -o /dev/null
check workload-bad-schedule 2 "schedule 'gpipe': expected 1f1b or interleaved:V" -- workload --model llama2-7b --gpus 4 --pp 4 --schedule gpipe --topo dgx-h100 -o /dev/null
check workload-interleaved-microbatches 2 'microbatches per step \(6 = .*\) must be a multiple of pp \(4\)' -- workload --model llama2-7b --gpus 4 --pp 4 --global-batch 6 --schedule interleaved:2 --topo dgx-h100 -o /dev/null
check workload-interleaved-layers 2 'layers \(32\) must be at least pp\*V = 4\*9' -- workload --model llama2-7b --gpus 4 --pp 4 --schedule interleaved:9 --topo dgx-h100 -o /dev/null
check workload-interleaved-pp1 2 'interleaved schedule \(interleaved:2\) needs pp >= 2' -- workload --model llama2-7b --gpus 8 --tp 8 --schedule interleaved:2 --topo dgx-h100 -o /dev/null
check workload-bad-set 2 'no such parameter' -- workload --model llama2-7b --gpus 8 --tp 8 --set gpu.turbo=1 --topo dgx-h100 -o /dev/null
check scale-small 0 'dgx-h100 .* 16 +8 +1 +2 ' -- scale --model llama2-7b --systems dgx-h100:8..16 --seq 256 --global-batch 4
check scale-csv 0 '^system,gpu,gpus,tp,pp,dp' -- scale --model gpt-1.7b --systems dgx-a100:8 --seq 256 --format csv
# the layout's CP, EP and ETP close each CSV row (the text names them in its header, JSON as members)
check scale-csv-moe-layout 0 '^dgx-h100,H100-SXM,16,2,[0-9]+,[0-9]+,.*,1,4,2,[0-9.]+,80\.00$' -- scale --model mixtral-8x7b --ep 4 --etp 2 --sp --systems dgx-h100:16 --tp 2 --seq 256 --format csv
check scale-too-big 2 'exceeds --max-gpus' -- scale --model llama2-7b --systems dgx-h100:4096 --seq 256
check scale-interleaved 0 'interleaved 1F1B \(2 model chunks per pp rank\)' -- scale --model llama2-7b --systems dgx-h100:8 --tp 2 --pp 4 --seq 256 --schedule interleaved:2
check scale-uneven-stages 0 'dgx-h100 .* 24 +8 +3 +1 ' -- scale --model llama2-7b --systems dgx-h100:24 --tp 8 --pp 3 --seq 256
check scale-bad-sizes 2 'bad sizes' -- scale --model llama2-7b --systems dgx-h100:8..x
check sweep-scale-base 0 '^3,16,400,' -- sweep tests/data/sweep/scale-llama2-7b.json -j 2
check sweep-scale-net-one-server 0 '^1,8,400,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,1,0\.0000,[0-9.]+,[0-9.]+,training \(A100 rows\),held out$' -- sweep tests/data/sweep/scale-llama2-7b.json -j 2
check sweep-scale-schedule 0 '^2,interleaved:4,[0-9.]+,' -- sweep tests/data/sweep/scale-schedule.json -j 2
# --overlap-param-gather (Megatron-LM's): the distributed optimizer's gathers move under the next forward;
# only with --zero 1/2; as a sweep key it is on/off and the step is no slower with it
check workload-overlap-param-gather-needs-zero 2 'overlap-param-gather .*needs --zero 1 or 2' -- workload --model llama2-7b --gpus 8 --seq 256 --overlap-param-gather -o /dev/null
check scale-overlap-param-gather-needs-zero 2 'needs --zero 1 or 2' -- scale --model llama2-7b --systems dgx-h100:8 --seq 256 --zero 3 --overlap-param-gather
# --tp-async-bwd (Megatron-LM's asynchronous input-gradient reduction in column-parallel backward): the
# sweep key is on/off, and without SP the step is shorter with it (the reductions beside weight gradients)
tpa=$("$C" sweep tests/data/sweep/scale-tp-async-bwd.json -j 2 2>/dev/null)
if printf '%s\n' "$tpa" | awk -F, 'NR == 2 && $2 == "off" { a = $3 } NR == 3 && $2 == "on" { b = $3 } END { exit !(a > 0 && b > 0 && b < a) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-tp-async-bwd: $tpa" >&2; fi
# --tp-comm-overlap (Megatron-LM's; Transformer Engine's userbuffers): needs --sp (exit 2 without, as Megatron-LM
# asserts); the header says so; as a sweep key on/off, and with TP 8 at seq 2048 the step is shorter with it
check workload-tp-comm-overlap-needs-sp 2 'tp-comm-overlap needs --sp' -- workload --model llama2-7b --gpus 8 --tp 8 --seq 256 --tp-comm-overlap -o /dev/null
check workload-tp-comm-overlap-header 0 '8 GPUs = tp 8 x pp 1 x dp 1 x cp 1, ep 1, sp \(TP comm overlap\), DDP' -- workload --model llama2-7b --gpus 8 --tp 8 --seq 256 --sp --tp-comm-overlap -o /dev/null
check scale-tp-comm-overlap-header 0 '^# scale: llama2-7b, .*, TP communication overlapped with GEMMs \(userbuffers\)$' -- scale --model llama2-7b --systems dgx-h100:8 --tp 8 --seq 256 --sp --tp-comm-overlap
tco=$("$C" sweep tests/data/sweep/scale-tp-comm-overlap.json -j 2 2>/dev/null)
if printf '%s\n' "$tco" | awk -F, 'NR == 2 && $2 == "off" { a = $3 } NR == 3 && $2 == "on" { b = $3 } END { exit !(a > 0 && b > 0 && b < a) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-tp-comm-overlap: $tco" >&2; fi
# --moe-shared-expert-overlap (Megatron-LM's): needs a shared expert (exit 2 for Mixtral); the header says so; as a
# sweep key on/off, the step is shorter with it
check moe-shared-overlap-needs-shared 2 'needs an MoE model with a shared expert' -- workload --model mixtral-8x7b --gpus 8 --ep 8 --seq 256 --moe-shared-expert-overlap -o /dev/null
check scale-moe-shared-overlap-header 0 'DDP, shared expert beside the all-to-alls, context parallel 1, expert parallel 8$' -- scale --model custom --layers 2 --hidden 1024 --heads 8 --experts 8 --topk 2 --shared-ffn 1024 --systems dgx-h100:8 --ep 8 --seq 256 --moe-shared-expert-overlap
mso=$("$C" sweep tests/data/sweep/scale-moe-shared-overlap.json -j 2 2>/dev/null)
if printf '%s\n' "$mso" | awk -F, 'NR == 2 && $2 == "off" { a = $3 } NR == 3 && $2 == "on" { b = $3 } END { exit !(a > 0 && b > 0 && b < a) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-moe-shared-overlap: $mso" >&2; fi
# --tp-comm-overlap with a TP group across servers: its copies cannot cross, exit 2 saying so
check scale-tp-comm-overlap-across-servers 2 'tp_ring_send\) copies to rank 8, in another server .*keep each TP group in one NVLink domain' -- scale --model llama2-7b --systems dgx-h100:16 --tp 16 --sp --seq 256 --tp-comm-overlap
# a generated step with the CP ring and the TP rings (copies) written and replayed: the tags and "copy" keys read back
wl_rt=$(mktemp)
"$C" workload --model llama3-8b --gpus 8 --tp 2 --cp 4 --seq 8192 --sp --tp-comm-overlap -o "$wl_rt" > /dev/null 2>&1
check workload-rings-replay 0 'simulation: [0-9]+ events' -- replay --topo dgx-h100 "$wl_rt"
rm -f "$wl_rt"
check scale-tp-async-bwd-header 0 '^# scale: llama2-7b, .*, TP input gradients reduced beside the weight gradients$' -- scale --model llama2-7b --systems dgx-h100:8 --tp 8 --seq 256 --tp-async-bwd
opg=$("$C" sweep tests/data/sweep/scale-overlap-param-gather.json -j 2 2>/dev/null)
if printf '%s\n' "$opg" | awk -F, 'NR == 2 && $2 == "off" { a = $3 } NR == 3 && $2 == "on" { b = $3 } END { exit !(a > 0 && b > 0 && b <= a) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-overlap-param-gather: $opg" >&2; fi
# compute, exposed communication and idle make the whole step at every point (and 4 stages leave bubbles)
out=$("$C" sweep tests/data/sweep/scale-schedule.json -j 2 2>/dev/null)
if printf '%s\n' "$out" | awk -F, 'NR > 1 { s = $5 + $6 + $7; if (s < 0.999 || s > 1.001 || $7 <= 0) bad = 1; n++ }
                                   END { exit !(n == 3 && !bad) }'; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL sweep-scale-fractions-add-up:" >&2; printf '%s\n' "$out" >&2
fi
check sweep-scale-bad-schedule 2 'point 1 \(schedule=interleaved:9\): layers \(32\) must be at least pp\*V = 4\*9' -- sweep tests/data/sweep/scale-bad-schedule.json -j 1
# regressions: an empty slice overtaking a full one on a network connection
# (delivery is in order), and alltoall over two ranks (Direct, never Ring)
check ring-tiny-multinode 0 'Avg bus bandwidth' -- collective --topo dgx-h100 --nodes 2 --op all_reduce -b 8 -e 64 -f 2 --algo ring --proto simple
check alltoall-two-ranks 0 'alltoall_perf' -- collective --topo dgx-h100 --gpus 2 --op alltoall -b 1M -e 1M
# progress lines go to stderr only (on a terminal, or CONVEYOR_PROGRESS=1): stdout is unchanged
pg_same() {
    name=$1; want=$2; shift 3
    a=$(CONVEYOR_PROGRESS=0 "$C" "$@" 2>/dev/null | cksum); b=$(CONVEYOR_PROGRESS=1 "$C" "$@" 2>/dev/null | cksum)
    e=$(CONVEYOR_PROGRESS=1 "$C" "$@" 2>&1 >/dev/null | tr '\r' '\n')
    if [ "$a" = "$b" ] && printf '%s' "$e" | grep -qE -- "$want"; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL $name: stdout changed or no '$want' on stderr: $e" >&2; fi
}
pg_same progress-collective '^collective: size 3/3 \(16 MiB, [A-Za-z]+/[A-Za-z0-9]+\), [0-9.]+ s' -- collective --topo dgx-h100 --nodes 2 -b 1M -e 16M -f 4
pg_same progress-validate '^validate: size 25/25 \(128 MiB, Ring/Simple\)' -- validate --topo dgx-a100 tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt
pgt=$(mktemp); "$C" workload --topo dgx-h100 --model llama3-8b --gpus 16 --tp 8 -o "$pgt" > /dev/null 2>&1
pg_same progress-replay '^replay: [0-9]+% of the ops, [0-9.]+ ms simulated, [0-9.]+ M events' -- replay --topo dgx-h100 --nodes 2 --exact "$pgt"
rm -f "$pgt"
# plots (gnuplot SVG): plot_check NAME PATTERN -- ARGS, where @SVG@ in ARGS is the output file
plot_check() {
    name=$1; pat=$2; shift 3
    svg=$(mktemp -u /tmp/conveyor-plot-XXXXXX.svg)
    args=""; for a in "$@"; do [ "$a" = "@SVG@" ] && a=$svg; args="$args $a"; done
    # shellcheck disable=SC2086
    out=$("$C" $args 2>&1); rc=$?
    if [ "$rc" = 0 ] && grep -q '<svg' "$svg" 2>/dev/null && grep -qE -- "$pat" "$svg" &&
       printf '%s' "$out" | grep -q "plot written to $svg"; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL $name: rc=$rc, no '$pat' in $svg: $out" >&2; fi
    rm -f "$svg"
}
if command -v gnuplot >/dev/null 2>&1; then
plot_check plot-collective 'NVLSTree/Simple' -- collective --topo dgx-h100 --nodes 2 -b 8 -e 1G -f 16 --plot @SVG@
plot_check plot-validate 'conveyor' -- validate --topo dgx-a100 --plot @SVG@ tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt
plot_check plot-scale 'scaling efficiency' -- scale --model llama2-7b --systems dgx-h100:8/16 --seq 256 --plot @SVG@
plot_check plot-scale-breakdown 'exposed: inside the server' -- scale --model llama2-7b --systems dgx-h100:8/16 --seq 256 --breakdown --plot @SVG@
pst=$(mktemp); "$C" sweep tests/data/sweep/small.json -o "$pst" > /dev/null 2>&1
plot_check plot-sweep 'nodes=2' -- sweep --plot nodes,busbw_at_max,nodes "$pst" -o @SVG@
rm -f "$pst"
check import-unwritable 2 'topo import: /no-such-dir/t.json: cannot write: no such directory' -- topo import tests/data/nccl-topo/dgx-a100-like.xml -o /no-such-dir/t.json
check calibrate-unwritable 2 'calibrate: /no-such-dir/p.json: cannot write: no such directory' -- calibrate fit calibrate/data/h200-2026-11-29/calibration.jsonl -o /no-such-dir/p.json
check workload-unwritable 2 '/no-such-dir/w.json: cannot write: no such directory' -- workload --model llama2-7b --gpus 8 --tp 8 --seq 256 -o /no-such-dir/w.json
check plot-unwritable 2 'conveyor collective: cannot write /no-such-dir/x.svg: No such file' -- collective --topo dgx-h100 -b 1M -e 1M --plot /no-such-dir/x.svg
fi
check plot-validate-p2p-log 2 '--plot is for nccl-tests logs' -- validate --topo pcie-gen3-2gpu --plot /tmp/x.svg tests/data/nccltests/22-rtx2080ti-2gpu-pcie3-noP2P-p2pBandwidthLatencyTest.txt
# replay's error band: text line and JSON field
check replay-band 0 'step time 80%: [0-9.]+-[0-9.]+ ms \(the exposed communication, 0.199 ms per step' -- replay --topo dgx-h100 --gpus 2 docs/examples/two-rank-overlap.json
check replay-band-json 0 '"step_time_80_s": \[[0-9.e-]+, [0-9.e-]+\]' -- replay --topo dgx-h100 --gpus 2 --format json docs/examples/two-rank-overlap.json
# NCCL's PXN for send/receive across servers: on by default, --set pxn=off
check set-pxn-off 0 'alltoall_perf' -- collective --topo dgx-h100 --nodes 2 --op alltoall -b 1M -e 1M --set pxn=off
check set-pxn-bad 2 'pxn: expected on or off' -- collective --topo dgx-h100 --nodes 2 -b 1M -e 1M --set pxn=sometimes
