#!/bin/sh
# Container entrypoint for a Kubernetes Job: K8S_POD_NAME, K8S_NAMESPACE, K8S_NODE_NAME and
# K8S_POD_UID come from the downward API (env valueFrom.fieldRef) in the pod spec;
# JOB_COMPLETION_INDEX is set by an Indexed Job.
set -eu
export NEMO_LENS_ENABLED="${NEMO_LENS_ENABLED:-true}"
export OTEL_SERVICE_NAME="${OTEL_SERVICE_NAME:-ckpt-worker}"
exec lens exec --role ckpt_worker \
	--attr "nv.dl.rank=${JOB_COMPLETION_INDEX:-0}" \
	-- /app/checkpoint-worker "$@"
