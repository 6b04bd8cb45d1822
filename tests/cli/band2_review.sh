# tests/cli/band2_review.sh - sourced by cases.sh (inside run.sh: $C, check,
# pass, fail). A review of the two commands that printed predictions with no
# error band (2026-12-02): `sweep` (its rows: busbw, step_ms, ...) and `p2p`
# (the GPU x GPU matrices). A sweep point now carries the band the single
# command prints for the same configuration, in columns after the figures;
# p2p prints, under the sample's layout, how far each link class was off on
# the real logs, and that there is no band (one dataset per class).
b2_dir=$(mktemp -d)
b2_fail() { fail=$((fail + 1)); echo "FAIL $1" >&2; }
# col FILE NAME ROW: the field NAME of data row ROW (1-based) of a CSV without quoted commas
b2_col() { awk -F, -v k="$2" -v r="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == k) c = i; next } NR == r + 1 { print (c ? $c : "NOCOL") }' "$1"; }
# near A B TOL: |A - B| <= TOL, both numbers
b2_near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(a != "" && b != "" && a + 0 == a && (d < 0 ? -d : d) <= t) }'; }

# 1. sweep, collective base: a point's busbw band (at the largest and the smallest size), its regime and
#    its kind are those `conveyor collective` prints for the same system and sizes (its CSV's
#    busbw_lo/hi_GBps, its --explain's regime and "(validation, held out)"): NVLink, network, PCIe
#    servers alone (pcie) and over a network (unmeasured)
cat > "$b2_dir/coll.json" <<'JSON'
{"base": "collective", "args": {"op": "all_reduce", "minbytes": "64K", "maxbytes": "64M", "stepfactor": 32},
 "vary": {"topo": ["dgx-h100", "pcie-gen5-8gpu-2socket"], "nodes": [1, 2]},
 "figures": ["busbw_at_max", "busbw_at_min", "nranks"]}
JSON
"$C" sweep -j 1 "$b2_dir/coll.json" > "$b2_dir/coll.csv" 2>&1
ok=1; row=0
for t in dgx-h100 pcie-gen5-8gpu-2socket; do for n in 1 2; do
    row=$((row + 1))
    "$C" collective --topo $t --nodes $n -b 64K -e 64M -f 32 --format csv > "$b2_dir/one.csv" 2>/dev/null
    "$C" collective --topo $t --nodes $n -b 64K -e 64M -f 32 --explain > "$b2_dir/one.txt" 2>/dev/null
    last=$(($(wc -l < "$b2_dir/one.csv") - 1))
    for w in "max $last" "min 1"; do
        set -- $w
        for e in lo hi; do
            b2_near "$(b2_col "$b2_dir/coll.csv" busbw_at_$1_${e}80 $row)" "$(b2_col "$b2_dir/one.csv" busbw_${e}_GBps $2)" 0.0011 ||
                { ok=0; echo "  $t x$n busbw_at_$1_${e}80: sweep $(b2_col "$b2_dir/coll.csv" busbw_at_$1_${e}80 $row), collective $(b2_col "$b2_dir/one.csv" busbw_${e}_GBps $2)" >&2; }
        done
    done
    rmax=$(grep '^# explain: *[0-9]' "$b2_dir/one.txt" | tail -1 | sed 's/.*\] //')
    rmin=$(grep '^# explain: *[0-9]' "$b2_dir/one.txt" | head -1 | sed 's/.*\] //')
    [ "$rmin" = "$rmax" ] && want=$rmax || want="min: $rmin; max: $rmax"
    kind=$(sed -n 's/.*80% band (validation, \([a-z -]*\)).*/\1/p' "$b2_dir/one.txt")
    [ "$(b2_col "$b2_dir/coll.csv" band_regime $row)" = "$want" ] && [ "$(b2_col "$b2_dir/coll.csv" band_kind $row)" = "$kind" ] ||
        { ok=0; echo "  $t x$n: sweep says '$(b2_col "$b2_dir/coll.csv" band_regime $row)' '$(b2_col "$b2_dir/coll.csv" band_kind $row)', collective '$want' '$kind'" >&2; }
done; done
grep -q ',network (PCIe servers: unmeasured),held out$' "$b2_dir/coll.csv" || ok=0
[ $ok = 1 ] && pass=$((pass + 1)) || b2_fail "band2-sweep-collective-same-band: a sweep point's band is not collective's (above)"

# 2. The band columns come after the figures: a reader keyed by position reads the same columns as before
h=$("$C" sweep -j 1 tests/data/sweep/small.json 2>/dev/null | head -1)
[ "$h" = "point,nodes,set.nic.gbps,set.oversubscription,busbw_at_max,avg_busbw,time_us_at_max,nranks,algo_at_max,busbw_at_max_lo80,busbw_at_max_hi80,band_regime,band_kind" ] &&
    pass=$((pass + 1)) || b2_fail "band2-sweep-columns-at-end: header '$h'"

# 3. sweep, replay base: step_ms's band is replay's "step_time_80_s" (one server: nvlink; two: network)
cat > "$b2_dir/replay.json" <<'JSON'
{"base": "replay", "args": {"topo": "dgx-h100", "gpus": 1, "trace": "docs/examples/two-rank-overlap.json"},
 "vary": {"nodes": [2]}, "figures": ["step_ms", "exposed_comm_ms"]}
JSON
cat > "$b2_dir/replay1.json" <<'JSON'
{"base": "replay", "args": {"topo": "dgx-h100", "gpus": 2, "trace": "docs/examples/two-rank-overlap.json"},
 "figures": ["step_ms"]}
JSON
ok=1
for s in "replay:--nodes 2 --gpus 1:network" "replay1:--gpus 2:nvlink"; do
    f=${s%%:*}; rest=${s#*:}; opts=${rest%%:*}; reg=${rest#*:}
    "$C" sweep -j 1 "$b2_dir/$f.json" > "$b2_dir/$f.csv" 2>&1
    # shellcheck disable=SC2086
    b=$("$C" replay --topo dgx-h100 $opts docs/examples/two-rank-overlap.json --format json 2>/dev/null | sed -n 's/.*"step_time_80_s": \[\([-0-9.e]*\), \([-0-9.e]*\)\].*/\1 \2/p')
    b2_near "$(b2_col "$b2_dir/$f.csv" step_ms_lo80 1)" "$(echo "$b" | awk '{ printf "%.6f", $1 * 1e3 }')" 0.000002 &&
        b2_near "$(b2_col "$b2_dir/$f.csv" step_ms_hi80 1)" "$(echo "$b" | awk '{ printf "%.6f", $2 * 1e3 }')" 0.000002 &&
        [ "$(b2_col "$b2_dir/$f.csv" band_regime 1)" = "$reg" ] && [ "$(b2_col "$b2_dir/$f.csv" band_kind 1)" = "held out" ] ||
        { ok=0; echo "  $f: sweep $(sed -n 2p "$b2_dir/$f.csv"), replay [$b]" >&2; }
done
[ $ok = 1 ] && pass=$((pass + 1)) || b2_fail "band2-sweep-replay-same-band"

# 4. sweep, scale base: step_ms's and tflops_per_gpu's bands are scale's CSV step_time_lo/hi_s and
#    tflops_lo/hi, the ZeRO-3 rows' band for zero 3
cat > "$b2_dir/scale.json" <<'JSON'
{"base": "scale", "args": {"topo": "dgx-h100", "model": "llama2-7b", "seq": 256, "gpus": 16, "tp": 8,
 "global_batch": 16, "micro_batch": 1}, "vary": {"zero": [1, 3]}, "figures": ["step_ms", "tflops_per_gpu"]}
JSON
"$C" sweep -j 1 "$b2_dir/scale.json" > "$b2_dir/scale.csv" 2>&1
ok=1
for z in 1 3; do
    r=$(( z == 1 ? 1 : 2 ))
    "$C" scale --model llama2-7b --systems dgx-h100:16 --seq 256 --tp 8 --global-batch 16 --micro-batch 1 --zero $z --format csv > "$b2_dir/one.csv" 2>/dev/null
    for p in "step_ms_lo80 step_time_lo_s 1000" "step_ms_hi80 step_time_hi_s 1000" "tflops_per_gpu_lo80 tflops_lo 1" "tflops_per_gpu_hi80 tflops_hi 1"; do
        set -- $p
        a=$(b2_col "$b2_dir/scale.csv" "$1" $r); b=$(b2_col "$b2_dir/one.csv" "$2" 1)
        # scale prints 6 (step) and 4 (TFLOP/s) significant figures
        awk -v a="$a" -v b="$b" -v m="$3" 'BEGIN { d = a - b * m; exit !(a != "" && b != "" && (d < 0 ? -d : d) <= 6e-4 * a) }' ||
            { ok=0; echo "  zero $z $1: sweep $a, scale $b x $3" >&2; }
    done
    want=$([ $z = 3 ] && echo "training-zero3 (A100 rows)" || echo "training (A100 rows)")
    [ "$(b2_col "$b2_dir/scale.csv" band_regime $r)" = "$want" ] || { ok=0; echo "  zero $z: band_regime '$(b2_col "$b2_dir/scale.csv" band_regime $r)'" >&2; }
done
[ $ok = 1 ] && pass=$((pass + 1)) || b2_fail "band2-sweep-scale-same-band"

# 5. p2p: under the sample's layout (its last line, the NOTE, unchanged), comment lines say what
#    is known of each link class's error and that no band is made up from one dataset
"$C" p2p --topo dgx1-v100 > "$b2_dir/p2p.txt" 2>&1
awk '/^NOTE: The CUDA Samples/ { note = NR } note && NR > note && !/^# / { bad = 1 } END { exit bad || !note || NR == note }' "$b2_dir/p2p.txt" &&
    grep -q '^#   NVLink pairs, bidirectional bandwidth: -18\.[0-9]% to -18\.[0-9]% .* of one dataset (11 DGX-1 V100); no band: one dataset' "$b2_dir/p2p.txt" &&
    grep -q '^#   NVLink pairs, unidirectional bandwidth, GPU latency: unmeasured' "$b2_dir/p2p.txt" &&
    grep -q '^# conveyor: no 80% band' "$b2_dir/p2p.txt" &&
    "$C" p2p --topo dgx1-v100 --compare "$b2_dir/p2p.txt" 2>&1 | grep -q 'summary: bi_bw_enabled cells=56 median_abs_err=0.0%' &&
    pass=$((pass + 1)) || { b2_fail "band2-p2p-footer:"; tail -8 "$b2_dir/p2p.txt" >&2; }
check band2-p2p-pcie-one-dataset 0 '^#   PCIe P2P pairs, bidirectional bandwidth: [-+0-9.]+% to \+11\.5% .*one dataset \(13 8x RTX 4090\); no band' -- p2p --topo pcie-gen4-8gpu-2socket --set p2p=on
check band2-p2p-staged-latency 0 '^#   staged pairs .*, GPU latency: -78\.6% to -76\.5% .*one dataset \(22 2x RTX 2080 Ti\)' -- p2p --topo pcie-gen3-2gpu
# 6. JSON: the same, as a field
check band2-p2p-json 0 '"why_no_band":[[:space:]]*"one dataset: nothing to leave out"' -- p2p --topo dgx1-v100 --format json

# 7. The shipped topologies/accuracy/p2p.json is what scripts/validate_p2p.sh makes of the --compare runs now
sh scripts/validate_p2p.sh "$C" "$b2_dir/p2p.json" > /dev/null 2>&1
if [ -s "$b2_dir/p2p.json" ] && [ "$(grep -v '"source"' "$b2_dir/p2p.json")" = "$(grep -v '"source"' topologies/accuracy/p2p.json 2>/dev/null)" ]; then
    pass=$((pass + 1)); else b2_fail "band2-p2p-shipped-current: topologies/accuracy/p2p.json is not what scripts/validate_p2p.sh makes now (make validate)"; fi
# 8. ... and it holds no band that was not checked on a dataset left out
awk '/"link"/ && /"lo"/ && !/"held_out": 0\.([89][0-9])|"held_out": 1\.00/ { bad = 1 } /"link"/ { n++ } END { exit bad || n < 3 }' topologies/accuracy/p2p.json 2>/dev/null &&
    grep -q '"link": "nvlink", "measure": "bi_bw", "datasets": 1,' topologies/accuracy/p2p.json &&
    pass=$((pass + 1)) || b2_fail "band2-p2p-no-unchecked-band"

rm -rf "$b2_dir"
