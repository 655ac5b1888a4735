#!/bin/sh
# gpu-check.sh: on a machine with NVIDIA GPUs, compare three views of the
# GPUs (docs/testing.md#gpu-check):
#   1. nvidia-smi's own list (--query-gpu=index,uuid,pci.bus_id,name),
#   2. lens's procfs backend (lens detect --only gpus, the driver's tree),
#      and lens's nvidia-smi backend (the same with no tree),
#   3. the resource of lens exec's span (console exporter),
# for the whole node and for several CUDA_VISIBLE_DEVICES values, with
# CUDA_DEVICE_ORDER=PCI_BUS_ID. When torch is importable and its device
# properties have a uuid, CUDA's own view is compared too.
#
# Usage: scripts/gpu-check.sh [LENS]   (LENS: the lens binary; default
# $LENS, else lens in PATH). Run it on the node itself, outside a Slurm
# step that constrains devices. LENS_NVIDIA_PROCFS names another driver
# tree (the tests use a fake one).
#
# Exit status: 0 when every view agrees, 1 on a disagreement (each one is
# printed), 2 when it cannot run.
set -u

lens=${1:-${LENS:-lens}}
tree=${LENS_NVIDIA_PROCFS:-/proc/driver/nvidia/gpus}
status=0

die() { echo "gpu-check: $*" >&2; exit 2; }
command -v "$lens" >/dev/null 2>&1 || die "no lens binary ($lens)"
command -v nvidia-smi >/dev/null 2>&1 || die "nvidia-smi is not in PATH"
[ -d "$tree" ] || die "no driver tree at $tree"

# Every run starts from the same environment: no GPU selection inherited.
clean() {
	env -u CUDA_VISIBLE_DEVICES -u NVIDIA_VISIBLE_DEVICES -u SLURM_STEP_GPUS \
		-u SLURM_JOB_GPUS -u OTEL_TRACES_EXPORTER -u OTEL_SDK_DISABLED \
		CUDA_DEVICE_ORDER=PCI_BUS_ID LENS_NVIDIA_PROCFS="$tree" "$@"
}

# field FILE KEY: the value of KEY in lens's JSON object or console span.
field() {
	sed -n -e "s/.*\"$2\":\"\([^\"]*\)\".*/\1/p" \
		-e "s/.*{\"Key\":\"$2\",\"Value\":{\"Type\":\"STRING\",\"Value\":\"\([^\"]*\)\"}}.*/\1/p" "$1" | head -n 1
}

check() { # check WHAT WANT GOT
	if [ "$2" = "$3" ]; then
		echo "ok       $1: $3"
	else
		echo "MISMATCH $1: want '$2', got '$3'"
		status=1
	fi
}

work=$(mktemp -d) || die "mktemp failed"
trap 'rm -rf "$work"' EXIT

# 1. nvidia-smi's list, in NVML index order.
clean nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv,noheader >"$work/smi" ||
	die "nvidia-smi --query-gpu failed"
n=$(grep -c . "$work/smi")
[ "$n" -gt 0 ] || die "nvidia-smi lists no GPU"
col() { awk -F', *' -v c="$1" 'NF { printf "%s%s", sep, $c; sep="," }' "$work/smi"; }
smi_index=$(col 1)
smi_uuid=$(col 2)
smi_bus=$(col 3)
smi_model=$(col 4)
uuid_at() { echo "$smi_uuid" | cut -d, -f"$(($1 + 1))"; }
echo "nvidia-smi lists $n GPU(s): $smi_uuid"

# 2. lens's two backends for the whole node.
for backend in procfs nvidia-smi; do
	t=$tree
	[ "$backend" = nvidia-smi ] && t=$work/no-tree
	if ! clean env LENS_NVIDIA_PROCFS="$t" "$lens" detect --only gpus --format json >"$work/$backend" 2>"$work/$backend.err"; then
		echo "MISMATCH lens detect --only gpus ($backend) failed: $(cat "$work/$backend.err")"
		status=1
		continue
	fi
	check "$backend uuid" "$smi_uuid" "$(field "$work/$backend" nv.gpu.visible.uuid)"
	check "$backend index" "$smi_index" "$(field "$work/$backend" nv.gpu.visible.index)"
	check "$backend pci_bus_id" "$smi_bus" "$(field "$work/$backend" nv.gpu.visible.pci_bus_id)"
	check "$backend model" "$smi_model" "$(field "$work/$backend" nv.gpu.visible.model)"
done

# 3. Selections: lens detect (procfs) and lens exec's span against what
# nvidia-smi's list says the selection is.
last=$((n - 1))
set -- "unset" "$smi_uuid" \
	"0" "$(uuid_at 0)" \
	"$last" "$(uuid_at "$last")" \
	"$(uuid_at "$last")" "$(uuid_at "$last")" \
	"" ""
if [ "$n" -gt 1 ]; then
	set -- "$@" "1,0" "$(uuid_at 1),$(uuid_at 0)"
fi
while [ $# -ge 2 ]; do
	cvd=$1 want=$2
	shift 2
	if [ "$cvd" = unset ]; then
		run() { clean "$@"; }
	else
		run() { clean env CUDA_VISIBLE_DEVICES="$cvd" "$@"; }
	fi
	run "$lens" detect --only gpus --format json >"$work/sel" 2>&1
	check "CUDA_VISIBLE_DEVICES=$cvd lens detect" "$want" "$(field "$work/sel" nv.gpu.visible.uuid)"
	run env NEMO_LENS_ENABLED=true OTEL_TRACES_EXPORTER=console "$lens" exec -- true 2>"$work/span" >/dev/null
	check "CUDA_VISIBLE_DEVICES=$cvd lens exec span" "$want" "$(field "$work/span" nv.gpu.visible.uuid)"
	if run python3 -c 'import torch; torch.cuda.get_device_properties(0).uuid' >/dev/null 2>&1; then
		got=$(run python3 -c 'import torch; print(",".join("GPU-" + str(torch.cuda.get_device_properties(i).uuid) for i in range(torch.cuda.device_count())))')
		check "CUDA_VISIBLE_DEVICES=$cvd torch" "$want" "$got"
	fi
done

if [ "$status" -eq 0 ]; then
	echo "gpu-check: nvidia-smi, lens's procfs and nvidia-smi backends and lens exec agree"
else
	echo "gpu-check: the views disagree (see MISMATCH above)"
fi
exit "$status"
