#!/bin/sh
# Container entrypoint of the Indexed Job in examples/k8s-job.yaml. The pod spec sets
# NEMO_LENS_RUN_ID (the Job's uid: one run id for all its pods) and K8S_* from the downward
# API; Kubernetes sets JOB_COMPLETION_INDEX, which --rank-from k8s-index makes nv.dl.rank.
# Usage: k8s-entrypoint.sh [COMMAND [ARG...]]     (default: /app/checkpoint-worker)
set -eu
export NEMO_LENS_ENABLED="${NEMO_LENS_ENABLED:-true}"
export OTEL_SERVICE_NAME="${OTEL_SERVICE_NAME:-ckpt-worker}"
if [ "$#" -eq 0 ]; then
	set -- /app/checkpoint-worker
fi
# lens is a Go program: a GOMEMLIMIT the Go runtime rejects (8G, 8gib, -1) stops it, and every Go
# program, before it starts; such a value is unset (docs/exec.md#gomemlimit).
m=${GOMEMLIMIT-}; case $m in *[0-9][KMGT]iB) m=${m%???} ;; *[0-9]B) m=${m%B} ;; esac
case $m in '' | off) ;; *[!0-9]*) echo "GOMEMLIMIT=$GOMEMLIMIT is not a value Go accepts; unset" >&2
  unset GOMEMLIMIT ;; esac
exec lens exec --rank-from k8s-index --role ckpt_worker -- "$@"
