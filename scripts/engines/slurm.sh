#!/usr/bin/env bash
# A real single-node Slurm cluster, run as plain processes of this script (no systemd, no
# cgroups), for trying deploy/slurm/ on one machine (a developer's box, CI).
#
#   scripts/engines/slurm.sh install      # Debian's slurmctld slurmd slurm-client munge (apt)
#   scripts/engines/slurm.sh prepare      # install, then print GTB_SLURM_ENGINE=<this script>
#                                         # (scripts/engine-test.sh reads it; tests/it/slurm_e2e.rs)
#   scripts/engines/slurm.sh start DIR    # config, munge key, state in DIR; munged, slurmctld,
#                                         # slurmd started; waits until the node is idle; prints
#                                         #   export SLURM_CONF=DIR/slurm.conf
#   eval "$(scripts/engines/slurm.sh start DIR)"   # its stdout is only that line
#   scripts/engines/slurm.sh status DIR   # sinfo / squeue against that cluster
#   scripts/engines/slurm.sh stop DIR     # kills the daemons it started (by pid), waits for them
#
# Settings (environment of `start`):
#   SLURM_NODE_CPUS     CPUs the node claims (default: the real cores, nproc). More than it has
#                       is allowed (SlurmdParameters=config_overrides), e.g. to run 4 array
#                       tasks of --cpus-per-task=2 side by side on a 2-core machine.
#   SLURM_NODE_MEM_MB   RealMemory the node claims, MB (default: MemTotal less 512 MB, so
#                       that a job asking for the whole machine is refused, not left pending)
#   SLURM_NODE_NAME     node name (default: hostname -s)
#   SLURM_PARTITION     partition name (default: debug)
#   SLURM_PORT_BASE     first port tried for slurmctld (default 6817); slurmd takes the next
#                       free one
#   SLURM_START_TIMEOUT seconds to wait for the node to become idle (default 60)
#
# Exit codes: 0 ok, 1 failure, 2 usage, 3 `install` could not install (prints "skipped: why").
set -euo pipefail

PKGS=(slurmctld slurmd slurm-client munge)

die() { echo "slurm.sh: $*" >&2; exit 1; }
log() { echo "slurm.sh: $*" >&2; }

usage() {
    sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

have_all() {
    command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 &&
        command -v sbatch >/dev/null 2>&1 && command -v munged >/dev/null 2>&1
}

cmd_install() {
    if have_all; then
        echo "installed: already ($(slurmctld -V 2>/dev/null || echo slurm), munge present)"
        return 0
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "skipped: no apt-get (not a Debian-like system); install ${PKGS[*]} yourself"
        exit 3
    fi
    if [[ $(id -u) != 0 ]]; then
        echo "skipped: not root; run as root or install ${PKGS[*]} yourself"
        exit 3
    fi
    local t0 t1 own_policy=0 rc=0
    t0=$(date +%s.%N)
    # No init system here: keep the packages' postinst from starting their own munged /
    # slurmctld / slurmd (a policy-rc.d that says "no" is the standard way).
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        own_policy=1
    fi
    local aptlog
    aptlog=$(mktemp)
    {
        apt-get update -q &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
                -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${PKGS[@]}"
    } >"$aptlog" 2>&1 || rc=$?
    if ((own_policy)); then rm -f /usr/sbin/policy-rc.d; fi
    t1=$(date +%s.%N)
    if ((rc != 0)) || ! have_all; then
        tail -n 20 "$aptlog" >&2
        rm -f "$aptlog"
        echo "skipped: apt-get install ${PKGS[*]} failed (exit $rc)"
        exit 3
    fi
    rm -f "$aptlog"
    printf 'installed: %s (%s) in %.1f s\n' "${PKGS[*]}" "$(slurmctld -V)" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"
}

# Is anything listening on 127.0.0.1:PORT (or any address, with ss)?
port_busy() {
    if command -v ss >/dev/null 2>&1; then
        ss -Htln "sport = :$1" 2>/dev/null | grep -q .
    else
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
    fi
}

# A TCP port nobody listens on, from $1 upward, not in the list $2...
free_port() {
    local p=$1
    shift
    while port_busy "$p" || [[ " $* " == *" $p "* ]]; do
        p=$((p + 1))
        ((p < 65000)) || die "no free port"
    done
    echo "$p"
}

pid_alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }

read_pid() { [[ -s $1 ]] && tr -dc 0-9 <"$1" || true; }

cmd_start() {
    local dir=${1:?usage: slurm.sh start DIR}
    have_all || die "slurm/munge not installed (run: $0 install)"
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if pid_alive "$(read_pid "$dir/slurmctld.pid")" || pid_alive "$(read_pid "$dir/munged.pid")"; then
        die "a cluster from $dir is running; $0 stop $dir first"
    fi
    local node cpus mem_total mem part timeout ctld_port d_port overrides=""
    # slurmctld only runs where SlurmctldHost names this host: its short name
    local ctld_host
    ctld_host=$(hostname -s)
    node=${SLURM_NODE_NAME:-$ctld_host}
    local real_cpus
    real_cpus=$(nproc)
    cpus=${SLURM_NODE_CPUS:-$real_cpus}
    mem_total=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
    mem=${SLURM_NODE_MEM_MB:-$((mem_total > 1024 ? mem_total - 512 : mem_total))}
    part=${SLURM_PARTITION:-debug}
    timeout=${SLURM_START_TIMEOUT:-60}
    if ((cpus > real_cpus || mem > mem_total)); then
        overrides="SlurmdParameters=config_overrides"
    fi
    # The node name must resolve for slurmctld/slurmd; when hostname -s does not (no /etc/hosts
    # entry, no DNS), the address is given explicitly (loopback: everything is on this host).
    local addr=127.0.0.1
    if getent hosts "$ctld_host" >/dev/null 2>&1; then
        addr=$(getent hosts "$ctld_host" | awk '{print $1; exit}')
        # an IPv6-only answer or a foreign address: stay on loopback, it is one machine
        [[ $addr == 127.* ]] || addr=127.0.0.1
    fi
    ctld_port=$(free_port "${SLURM_PORT_BASE:-6817}")
    d_port=$(free_port $((ctld_port + 1)) "$ctld_port")

    rm -rf "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
    mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
    chmod 755 "$dir/munge" # the key itself is 0400; others may reach the socket

    # munge: its own key, socket, pid and log in DIR (not /etc/munge, not /run/munge)
    local key="$dir/munge/munge.key" sock="$dir/munge/munge.socket"
    dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
    chmod 400 "$key"
    # --force: munged refuses when it dislikes a parent folder's permissions (e.g. a /tmp path)
    munged --force --key-file="$key" --socket="$sock" --pid-file="$dir/munged.pid" \
        --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munge.seed" \
        >>"$dir/log/munged.out" 2>&1 || die "munged did not start: $(tail -n 5 "$dir/log/munged.log" "$dir/log/munged.out" 2>/dev/null)"
    local i
    for ((i = 0; i < 50; i++)); do
        [[ -S $sock ]] && break
        sleep 0.1
    done
    [[ -S $sock ]] || die "munged socket $sock did not appear"
    munge -n --socket="$sock" | unmunge --socket="$sock" >/dev/null || die "munge round trip failed"

    cat >"$dir/slurm.conf" <<EOF
# written by scripts/engines/slurm.sh start $dir
ClusterName=gtb-local
SlurmctldHost=$ctld_host($addr)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# no systemd, no cgroup delegation in a sandbox: track processes by /proc, no task binding
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
LaunchParameters=use_interactive_step
# CPUs and memory are consumable: --cpus-per-task/--mem are checked against the node
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=256
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=5
MinJobAge=600
KillWait=5
InactiveLimit=0
Waittime=0
$overrides
NodeName=$node NodeAddr=$addr NodeHostname=$ctld_host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=$part Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
    # cgroup.conf: read by slurmd even with proctrack/linuxproc; keep it from touching cgroups
    cat >"$dir/cgroup.conf" <<EOF
# written by scripts/engines/slurm.sh; nothing is constrained (task/none, proctrack/linuxproc)
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainDevices=no
ConstrainSwapSpace=no
EOF
    export SLURM_CONF="$dir/slurm.conf"
    # -i: start without the old state (a fresh cluster each start)
    slurmctld -i -f "$SLURM_CONF" >>"$dir/log/slurmctld.out" 2>&1 ||
        die "slurmctld did not start: $(tail -n 20 "$dir/log/slurmctld.log" 2>/dev/null)"
    slurmd -f "$SLURM_CONF" -N "$node" >>"$dir/log/slurmd.out" 2>&1 ||
        die "slurmd did not start: $(tail -n 20 "$dir/log/slurmd.log" 2>/dev/null)"

    local state="" deadline=$((SECONDS + timeout))
    while ((SECONDS < deadline)); do
        state=$(sinfo -h -N -n "$node" -o '%t' 2>/dev/null | head -n 1 || true)
        case $state in
        idle | mix | alloc) break ;;
        drain* | down* | fail*)
            # a node that registered late can be marked down; a resume is safe on our own node
            scontrol update NodeName="$node" State=RESUME >/dev/null 2>&1 || true
            ;;
        esac
        sleep 0.5
    done
    if [[ $state != idle && $state != mix && $state != alloc ]]; then
        log "node $node is '${state:-unreachable}' after ${timeout}s"
        sinfo -R >&2 2>/dev/null || true
        tail -n 15 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 2>/dev/null || true
        cmd_stop "$dir" >&2 || true
        exit 1
    fi
    log "cluster up: node $node ($cpus CPUs, $mem MB, partition $part), slurmctld :$ctld_port, slurmd :$d_port"
    echo "export SLURM_CONF=$dir/slurm.conf"
}

cmd_stop() {
    local dir=${1:?usage: slurm.sh stop DIR}
    [[ -d $dir ]] || die "no folder $dir"
    dir=$(cd "$dir" && pwd)
    local name pid pids=() names=()
    # Jobs first: slurmstepd (and the job under it) outlives slurmd by design, so cancel every
    # job of this cluster (it is ours alone) while slurmctld still runs, and wait (bounded).
    if pid_alive "$(read_pid "$dir/slurmctld.pid")" && [[ -f $dir/slurm.conf ]]; then
        export SLURM_CONF="$dir/slurm.conf"
        scancel --quiet --user="$(id -un)" >/dev/null 2>&1 || true
        local deadline0=$((SECONDS + 30))
        while ((SECONDS < deadline0)) && [[ -n $(squeue -h -t R,CG,S 2>/dev/null) ]]; do sleep 0.5; done
        [[ -z $(squeue -h -t R,CG,S 2>/dev/null) ]] || log "jobs still running after 30 s: $(squeue -h -o %i -t R,CG,S | tr '\n' ' ')"
    fi
    # slurmd first (it kills its running job steps' slurmstepd), then slurmctld, then munged
    for name in slurmd slurmctld munged; do
        pid=$(read_pid "$dir/$name.pid")
        if pid_alive "$pid"; then
            kill -TERM "$pid" 2>/dev/null || true
            pids+=("$pid")
            names+=("$name")
        fi
    done
    local i deadline=$((SECONDS + 20))
    for ((i = 0; i < ${#pids[@]}; i++)); do
        while pid_alive "${pids[$i]}" && ((SECONDS < deadline)); do sleep 0.2; done
        if pid_alive "${pids[$i]}"; then
            log "${names[$i]} ($pid) ignored SIGTERM; SIGKILL"
            kill -KILL "${pids[$i]}" 2>/dev/null || true
            while pid_alive "${pids[$i]}"; do sleep 0.1; done
        fi
    done
    rm -f "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"
    log "stopped ${names[*]:-nothing (no daemon running)}"
}

cmd_status() {
    local dir=${1:?usage: slurm.sh status DIR}
    dir=$(cd "$dir" && pwd)
    export SLURM_CONF="$dir/slurm.conf"
    local name
    for name in munged slurmctld slurmd; do
        pid=$(read_pid "$dir/$name.pid")
        if pid_alive "$pid"; then echo "$name: running ($pid)"; else echo "$name: not running"; fi
    done
    sinfo -N -o '%N %c %m %P %t' || true
    squeue || true
}

# For scripts/engine-test.sh: what the engine test needs, as NAME=VALUE lines.
cmd_prepare() {
    local out rc=0
    out=$(cmd_install) || rc=$?
    if ((rc != 0)); then
        echo "$out"
        exit "$rc"
    fi
    echo "$out" >&2
    echo "GTB_SLURM_ENGINE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
}

case ${1:-} in
install) cmd_install ;;
prepare) cmd_prepare ;;
start) shift; cmd_start "$@" ;;
stop) shift; cmd_stop "$@" ;;
status) shift; cmd_status "$@" ;;
*) usage ;;
esac
