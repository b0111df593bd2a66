#!/usr/bin/env bash
# Run a sharded build on Kubernetes: the shared volume, the Indexed shard Job, and, once every
# index completed, the merge Job. Edit SHARD_COUNT/completions/GTB_ARGS in shards-job.yaml
# first; the image gtb:latest comes from deploy/Dockerfile.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
timeout=${TIMEOUT:-24h}
kubectl apply -f "$here/shared-volume.yaml"
kubectl apply -f "$here/shards-job.yaml"
kubectl wait --for=condition=complete --timeout="$timeout" job/gtb-shards
kubectl apply -f "$here/merge-job.yaml"
kubectl wait --for=condition=complete --timeout="$timeout" job/gtb-merge
kubectl logs job/gtb-merge
