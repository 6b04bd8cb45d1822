# tests/cli/sweep_review.sh - sourced by cases.sh (inside run.sh: $C, pass,
# fail, check). `conveyor sweep` cases from a review (adversarial run): each
# bad input exits 2 before or instead of a wrong result.
sr_dir=$(mktemp -d)
# sr_true NAME CONDITION...: one more case, passed when the command succeeds
sr_true() {
    name=$1; shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name" >&2; fi
}
sr_quiet() { "$@" > /dev/null 2>&1; }

# -o a directory: refused before any point runs (it ran the whole grid, then
# the rename failed with exit 1 and left DIR.partial)
mkdir "$sr_dir/outdir"
check sweep-out-is-dir 2 'outdir: is a directory' -- sweep tests/data/sweep/collective-root.json -o "$sr_dir/outdir"
sr_true sweep-out-is-dir-no-partial test ! -e "$sr_dir/outdir.partial"

# a refused --resume leaves no FILE.partial: the copy of FILE it checked shadowed FILE, so a fixed FILE
# kept failing with "FILE.partial:4" (collective-root.json has 2 points)
"$C" sweep tests/data/sweep/collective-root.json -o "$sr_dir/full.csv" > /dev/null 2>&1
{ cat "$sr_dir/full.csv"; echo "2,7,1.0,Ring"; } > "$sr_dir/more.csv"
check sweep-resume-refused-names-file 2 'more\.csv:4: more rows than the grid.s 2 points' -- sweep tests/data/sweep/collective-root.json -o "$sr_dir/more.csv" --resume
sr_true sweep-resume-refused-no-partial test ! -e "$sr_dir/more.csv.partial"
head -2 "$sr_dir/full.csv" > "$sr_dir/more.csv"
sr_true sweep-resume-fixed-file sr_quiet "$C" sweep tests/data/sweep/collective-root.json -o "$sr_dir/more.csv" --resume
sr_true sweep-resume-fixed-file-complete cmp -s "$sr_dir/more.csv" "$sr_dir/full.csv"
# a FILE.partial an interrupted sweep left is read before FILE: the message says so
{ cat "$sr_dir/full.csv"; echo "2,7,1.0,Ring"; } > "$sr_dir/more.csv.partial"
check sweep-resume-stale-partial 2 'more\.csv\.partial is what an interrupted sweep left.*remove it' -- sweep tests/data/sweep/collective-root.json -o "$sr_dir/more.csv" --resume

# --plot: nan, inf and 1e999 are not numbers to plot (gnuplot failed on them, exit 1): file:line, exit 2
check sweep-plot-y-nan 2 'y-not-finite-nan\.csv:3: column .y. is not a finite number: .nan.' -- sweep --plot x,y tests/bad_input/sweep-results/y-not-finite-nan.csv -o "$sr_dir/p.svg"
check sweep-plot-y-1e999 2 'y-not-finite-1e999\.csv:3: column .y. is not a finite number: .1e999.' -- sweep --plot x,y tests/bad_input/sweep-results/y-not-finite-1e999.csv -o "$sr_dir/p.svg"
check sweep-plot-x-inf 2 'x-not-finite-inf\.csv:3: column .x. is not a finite number: .inf.' -- sweep --plot x,y tests/bad_input/sweep-results/x-not-finite-inf.csv -o "$sr_dir/p.svg"

# scale's sp and recompute are on or off: "yes" and "true" were read as off, exit 0
check sweep-scale-sp-on-off 2 '\$\.vary\.sp: point 1 \(sp=yes\): sp: expected on or off, got .yes.' -- sweep tests/data/sweep/scale-bad-sp.json -j 1
# a custom model's shape as sweep keys (--model custom's --hidden ... --experts): width and expert count varied
check sweep-scale-custom-moe 0 '^3,2048,16,[0-9.]+,[0-9.]+,' -- sweep tests/data/sweep/scale-custom-moe.json
check sweep-scale-custom-on-preset 2 "is a preset with its own shape" -- sweep tests/data/sweep/scale-custom-on-preset.json
check sweep-scale-recompute-on-off 2 '\$\.args\.recompute: point 0 .*recompute: expected on or off, got .true.' -- sweep tests/data/sweep/scale-bad-recompute.json

# collective's ngpus divides the ranks, as collective -g (3 and 1024 on 8 ranks ran, exit 0)
check sweep-ngpus-not-dividing 2 '\$\.vary\.ngpus: point 1 \(ngpus=3\): ngpus: -t 1 x -g 3 does not divide the system.s 8 ranks' -- sweep tests/data/sweep/collective-ngpus-not-dividing.json -j 1
check collective-ngpus-not-dividing 2 '-t 1 x -g 3 does not divide the system.s 8 ranks' -- collective --topo dgx-h100 -g 3 -b 4M -e 4M

# a failing point's error names the key it comes from (these all said $.args): a varied topo, a varied
# nodes (the topology's "--nodes 2 needs ..."), a fixed dtype, a fixed --set
check sweep-where-vary-topo 2 '\$\.vary\.topo: point 1 \(topo=no-such-topo\): unknown topology' -- sweep tests/data/sweep/collective-unknown-topo.json -j 1
check sweep-where-vary-nodes 2 '\$\.vary\.nodes: point 1 \(nodes=2\): .*--nodes 2 needs a scale-out fabric' -- sweep tests/data/sweep/collective-nodes-no-fabric.json -j 1
check sweep-where-args-dtype 2 '\$\.args\.dtype: point 0 .*--dtype .fp7.' -- sweep tests/data/sweep/scale-bad-dtype.json
check sweep-where-args-set 2 '\$\.args\.set\[1\]: point 0 .*--set nic\.gbps: must be in' -- sweep tests/data/sweep/collective-bad-fixed-set.json

rm -rf "$sr_dir"
