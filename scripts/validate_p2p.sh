#!/bin/sh
# scripts/validate_p2p.sh [CONVEYOR] [--points | OUT] - the p2p part of make validate
# (called by scripts/validate.sh): `conveyor p2p --compare` on the three real
# p2pBandwidthLatencyTest logs (docs/validation-p2p.md), each error grouped by
# what the pair crosses (the link_class of `p2p --format json`; every cell of
# a P2P=Disabled matrix is staged) and by what is measured (uni_bw, bi_bw,
# lat_gpu), written to topologies/accuracy/p2p.json, which `conveyor p2p`
# reads for the footer under its matrices (OUT: write there instead; the
# test that the shipped file is current, tests/cli/band2_review.sh). With
# --points: print the points (CLASS MEASURE DATASET ERROR) and write nothing.
#
# A band needs datasets to be left out (scripts/bands.awk checks a
# collective band on datasets it was not made from): a class and measure
# with one dataset gets its in-sample errors only ("datasets": 1, no lo/hi);
# one with two is checked both ways (each dataset's cells against the
# p10-p90 of the other's), and gets a band only when both hold 80%.
set -u
. "$(dirname "$0")/nccl-env-clean.sh"
C=${1:-build/conveyor}
D=tests/data/nccltests
tmp=$(mktemp -d)
# file | topology and options (docs/validation-p2p.md, "Commands") | system
P2P_DATASETS="
11-dgx1-v100-8gpu-hybridcubemesh-p2p-bidir-matrix.txt|dgx1-v100|DGX-1 V100
13-rtx4090-8gpu-pcie-p2p-patched-driver-p2p-bidir-matrix.txt|pcie-gen4-8gpu-2socket --set p2p=on --set xsocket.GBps=20.5|8x RTX 4090
22-rtx2080ti-2gpu-pcie3-noP2P-p2pBandwidthLatencyTest.txt|pcie-gen3-2gpu|2x RTX 2080 Ti
"
echo "$P2P_DATASETS" | while IFS='|' read -r f t sys; do
    [ -n "$f" ] || continue
    # shellcheck disable=SC2086
    "$C" p2p --topo $t --format json --compare "$D/$f" > "$tmp/json" 2> "$tmp/cmp" || { echo "validate_p2p: $f failed" >&2; exit 1; }
    # the link_class rows, then the compared cells: KIND SRC DST ERROR
    { sed -n 's/.*"link_class":[[:space:]]*\[\[\(.*\)\]\].*/\1/p' "$tmp/json" | sed 's/"//g; s/\], *\[/\n/g' | awk '{ print "L", NR - 1, $0 }'
      awk '/^summary:/ { next } /^(Unidirectional|Bidirectional|P2P=|GPU)/ { k = "" }
           /Bandwidth.*Matrix/ { k = (/^Unidirectional/ ? "uni_bw" : "bi_bw") (/Disabled/ ? "_disabled" : "_enabled") }
           /^P2P=.*Latency.*Matrix/ { k = "lat_gpu" (/Disabled/ ? "_disabled" : "_enabled") } # (CPU latency: not compared)
           k != "" && $1 ~ /^[0-9]+$/ && $5 ~ /^[-+][0-9.]+$/ { print "C", k, $1, $2, $5 / 100 }' "$tmp/cmp"
    } | awk -v d="$(echo "$f" | cut -c1-2)_$(echo "$sys" | tr ' ' '_')" '$1 == "L" { gsub(/,/, " "); for (j = 3; j <= NF; j++) lc[$2, j - 3] = $j; next }
            { m = $2; sub(/_(disabled|enabled)$/, "", m); print ($2 ~ /disabled/ ? "staged" : lc[$3, $4]), m, d, $5 }'
done > "$tmp/points"
if [ "${2:-}" = "--points" ]; then cat "$tmp/points"; rm -rf "$tmp"; exit 0; fi
[ -s "$tmp/points" ] || { echo "validate_p2p: no compared cells" >&2; rm -rf "$tmp"; exit 1; }
OUT=${2:-topologies/accuracy/p2p.json}
mkdir -p "$(dirname "$OUT")"
{
    echo '{'
    echo '  "source": "make validate (scripts/validate_p2p.sh) on tests/data/nccltests, '"$(date -u +%Y-%m-%d)"'",'
    echo '  "error": "(predicted - measured) / measured, off-diagonal cells of p2pBandwidthLatencyTest matrices, by what the pair crosses (link) and what is measured (measure: uni_bw, bi_bw, lat_gpu; P2P=Disabled cells are staged)",'
    echo '  "note": "min/p10/p50/p90/max: in-sample (the model was developed against these logs). held_out: with 2 or more datasets, the share of the cells of a dataset left out that fall in the p10-p90 of the others (null: one dataset, nothing to leave out). lo/hi, a band, only where held_out reaches 0.80 with every dataset checked: none yet",'
    echo '  "classes": ['
    awk -f "$(dirname "$0")/p2p_classes.awk" "$tmp/points"
    echo '  ]'
    echo '}'
} > "$OUT"
rm -rf "$tmp"
echo "wrote $OUT"
