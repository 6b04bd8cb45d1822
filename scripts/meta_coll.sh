#!/bin/sh
# Metamorphic and invariant checks of the collective and fabric models (meta-coll review).
# Not a CI test (it takes minutes); sh + awk only.
#
#   scripts/meta_coll.sh collect   run the grid (topo x nodes x op x algo x proto, 8 B..4 GiB x2)
#   scripts/meta_coll.sh mono      size monotonicity over the grid (forced algo/proto)
#   scripts/meta_coll.sh bound     busbw against per-GPU link and per-node NIC bounds
#   scripts/meta_coll.sh tuner     tuner pick vs best forced (algo, proto) at >= 1 MiB
#   scripts/meta_coll.sh links     faster links never slower (nic.gbps, nvlink.links, fabric)
#   scripts/meta_coll.sh det       byte-identical reruns; --exact vs default
#   scripts/meta_coll.sh conserve  --timeline bytes per link against closed forms (64 MiB)
#   scripts/meta_coll.sh all
#
# Env: CONVEYOR (binary, build/conveyor), OUT (work dir, /tmp/meta_coll), JOBS (2),
#      TOPOS, NODES, OPS (override the grid), F (size factor, 2), TOL (tolerance, 0.01),
#      LTOPOS, LNODES, LOPS, LPROTOS (the links grid).
C=${CONVEYOR:-build/conveyor}
OUT=${OUT:-/tmp/meta_coll}
JOBS=${JOBS:-2}
TOL=${TOL:-0.01}
TOPOS=${TOPOS:-"dgx-a100 dgx-h100 hgx-h200 hgx-b200 gb200-nvl72 aws-p5 dgx1-v100 dgx2-v100 pcie-gen4-8gpu-2socket pcie-gen3-2gpu pcie-gen4-4gpu pcie-gen5-8gpu-2socket"}
NODES=${NODES:-"1 2 3 4 8 16"}
OPS=${OPS:-"all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv gather scatter"}
ALGOS="- ring tree nvls nvlstree collnetdirect collnetchain pat"
PROTOS="- ll ll128 simple"
mkdir -p "$OUT/runs"

# one grid point: topo nodes op algo proto -> $OUT/runs/<key>.csv (.exp: explain, .rc)
one() {
    t=$1 n=$2 op=$3 a=$4 p=$5
    key="$t.$n.$op.$a.$p"
    f="$OUT/runs/$key"
    [ -f "$f.rc" ] && return 0
    set -- --topo "$t" -N "$n" --op "$op" -b 8 -e 4G -f "${F:-2}" --format csv --explain
    [ "$a" != - ] && set -- "$@" --algo "$a"
    [ "$p" != - ] && set -- "$@" --proto "$p"
    timeout 60 "$C" collective "$@" >"$f.csv" 2>"$f.exp"
    echo $? >"$f.rc"
}

collect() {
    for t in $TOPOS; do
        nics=$("$C" topo show "$t" | awk '/NIC\(s\)/ {for (i=1;i<=NF;i++) if ($i ~ /NIC\(s\)/) print $(i-1)}')
        for n in $NODES; do
            [ "$n" -gt 1 ] && [ "${nics:-0}" = 0 ] && continue
            for op in $OPS; do for a in $ALGOS; do for p in $PROTOS; do
                echo "$t $n $op $a $p"
            done; done; done
        done
    done | xargs -P "$JOBS" -L 1 sh "$0" one
}

# size monotonicity: time(size_i) >= time(size_{i-1}) x (1 - TOL) in every forced run
mono() {
    for f in "$OUT"/runs/*.csv; do
        k=${f##*/}; k=${k%.csv}
        [ "$(cat "${f%.csv}.rc")" = 0 ] || continue
        awk -F, -v k="$k" -v tol="$TOL" '
            NR > 1 && $1 ~ /^[0-9]/ {
                if (have && $6 < prev * (1 - tol))
                    printf "MONO %s: %s B %.2f us < %s B %.2f us (%.1f%%)\n", k, $1, $6, ps, prev, 100 * ($6 / prev - 1)
                prev = $6; ps = $1; have = 1 }' "$f"
    done
}

# per-GPU sum of link rates x eff (all links of n0.gpu0) and per-node NIC rate x eff
linkrates() {
    t=$1
    { "$C" topo show "$t" -n 2 2>/dev/null || "$C" topo show "$t"; } | awk '
        $2 == "--" && ($1 == "n0.gpu0" || $3 == "n0.gpu0") { for (i = 1; i <= NF; i++) if ($i == "GB/s") g += $(i-1) * $(i+2) }
        $2 == "--" && $1 ~ /^n0\.nic/ && $3 ~ /^leaf/ { for (i = 1; i <= NF; i++) if ($i == "GB/s") nic += $(i-1) * $(i+2) }
        / domain of / { for (i = 1; i <= NF; i++) if ($i == "domain") dom = $(i+2) }
        END { printf "%.3f %.3f %d\n", g, nic, dom }'
}

# busbw bounds that hold for any algorithm (a GPU must receive (n-1)/n S of an
# all_gather, ...) and the ring's (every node's ring exit carries busbw x t)
bound() {
    for t in $TOPOS; do
        set -- $(linkrates "$t"); gpu=$1 nic=$2 dom=$3
        ppn=$("$C" topo show "$t" | awk '/node\(s\) x/ {print $4}')
        for f in "$OUT"/runs/"$t".*.csv; do
            k=${f##*/}; k=${k%.csv}
            [ "$(cat "${f%.csv}.rc")" = 0 ] || continue
            echo "$k" | awk -F. -v gpu="$gpu" -v nic="$nic" -v dom="$dom" -v ppn="$ppn" -v f="$f" -v k="$k" '
            { n = $2; op = $3; a = $4
              N = n; if (dom > 1 && n <= dom) N = 1     # an NVLink domain across trays is one node
              ranks = n * ppn
              # all_reduce: a GPU sends >= (n-1)/n S -> busbw <= 2 x gpu; ring: <= gpu
              # others: busbw <= gpu
              gb = gpu; if (op == "all_reduce" && a != "ring") gb = 2 * gpu
              nb = 1e30
              if (N > 1) {
                  # node receives >= (N-1)/N S (all_gather, broadcast, all_reduce result)
                  fac = N / (N - 1)
                  if (op == "all_reduce") nb = nic * fac * 2 * (ranks - 1) / ranks
                  else if (op == "all_gather" || op == "reduce_scatter" || op == "alltoall") nb = nic * fac * (ranks - 1) / ranks
                  else if (op == "broadcast" || op == "reduce") nb = nic
                  if (a == "ring" && (op == "all_reduce" || op == "all_gather" || op == "reduce_scatter" || op == "broadcast" || op == "reduce")) nb = nic
              }
              while ((getline line < f) > 0) {
                  split(line, c, ",")
                  if (c[1] !~ /^[0-9]/) continue
                  bw = c[8] + 0
                  if (bw > gb * 1.001) printf "BOUND %s: %s B busbw %.2f > per-GPU bound %.2f\n", k, c[1], bw, gb
                  if (bw > nb * 1.001) printf "BOUND %s: %s B busbw %.2f > per-node NIC bound %.2f\n", k, c[1], bw, nb
              } }'
            # no link busier than the run
            awk -v k="$k" '/^# explain: +[0-9]/ { u = $8; sub(/%/, "", u); if (u + 0 > 100) printf "UTIL %s: %s B %s %s%%\n", k, $3, $7, u }' "${f%.csv}.exp"
        done
    done
}

# tuner's pick vs the best forced (algo, proto) at >= 1 MiB
tuner() {
    for d in "$OUT"/runs/*.-.-.csv; do
        base=${d%.-.-.csv}; k=${base##*/}
        [ "$(cat "$base.-.-.rc")" = 0 ] || continue
        for g in "$base".*.*.csv; do
            [ "$g" = "$d" ] && continue
            case $g in *.collnet*) continue ;; esac   # off unless NCCL_COLLNET_ENABLE=1
            [ "$(cat "${g%.csv}.rc")" = 0 ] || continue
            tag=${g#$base.}; tag=${tag%.csv}
            awk -F, -v tag="$tag" '$1 ~ /^[0-9]/ && $1 >= 1048576 {print $1 "," $6 "," tag}' "$g"
        done | sort -t, -k1,1n -k2,2g | awk -F, '!seen[$1]++' >"$OUT/best.$k"
        awk -F, 'NR == FNR {best[$1] = $2; who[$1] = $3; next}
                 $1 ~ /^[0-9]/ && ($1 in best) && $6 > 1.25 * best[$1] {
                     printf "TUNER %s: %s B pick %.2f us, forced %s %.2f us (+%.0f%%)\n", k, $1, $6, who[$1], best[$1], 100 * ($6 / best[$1] - 1) }' \
            k="$k" "$OUT/best.$k" "$d"
    done
}

# rerun a command: same stdout; a faster parameter never slower (same forced algo/proto)
cmp_times() { # label slow.csv fast.csv: fast must not be slower than slow by > TOL
    awk -F, -v l="$1" -v tol="$TOL" 'NR == FNR {if ($1 ~ /^[0-9]/) s[$1] = $6; next}
        $1 ~ /^[0-9]/ && ($1 in s) && $6 > s[$1] * (1 + tol) {
            printf "LINKS %s: %s B faster links %.2f us > %.2f us (+%.1f%%)\n", l, $1, $6, s[$1], 100 * ($6 / s[$1] - 1) }' "$2" "$3"
}
links() {
    d="$OUT/links"; mkdir -p "$d"
    for t in ${LTOPOS:-dgx-a100 dgx-h100 hgx-b200 aws-p5 dgx1-v100 pcie-gen5-8gpu-2socket}; do
        g=$($C topo show $t | awk '/NIC\(s\) x/ {for (i=1;i<=NF;i++) if ($i == "Gb/s") {print $(i-1); exit}}')
        l=$($C topo show $t | awk '/^  params:/ {for (i=1;i<=NF;i++) if ($i ~ /^nvlink.links=/) {sub(/.*=/, "", $i); print $i}}')
        for n in ${LNODES:-2 4}; do for op in ${LOPS:-all_reduce all_gather}; do
            for a in ring tree nvlstree pat collnetdirect; do for p in ${LPROTOS:-ll128 simple}; do
                base="--topo $t -N $n --op $op --algo $a --proto $p -b 8 -e 4G -f 8 --format csv"
                $C collective $base >"$d/s.csv" 2>/dev/null || continue
                # a NIC runs at the slower of itself and the fabric's port: 800G NICs on XDR
                $C collective $base --fabric ib-xdr --set nic.gbps=800 >"$d/f.csv" 2>/dev/null &&
                    cmp_times "$t.$n.$op.$a.$p ib-xdr nic.gbps=800" "$d/s.csv" "$d/f.csv"
                $C collective $base --set nic.gbps=$((g / 2)) >"$d/f.csv" 2>/dev/null &&
                    cmp_times "$t.$n.$op.$a.$p nic.gbps=$((g / 2)) (slower NIC must not be faster)" "$d/f.csv" "$d/s.csv"
                [ -n "$l" ] && $C collective $base --set nvlink.links=$((l / 2)) >"$d/f.csv" 2>/dev/null &&
                    cmp_times "$t.$n.$op.$a.$p nvlink.links=$((l / 2)) (slower NVLink must not be faster)" "$d/f.csv" "$d/s.csv"
                $C collective $base --fabric ib-hdr >"$d/f.csv" 2>/dev/null &&
                    cmp_times "$t.$n.$op.$a.$p ib-hdr (slower fabric must not be faster)" "$d/f.csv" "$d/s.csv"
            done; done
        done; done
    done
}

det() {
    d="$OUT/det"; mkdir -p "$d"
    for args in "--topo dgx-h100 -N 16 -b 1M -e 1G -f 8" "--topo dgx-a100 -N 4 --op all_gather -b 8 -e 1G -f 16" \
                "--topo gb200-nvl72 -N 18 -b 1M -e 4G -f 16" "--topo dgx-h100 -N 2 --op alltoall -b 8 -e 1G -f 16" \
                "--topo pcie-gen4-8gpu-2socket -b 8 -e 1G -f 16" "--topo aws-p5 -N 3 --op reduce_scatter -b 8 -e 1G -f 16"; do
        $C collective $args >"$d/a" 2>&1; $C collective $args >"$d/b" 2>&1
        cmp -s "$d/a" "$d/b" || echo "DET: not byte-identical: $args"
    done
    # folded rings (> 8 nodes), NVLS pieces, alltoall cut-through: --exact near the default
    for args in "--topo dgx-h100 -N 12 --algo ring --proto simple -b 1M -e 1G -f 8" \
                "--topo dgx-h100 -N 16 --op all_gather --algo ring --proto ll128 -b 1M -e 1G -f 8" \
                "--topo dgx-a100 -N 12 --op reduce_scatter --algo ring -b 1M -e 1G -f 8" \
                "--topo hgx-b200 --algo nvls -b 1M -e 4G -f 8" \
                "--topo gb200-nvl72 -N 2 --algo nvls -b 1M -e 4G -f 8" \
                "--topo dgx-h100 -N 2 --algo nvlstree -b 1M -e 1G -f 8" \
                "--topo dgx-h100 -N 16 --op alltoall -b 64K -e 256M -f 16"; do
        $C collective $args --format csv >"$d/a" 2>/dev/null || continue
        $C collective $args --format csv --exact >"$d/b" 2>/dev/null || continue
        awk -F, -v l="$args" 'NR == FNR {if ($1 ~ /^[0-9]/) s[$1] = $6; next}
            $1 ~ /^[0-9]/ && ($1 in s) { r = s[$1] / $6 - 1; if (r > 0.03 || r < -0.03)
                printf "EXACT %s: %s B default %.2f us, --exact %.2f us (%+.1f%%)\n", l, $1, s[$1], $6, 100 * r }' "$d/a" "$d/b"
    done
}

# bytes a link carried in a --timeline (its chunks' "bytes"), per link name
tl_bytes() {
    awk '/"thread_name","pid":1,/ { match($0, /"tid":[0-9]+/); t = substr($0, RSTART+6, RLENGTH-6)
                                    match($0, /"name":"[^"]*"}}/); nm[t] = substr($0, RSTART+8, RLENGTH-11) }
         /"name":"chunk","pid":1,/ { match($0, /"tid":[0-9]+/); t = substr($0, RSTART+6, RLENGTH-6)
                                     match($0, /"bytes":[0-9]+/); b[t] += substr($0, RSTART+8, RLENGTH-8) }
         END { for (t in b) print nm[t], b[t] }' "$1"
}
# check: label, link regexp, expected bytes per matching link (every one), timeline args...
expect_bytes() {
    l=$1 re=$2 want=$3; shift 3
    $C collective "$@" --timeline "$OUT/tl.json" >/dev/null 2>&1 || { echo "CONSERVE $l: run failed"; return; }
    tl_bytes "$OUT/tl.json" | awk -v l="$l" -v re="$re" -v w="$want" '
        $1 ~ re { n++; r = $2 / w - 1; if (r > 0.001 || r < -0.001) printf "CONSERVE %s: %s carried %d B, expected %.0f\n", l, $1, $2, w }
        END { if (!n) printf "CONSERVE %s: no link matches %s\n", l, re }'
}
conserve() {
    S=67108864
    expect_bytes "ring all_reduce Simple: 2(n-1)/n S" 'gpu[0-9]->n0.nvsw' $((2 * 7 * S / 8)) --topo dgx-h100 --algo ring --proto simple -b 64M -e 64M
    expect_bytes "ring all_reduce LL: x2 wire" 'gpu[0-9]->n0.nvsw' $((2 * 2 * 7 * S / 8)) --topo dgx-h100 --algo ring --proto ll -b 64M -e 64M
    expect_bytes "ring all_reduce LL128: /0.9375 wire" 'gpu[0-9]->n0.nvsw' 125269886 --topo dgx-h100 --algo ring --proto ll128 -b 64M -e 64M
    expect_bytes "ring all_gather: (n-1)/n S" 'nvsw->n0.gpu' $((7 * S / 8)) --topo dgx-h100 --op all_gather --algo ring -b 64M -e 64M
    expect_bytes "alltoall: (n-1)/n S" 'gpu[0-9]->n0.nvsw' $((7 * S / 8)) --topo dgx-h100 --op alltoall -b 64M -e 64M
    expect_bytes "broadcast chain: S into every non-root" 'nvsw->n0.gpu[1-7]' $S --topo dgx-h100 --op broadcast --algo ring --proto simple -b 64M -e 64M
    expect_bytes "NVLS all_reduce: S(1+1/n)/nvlsEff up" 'gpu[0-9]->n0.nvsw' 88820352 --topo dgx-h100 --algo nvls -b 64M -e 64M
    expect_bytes "NVLS all_gather: S/nvlsEff down" 'nvsw->n0.gpu' 78951424 --topo dgx-h100 --op all_gather --algo nvls -b 64M -e 64M
    expect_bytes "2-node ring: 2(n-1)/n S / 8 rails per NIC" 'nic[0-9]->leaf' $((2 * 15 * S / 16 / 8)) --topo dgx-h100 -N 2 --algo ring --proto simple -b 64M -e 64M
    expect_bytes "2-node tree: S/8 per NIC" 'nic[0-9]->leaf' $((S / 8)) --topo dgx-h100 -N 2 --algo tree --proto simple -b 64M -e 64M
    expect_bytes "2-node NVLSTree: S/8 per NIC" 'nic[0-9]->leaf' $((S / 8)) --topo dgx-h100 -N 2 --algo nvlstree -b 64M -e 64M
    expect_bytes "2-node CollNetDirect: S/8 per NIC" 'nic[0-9]->leaf' $((S / 8)) --topo dgx-h100 -N 2 --algo collnetdirect -b 64M -e 64M
    # rails: every NIC of a server carries its share of a ring (fails on DGX-1/DGX-2: 12 channels, c mod ppn)
    expect_bytes "2-node ring on DGX-1: every NIC 1/4" 'n0.nic[0-9]->leaf' $((2 * 15 * S / 16 / 4)) --topo dgx1-v100 -N 2 --algo ring --proto simple -b 64M -e 64M
}

case ${1:-all} in
    collect|mono|bound|tuner|links|det|conserve) "$1" ;;
    all) collect; mono; bound; tuner; links; det; conserve ;;
    one) shift; one "$@" ;;
    *) echo "usage: $0 collect|mono|bound|tuner|links|det|conserve|all" >&2; exit 2 ;;
esac
