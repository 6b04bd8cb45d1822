#!/bin/sh
# scripts/meta_scale.sh - metamorphic and invariant checks of the workload
# generator, the compute model and `conveyor scale` (sh + awk; no python).
#
#   scripts/meta_scale.sh [build/conveyor]      QUICK=1: fewer configurations
#
# Each check prints PASS/FAIL lines; a violation that is known and reported
# (not fixed) prints KNOWN instead of FAIL and does not fail the run (and
# UNEXPECTED-PASS when it no longer happens). Exit 1 on any FAIL.
C=${1:-build/conveyor}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 known=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
kbad() { known=$((known + 1)); echo "KNOWN $*"; }

# csv field by name of row N (1 = first data row)
field() { # FILE NAME ROW
    awk -F, -v k="$2" -v r="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == k) c = i; next } NR == r + 1 { print $c }' "$1"
}
scale_csv() { # OUT ARGS...
    o=$1; shift
    "$C" scale "$@" --format csv >"$o" 2>"$T/err" || { echo "ERR scale $*: $(tail -1 "$T/err")"; return 1; }
}
rows() { awk 'END { print NR - 1 }' "$1"; }

# A <= B x (1 + tol) for every row's step (B: the variant that must not be slower)
not_slower() { # NAME TOL KNOWN(0/1) -- BASE ARGS --A ARGS --B ARGS (split with '|')
    name=$1 tol=$2 kn=$3 base=$4 a=$5 b=$6
    # shellcheck disable=SC2086
    scale_csv "$T/a.csv" $base $a || { bad "$name: run A"; return; }
    # shellcheck disable=SC2086
    scale_csv "$T/b.csv" $base $b || { bad "$name: run B"; return; }
    v=$(awk -F, -v tol="$tol" 'FNR == 1 { next } NR == FNR { a[FNR] = $9; g[FNR] = $3; next }
        { if ($9 > a[FNR] * (1 + tol)) printf "%s GPUs: %.6g s -> %.6g s (%+.2f%%); ", g[FNR], a[FNR], $9, ($9 / a[FNR] - 1) * 100 }' \
        "$T/a.csv" "$T/b.csv")
    if [ -z "$v" ]; then
        [ "$kn" = 1 ] && echo "UNEXPECTED-PASS $name: $base [$a] vs [$b]"
        ok
    elif [ "$kn" = 1 ]; then
        kbad "$name: $base [$a] -> [$b]: $v"
    else
        bad "$name: $base [$a] -> [$b]: $v"
    fi
}

M1="--model custom --layers 4 --hidden 2048 --heads 16 --seq 1024"
M2="--model custom --layers 4 --hidden 4096 --heads 32 --gated --kv-heads 8 --seq 1024"
M3="--model custom --layers 8 --hidden 1024 --heads 8 --seq 512"
if [ -n "$QUICK" ]; then
    SYS="dgx-h100:8/16 gb200-nvl72:8/16"
    LAY="none --tp=2,--pp=2 --zero=1 --sp,--tp=4 --dtype=fp8"
else
    SYS="dgx-a100:8/16 dgx-h100:8/16/32 hgx-h200:8/16 hgx-b200:8/16 gb200-nvl72:8/16"
    LAY="none --tp=2,--pp=2 --tp=1,--pp=4,--global-batch=16 --zero=1 --zero=2 --sp,--tp=4 --cp=2,--tp=2 --dtype=fp8 --tp=2,--pp=2,--schedule=interleaved:2,--global-batch=16 --tp=8,--micro-batch=2"
fi
lay() { [ "$1" = none ] && return; echo "$1" | tr ',' ' ' | sed 's/=/ /g'; }

# ---- 1. monotonicity ----
for m in "$M1" "$M2" "$M3"; do
    for s in $SYS; do
        for l in $LAY; do
            base="$m --systems $s $(lay "$l")"
            "$C" scale $base --format csv >/dev/null 2>&1 || continue # layout not possible for this model
            not_slower "gemm_eff 0.5->0.7" 1e-9 0 "$base" "--set gpu.gemm_eff=0.5" "--set gpu.gemm_eff=0.7"
            not_slower "recompute->none" 1e-9 0 "$base" "--recompute" ""
            case $s in *:8/*|*:8) ;; esac
            case $s in gb200*) ;; *) not_slower "nic 200->800 Gb/s" 1e-9 0 "$base" "--set nic.gbps=200" "--set nic.gbps=800" ;; esac
            case $s in dgx-a100* | dgx-h100* | hgx-*) not_slower "ib-ndr->ib-xdr" 1e-9 0 "$base" "--fabric ib-ndr" "--fabric ib-xdr" ;; esac
        done
    done
done
# fp8 on GEMM-bound shapes (one GPU, wide layers): never slower than bf16
for s in dgx-h100 hgx-h200 hgx-b200 gb200-nvl72; do
    not_slower "bf16->fp8 GEMM-bound" 1e-9 0 "--model custom --layers 2 --hidden 8192 --heads 64 --seq 2048 --systems $s:1 --tp 1 --pp 1" "" "--dtype fp8"
done
# fp8 recipes: tensorwise does what delayed does plus an amax pass a cast and TP amax reductions: never
# faster; on Blackwell the per-tensor recipes (one copy read both ways) never slower than mxfp8
for s in dgx-h100:16 hgx-b200:16 gb200-nvl72:16; do
    not_slower "fp8 tensorwise->delayed" 1e-9 0 "$M1 --systems $s --tp 4 --sp --zero 1 --dtype fp8" "--fp8-recipe tensorwise" "--fp8-recipe delayed"
    case $s in dgx-h100*) ;; *) not_slower "fp8 mxfp8->delayed" 1e-9 0 "$M1 --systems $s --tp 4 --sp --zero 1 --dtype fp8" "--fp8-recipe mxfp8" "--fp8-recipe delayed" ;; esac
done
# MoE dispatch: DeepEP's flex sends a token once per NVLink domain, so across servers it never moves
# more bytes between them than alltoall's copy per expert (never slower there); node-limited routing
# (fewer domains and GPUs a token reaches) never slower than a wider limit
MF="--model custom --layers 2 --hidden 1024 --heads 8 --experts 64 --topk 8 --expert-ffn 512 --gated --seq 1024"
for s in dgx-h100:32 hgx-b200:32; do
    not_slower "moe alltoall->flex across servers" 1e-9 0 "$MF --systems $s --ep 32 --global-batch 32" "" "--moe-token-dispatcher-type flex"
    not_slower "moe flex groups 4 of 4->1 of 4" 1e-9 0 "$MF --systems $s --ep 32 --global-batch 32 --moe-token-dispatcher-type flex --moe-router-num-groups 4" "--moe-router-group-topk 4" "--moe-router-group-topk 1"
done
# MoE capacity (balanced routing): padding to a larger capacity never faster; padded to 1 the step is
# the dropless one (both ways); multi-token prediction and a wider MLA key-value latent add work, never
# faster (2026-12-03)
for s in dgx-h100:32 hgx-b200:32; do
    not_slower "moe capacity padded 1.5->1" 1e-9 0 "$MF --systems $s --ep 32 --global-batch 32 --moe-pad-expert-input-to-capacity" "--moe-expert-capacity-factor 1.5" "--moe-expert-capacity-factor 1"
    not_slower "moe capacity padded 1->dropless" 1e-9 0 "$MF --systems $s --ep 32 --global-batch 32" "--moe-expert-capacity-factor 1 --moe-pad-expert-input-to-capacity" ""
    not_slower "moe dropless->capacity padded 1" 1e-9 0 "$MF --systems $s --ep 32 --global-batch 32" "" "--moe-expert-capacity-factor 1 --moe-pad-expert-input-to-capacity"
done
ML="--model custom --layers 4 --hidden 2048 --heads 16 --gated --seq 1024 --kv-lora-rank 512"
for s in dgx-h100:8/16 gb200-nvl72:8/16; do
    not_slower "mtp 1->none" 1e-9 0 "$ML --systems $s --tp 2 --pp 2 --sp --global-batch 16" "--mtp-num-layers 1" ""
    not_slower "mla kv latent 1024->128" 1e-9 0 "--model custom --layers 4 --hidden 2048 --heads 16 --gated --seq 1024 --systems $s --tp 2 --sp" "--kv-lora-rank 1024" "--kv-lora-rank 128"
done
# full recomputation's methods: rerunning fewer layers (block N) never slower than all, none never slower
# than block; block over a stage's every layer and uniform with N layers a checkpoint run what full
# recomputation runs (both ways); selective 'moe' never faster than none; gradients reduced after the
# backward never faster than beside it; a pipeline layout saying what the split rule says gives the same
# step (both ways) (2026-12-03, stop 44)
MB="--model custom --layers 8 --hidden 2048 --heads 16 --gated --seq 1024"
MM="--model custom --layers 4 --hidden 1024 --heads 8 --gated --experts 16 --topk 2 --expert-ffn 1024 --seq 1024"
for s in dgx-h100:8/16 gb200-nvl72:8/16; do
    not_slower "recompute full->block 2" 1e-9 0 "$MB --systems $s --tp 2 --pp 2 --global-batch 16" "--recompute" "--recompute --recompute-method block --recompute-num-layers 2"
    not_slower "recompute block 2->none" 1e-9 0 "$MB --systems $s --tp 2 --pp 2 --global-batch 16" "--recompute --recompute-method block --recompute-num-layers 2" ""
    not_slower "recompute block 4 (all)->full" 1e-9 0 "$MB --systems $s --tp 2 --pp 2 --global-batch 16" "--recompute --recompute-method block --recompute-num-layers 4" "--recompute"
    not_slower "recompute full->block 4 (all)" 1e-9 0 "$MB --systems $s --tp 2 --pp 2 --global-batch 16" "--recompute" "--recompute --recompute-method block --recompute-num-layers 4"
    not_slower "recompute uniform 2->1" 1e-9 0 "$MB --systems $s --tp 2 --pp 2 --global-batch 16 --recompute" "--recompute-num-layers 2" ""
    not_slower "recompute uniform 1->2" 1e-9 0 "$MB --systems $s --tp 2 --pp 2 --global-batch 16 --recompute" "" "--recompute-num-layers 2"
    not_slower "selective moe->none" 1e-9 0 "$MM --systems $s --ep 8 --global-batch 16" "--recompute-granularity selective --recompute-modules moe" ""
    not_slower "layout = split rule" 1e-9 0 "$MB --systems $s --tp 2 --pp 2 --global-batch 16" "--pipeline-model-parallel-layout Et*4|t*4L" ""
    not_slower "dp grads after the backward->beside it" 1e-9 0 "$MB --systems $s --tp 2 --zero 1 --global-batch 16" "--no-overlap-grad-reduce" ""
    not_slower "split rule = layout" 1e-9 0 "$MB --systems $s --tp 2 --pp 2 --global-batch 16" "" "--pipeline-model-parallel-layout Et*4|t*4L"
done
# flash attention (the causal mask's tiles skipped) never slower than the full product (one sequence
# length and TP each; unfused has no CP); an MoE list that says what --moe-layer-freq 2 says gives the same step (both ways)
# (2026-12-03, stop 45)
MA="--model custom --layers 4 --hidden 2048 --heads 16 --kv-heads 8 --gated --seq 4096"
for s in dgx-h100:8/16 gb200-nvl72:8/16; do
    not_slower "attention unfused->flash" 1e-9 0 "$MA --systems $s --tp 2 --global-batch 8" "--attention-backend unfused" ""
    not_slower "attention unfused->flash seq 1024 tp 1" 1e-9 0 "$MA --systems $s --tp 1 --seq 1024 --global-batch 16" "--attention-backend unfused" ""
    not_slower "attention unfused->flash pp 2 recompute" 1e-9 0 "$MA --systems $s --tp 2 --pp 2 --recompute --global-batch 8" "--attention-backend unfused" ""
    not_slower "moe list = freq 2" 1e-9 0 "$MM --systems $s --ep 8 --global-batch 16" "--moe-layer-freq ([1]+[0])*2" "--moe-layer-freq 2"
    not_slower "moe freq 2 = list" 1e-9 0 "$MM --systems $s --ep 8 --global-batch 16" "--moe-layer-freq 2" "--moe-layer-freq ([1]+[0])*2"
done
# combined 1F1B (--overlap-moe-expert-parallel-comm) never slower than without at pp 1 (the all-to-alls
# beside the other microbatch's kernels), within a server and across two (2026-12-03, stop 46)
for s in dgx-h100:8/16 gb200-nvl72:8/16; do
    not_slower "moe combined 1F1B" 1e-9 0 "$MM --systems $s --ep 8 --global-batch 32" "" "--overlap-moe-expert-parallel-comm"
    not_slower "moe combined 1F1B sp tp 2" 1e-9 0 "$MM --systems $s --ep 4 --tp 2 --sp --global-batch 32" "" "--overlap-moe-expert-parallel-comm"
done
# a sliding window or chunks never make a step longer than full attention, a smaller window never longer
# than a larger one; a busier EP rank (--moe-load-imbalance) never makes one shorter, within a server and
# across two, with TP and with combined 1F1B (2026-12-03, stop 47)
MW="--model custom --layers 4 --hidden 2048 --heads 16 --kv-heads 4 --gated --seq 8192"
for s in dgx-h100:8/16 gb200-nvl72:8/16; do
    not_slower "window 2048 vs full" 1e-9 0 "$MW --systems $s --tp 2 --global-batch 8" "" "--window-size 2048"
    not_slower "window 512 vs 2048 every 2nd full" 1e-9 0 "$MW --systems $s --tp 2 --global-batch 8 --window-attn-skip-freq 2" "--window-size 2048" "--window-size 512"
    not_slower "chunks 2048 vs full cp a2a" 1e-9 0 "$MW --systems $s --tp 2 --cp 2 --cp-comm a2a --global-batch 8" "" "--attention-chunk-size 2048"
    not_slower "imbalance 1 vs 1.5" 1e-9 0 "$MM --systems $s --ep 8 --global-batch 32" "--moe-load-imbalance 1.5" "--moe-load-imbalance 1"
    not_slower "imbalance 1.5 vs 3 tp 2 sp" 1e-9 0 "$MM --systems $s --ep 4 --tp 2 --sp --global-batch 32" "--moe-load-imbalance 3" "--moe-load-imbalance 1.5"
    not_slower "imbalance 1 vs 2 combined 1F1B" 1e-9 0 "$MM --systems $s --ep 8 --global-batch 32 --overlap-moe-expert-parallel-comm" "--moe-load-imbalance 2" "--moe-load-imbalance 1"
done
# known (reported): ZeRO-3 across servers, where the replay's reuse of isolated collective runs
# let gathers and reduce-scatters overlap without contending (see the report / --exact); since
# 2026-12-03 they share links in proportion to their loads (docs/traces.md, "Reuse", step 4) and
# these two hold (checks again); the --exact one below is the engine's own
not_slower "gemm_eff 0.6->0.7 ZeRO-3" 1e-9 0 "--model custom --layers 2 --hidden 4096 --heads 32 --gated --kv-heads 8 --seq 1024 --systems dgx-h100:16 --zero 3" "--set gpu.gemm_eff=0.6" "--set gpu.gemm_eff=0.7"
not_slower "sm_share 0->1 (compute slowed) ZeRO-3" 1e-9 0 "--model custom --layers 2 --hidden 4096 --heads 32 --gated --kv-heads 8 --seq 1024 --systems dgx-h100:16 --zero 3" "--set gpu.sm_share=1" "--set gpu.sm_share=0"
not_slower "recompute->none ZeRO-3 exact" 1e-9 1 "$M2 --systems dgx-h100:16 --zero 3 --exact" "--recompute" ""

# ---- 2. closed forms ----
# model FLOPs = 3 x forward matmul FLOPs: per token per layer 2(h(h+2kv) + h^2 + g h F + F h) + 4 s h, plus 2 h V
for c in "2 1024 8 8 4096 51200 0 512" "3 2048 16 4 5632 32000 1 1024" "5 4096 32 8 14336 128256 1 2048" "8 1536 12 12 6144 1000 0 256" "4 8192 64 8 28672 32000 1 2048"; do
    set -- $c
    g=""; [ "$7" = 1 ] && g="--gated"
    for l in "--tp 1" "--tp 2 --pp 2 --global-batch 8" "--tp 4 --cp 2" "--tp 2 --recompute --sp"; do
        out=$("$C" workload --model custom --layers "$1" --hidden "$2" --heads "$3" --kv-heads "$4" --ffn "$5" --vocab "$6" $g --seq "$8" $l -o /dev/null 2>&1) || continue
        r=$(echo "$out" | awk -v L="$1" -v h="$2" -v A="$3" -v K="$4" -v F="$5" -v V="$6" -v g="$7" -v s="$8" '
            /sequences x/ { for (i = 1; i <= NF; i++) if ($i == "sequences") B = $(i - 1) }
            /model FLOPs per step/ { f = $5 }
            END { kv = h * K / A; gg = g ? 2 : 1
                  c = 3 * B * s * (L * (2 * (h * (h + 2 * kv) + h * h + gg * h * F + F * h) + 4 * s * h) + 2 * h * V)
                  d = f / c - 1; if (d < 0) d = -d; print (d < 1e-3 ? "ok" : "bad " f " vs " c) }')
        [ "$r" = ok ] && ok || bad "model FLOPs closed form ($c $l): $r"
    done
done

# tokens/s x step = tokens per step; TFLOP/s = MFU x peak x (1 without recompute);
# speedup and efficiency from tokens/s against the smallest size; 0 <= net% <= exposed% <= 100%
row_checks() { # FILE PEAK_TFLOPS RECOMPUTE(0/1) SEQ
    awk -F, -v pk="$2" -v rc="$3" -v seq="$4" 'NR == 1 { next }
        { sys = $1; n = $3 + 0; tok[NR] = $10; gp[NR] = n; sy[NR] = sys; sp[NR] = $13; ef[NR] = $14
          if (!(sys in base) || n < base[sys]) { base[sys] = n; btok[sys] = $10 }
          e = $9 * $10 / ($7 * seq) - 1; if (e < 0) e = -e; if (e > 1e-6) print "tokens/s x step != tokens: " $0
          r = $11 / ($12 * pk); if (!rc && (r < 0.995 || r > 1.005)) print "TFLOP/s / (MFU peak) = " r ": " $0
          if (rc && r < 1.0) print "recompute: TFLOP/s under MFU x peak: " $0
          if ($15 < 0 || $15 > 1 || $21 < 0 || $21 > $15 + 1e-4) print "exposed/net out of range: " $0 }
        END { for (i in tok) { s = tok[i] / btok[sy[i]]; e = s / (gp[i] / base[sy[i]])
              if (s - sp[i] > 0.00051 || sp[i] - s > 0.00051 || e - ef[i] > 0.00051 || ef[i] - e > 0.00051)
                  print "speedup/efficiency " sp[i] "/" ef[i] " vs " s "/" e " (" sy[i] " " gp[i] ")" } }' "$1"
}
for c in "dgx-h100:8..32 989.4 0 1024 $M1" "dgx-a100:8..32 312 0 1024 $M1 --zero 1" "hgx-b200:32/8/16 2250 0 1024 $M2" \
         "gb200-nvl72:8/16/32 2500 1 1024 $M1 --recompute" "dgx-h100:16/32 1978.9 0 1024 $M1 --dtype fp8" "dgx-h100:32/8 989.4 0 512 $M3 --tp 2 --pp 2"; do
    set -- $c
    s=$1 pk=$2 rc=$3 sq=$4; shift 4
    # (the full attention product, --attention-backend unfused, so that the FLOPs run are the model's count)
    scale_csv "$T/r.csv" "$@" --systems "$s" --attention-backend unfused || { bad "rows $s"; continue; }
    v=$(row_checks "$T/r.csv" "$pk" "$rc" "$sq")
    [ -z "$v" ] && ok || bad "row checks ($s $*): $v"
done

# 1F1B / interleaved bubble on a compute-only pipeline (one server, tiny vocabulary, a slow GPU):
# idle share = (p-1)/(Vm + p-1) within 0.003
for c in "2 4 1" "4 8 1" "8 16 1" "4 16 1" "4 8 2" "4 16 4"; do
    set -- $c
    sch=""; [ "$3" -gt 1 ] && sch="--schedule interleaved:$3"
    "$C" scale --model custom --layers 16 --hidden 1024 --heads 8 --vocab 8 --seq 1024 --systems "dgx-h100:$1" --tp 1 \
        --pp "$1" --global-batch "$2" $sch --set gpu.peak_tflops=10 --format json --breakdown >"$T/b.json" 2>/dev/null
    r=$(awk -v p="$1" -v m="$2" -v V="$3" '{ if (match($0, /"idle_frac": [0-9.]+/)) { i = substr($0, RSTART + 13, RLENGTH - 13) + 0 } }
        END { f = (p - 1) / (V * m + p - 1); d = i - f; if (d < 0) d = -d; print (d < 0.003 ? "ok" : "idle " i " vs " f) }' "$T/b.json")
    [ "$r" = ok ] && ok || bad "bubble p=$1 m=$2 V=$3: $r"
done
# more micro-batches per pipeline never raise the idle share
for s in "dgx-h100:16 --tp 2 --pp 4" "dgx-a100:32 --tp 4 --pp 2" "gb200-nvl72:16 --tp 4 --pp 4" "dgx-h100:16 --tp 2 --pp 4 --schedule interleaved:2"; do
    prev=2
    for gb in 16 32 64; do
        i=$("$C" scale --model custom --layers 8 --hidden 2048 --heads 16 --seq 1024 --systems $s --global-batch $gb --format json --breakdown 2>/dev/null |
            awk '{ if (match($0, /"idle_frac": [0-9.]+/)) print substr($0, RSTART + 13, RLENGTH - 13) + 0 }')
        if awk -v a="$prev" -v b="$i" 'BEGIN { exit !(b > a + 1e-4) }'; then bad "bubble grows with batch ($s, gb $gb: $prev -> $i)"; else ok; fi
        prev=$i
    done
done

# ---- 3. memory estimate ----
mem() { "$C" workload "$@" -o /dev/null 2>/dev/null | awk '/memory estimate/ { for (i = 1; i <= NF; i++) if ($i == "GiB") print $(i - 1) }'; }
monotone() { # NAME DIR(up|down) OPT VALUES -- ARGS
    name=$1 dir=$2 opt=$3 vals=$4; shift 5
    prev=""
    for v in $vals; do
        x=$(mem "$@" "$opt" "$v")
        [ -z "$x" ] && continue
        if [ -n "$prev" ] && awk -v a="$prev" -v b="$x" -v d="$dir" 'BEGIN { exit !(d == "up" ? b < a : b > a) }'; then
            bad "memory $name ($* $opt $v): $prev -> $x"
        else ok; fi
        prev=$x
    done
}
for m in "--model llama3-8b" "--model gpt-7.5b" "--model mixtral-8x7b --ep 2" "--model custom --layers 6 --hidden 4096 --heads 32 --gated"; do
    for l in "--tp 2 --pp 2 --dp 2" "--tp 4 --pp 2 --dp 2 --sp" "--tp 2 --pp 4 --dp 2 --schedule interleaved:2" "--tp 2 --dp 4 --zero 1 --recompute"; do
        monotone micro-batch up --micro-batch "1 2 4" -- $m $l --seq 1024
        monotone seq up --seq "512 1024 2048 4096" -- $m $l
    done
    monotone zero down --zero "0 1 2 3" -- $m --tp 2 --dp 4 --seq 1024
    monotone tp down --tp "1 2 4 8" -- $m --pp 2 --dp 1 --seq 2048
    monotone pp down --pp "1 2 3 4 8" -- $m --tp 2 --dp 2 --seq 2048
    monotone cp down --cp "1 2 4" -- $m --tp 2 --dp 2 --seq 4096
done
# an untied model at pp 1: all its parameters' states (16 bytes each under DDP)
x=$(mem --model llama3-8b --tp 1 --pp 1 --seq 8 --global-batch 1)
awk -v x="$x" 'BEGIN { exit !(x >= 119.6) }' && ok || bad "llama3-8b pp 1 states: $x GiB, want >= 8.03e9 x 16 B = 119.7 GiB"

# the layout rule: the smallest PP whose estimate fits 90% of the GPU's memory
for c in "llama3-70b dgx-h100:64 --seq 2048" "llama2-70b hgx-h200:32 --seq 2048" "gpt-39b dgx-a100:64 --seq 2048 --recompute" \
         "gpt-76b hgx-b200:64 --seq 2048" "llama3-70b gb200-nvl72:72 --seq 4096" "gpt-145b dgx-h100:128 --seq 2048 --zero 1 --sp"; do
    set -- $c
    m=$1 s=$2; shift 2
    scale_csv "$T/l.csv" --model "$m" --systems "$s" "$@" || { bad "layout $c"; continue; }
    tp=$(field "$T/l.csv" tp 1) pp=$(field "$T/l.csv" pp 1) n=$(field "$T/l.csv" gpus 1)
    sys=${s%%:*}
    p=1
    while [ "$p" -le "$pp" ]; do
        if [ $((n % (tp * p))) -eq 0 ]; then
            line=$("$C" workload --model "$m" --topo "$sys" --gpus "$n" --tp "$tp" --pp "$p" "$@" -o /dev/null 2>/dev/null | grep 'memory estimate')
            fits=$(echo "$line" | awk '{ for (i = 1; i <= NF; i++) if ($i == "GiB") { u = $(i - 1); h = $(i + 2) } } END { print (u <= 0.9 * h * 1.0005) ? 1 : 0 }')
            if [ "$p" -lt "$pp" ] && [ "$fits" = 1 ]; then bad "layout $c: pp $p fits ($line) but the rule took pp $pp"
            elif [ "$p" -eq "$pp" ] && [ "$fits" = 0 ]; then bad "layout $c: the rule's pp $pp does not fit ($line)"
            else ok; fi
        fi
        p=$((p + 1))
    done
done

# ---- 4. consistency between commands ----
# scale for one point = workload -o + replay, with compute beside collectives off (replay of a
# trace does not charge it: docs/traces.md)
for c in "dgx-h100 8 --tp 2 --pp 2 --global-batch 8" "dgx-h100 16 --zero 3 --tp 8 --global-batch 8" "dgx-a100 16 --tp 4 --pp 2 --global-batch 8 --sp" "gb200-nvl72 16 --tp 4 --cp 2 --global-batch 4"; do
    set -- $c
    s=$1 n=$2; shift 2
    a=$("$C" scale $M1 --systems "$s:$n" "$@" --set gpu.sm_share=0 --format csv 2>/dev/null | awk -F, 'NR == 2 { printf "%.6f", $9 * 1e3 }')
    "$C" workload $M1 --topo "$s" --gpus "$n" "$@" -o "$T/t.json" >/dev/null 2>&1
    nodes=$(( n / 8 )); [ "$s" = gb200-nvl72 ] && nodes=$(( n / 4 )); [ "$nodes" -lt 1 ] && nodes=1
    b=$("$C" replay --topo "$s" --nodes "$nodes" "$T/t.json" 2>/dev/null | awk '/^step time:/ { print $3 }')
    awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.0015) }' && ok || bad "scale ($a ms) vs workload+replay ($b ms): $s:$n $*"
done
# the same command twice: byte-identical; csv, json and text agree
args="$M1 --systems dgx-h100:8/16,gb200-nvl72:8/16 --zero 1"
"$C" scale $args >"$T/t1" 2>&1; "$C" scale $args >"$T/t2" 2>&1
cmp -s "$T/t1" "$T/t2" && ok || bad "scale output differs between two runs"
"$C" scale $args --format csv >"$T/c.csv"; "$C" scale $args --format json >"$T/j.json"
v=$(awk -F, 'NR == 1 { next } { printf "%.2f %.0f %.2f %.1f\n", $9 * 1e3, $10, $13, $15 * 100 }' "$T/c.csv" | cmp - "$T/j.json" 2>/dev/null; :)
txt=$(awk '/^system/ { for (i = 1; i <= NF; i++) if (!($i in c)) c[$i] = i; next }
    !/^#/ && NF > 10 { printf "%.2f %.0f %.2f %.1f\n", $c["step_ms"], $c["tokens/s"], $c["speedup"], $c["exposed%"] }' "$T/t1")
csvv=$(awk -F, 'NR > 1 { printf "%.2f %.0f %.2f %.1f\n", $9 * 1e3, $10, $13, $15 * 100 }' "$T/c.csv")
jsn=$(tr '{' '\n' <"$T/j.json" | awk '/step_time_s/ { for (i = 1; i <= NF; i++) { if ($i == "\"step_time_s\":") st = $(i + 1); if ($i == "\"tokens_per_s\":") tk = $(i + 1)
        if ($i == "\"speedup\":") sp = $(i + 1); if ($i == "\"exposed_comm_frac\":") ex = $(i + 1) }
        gsub(",", "", st); gsub(",", "", tk); gsub(",", "", sp); gsub(",", "", ex); printf "%.2f %.0f %.2f %.1f\n", st * 1e3, tk, sp, ex * 100 }')
[ "$txt" = "$csvv" ] && [ "$csvv" = "$jsn" ] && ok || bad "text/csv/json disagree: [$txt] [$csvv] [$jsn]"
: "$v"

# --exact vs the default (reuse of isolated collective runs): within 3% (docs/traces.md: -0.04% to -2.8%)
exact_close() { # KNOWN ARGS
    kn=$1; shift
    a=$("$C" scale "$@" --format csv 2>/dev/null | awk -F, 'NR == 2 { print $9 }')
    b=$("$C" scale "$@" --exact --format csv 2>/dev/null | awk -F, 'NR == 2 { print $9 }')
    d=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%+.2f", (a / b - 1) * 100 }')
    if awk -v d="$d" 'BEGIN { exit !(d <= 3 && d >= -3) }'; then
        [ "$kn" = 1 ] && echo "UNEXPECTED-PASS exact $*"
        ok
    elif [ "$kn" = 1 ]; then kbad "default vs --exact $d% ($a vs $b s): $*"
    else bad "default vs --exact $d% ($a vs $b s): $*"; fi
}
exact_close 0 $M1 --systems dgx-h100:16
exact_close 0 $M1 --systems dgx-h100:16 --tp 2 --pp 2
exact_close 0 $M2 --systems dgx-a100:16 --zero 1
# 2026-12-03: on GB200 with SP the reused runs made the step 3.3% longer than --exact while reused
# collectives waited for room; sharing links by busy share 3.4% shorter; by bytes kept 1.1% shorter
exact_close 0 $M2 --systems gb200-nvl72:16 --sp --tp 4
# known (2026-12-03): ZeRO-3's overlapping gathers and reduce-scatters on the NICs, shared by bytes
# kept, come out slower than --exact: +4.43% (DGX H100) and +4.97% (HGX B200); by busy share they
# were within 3% (docs/traces.md, "Reuse" step 4)
exact_close 1 $M2 --systems dgx-h100:16 --zero 3
exact_close 1 $M2 --systems hgx-b200:16 --zero 3
exact_close 0 --model custom --layers 2 --hidden 4096 --heads 32 --gated --kv-heads 8 --seq 1024 --systems dgx-h100:16 --zero 3
# the flex dispatcher's two all-to-alls side by side (2026-12-03: +1.10%)
exact_close 0 $MF --systems dgx-h100:32 --ep 32 --global-batch 32 --moe-token-dispatcher-type flex

echo "meta_scale: $pass passed, $fail failed, $known known (reported) violations"
[ "$fail" -eq 0 ]
