# tests/cli/topo_review.sh - sourced by cases.sh (inside run.sh: $C, check,
# pass, fail). A review of the topology loader, `topo import` and `calibrate
# fit` (2026-12-02, docs/reliability.md): what an importer or the fitter
# writes loads, what the loader takes reaches the outputs intact, and what it
# would fail on later is refused at load with the file and position.

# imported_loads NAME FILE IMPORT-ARGS...: `topo import FILE ARGS` exits 0 and
# `topo show` of what it wrote exits 0 too
imported_loads() {
    name=$1; file=$2; shift 2
    tmp=$(mktemp --suffix=.json)
    if "$C" topo import "$file" "$@" -o "$tmp" >/dev/null 2>&1 && "$C" topo show "$tmp" >/dev/null 2>&1; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: the import of $file $* does not load:" >&2
        "$C" topo show "$tmp" 2>&1 | head -3 >&2
    fi
    rm -f "$tmp"
}

# 1. the importers refuse what the loader would, by the loader's bounds
#    (topologies/topo.h): NV<k> between every pair is an NVSwitch of k links
#    per GPU, nvlink.links at most 18; gpu.sm 30..200
check import-smi-nv64-nvswitch 2 'nvswitch-nv64-over-18-links\.txt:2:10: NV64 between every pair .*at most 18' -- \
    topo import tests/bad_input/smi-topo/nvswitch-nv64-over-18-links.txt --gpu H100
check import-xml-sm-25 2 'gpu-sm-25-under-30\.xml:5:48: .*sm="NN" \(30\.\.200\)' -- \
    topo import tests/bad_input/nccl-xml/gpu-sm-25-under-30.xml
rv=$(mktemp -d)
sed 's/sm="75"/sm="30"/' tests/data/nccl-topo/pcie-only.xml > "$rv/sm-30.xml"
sed 's/sm="75"/sm="200"/' tests/data/nccl-topo/pcie-only.xml > "$rv/sm-200.xml"
imported_loads import-xml-sm-30-loads "$rv/sm-30.xml"
imported_loads import-xml-sm-200-loads "$rv/sm-200.xml"
sed 's/NV18/NV17/g' tests/data/smi-topo/dgx-h100-like.txt > "$rv/nv17.txt"
imported_loads import-smi-nv17-loads "$rv/nv17.txt" --gpu H100
imported_loads import-smi-dgx-h100-loads tests/data/smi-topo/dgx-h100-like.txt
imported_loads import-xml-dgx-a100-loads tests/data/nccl-topo/dgx-a100-like.xml

# 2. node ids are letters, digits, '_', '-' and '.' (they name devices in DOT,
#    CSV, JSON and Perfetto output); the DOT graph's name (a file's name when
#    the topology has none) is quoted
check topo-id-quote-newline 2 'id-with-quote-and-newline\.json:25:11: \$\.node\.nodes\[2\]\.id: id "s\\"w;0\\n": use letters, digits' -- \
    topo show tests/bad_input/topo/id-with-quote-and-newline.json
sed '/"name":/d' tests/data/topo/full-mesh-4gpu.json > "$rv/a\"b\\c.json"
check topo-dot-name-quoted 0 '^graph "a\\"b_c" \{' -- topo dot "$rv/a\"b\\c.json"

# 7. "nvls" marks an NVSwitch; on any other node it is an error
check topo-nvls-on-gpu 2 'nvls-on-gpu\.json:32:13: \$\.node\.nodes\[3\]\.nvls: .*a "gpu" node cannot have it' -- \
    topo show tests/bad_input/topo/nvls-on-gpu.json
check topo-nvls-on-pcie-switch 2 'nvls-on-pcie-switch\.json:27:13: \$\.node\.nodes\[2\]\.nvls: .*"pcie_switch"' -- \
    topo show tests/bad_input/topo/nvls-on-pcie-switch.json

# 6. what the router cannot join is a load error with the file and path: a
#    route never passes through host memory; servers of an NVLink domain meet
#    only at its NVSwitch
check topo-gpu-via-hostmem 2 'gpu-reached-only-through-hostmem\.json:28:4: \$\.node\.nodes\[3\]: GPU "gpu1" cannot reach GPU "gpu0"' -- \
    p2p --topo tests/bad_input/topo/gpu-reached-only-through-hostmem.json
check topo-gpu-via-hostmem-one-gpu 0 'x 1 GPU\(s\)' -- topo show tests/bad_input/topo/gpu-reached-only-through-hostmem.json --gpus 1
check topo-nvl-domain-no-nvswitch 2 'nvl-domain-without-nvswitch\.json:60:23: \$\.scaleout\.nvl_domain_nodes: 4 servers' -- \
    collective --topo tests/bad_input/topo/nvl-domain-without-nvswitch.json --nodes 2
check topo-nvl-domain-gpu-no-nvlink 2 'nvl-domain-gpu-without-nvlink-to-nvswitch\.json:33:4: \$\.node\.nodes\[4\]: GPU "gpu1" has no NVLink to an nvswitch' -- \
    p2p --topo tests/bad_input/topo/nvl-domain-gpu-without-nvlink-to-nvswitch.json --nodes 2
check topo-nvl-domain-gb200 0 '^ +1048576 +262144 +float' -- collective --topo gb200-nvl72 --nodes 2 -b 1M -e 1M

# 3. a NIC's tx_GBps / rx_GBps limit the traffic through it (a NIC is never
#    a route's end): dgx-h100 with 10 GB/s NICs, 64 MiB over 2 servers x 1 GPU
#    (46.35 GB/s busbw without), and with 1 MB/s (the repro: it was ignored)
sed 's/"nics": {/"nics": {"tx_GBps": 10, "rx_GBps": 10,/' topologies/dgx-h100.json > "$rv/nic-10.json"
sed 's/"nics": {/"nics": {"rx_GBps": 10,/' topologies/dgx-h100.json > "$rv/nic-rx-10.json"
sed 's/"nics": {/"nics": {"tx_GBps": 0.001, "rx_GBps": 0.001,/' topologies/dgx-h100.json > "$rv/nic-1MBps.json"
check topo-nic-tx-rx-10 0 '^ +67108864 +16777216 +float +sum +-1 +[0-9.]+ +9\.[0-9]+ +9\.[0-9]+ ' -- \
    collective --topo "$rv/nic-10.json" --nodes 2 --gpus 1 -b 64M -e 64M
check topo-nic-rx-10 0 '^ +67108864 +16777216 +float +sum +-1 +[0-9.]+ +9\.[0-9]+ +9\.[0-9]+ ' -- \
    collective --topo "$rv/nic-rx-10.json" --nodes 2 --gpus 1 -b 64M -e 64M
check topo-nic-1MBps 0 'Avg bus bandwidth +: 0\.000996' -- \
    collective --topo "$rv/nic-1MBps.json" --nodes 2 --gpus 1 -b 64M -e 64M
check topo-nic-unlimited 0 '^ +67108864 +16777216 +float +sum +-1 +[0-9.]+ +46\.35 +46\.35 ' -- \
    collective --topo dgx-h100 --nodes 2 --gpus 1 -b 64M -e 64M

# 4. calibrate fit refuses a fit that a params file cannot hold (the loader's
#    bounds), at the record; at the bound the file it writes loads
check calib-fit-launch-over-1-s 2 'launch-1000-s-over-1-s\.jsonl:1: launch/gpu0/kernel: launch cost 1000 s is over 1 s' -- \
    calibrate fit tests/bad_input/calibration/launch-1000-s-over-1-s.jsonl
check calib-fit-beta-under-1MBps 2 'path-beta-under-1MBps\.jsonl:1: h2d/gpu0/h2d/pinned: fitted beta 0\.5 B/s' -- \
    calibrate fit tests/bad_input/calibration/path-beta-under-1MBps.jsonl
sed 's/"median":1000,"min":1000,"max":1000/"median":1,"min":1,"max":1/' \
    tests/bad_input/calibration/launch-1000-s-over-1-s.jsonl > "$rv/launch-1-s.jsonl"
check calib-fit-launch-1-s 0 'params: 0 paths' -- calibrate fit "$rv/launch-1-s.jsonl" -o "$rv/launch-1-s.params.json"
check calib-fit-launch-1-s-loads 0 'launch 1000000\.00 us' -- topo show hgx-h200 --set "calibration=$rv/launch-1-s.params.json"

# 5. calibration names are kept whole: two paths alike for 600 bytes are two
#    exact fits (a name cut at 511 bytes merged them: one fit, 63% residual)
awk 'BEGIN { p = sprintf("%600s", ""); gsub(/ /, "A", p)
             for (k = 0; k < 2; k++) for (s = 1000; s <= 8000; s *= 2) {
                 t = s / (k ? 1e8 : 1e9)
                 printf "{\"device\": \"G\", \"bench\": \"d2d_copy\", \"path\": \"%s%s\", \"mode\": \"ce\", ", p, k ? "y" : "x"
                 printf "\"size_bytes\": %d, \"unit\": \"s\", \"median\": %g, \"min\": %g, \"max\": %g}\n", s, t, t, t } }' \
    > "$rv/long-names.jsonl"
check calib-fit-long-names-apart 0 'A{600}y/ce: alpha 0\.0000 us  beta 0\.1000 GB/s  residual rms 0\.00%' -- \
    calibrate fit "$rv/long-names.jsonl"
check calib-fit-long-names-two 0 'params: 2 paths' -- calibrate fit "$rv/long-names.jsonl" -o "$rv/long-names.params.json"

rm -rf "$rv"
