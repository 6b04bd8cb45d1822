#!/bin/bash
# make studies: the headline scaling study, docs/studies/8-to-72.md.
# A dense model (Llama 3 8B) and an MoE model (Mixtral 8x7B), strong scaling
# from 8 to 72 GPUs on one GB200 NVL72 rack (one NVLink domain), nine HGX
# B200 servers on InfiniBand (NDR 400G NICs; and XDR with 800G NICs), and
# nine DGX H100 servers on NDR. Every number in the page comes from the runs
# below; the paragraph on why the curves differ reads its figures from them.
set -euo pipefail
# NCCL's own switches would change what is simulated; the studies are NCCL's defaults
. "$(dirname "$0")/nccl-env-clean.sh"
C=${1:-build/conveyor}
OUT=docs/studies
mkdir -p "$OUT"
SIZES=8/16/32/64/72
SYSTEMS="gb200-nvl72,hgx-b200,dgx-h100"
DENSE=(--model llama3-8b --sp --zero 1 --auto)
MOE=(--model mixtral-8x7b --ep 8 --sp --zero 1 --recompute --auto)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # NAME PLOT ARGS...: CSV in $tmp/NAME.csv
    local name=$1 plot=$2
    shift 2
    local p=()
    [ -n "$plot" ] && command -v gnuplot >/dev/null 2>&1 && p=(--plot "$OUT/$plot")
    echo "studies: conveyor scale $* --gpus $SIZES" >&2
    "$C" scale "$@" --gpus "$SIZES" --format csv "${p[@]}" > "$tmp/$name.csv"
}
run dense 8-to-72-dense.svg "${DENSE[@]}" --systems "$SYSTEMS"
run dense_xdr "" "${DENSE[@]}" --systems hgx-b200@ib-xdr --set nic.gbps=800
run moe 8-to-72-moe.svg "${MOE[@]}" --systems "$SYSTEMS"
run moe_xdr "" "${MOE[@]}" --systems hgx-b200@ib-xdr --set nic.gbps=800

# where each system's step goes at 72 GPUs (scale --breakdown), with the global batch the runs
# above used for every size (CSV column 7): the same point, found by the same --auto
breakdown() { # CSV ARGS...
    local csv=$1
    shift
    awk -F, 'NR > 1 && $3 == 72 { print $1, $7 }' "$csv" | while read -r sys batch; do
        echo "studies: conveyor scale $* --systems $sys --gpus 72 --global-batch $batch --breakdown" >&2
        "$C" scale "$@" --systems "$sys" --gpus 72 --global-batch "$batch" --breakdown | grep -E '^#   [^ ]+ 72: '
    done
}
bd_dense=$(breakdown "$tmp/dense.csv" "${DENSE[@]}"; breakdown "$tmp/dense_xdr.csv" "${DENSE[@]}" --set nic.gbps=800)
bd_moe=$(breakdown "$tmp/moe.csv" "${MOE[@]}"; breakdown "$tmp/moe_xdr.csv" "${MOE[@]}" --set nic.gbps=800)

# CSV columns (conveyor scale --format csv): 1 system 2 gpu 3 gpus 4 tp 5 pp 6 dp 7 global_batch
# 8 layer_fuse 9 step_time_s 10 tokens_per_s 11 tflops_per_gpu 12 mfu 13 speedup 14 efficiency
# 15 exposed_comm_frac 16 fits_memory 17 step_time_lo_s 18 step_time_hi_s 19 tflops_lo 20 tflops_hi
# 21 exposed_net_frac 22 server_fabric 23 net_fabric 24 cp 25 ep 26 etp
table() { # CSV [label for the XDR rows]
    awk -F, -v tag="${2:-}" 'NR > 1 {
        sys = $1; if (tag != "") sys = sys " (800G NICs)"; if ($16 != "yes") sys = sys " (exceeds HBM)"
        band = $17 != "" ? sprintf("%.0f-%.0f", $17 * 1e3, $18 * 1e3) : "-"
        printf "| %s | %d | %d/%d/%d | %.1f | %s | %.0f | %.1f | %.2f | %.1f%% | %.1f%% | %.1f%% |\n",
            sys, $3, $4, $5, $6, $9 * 1e3, band, $10, $11, $13, 100 * $14, 100 * $15, 100 * $21
    }' "$1"
}
at() { # GPUS CSV SYSTEM COLUMN: the value at that size
    awk -F, -v n="$1" -v s="$3" -v c="$4" 'NR > 1 && $1 == s && $3 == n { print $c }' "$2"
}
at72() { at 72 "$@"; }
at8() { at 8 "$@"; }
pct() { awk -v x="$1" 'BEGIN { printf "%.0f%%", 100 * x }'; }

header="| system | GPUs | tp/pp/dp | step ms | step ms 80% | tokens/s | TFLOP/s per GPU | speedup | efficiency | exposed comm | of it on the network |
|---|---|---|---|---|---|---|---|---|---|---|"
d_nvl=$(at72 "$tmp/dense.csv" gb200-nvl72 14); d_b200=$(at72 "$tmp/dense.csv" hgx-b200 14)
d_h100=$(at72 "$tmp/dense.csv" dgx-h100 14); d_xdr=$(at72 "$tmp/dense_xdr.csv" hgx-b200@ib-xdr 14)
x_nvl=$(at72 "$tmp/dense.csv" gb200-nvl72 15); x_b200=$(at72 "$tmp/dense.csv" hgx-b200 15)
x_h100=$(at72 "$tmp/dense.csv" dgx-h100 15); x_xdr=$(at72 "$tmp/dense_xdr.csv" hgx-b200@ib-xdr 15)
n_b200=$(at72 "$tmp/dense.csv" hgx-b200 21); n_xdr=$(at72 "$tmp/dense_xdr.csv" hgx-b200@ib-xdr 21)
n_h100=$(at72 "$tmp/dense.csv" dgx-h100 21)
mn_b200=$(at72 "$tmp/moe.csv" hgx-b200 21)
# how much of the servers' exposed share is the network's (at least 90% at each: "nearly all")
if awk -v a="$n_b200" -v b="$x_b200" -v c="$n_xdr" -v d="$x_xdr" -v e="$n_h100" -v f="$x_h100" \
       'BEGIN { exit !(a >= 0.9 * b && c >= 0.9 * d && e >= 0.9 * f) }'; then
    net_part="on the servers nearly all of it waits"
else
    net_part="on the servers part of it waits"
fi
m_nvl=$(at72 "$tmp/moe.csv" gb200-nvl72 14); m_b200=$(at72 "$tmp/moe.csv" hgx-b200 14)
m_h100=$(at72 "$tmp/moe.csv" dgx-h100 14); m_xdr=$(at72 "$tmp/moe_xdr.csv" hgx-b200@ib-xdr 14)
mx_nvl=$(at72 "$tmp/moe.csv" gb200-nvl72 15); mx_b200=$(at72 "$tmp/moe.csv" hgx-b200 15)
s_nvl=$(at72 "$tmp/dense.csv" gb200-nvl72 9); s_b200=$(at72 "$tmp/dense.csv" hgx-b200 9)
s8_nvl=$(at8 "$tmp/dense.csv" gb200-nvl72 9); s8_b200=$(at8 "$tmp/dense.csv" hgx-b200 9)
f8_nvl=$(at8 "$tmp/dense.csv" gb200-nvl72 11); f8_b200=$(at8 "$tmp/dense.csv" hgx-b200 11)
tp72=$(awk -F, 'FNR > 1 && $3 == 72 { print $4 }' "$tmp/dense.csv" "$tmp/moe.csv" | sort -un | tr '\n' ' ' | sed 's/ $//')
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
dense_tps=$(awk -F, 'FNR > 1 { print $4 }' "$tmp/dense.csv" "$tmp/dense_xdr.csv" | sort -u | tr '\n' ' ')
if [ "$dense_tps" = "1 " ]; then
    why_dp="For the dense model plain data parallelism with ZeRO-1 (TP 1) is fastest at every size and on every system: at this batch (one global batch for all sizes, 2,048 tokens per sequence) the GEMMs of an 8B model are large enough on one GPU that splitting them costs more than it saves."
else
    why_dp="For the dense model the fastest layouts use tensor-parallel sizes $dense_tps(the tables give each)."
fi
if awk -v m="$m_b200" -v d="$d_b200" 'BEGIN { exit !(m > d) }'; then
    moe_vs="so it loses less to the network than the dense model"
else
    moe_vs="yet it loses at least as much to the network as the dense model"
fi
{
cat <<EOF
# From 8 to 72 GPUs: one NVLink domain against servers on InfiniBand

Generated by \`make studies\` (scripts/studies.sh) with conveyor's default models; do not edit by
hand. Each point is one simulated training step (docs/scaling.md), strong scaling: the global
batch is fixed, so more GPUs share the same tokens. Systems: one GB200 NVL72 rack (72 GPUs in one
NVLink domain, 18 NVLink 5 links per GPU), nine HGX B200 servers (8 GPUs on NVSwitch each, one
400 Gb/s NIC per GPU, NDR InfiniBand), the same on XDR with 800 Gb/s NICs
(\`hgx-b200@ib-xdr --set nic.gbps=800\`; the shipped server keeps its NICs on PCIe Gen5 x16),
and nine DGX H100 servers (NVLink 4, 400 Gb/s NICs, NDR). The \`step ms 80%\` band is the range
the published step fell in for 80% of the Megatron-LM rows conveyor was validated on, each row
left out of the band it was checked against (docs/validation.md): dense GPT training on A100s, so a
floor on the uncertainty of other GPUs and models.

## Dense: Llama 3 8B

\`conveyor scale ${DENSE[*]} --systems $SYSTEMS --gpus $SIZES\`

$header
$(table "$tmp/dense.csv")
$(table "$tmp/dense_xdr.csv" xdr)

![speedup and scaling efficiency, Llama 3 8B](8-to-72-dense.svg)

## MoE: Mixtral 8x7B, 8-way expert parallel

\`conveyor scale ${MOE[*]} --systems $SYSTEMS --gpus $SIZES\`

$header
$(table "$tmp/moe.csv")
$(table "$tmp/moe_xdr.csv" xdr)

![speedup and scaling efficiency, Mixtral 8x7B](8-to-72-moe.svg)

## Where the step goes at 72 GPUs

\`conveyor scale ... --gpus 72 --global-batch B --breakdown\` (B the tables' batch: the same points): shares of
the step, means over the GPUs, that add up to it: compute by operation, exposed communication by
operation (in brackets the part with traffic between servers in flight), idle.

Dense (Llama 3 8B):

\`\`\`
$bd_dense
\`\`\`

MoE (Mixtral 8x7B):

\`\`\`
$bd_moe
\`\`\`

## Why the curves differ

\`--auto\` simulates every layout that fits and keeps the fastest; at these sizes it keeps
tensor-parallel size $tp72 at 72 GPUs (the tables give every point's). $why_dp Each step then reduce-scatters the bf16 gradients and all-gathers the
weights across all N GPUs, overlapped with the backward pass, and what stays exposed depends on
where that traffic runs: inside one NVLink domain on NVL72 (NVLink 5, 18 links, 900 GB/s per GPU
each way), through one 400 Gb/s (50 GB/s) NIC per GPU between the HGX and DGX servers. At 72
GPUs the exposed share of the step is $(pct "$x_nvl") on NVL72, $(pct "$x_b200") on HGX B200,
$(pct "$x_xdr") with 800 Gb/s NICs on XDR (the shipped server's NICs sit on PCIe Gen5 x16, so
little of the doubling arrives) and $(pct "$x_h100") on DGX H100, whose slower GPUs leave more
compute to hide it behind; $net_part with traffic between the servers in flight ($(pct "$n_b200"),
$(pct "$n_xdr") and $(pct "$n_h100") of the step: the "of it on the network" column); scaling efficiency $(pct "$d_nvl"), $(pct "$d_b200"), $(pct "$d_xdr")
and $(pct "$d_h100"). The NVL72's step at 72 GPUs is $(ratio "$s_b200" "$s_nvl") times faster than
nine HGX B200 servers', of which $(ratio "$s8_b200" "$s8_nvl") is already there at 8 GPUs, inside
one server, where the network plays no part: GB200's GPUs run faster than HGX B200's in the
compute model ($f8_nvl against $f8_b200 TFLOP/s per GPU); the NVLink domain accounts for the rest.

Mixtral 8x7B with 8-way expert parallelism keeps each expert-parallel group, and so its token
all-to-alls, on 8 consecutive ranks: one server, or part of the rack. Only the gradient
reductions cross servers, and the expert gradients reduce over the expert-data-parallel group of
N/8 ranks (1 to 9), $moe_vs: efficiency at 72 GPUs
$(pct "$m_nvl") on NVL72 (exposed $(pct "$mx_nvl")), $(pct "$m_b200") on HGX B200 (exposed
$(pct "$mx_b200"), $(pct "$mn_b200") of the step with traffic between servers in flight, the rest
on NVLink inside them, where the expert-parallel all-to-alls run), $(pct "$m_xdr") with 800 Gb/s NICs, $(pct "$m_h100") on DGX H100. On 8 H100s
it does not fit (marked "exceeds HBM", simulated anyway): each GPU keeps one expert of every layer,
5.6 B parameters, whose Adam states an expert-data-parallel group of one cannot shard, about 90 GB.
EOF
} > "$OUT/8-to-72.md"
echo "wrote $OUT/8-to-72.md"
