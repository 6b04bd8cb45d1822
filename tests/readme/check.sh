#!/bin/sh
# The README shows real output: run every example in it (a fenced block that
# opens with "$ build/conveyor ...") and check that each line shown under the
# command appears in what the command prints now, in order ("..." marks
# lines left out; trailing blanks are ignored). Run by `make test`.
C=${1:-build/conveyor}
README=${2:-README.md}
. "$(dirname "$0")/../../scripts/nccl-env-clean.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v dir="$tmp" '
    /^```/ { if (inb) { inb = 0; close(f); next } open = 1; next }
    open && /^\$ build\/conveyor / {
        n++; f = dir "/" n ".want"; printf "" > f
        print substr($0, 3) > (dir "/" n ".cmd"); close(dir "/" n ".cmd")
        inb = 1; open = 0; next
    }
    { open = 0 }
    inb && $0 != "..." { sub(/[ \t]+$/, ""); print > f }
' "$README"
n=0; fail=0
for cmdf in "$tmp"/*.cmd; do
    [ -e "$cmdf" ] || break
    n=$((n + 1))
    i=${cmdf%.cmd}
    cmd=$(sed "s|build/conveyor|$C|g" "$cmdf")
    sh -c "$cmd" > "$i.out" 2>&1
    missing=$(awk 'NR == FNR { want[++w] = $0; next }
                   { sub(/[ \t]+$/, ""); if (k < w && $0 == want[k + 1]) k++ }
                   END { if (k < w) print want[k + 1] }' "$i.want" "$i.out")
    if [ -n "$missing" ]; then
        fail=$((fail + 1))
        echo "FAIL readme example: $(cat "$cmdf")" >&2
        echo "  shown in README.md but not printed (in order): $missing" >&2
    fi
done
echo "readme: $n examples, $((n - fail)) as shown, $fail differ"
[ "$n" -gt 0 ] && [ "$fail" = 0 ]
