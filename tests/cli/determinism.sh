# tests/cli/determinism.sh - sourced by cases.sh (inside run.sh: $C, pass,
# fail, same_output). The same inputs give byte-identical output across runs:
# replay (text, JSON and the --timeline file) and topo show.
same_output determinism-replay -- replay --topo dgx-a100 --gpus 2 docs/examples/two-rank-overlap.json
same_output determinism-replay-json -- replay --topo dgx-a100 --gpus 2 --format json docs/examples/two-rank-overlap.json
same_output determinism-topo-show -- topo show dgx-h100 --nodes 2
same_output determinism-topo-show-file -- topo show topologies/pcie-gen4-8gpu-2socket.json
det_a=$(mktemp); det_b=$(mktemp)
"$C" replay --topo dgx-a100 --gpus 2 --timeline "$det_a" docs/examples/two-rank-overlap.json > /dev/null 2>&1
"$C" replay --topo dgx-a100 --gpus 2 --timeline "$det_b" docs/examples/two-rank-overlap.json > /dev/null 2>&1
if [ -s "$det_a" ] && cmp -s "$det_a" "$det_b"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL determinism-timeline: the two --timeline files differ (or are empty)" >&2
fi
rm -f "$det_a" "$det_b"
det_a=$(mktemp); det_b=$(mktemp)
"$C" collective --topo dgx-h100 --nodes 2 -b 64M -e 64M --timeline "$det_a" > /dev/null 2>&1
"$C" collective --topo dgx-h100 --nodes 2 -b 64M -e 64M --timeline "$det_b" > /dev/null 2>&1
if [ -s "$det_a" ] && cmp -s "$det_a" "$det_b" && grep -q '"name":"n0.gpu' "$det_a"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL determinism-collective-timeline: the two files differ (or hold no link track)" >&2
fi
rm -f "$det_a" "$det_b"
