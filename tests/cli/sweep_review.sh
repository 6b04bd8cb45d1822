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

rm -rf "$sr_dir"
