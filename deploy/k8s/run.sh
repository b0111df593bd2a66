#!/usr/bin/env bash
# Run a sharded build on Kubernetes: the shared volume, the Indexed shard Job, and, once every
# index completed, the merge Job. The image gtb:latest comes from deploy/Dockerfile.
#
#   SHARD_COUNT=8 GTB_ARGS="--n 100000 --seed 1 --llm openai ..." \
#   GTB_SHARD_CPU=2 GTB_SHARD_MEMORY=4Gi deploy/k8s/run.sh
#
# Settings (each replaces the value of the lines marked "# gtb-set: VAR" in the manifests; unset:
# the manifest's default, shown in brackets):
#   SHARD_COUNT              shards N: completions, SHARD_COUNT of both Jobs [4]
#   GTB_K8S_PARALLELISM      shard pods at once [SHARD_COUNT]
#   GTB_ARGS                 the build's arguments, one line [the vLLM example in shards-job.yaml]
#   GTB_IMAGE                the image [gtb:latest]
#   GTB_SHARD_CPU            CPU request of a shard pod; GTB_THREADS follows it ["1"]
#   GTB_SHARD_MEMORY         memory request of a shard pod [2Gi]
#   GTB_SHARD_MEMORY_LIMIT   its memory limit [4Gi; twice GTB_SHARD_MEMORY when only that is set]
#   GTB_MERGE_CPU            CPU request of the merge pod ["1"]
#   GTB_MERGE_MEMORY         memory request of the merge pod [2Gi]
#   TIMEOUT                  how long to wait for each Job [24h]
#
# Before applying, when `kubectl get nodes` answers, the shard and merge pods' requests are
# checked against the allocatable CPU and memory of the schedulable nodes: a pod no node can
# hold would stay Pending forever, so run.sh names what was asked and the largest node, and
# exits 1 without applying anything (GTB_K8S_NO_CHECK=1 skips the check).
#
#   deploy/k8s/run.sh --render   print the manifests as they would be applied, then exit
#   deploy/k8s/run.sh --check    render and check against the nodes only
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
timeout=${TIMEOUT:-24h}
mode=run
case ${1:-} in
--render) mode=render ;;
--check) mode=check ;;
"") ;;
*) echo "usage: [variables] $0 [--render|--check]" >&2; exit 2 ;;
esac

die() { echo "run.sh: $*" >&2; exit 1; }

# --- Kubernetes quantities -----------------------------------------------------------------
# CPU ("2", "1.5", "500m") -> millicores; memory ("2Gi", "512Mi", "1G", "123456") -> bytes
cpu_m() {
    awk -v q="$1" 'BEGIN {
        if (q ~ /^[0-9.]+m$/) { sub(/m$/, "", q); printf "%d\n", q; exit }
        if (q ~ /^[0-9.]+$/) { printf "%d\n", q * 1000; exit }
        print -1 }'
}
mem_b() {
    awk -v q="$1" 'BEGIN {
        n = q; sub(/[A-Za-z]+$/, "", n); u = substr(q, length(n) + 1)
        if (n !~ /^[0-9.]+$/) { print -1; exit }
        f["Ki"] = 1024; f["Mi"] = 1024^2; f["Gi"] = 1024^3; f["Ti"] = 1024^4; f["Pi"] = 1024^5
        f["k"] = 1e3; f["M"] = 1e6; f["G"] = 1e9; f["T"] = 1e12; f["P"] = 1e15; f[""] = 1
        if (!(u in f)) { print -1; exit }
        printf "%.0f\n", n * f[u] }'
}
human_mem() { awk -v b="$1" 'BEGIN { printf "%.1fGi", b / 1024^3 }'; }

# --- the settings ----------------------------------------------------------------------------
if [[ -n ${SHARD_COUNT:-} ]]; then
    [[ $SHARD_COUNT =~ ^[1-9][0-9]*$ ]] || die "SHARD_COUNT must be a positive integer, not '$SHARD_COUNT'"
    export GTB_K8S_PARALLELISM=${GTB_K8S_PARALLELISM:-$SHARD_COUNT}
fi
if [[ -n ${GTB_K8S_PARALLELISM:-} && ! $GTB_K8S_PARALLELISM =~ ^[1-9][0-9]*$ ]]; then
    die "GTB_K8S_PARALLELISM must be a positive integer, not '$GTB_K8S_PARALLELISM'"
fi
if [[ -n ${GTB_SHARD_MEMORY:-} && -z ${GTB_SHARD_MEMORY_LIMIT:-} ]]; then
    b=$(mem_b "$GTB_SHARD_MEMORY")
    ((b > 0)) || die "GTB_SHARD_MEMORY: not a memory quantity: '$GTB_SHARD_MEMORY'"
    export GTB_SHARD_MEMORY_LIMIT="$(((b * 2 + 1048575) / 1048576))Mi"
fi
for v in GTB_SHARD_CPU GTB_MERGE_CPU; do
    if [[ -n ${!v:-} ]] && (($(cpu_m "${!v}") <= 0)); then die "$v: not a CPU quantity: '${!v}'"; fi
done
for v in GTB_SHARD_MEMORY GTB_SHARD_MEMORY_LIMIT GTB_MERGE_MEMORY; do
    if [[ -n ${!v:-} ]] && (($(mem_b "${!v}") <= 0)); then die "$v: not a memory quantity: '${!v}'"; fi
done

# A manifest with each "key: value # gtb-set: VAR" line set from VAR (when VAR is set): a value
# that was quoted stays a double-quoted YAML string, an unquoted one (an integer, a quantity,
# an image) stays plain.
render() {
    awk '
    function yq(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
    /^[ \t]*[^# \t].*: .* # gtb-set: [A-Z_][A-Z0-9_]*[ \t]*$/ {
        var = $0; sub(/.* # gtb-set: /, "", var); sub(/[ \t]+$/, "", var)
        if (var in ENVIRON && ENVIRON[var] != "") {
            i = index($0, ": "); key = substr($0, 1, i + 1); old = substr($0, i + 2)
            sub(/ # gtb-set: .*/, "", old)
            new = ENVIRON[var]
            if (old ~ /^"/ || new ~ /[:#{}\[\],&*!|>'"'"'"%@`]|^[-?]|^ | $/) new = yq(new)
            print key new " # gtb-set: " var
            next
        }
    }
    { print }' "$1"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in shared-volume shards-job merge-job; do
    render "$here/$f.yaml" >"$tmp/$f.yaml"
done
if [[ $mode == render ]]; then
    for f in shared-volume shards-job merge-job; do
        echo "---"
        cat "$tmp/$f.yaml"
    done
    exit 0
fi

# the value of the line marked VAR in a rendered manifest (quotes removed)
marked() {
    sed -n "s/^[^#]*: \(.*\) # gtb-set: $2[[:space:]]*\$/\1/p" "$tmp/$1.yaml" | head -n 1 | sed 's/^"\(.*\)"$/\1/'
}

# --- the check: does some schedulable node have the allocatable CPU and memory of one pod? ----
check_nodes() {
    local nodes
    if ! nodes=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"|"}{.status.allocatable.cpu}{"|"}{.status.allocatable.memory}{"|"}{.spec.unschedulable}{"|"}{.spec.taints[*].effect}{"\n"}{end}' 2>&1); then
        echo "run.sh: cannot list the nodes (not checked): $(echo "$nodes" | tail -n 1)" >&2
        return 0
    fi
    local failed=0 what cpu mem lim
    for what in shard merge; do
        if [[ $what == shard ]]; then
            cpu=$(marked shards-job GTB_SHARD_CPU) mem=$(marked shards-job GTB_SHARD_MEMORY)
            lim=$(marked shards-job GTB_SHARD_MEMORY_LIMIT)
            if [[ -n $lim ]] && (($(mem_b "$lim") < $(mem_b "$mem"))); then
                echo "run.sh: the shard pod's memory limit $lim is below its request $mem (set GTB_SHARD_MEMORY_LIMIT)" >&2
                failed=1
            fi
        else
            cpu=$(marked merge-job GTB_MERGE_CPU) mem=$(marked merge-job GTB_MERGE_MEMORY)
        fi
        local want_c want_m fits=0 best_c=0 best_c_node="" best_m=0 best_m_node="" usable=0
        want_c=$(cpu_m "$cpu") want_m=$(mem_b "$mem")
        local name acpu amem unsched taints c m
        while IFS='|' read -r name acpu amem unsched taints; do
            [[ -n $name ]] || continue
            # cordoned nodes and NoSchedule/NoExecute taints (these pods tolerate none) do not count
            [[ $unsched == true || $taints == *NoSchedule* || $taints == *NoExecute* ]] && continue
            usable=$((usable + 1))
            c=$(cpu_m "$acpu") m=$(mem_b "$amem")
            if ((c > best_c)); then best_c=$c best_c_node="$name (cpu $acpu, memory $(human_mem "$m"))"; fi
            if ((m > best_m)); then best_m=$m best_m_node="$name (cpu $acpu, memory $(human_mem "$m"))"; fi
            if ((c >= want_c && m >= want_m)); then fits=1; fi
        done <<<"$nodes"
        if ((!fits)); then
            if ((usable == 0)); then
                echo "run.sh: no schedulable node (all cordoned or tainted NoSchedule) for the $what pod (cpu $cpu, memory $mem)" >&2
            else
                echo "run.sh: no node can hold the $what pod: it requests cpu $cpu and memory $mem; of the schedulable nodes (cordoned and NoSchedule-tainted ones left out), the most allocatable CPU: $best_c_node; the most memory: $best_m_node" >&2
            fi
            failed=1
        fi
    done
    if ((failed)); then
        echo "run.sh: nothing applied. Set GTB_SHARD_CPU / GTB_SHARD_MEMORY / GTB_MERGE_CPU / GTB_MERGE_MEMORY to what a node has (GTB_K8S_NO_CHECK=1 skips this check)." >&2
        return 1
    fi
    echo "run.sh: checked: the shard and merge pods fit a node" >&2
}

command -v kubectl >/dev/null || die "kubectl not found"
if [[ ${GTB_K8S_NO_CHECK:-0} != 1 ]]; then
    check_nodes || exit 1
fi
[[ $mode == check ]] && exit 0

kubectl apply -f "$tmp/shared-volume.yaml"
kubectl apply -f "$tmp/shards-job.yaml"
kubectl wait --for=condition=complete --timeout="$timeout" job/gtb-shards
kubectl apply -f "$tmp/merge-job.yaml"
kubectl wait --for=condition=complete --timeout="$timeout" job/gtb-merge
kubectl logs job/gtb-merge
