# tests/cli/plot_review.sh - sourced by cases.sh (inside run.sh: $C, check,
# pass, fail). `sweep --plot` and the band columns a sweep row ends with
# (docs/sweep.md, "Error bands"): the figure draws Y's 80% band where the CSV
# has Y_lo80 and Y_hi80, in collective --plot's style (a light grey area,
# gnuplot's fill 'rgb(221, 221, 221)' in the SVG), titled with the rows'
# band_kind; rows with an empty band draw none; a CSV from before the band
# columns plots as it did; a band field that is not a number is an error.
pr_dir=$(mktemp -d)
pr_fail() { fail=$((fail + 1)); echo "FAIL $1" >&2; }
# pr_band SVG TITLE: how many grey fills (polygons) and grey strokes (paths) the plot item titled TITLE
# holds, "FILLS STROKES" (its legend key is one of them); "none" when no item has that title
pr_band() {
    awk -v t="<title>$2</title>" '
        /<g id="gnuplot_plot_/ { inside = index($0, t) > 0; if (inside) found = 1 }
        inside && /<polygon fill = .rgb\(221, 221, 221\)./ { f++ }
        inside && /<path stroke=.rgb\(221, 221, 221\)./ { s++ }
        END { if (found) print f + 0, s + 0; else print "none" }' "$1"
}
# pr_plot NAME CSV X,Y[,S]: plots CSV into $pr_dir/NAME.svg; false (after saying why) unless exit 0
pr_plot() {
    out=$("$C" sweep --plot "$3" "$2" -o "$pr_dir/$1.svg" 2>&1) && grep -q '<svg' "$pr_dir/$1.svg" ||
        { echo "  $1: $out" >&2; return 1; }
}

if command -v gnuplot >/dev/null 2>&1; then
# 1. a collective-base sweep: busbw_at_max's band is a grey area (one per series: nodes 1 and 2, each over
#    the NIC speeds), its legend "80% band (held out)", as collective --plot draws its band
"$C" sweep -j 1 tests/data/sweep/small.json -o "$pr_dir/coll.csv" > /dev/null 2>&1
if pr_plot coll "$pr_dir/coll.csv" set.nic.gbps,busbw_at_max,nodes; then
    got=$(pr_band "$pr_dir/coll.svg" '80% band (held out)')
    # the key's fill and one area per series: the first band's item holds the key and its area
    if [ "$got" != none ] && [ "${got% *}" -ge 2 ] &&
        grep -q '<text>80% band (held out)</text>' "$pr_dir/coll.svg" &&
        grep -c '<polygon fill = .rgb(221, 221, 221).' "$pr_dir/coll.svg" | awk '{ exit !($1 >= 3) }'; then
        pass=$((pass + 1)); else pr_fail "plot-sweep-band-collective: fills/strokes '$got' in $pr_dir/coll.svg"; fi
else pr_fail plot-sweep-band-collective; fi

# 2. a row with an empty band (band_kind none) draws none: the area stops at it, the row alone between
#    two empty ones is a bar, and the legend says the kind the rows carry (in-sample here)
cat > "$pr_dir/gap.csv" <<'CSV'
point,nodes,busbw_at_max,busbw_at_max_lo80,busbw_at_max_hi80,band_regime,band_kind
0,1,100,80,120,nvlink,in-sample
1,2,90,70,110,network,in-sample
2,4,80,,,,none
3,8,70,50,90,network,in-sample
4,16,60,,,,none
5,32,50,40,60,network,in-sample
6,64,40,30,50,network,in-sample
CSV
# the key, the area over nodes 1-2 and the one over 32-64 (not over 4 or 16); the bar at 8 in its own item
if pr_plot gap "$pr_dir/gap.csv" nodes,busbw_at_max && [ "$(pr_band "$pr_dir/gap.svg" '80% band (in-sample)')" = "3 1" ] &&
    [ "$(grep -c '<path stroke=.rgb(221, 221, 221).' "$pr_dir/gap.svg")" -ge 2 ]; then
    pass=$((pass + 1)); else pr_fail "plot-sweep-band-empty-rows: $(pr_band "$pr_dir/gap.svg" '80% band (in-sample)')"; fi
# ... and a file whose bands are all empty (a sweep without a bands file) draws no band and no legend for one
awk -F, -v OFS=, 'NR > 1 { $4 = $5 = $6 = ""; $7 = "none" } 1' "$pr_dir/gap.csv" > "$pr_dir/none.csv"
if pr_plot none "$pr_dir/none.csv" nodes,busbw_at_max && ! grep -q '80% band\|rgb(221, 221, 221)' "$pr_dir/none.svg"; then
    pass=$((pass + 1)); else pr_fail plot-sweep-band-all-empty; fi

# 3. a CSV written before the band columns (the same sweep's rows without them): plotted, no band
cut -d, -f1-9 "$pr_dir/coll.csv" > "$pr_dir/old.csv"
if pr_plot old "$pr_dir/old.csv" set.nic.gbps,busbw_at_max,nodes && ! grep -q '80% band\|rgb(221, 221, 221)' "$pr_dir/old.svg" &&
    grep -q '<title>nodes=2</title>' "$pr_dir/old.svg" && [ "$(head -1 "$pr_dir/old.csv")" = \
    "point,nodes,set.nic.gbps,set.oversubscription,busbw_at_max,avg_busbw,time_us_at_max,nranks,algo_at_max" ]; then
    pass=$((pass + 1)); else pr_fail plot-sweep-old-csv-no-band; fi

# 4. a category axis (topologies): a bar per point, not an area across unrelated categories
cat > "$pr_dir/cat.csv" <<'CSV'
point,topo,busbw_at_max,busbw_at_max_lo80,busbw_at_max_hi80,band_regime,band_kind
0,pcie-gen4-8gpu-2socket,20,15,25,pcie,held out
1,pcie-gen5-8gpu-2socket,40,30,50,pcie,held out
2,dgx-h100,160,120,180,nvlink,held out
CSV
if pr_plot cat "$pr_dir/cat.csv" topo,busbw_at_max && [ "$(pr_band "$pr_dir/cat.svg" '80% band (held out)')" = "0 1" ]; then
    pass=$((pass + 1)); else pr_fail "plot-sweep-band-categories: $(pr_band "$pr_dir/cat.svg" '80% band (held out)')"; fi
fi

# 5. a band field that is not a number (a hand-edited file): exit 2 naming the file, line and column, no
#    SVG; one field of the two empty is not a band either. A Y without a band column is not checked.
sed '3s/,70,110,/,seventy,110,/' "$pr_dir/gap.csv" > "$pr_dir/bad-band.csv"
check plot-sweep-band-not-a-number 2 "bad-band\.csv:3: band column .busbw_at_max_lo80. is not a number: .seventy." -- sweep --plot nodes,busbw_at_max "$pr_dir/bad-band.csv" -o "$pr_dir/bad.svg"
[ ! -e "$pr_dir/bad.svg" ] && pass=$((pass + 1)) || pr_fail plot-sweep-band-not-a-number-no-svg
sed '3s/,70,110,/,70,,/' "$pr_dir/gap.csv" > "$pr_dir/half-band.csv"
check plot-sweep-band-half-empty 2 "half-band\.csv:3: band column .busbw_at_max_hi80. is not a number: ''" -- sweep --plot nodes,busbw_at_max "$pr_dir/half-band.csv" -o "$pr_dir/bad.svg"
sed '3s/,70,110,/,nan,110,/' "$pr_dir/gap.csv" > "$pr_dir/nan-band.csv"
check plot-sweep-band-nan 2 "nan-band\.csv:3: column .busbw_at_max_lo80. is not a finite number: .nan." -- sweep --plot nodes,busbw_at_max "$pr_dir/nan-band.csv" -o "$pr_dir/bad.svg"
if command -v gnuplot >/dev/null 2>&1; then
    check plot-sweep-bad-band-other-y 0 'plot written to' -- sweep --plot nodes,point "$pr_dir/bad-band.csv" -o "$pr_dir/other.svg"
fi

rm -rf "$pr_dir"
