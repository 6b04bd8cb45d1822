# tests/cli/traces_review.sh - sourced by cases.sh (inside run.sh: $C, check,
# pass, fail). A review of the trace importers and `replay` (2026-12-02,
# docs/reliability.md): files laid out as the real tools write them are read
# by the right importer and read whole. The inputs are written at run time.
tr_dir=$(mktemp -d)

# 1. A Flight Recorder dump as PyTorch writes it: dump_json fills an nlohmann::json, whose keys come
#    out sorted, so "entries" precedes "pg_config"; past the sniffer's head (4 KiB in a directory,
#    64 KiB for a file) the dump went to the native reader ("$.ops: expected an array") or was no
#    trace at all ("no *.json or *.json.gz files"). 2 ranks, 160 all_reduces with stack frames.
mkdir "$tr_dir/fr"
for r in 0 1; do
    {
        printf '{"comm_lib_version": "2.21.5", "entries": ['
        i=1
        while [ $i -le 160 ]; do
            [ $i -gt 1 ] && printf ', '
            printf '{"collective_seq_id": %d, "duration_ms": 0.05, "frames": [{"filename": "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", "line": 2501, "name": "all_reduce"}], "input_dtypes": ["Float"], "input_sizes": [[1024]], "is_p2p": false, "op_id": %d, "output_dtypes": ["Float"], "output_sizes": [[1024]], "p2p_seq_id": 0, "pg_id": 0, "process_group": ["0", "default_pg"], "profiling_name": "nccl:all_reduce", "record_id": %d, "retired": true, "state": "completed", "time_created_ns": 1700000000000000000, "timeout_ms": 600000}' $i $i $i
            i=$((i + 1))
        done
        printf '], "pg_config": {"0": {"desc": "default_pg", "name": "0", "ranks": "[0, 1]"}}, "pg_status": {}, "version": "2.7"}\n'
    } > "$tr_dir/fr/nccl_trace_rank_$r"
done
check fr-sorted-keys-dir 0 'flight recorder: 2 files, 320 entries: 320 collectives' -- replay --topo dgx-a100 --gpus 2 "$tr_dir/fr"
check fr-sorted-keys-file 0 'flight recorder: 1 file, 160 entries: 160 collectives' -- replay --topo dgx-a100 --gpus 2 --ranks 2 "$tr_dir/fr/nccl_trace_rank_0"

# 2. A Kineto directory whose distributedInfo.pg_config (a job with several process groups) keeps
#    "traceEvents" past the directory sniffer's 4 KiB: read as Flight Recorder dumps ("$.pg_config:
#    expected an object of process groups")
mkdir "$tr_dir/kineto"
pad=$(printf '%04000d' 0)
for r in 0 1; do
    sed "1s/.*/{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": $r, \"world_size\": 2, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"ranks\": [0, 1]}, {\"pg_name\": \"1\", \"pg_desc\": \"x$pad\", \"ranks\": [0, 1]}]},/" \
        tests/data/traces/kineto_old_style.json > "$tr_dir/kineto/rank$r.json"
done
check kineto-dir-big-pg-config 0 'replay: .*/kineto \(2 ranks, 8 ops\)' -- replay --topo dgx-a100 --gpus 2 "$tr_dir/kineto"

# 3. Kineto repeats a user annotation over GPU work as a gpu_user_annotation of the same name and
#    External id (the TraceLens sample has 3): ProfilerStep#1 counted twice (step 0.090 ms over 2
#    steps, traced 0.620 ms), and an nccl:all_reduce without Input Dims replaced the CPU one ("linked
#    nccl: annotation has no sized tensor input"). The file without them: 0.181 ms, traced 1.000 ms.
sed 's/^\(  {"ph": "i".*\)$/  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7, "ts": 20.0, "dur": 240.0, "args": {"External id": 1}},\
  {"ph": "X", "cat": "gpu_user_annotation", "name": "nccl:all_reduce", "pid": 0, "tid": 20, "ts": 209.0, "dur": 52.0, "args": {"External id": 10}},\
\1/' tests/data/traces/kineto_old_style.json > "$tr_dir/gpu-annotations.json"
check kineto-gpu-annotation-twins 0 'step time: 0\.181 ms  \(traced 1\.000 ms' -- replay --topo dgx-a100 --gpus 2 --ranks 2 "$tr_dir/gpu-annotations.json"

# 4. Chakra: proto3's JSON mapping leaves out a field at its default, so chakra_jsonizer writes node
#    id 0 without "id" (Chakra's generator and TACOS number nodes from 0): refused, "id: expected a
#    node id", where the .et loads
printf '{"version":"0.0.4"}\n{"name":"a","type":"COMP_NODE","durationMicros":"5"}\n{"id":"1","name":"b","type":"COMP_NODE","dataDeps":["0"],"durationMicros":"7"}\n' > "$tr_dir/id0.json"
check chakra-json-node-id-0 0 'replay: .*id0\.json \(1 ranks, 2 ops\)' -- replay --topo dgx-a100 --gpus 1 "$tr_dir/id0.json"

# 5. Chakra .et: a sint64_val attribute is zigzag-encoded; comm_dst 1 (wire 2) was read as rank 2
#    ("a send with rank 2"), as the jsonized file's "sint64Val": "1" is not. And per-rank files,
#    chakra_converter's <prefix>.<r>.et, in a directory or by their prefix, could not be replayed
#    (the directory looked for DIR.0.et beside it; the prefix went to the native reader).
mkdir "$tr_dir/chakra"
# GlobalMetadata {version "0.0.4"}, then a Node {id 1, name, type, attr comm_dst/comm_src sint64 (17), comm_size int64 (9) 64}
printf '\007\012\0050.0.4\045\010\001\022\001s\030\005\122\015\012\010comm_dst\210\001\002\122\015\012\011comm_size\110\100' > "$tr_dir/chakra/job.0.et"
printf '\007\012\0050.0.4\045\010\001\022\001r\030\006\122\015\012\010comm_src\210\001\000\122\015\012\011comm_size\110\100' > "$tr_dir/chakra/job.1.et"
check chakra-et-dir 0 'replay: .*chakra/job \(2 ranks, 2 ops\)' -- replay --topo dgx-a100 --gpus 2 "$tr_dir/chakra"
check chakra-et-prefix 0 'replay: .*chakra/job \(2 ranks, 2 ops\)' -- replay --topo dgx-a100 --gpus 2 "$tr_dir/chakra/job"

# 6. NCCL log: two communicators of all ranks (commIds 0x1111 and 0x2222) on streams of their own,
#    called in other orders by the two ranks, as NCCL allows: both were the group 'world', numbered
#    together ("ranks disagree on collective #0 of group 'world'")
l='NCCL INFO ncclCommInitRankConfig comm'
c='sendbuff 0x1 recvbuff 0x1'
{
    echo "h0:100:100 [0] $l 0xa0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1111 - Init COMPLETE"
    echo "h0:200:200 [1] $l 0xb0 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 28000 commId 0x1111 - Init COMPLETE"
    echo "h0:100:100 [0] $l 0xa1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0x2222 - Init COMPLETE"
    echo "h0:200:200 [1] $l 0xb1 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 28000 commId 0x2222 - Init COMPLETE"
    echo "h0:100:100 [0] NCCL INFO AllReduce: opCount 0 $c count 1024 datatype 7 op 0 root 0 comm 0xa0 [nranks=2] stream 0x10"
    echo "h0:100:100 [0] NCCL INFO AllGather: opCount 0 $c count 4096 datatype 7 op 0 root 0 comm 0xa1 [nranks=2] stream 0x11"
    echo "h0:200:200 [1] NCCL INFO AllGather: opCount 0 $c count 4096 datatype 7 op 0 root 0 comm 0xb1 [nranks=2] stream 0x21"
    echo "h0:200:200 [1] NCCL INFO AllReduce: opCount 0 $c count 1024 datatype 7 op 0 root 0 comm 0xb0 [nranks=2] stream 0x20"
} > "$tr_dir/two-world-comms.log"
check nccllog-two-world-comms 0 '2 ranks, 2 communicators, 4 calls replayed' -- replay --topo dgx-h100 --gpus 2 "$tr_dir/two-world-comms.log"

# 7. Names that are not UTF-8 (a Chakra .et name is any bytes) went raw into the JSON outputs, which
#    then were not JSON (RFC 8259: UTF-8); now U+FFFD
printf '\007\012\0050.0.4\017\010\001\022\007gemm\377\376\042\030\004\070\005' > "$tr_dir/not-utf8.et"
check chakra-name-not-utf8-json 0 '"name": "gemm\\ufffd\\ufffd\\""' -- replay --topo dgx-a100 --gpus 1 "$tr_dir/not-utf8.et" --format json
check chakra-name-not-utf8-timeline 0 'replay' -- replay --topo dgx-a100 --gpus 1 "$tr_dir/not-utf8.et" --timeline "$tr_dir/not-utf8-timeline.json"
if grep -q 'gemm\\ufffd\\ufffd\\"' "$tr_dir/not-utf8-timeline.json" && ! LC_ALL=C grep -q "$(printf '\377')" "$tr_dir/not-utf8-timeline.json"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL chakra-name-not-utf8-timeline-bytes: a byte that is not UTF-8 in the timeline" >&2
fi
# 8. PyTorch's all_to_all_single with split sizes (an MoE dispatch): each member records its own
#    totals and "In/Out split size" lists, so the files' ops differ ("ranks disagree on collective
#    #0" until 2026-12-03). Now one uneven alltoall whose pairs move what the lists say: the same
#    step as a native trace naming that matrix (alltoall_weights, 16 shares), not the even split's.
#    Rows of 1 Mi floats (4 MiB); rank i sends rank j S[i][j] rows.
mkdir "$tr_dir/a2a"
awk -v dir="$tr_dir/a2a" 'BEGIN {
    n = 4; split("4 1 1 2 2 4 1 1 1 1 4 2 1 2 2 3", S, " ")
    for (i = 0; i < n; i++) {
        ins = "["; outs = "["; tin = 0; tout = 0
        for (j = 0; j < n; j++) {
            ins = ins (j ? ", " : "") S[i * n + j + 1]; outs = outs (j ? ", " : "") S[j * n + i + 1]
            tin += S[i * n + j + 1]; tout += S[j * n + i + 1]
        }
        f = dir "/rank" i ".json"
        printf "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 4}, \"traceEvents\": [\n", i > f
        printf "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 0, \"dur\": 100, \"args\": {\"stream\": 7}},\n" > f
        printf "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_SendRecv\", \"pid\": 0, \"tid\": 20, \"ts\": 100, \"dur\": 50, \"args\": {\"stream\": 20, \"Collective name\": \"all_to_allv\", \"dtype\": \"Float\", \"In msg nelems\": %d, \"Out msg nelems\": %d, \"In split size\": \"%s]\", \"Out split size\": \"%s]\", \"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1, 2, 3]\"}}\n]}\n", tin * 1048576, tout * 1048576, ins, outs > f
        close(f)
    }
}'
# native: the matrix (a2a-uneven), all ones (a2a-ones) and no weights (a2a-even)
a2a_native() {
    {
        printf '{"ranks": 4, %s"ops": [\n' "$1"
        for r in 0 1 2 3; do
            [ $r -gt 0 ] && printf ',\n'
            printf '{"rank": %d, "id": "g", "kind": "compute", "dur_us": 100, "stream": 0}, {"rank": %d, "id": "a", "kind": "alltoall", "bytes": "32M", %s"stream": 1, "deps": ["g"]}' $r $r "$2"
        done
        printf ']}\n'
    } > "$tr_dir/a2a-$3.json"
}
a2a_native '"alltoall_weights": [[4, 1, 1, 2, 2, 4, 1, 1, 1, 1, 4, 2, 1, 2, 2, 3]], ' '"root": 1, ' uneven
a2a_native '"alltoall_weights": [[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]], ' '"root": 1, ' ones
a2a_native '' '' even
a2a_step() { "$C" replay --topo dgx-h100 --gpus 4 "$1" --format json 2>/dev/null | sed -n 's/^{"step_time_s": \([0-9.e-]*\),.*/\1/p'; }
k=$(a2a_step "$tr_dir/a2a"); nat=$(a2a_step "$tr_dir/a2a-uneven.json"); ev=$(a2a_step "$tr_dir/a2a-even.json")
if [ -n "$k" ] && [ "$k" = "$nat" ] && [ "$k" != "$ev" ] && [ "$(a2a_step "$tr_dir/a2a-ones.json")" = "$ev" ]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL kineto-alltoall-splits: step $k s (Kineto), $nat (native matrix), $ev (even)" >&2
fi
check kineto-alltoall-splits-text 0 'replay: .*/a2a \(4 ranks, 8 ops\)' -- replay --topo dgx-h100 --gpus 4 "$tr_dir/a2a"
check kineto-alltoall-splits-shape 0 'alltoallv +33554432 +4 +1 +1 +50\.0' -- replay --topo dgx-h100 --gpus 4 "$tr_dir/a2a"
check kineto-alltoall-splits-json 0 '"op": "alltoall", "bytes": 33554432, .*"uneven": true' -- replay --topo dgx-h100 --gpus 4 "$tr_dir/a2a" --format json
sed -i 's/"Out split size": "\[1, 4, 1, 2\]"/"Out split size": "[2, 4, 1, 1]"/' "$tr_dir/a2a/rank1.json"
check kineto-alltoall-splits-disagree 2 'rank0\.json: event 1 \(alltoall #0\): rank 0 sends 4194304 bytes to rank 1, but .*rank1\.json: event 1 says rank 1 receives 8388608 from it' -- replay --topo dgx-h100 --gpus 4 "$tr_dir/a2a"
# 9. An alltoall of 0 bytes moves nothing: its footprint sorted an empty link list from a NULL
#    pointer (UBSan: "null pointer passed as argument 1" in qsort; found by a command-line fuzz of
#    the split lists, 2026-12-03)
printf '{"ranks": 2, "ops": [{"rank": 0, "id": "a", "kind": "alltoall", "bytes": 0}, {"rank": 1, "id": "a", "kind": "alltoall", "bytes": 0}]}\n' > "$tr_dir/a2a-zero.json"
check alltoall-zero-bytes 0 'replay: .*a2a-zero\.json \(2 ranks, 2 ops\)' -- replay --topo dgx-h100 --gpus 2 "$tr_dir/a2a-zero.json"
rm -rf "$tr_dir"
