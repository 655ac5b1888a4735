package detect_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// fakeGPU is one GPU of a fake driver tree.
type fakeGPU struct {
	bus, uuid, model string
	minor            int
	excluded         bool
}

// fakeNode is a node of four GPUs in PCI bus order (NVML indices 0-3).
// Minor numbers do not follow the bus order (as on real machines where
// /dev/nvidiaN was created in probe order), and GPU-3 is a prefix of two
// UUIDs.
var fakeNode = []fakeGPU{
	{"0000:18:00.0", "GPU-11111111-aaaa-bbbb-cccc-000000000000", "NVIDIA H100 80GB HBM3", 0, false},
	{"0000:3b:00.0", "GPU-22222222-aaaa-bbbb-cccc-000000000001", "NVIDIA H100 80GB HBM3", 1, false},
	{"0000:86:00.0", "GPU-33333333-aaaa-bbbb-cccc-000000000002", "NVIDIA H100 80GB HBM3", 3, false},
	{"0000:af:00.0", "GPU-34444444-aaaa-bbbb-cccc-000000000003", "NVIDIA H100 80GB HBM3", 2, false},
}

// informationFile writes what the driver writes (nv-procfs.c: tab-separated
// "key: value" lines).
func informationFile(g fakeGPU) string {
	excluded := "No"
	if g.excluded {
		excluded = "Yes"
	}
	return fmt.Sprintf("Model: \t\t %s\nIRQ:   \t\t 150\nGPU UUID: \t %s\nVideo BIOS: \t 96.00.74.00.01\n"+
		"Bus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t %s\n"+
		"Device Minor: \t %d\nGPU Firmware: \t 550.54.15\nGPU Excluded:\t %s\n", g.model, g.uuid, g.bus, g.minor, excluded)
}

// writeTree writes a fake /proc/driver/nvidia/gpus and returns its path.
func writeTree(t testing.TB, gpus []fakeGPU) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gpus")
	for _, g := range gpus {
		if err := os.MkdirAll(filepath.Join(dir, g.bus), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, g.bus, "information"), []byte(informationFile(g)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeSMI writes a fake nvidia-smi that lists gpus (NVML indices in the order given) for --query-gpu
// and -L, with the MIG instances migs (MIG id → parent UUID), and returns
// its path.
func writeSMI(t *testing.T, gpus []fakeGPU, migs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "nvidia-smi")
	script := "#!/bin/sh\nd=$(dirname \"$0\")\ncase \"$1\" in\n" +
		"-L) cat \"$d/L.txt\";;\n" +
		"--query-gpu=index,uuid,pci.bus_id,name) cat \"$d/query.txt\";;\n" +
		"*) echo \"unexpected $*\" >&2; exit 2;;\nesac\n"
	// Written under syscall.ForkLock: no process forked meanwhile inherits
	// the descriptor open for writing (ETXTBSY, golang/go#22315).
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, []byte(script), 0o755)
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	var query, list strings.Builder
	for i, g := range gpus {
		fmt.Fprintf(&query, "%d, %s, %s, %s\n", i, g.uuid, strings.ToUpper("0000"+g.bus), g.model)
		fmt.Fprintf(&list, "GPU %d: %s (UUID: %s)\n", i, g.model, g.uuid)
		for mig, parent := range migs {
			if parent == g.uuid {
				fmt.Fprintf(&list, "  MIG 1g.10gb     Device  0: (UUID: %s)\n", mig)
			}
		}
	}
	for name, text := range map[string]string{"query.txt": query.String(), "L.txt": list.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

const migOnGPU1 = "MIG-5c5a7b1e-0000-5000-8000-000000000001"

// gpuRow is one case of the device rules (docs/detection.md#gpu-devices);
// the rows also seed FuzzVisibleGPUs.
type gpuRow struct {
	name string
	env  environ.Map
	// tree: the GPUs of fakeNode the driver lists (nil: all four).
	tree []int
	// want lists the devices in CUDA order as "n" (fakeNode[n]) or
	// "n/MIG-…"; wantIndex the node-level indices ("" when unknown).
	want      []string
	wantIndex string
	wantErr   string // a substring of the error (the source it names)
}

var gpuRows = []gpuRow{
	{name: "no variable: every GPU", env: environ.Map{}, want: []string{"0", "1", "2", "3"}, wantIndex: "0,1,2,3"},
	{name: "CVD indices reorder", env: environ.Map{"CUDA_VISIBLE_DEVICES": "2,0"}, want: []string{"2", "0"}, wantIndex: "2,0"},
	{name: "CVD blank: none", env: environ.Map{"CUDA_VISIBLE_DEVICES": " "}, want: []string{}},
	{name: "CVD spaces", env: environ.Map{"CUDA_VISIBLE_DEVICES": " 1 , 3 "}, want: []string{"1", "3"}, wantIndex: "1,3"},
	{name: "CVD stops at an index beyond the node", env: environ.Map{"CUDA_VISIBLE_DEVICES": "0,7,1"}, want: []string{"0"}, wantIndex: "0"},
	// Exactly one past the last GPU (break: `i < len(base)` → `<=`, which panics).
	{name: "CVD stops at the index one past the last GPU", env: environ.Map{"CUDA_VISIBLE_DEVICES": "1,4,0"}, want: []string{"1"}, wantIndex: "1"},
	{name: "CVD one past the last of a smaller tree", tree: []int{0, 1}, env: environ.Map{"CUDA_VISIBLE_DEVICES": "2"}, want: []string{}},
	{name: "CVD stops at a duplicate", env: environ.Map{"CUDA_VISIBLE_DEVICES": "1,1,2"}, want: []string{"1"}, wantIndex: "1"},
	{name: "CVD -1: none", env: environ.Map{"CUDA_VISIBLE_DEVICES": "-1"}, want: []string{}},
	{name: "CVD NoDevFiles: none", env: environ.Map{"CUDA_VISIBLE_DEVICES": "NoDevFiles"}, want: []string{}},
	{name: "CVD empty item stops", env: environ.Map{"CUDA_VISIBLE_DEVICES": "3,,0"}, want: []string{"3"}, wantIndex: "3"},
	{name: "CVD full UUID", env: environ.Map{"CUDA_VISIBLE_DEVICES": "GPU-22222222-aaaa-bbbb-cccc-000000000001"}, want: []string{"1"}, wantIndex: "1"},
	{name: "CVD UUID prefix", env: environ.Map{"CUDA_VISIBLE_DEVICES": "GPU-2222,GPU-34"}, want: []string{"1", "3"}, wantIndex: "1,3"},
	{name: "CVD ambiguous prefix stops", env: environ.Map{"CUDA_VISIBLE_DEVICES": "GPU-11,GPU-3,GPU-22"}, want: []string{"0"}, wantIndex: "0"},
	{name: "CVD unknown UUID: none", env: environ.Map{"CUDA_VISIBLE_DEVICES": "GPU-99"}, want: []string{}},
	{name: "CVD MIG id of old drivers", env: environ.Map{"CUDA_VISIBLE_DEVICES": "MIG-GPU-33333333-aaaa-bbbb-cccc-000000000002/1/0"},
		want: []string{"2/MIG-GPU-33333333-aaaa-bbbb-cccc-000000000002/1/0"}, wantIndex: "2"},
	{name: "CVD MIG id through nvidia-smi -L", env: environ.Map{"CUDA_VISIBLE_DEVICES": migOnGPU1}, want: []string{"1/" + migOnGPU1}, wantIndex: "1"},
	{name: "CVD unknown MIG id: none", env: environ.Map{"CUDA_VISIBLE_DEVICES": "MIG-00000000-0000-0000-0000-000000000000"}, want: []string{}},
	{name: "CVD mixes an index and a UUID", env: environ.Map{"CUDA_VISIBLE_DEVICES": "3,GPU-1111"}, want: []string{"3", "0"}, wantIndex: "3,0"},
	{name: "NVD all", env: environ.Map{"NVIDIA_VISIBLE_DEVICES": "all"}, want: []string{"0", "1", "2", "3"}, wantIndex: "0,1,2,3"},
	{name: "NVD none", env: environ.Map{"NVIDIA_VISIBLE_DEVICES": "none"}, want: []string{}},
	{name: "NVD void", env: environ.Map{"NVIDIA_VISIBLE_DEVICES": "void"}, want: []string{}},
	{name: "NVD empty is unset", env: environ.Map{"NVIDIA_VISIBLE_DEVICES": ""}, want: []string{"0", "1", "2", "3"}, wantIndex: "0,1,2,3"},
	{name: "container: only its GPUs listed, node indices", tree: []int{1, 3}, env: environ.Map{"NVIDIA_VISIBLE_DEVICES": "3,1"},
		want: []string{"1", "3"}, wantIndex: "1,3"},
	{name: "container with CUDA_VISIBLE_DEVICES", tree: []int{1, 3}, env: environ.Map{"NVIDIA_VISIBLE_DEVICES": "1,3", "CUDA_VISIBLE_DEVICES": "1"},
		want: []string{"3"}, wantIndex: "3"},
	{name: "container given UUIDs: index unknown", tree: []int{1, 3},
		env:  environ.Map{"NVIDIA_VISIBLE_DEVICES": "GPU-34444444-aaaa-bbbb-cccc-000000000003,GPU-22222222-aaaa-bbbb-cccc-000000000001"},
		want: []string{"1", "3"}, wantIndex: ""},
	{name: "NVD on the host's view", env: environ.Map{"NVIDIA_VISIBLE_DEVICES": "2"}, want: []string{"2"}, wantIndex: "2"},
	{name: "NVD UUID on the host's view", env: environ.Map{"NVIDIA_VISIBLE_DEVICES": "GPU-33333333-aaaa-bbbb-cccc-000000000002"}, want: []string{"2"}, wantIndex: "2"},
	{name: "NVD MIG", env: environ.Map{"NVIDIA_VISIBLE_DEVICES": migOnGPU1}, want: []string{"1/" + migOnGPU1}, wantIndex: "1"},
	{name: "NVD names more GPUs than listed", env: environ.Map{"NVIDIA_VISIBLE_DEVICES": "0,1,2,3,4"}, wantErr: "NVIDIA_VISIBLE_DEVICES"},
	{name: "NVD unknown UUID", env: environ.Map{"NVIDIA_VISIBLE_DEVICES": "GPU-99999999"}, wantErr: "NVIDIA_VISIBLE_DEVICES"},
	{name: "NVD MIG index form", env: environ.Map{"NVIDIA_VISIBLE_DEVICES": "0:1"}, wantErr: "NVIDIA_VISIBLE_DEVICES"},
	{name: "Slurm step renumbered", env: environ.Map{"SLURM_STEP_GPUS": "2,3", "CUDA_VISIBLE_DEVICES": "0,1"}, want: []string{"2", "3"}, wantIndex: "2,3"},
	{name: "Slurm step renumbered, second task", env: environ.Map{"SLURM_STEP_GPUS": "3,2", "CUDA_VISIBLE_DEVICES": "1"}, want: []string{"3"}, wantIndex: "3"},
	{name: "Slurm without device constraint", env: environ.Map{"SLURM_STEP_GPUS": "2,3", "CUDA_VISIBLE_DEVICES": "2,3"}, want: []string{"2", "3"}, wantIndex: "2,3"},
	{name: "Slurm batch step: SLURM_JOB_GPUS", env: environ.Map{"SLURM_JOB_GPUS": "1", "CUDA_VISIBLE_DEVICES": "0"}, want: []string{"1"}, wantIndex: "1"},
	{name: "Slurm step beats job", env: environ.Map{"SLURM_STEP_GPUS": "0", "SLURM_JOB_GPUS": "0,1", "CUDA_VISIBLE_DEVICES": "0"}, want: []string{"0"}, wantIndex: "0"},
	{name: "Slurm without CVD", env: environ.Map{"SLURM_STEP_GPUS": "1,2"}, want: []string{"1", "2"}, wantIndex: "1,2"},
	{name: "Slurm bad list", env: environ.Map{"SLURM_STEP_GPUS": "gpu:2", "CUDA_VISIBLE_DEVICES": "0"}, wantErr: "SLURM_STEP_GPUS"},
	{name: "Slurm GPU not on the node", env: environ.Map{"SLURM_JOB_GPUS": "7"}, wantErr: "SLURM_JOB_GPUS"},
	{name: "excluded GPU is not numbered", tree: []int{0, -1, 2, 3}, env: environ.Map{"CUDA_VISIBLE_DEVICES": "1"}, want: []string{"2"}, wantIndex: "1"},
	{name: "empty tree: none", tree: []int{}, env: environ.Map{}, want: []string{}},
}

// treeOf returns the fakeNode GPUs of a row's tree; -1 marks GPU 1 excluded.
func treeOf(row []int) []fakeGPU {
	if row == nil {
		return fakeNode
	}
	out := []fakeGPU{}
	for _, i := range row {
		if i < 0 {
			g := fakeNode[1]
			g.excluded = true
			out = append(out, g)
			continue
		}
		out = append(out, fakeNode[i])
	}
	return out
}

func listedNotExcluded(tree []fakeGPU) []fakeGPU {
	return slices.DeleteFunc(slices.Clone(tree), func(g fakeGPU) bool { return g.excluded })
}

func TestVisibleGPUs(t *testing.T) {
	t.Parallel()
	for _, row := range gpuRows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			tree := treeOf(row.tree)
			smi := writeSMI(t, listedNotExcluded(tree), map[string]string{migOnGPU1: fakeNode[1].uuid})
			got, err := detect.VisibleGPUs(context.Background(), detect.WithEnv(row.env),
				detect.WithNvidiaProcfs(writeTree(t, tree)), detect.WithNvidiaSMI(detect.NvidiaSMI{Path: smi}))
			checkRow(t, row, got, err, "procfs")
		})
	}
}

// TestVisibleGPUsFromNvidiaSMI: every row again with no driver tree: the
// fake nvidia-smi gives the same devices (without minor numbers).
func TestVisibleGPUsFromNvidiaSMI(t *testing.T) {
	t.Parallel()
	for _, row := range gpuRows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			tree := listedNotExcluded(treeOf(row.tree))
			smi := writeSMI(t, tree, map[string]string{migOnGPU1: fakeNode[1].uuid})
			got, err := detect.VisibleGPUs(context.Background(), detect.WithEnv(row.env),
				detect.WithNvidiaProcfs(filepath.Join(t.TempDir(), "absent")), detect.WithNvidiaSMI(detect.NvidiaSMI{Path: smi}))
			checkRow(t, row, got, err, "nvidia-smi")
		})
	}
}

func checkRow(t *testing.T, row gpuRow, got []detect.GPUDevice, err error, source string) {
	t.Helper()
	if row.wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), row.wantErr) {
			t.Fatalf("err = %v, want one naming %s (devices %v)", err, row.wantErr, got)
		}
		if _, ok := errors.AsType[*detect.GPUError](err); !ok {
			t.Errorf("err %v is not a *GPUError", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("VisibleGPUs: %v", err)
	}
	var ids []string
	for i, d := range got {
		n := slices.IndexFunc(fakeNode, func(g fakeGPU) bool { return g.uuid == d.UUID })
		id := fmt.Sprint(n)
		if d.MIG != "" {
			id += "/" + d.MIG
		}
		ids = append(ids, id)
		if d.Ordinal != i {
			t.Errorf("device %d: ordinal %d", i, d.Ordinal)
		}
		if d.Source != source {
			t.Errorf("device %d: source %q, want %q", i, d.Source, source)
		}
		g := fakeNode[n]
		if want := "0000" + strings.ToUpper(g.bus); d.PCIBusID != want || d.Model != g.model {
			t.Errorf("device %d: %q %q, want %q %q", i, d.PCIBusID, d.Model, want, g.model)
		}
		wantMinor := g.minor
		if source == "nvidia-smi" {
			wantMinor = -1
		}
		if d.Minor != wantMinor {
			t.Errorf("device %d: minor %d, want %d", i, d.Minor, wantMinor)
		}
	}
	if !slices.Equal(ids, row.want) && (len(ids) != 0 || len(row.want) != 0) {
		t.Errorf("devices %q, want %q", ids, row.want)
	}
	m := detect.VisibleGPUAttributes(got)
	v, ok := m.Get("nv.gpu.visible.index")
	if idx := v.AsString(); idx != row.wantIndex || ok != (row.wantIndex != "") {
		t.Errorf("nv.gpu.visible.index = %q (present %v), want %q", idx, ok, row.wantIndex)
	}
	if _, ok := m.Get("nv.gpu.visible.uuid"); ok != (len(got) > 0) {
		t.Errorf("nv.gpu.visible.uuid present %v with %d devices", ok, len(got))
	}
}

// TestVisibleGPUAttributes pins the resource keys' form for two devices,
// one a MIG instance, and the per-GPU info attributes.
func TestVisibleGPUAttributes(t *testing.T) {
	t.Parallel()
	devs := []detect.GPUDevice{
		{Ordinal: 0, Index: 2, UUID: "GPU-b", Model: "M", PCIBusID: "00000000:86:00.0", Minor: 3},
		{Ordinal: 1, Index: 0, UUID: "GPU-a", Model: "M", PCIBusID: "00000000:18:00.0", Minor: 0, MIG: "MIG-x"},
	}
	got := detect.VisibleGPUAttributes(devs).String()
	want := `{nv.gpu.visible.uuid="GPU-b,GPU-a", nv.gpu.visible.index="2,0", nv.gpu.visible.pci_bus_id="00000000:86:00.0,00000000:18:00.0", nv.gpu.visible.model="M,M", nv.gpu.visible.device="nvidia3,nvidia0", nv.gpu.visible.mig_uuid=",MIG-x"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	devs[1].Minor, devs[1].MIG = -1, ""
	if got := detect.VisibleGPUAttributes(devs); got.Has("nv.gpu.visible.device") || got.Has("nv.gpu.visible.mig_uuid") {
		t.Errorf("unknown minor or no MIG: %v", got)
	}
	if got := detect.VisibleGPUAttributes(nil); got.Len() != 0 {
		t.Errorf("no device: %v", got)
	}
	info := devs[0].InfoAttributes().String()
	wantInfo := `{hw.id="GPU-b", hw.type="gpu", hw.vendor="NVIDIA", hw.model="M", hw.name="nvidia3", nv.gpu.index=2, nv.gpu.uuid="GPU-b", nv.gpu.pci_bus_id="00000000:86:00.0", nv.gpu.model="M", nv.gpu.ordinal=0, nv.gpu.device="nvidia3"}`
	if info != wantInfo {
		t.Errorf("info got  %s\nwant %s", info, wantInfo)
	}
}

// TestVisibleGPUsOrder: GPUs of different models and CUDA's default order
// (fastest first, unknown to lens-go): indices in CUDA_VISIBLE_DEVICES are an
// error naming CUDA_DEVICE_ORDER; PCI_BUS_ID order or UUIDs resolve.
func TestVisibleGPUsOrder(t *testing.T) {
	t.Parallel()
	mixed := slices.Clone(fakeNode)
	mixed[0].model = "NVIDIA A100-SXM4-40GB"
	for _, c := range []struct {
		env     environ.Map
		want    int // devices; -1: an error naming CUDA_DEVICE_ORDER
		wantIdx string
	}{
		{environ.Map{"CUDA_VISIBLE_DEVICES": "0"}, -1, ""},
		{environ.Map{}, -1, ""},
		{environ.Map{"CUDA_VISIBLE_DEVICES": "0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}, 1, "0"},
		{environ.Map{"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}, 4, "0,1,2,3"},
		{environ.Map{"CUDA_VISIBLE_DEVICES": "GPU-1111,GPU-2222"}, 2, "0,1"},
		{environ.Map{"CUDA_VISIBLE_DEVICES": "1", "SLURM_STEP_GPUS": "1,2"}, 1, "2"}, // both of the step are H100s
	} {
		got, err := detect.VisibleGPUs(context.Background(), detect.WithEnv(c.env), detect.WithNvidiaProcfs(writeTree(t, mixed)),
			detect.WithNvidiaSMI(detect.NvidiaSMI{Path: "/nonexistent/nvidia-smi"}))
		if c.want < 0 {
			if err == nil || !strings.Contains(err.Error(), "CUDA_DEVICE_ORDER") {
				t.Errorf("%v: err %v, devices %v; want an error naming CUDA_DEVICE_ORDER", c.env, err, got)
			}
			continue
		}
		idx, _ := detect.VisibleGPUAttributes(got).Get("nv.gpu.visible.index")
		if err != nil || len(got) != c.want || idx.AsString() != c.wantIdx {
			t.Errorf("%v: %d devices (index %v), err %v; want %d (%s)", c.env, len(got), idx, err, c.want, c.wantIdx)
		}
	}
}

// TestVisibleGPUsBrokenTree: a missing, unreadable or malformed driver tree
// falls back to nvidia-smi; without nvidia-smi the error names the file or
// says there is no driver. Never a panic, never a partial list.
func TestVisibleGPUsBrokenTree(t *testing.T) {
	t.Parallel()
	malformed := func(edit func(string) string) func(t *testing.T) (string, string) {
		return func(t *testing.T) (string, string) {
			dir := writeTree(t, fakeNode)
			path := filepath.Join(dir, fakeNode[2].bus, "information")
			if err := os.WriteFile(path, []byte(edit(informationFile(fakeNode[2]))), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir, path
		}
	}
	cases := []struct {
		name string
		make func(t *testing.T) (dir, names string)
	}{
		{"missing", func(t *testing.T) (string, string) { return filepath.Join(t.TempDir(), "gpus"), "" }},
		{"a file, not a directory", func(t *testing.T) (string, string) {
			p := filepath.Join(t.TempDir(), "gpus")
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return p, p
		}},
		{"information is a directory", func(t *testing.T) (string, string) {
			dir := writeTree(t, fakeNode[:1])
			p := filepath.Join(dir, "0000:99:00.0", "information")
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return dir, p
		}},
		{"no information file", func(t *testing.T) (string, string) {
			dir := writeTree(t, fakeNode[:1])
			p := filepath.Join(dir, "0000:99:00.0")
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return dir, filepath.Join(p, "information")
		}},
		{"no UUID", malformed(func(s string) string { return strings.Replace(s, "GPU UUID", "GPU UUUD", 1) })},
		{"UUID not GPU-", malformed(func(s string) string { return strings.Replace(s, "GPU-3333", "??", 1) })},
		{"no model", malformed(func(s string) string { return strings.Replace(s, "Model:", "Mode1:", 1) })},
		{"bad bus location", malformed(func(s string) string { return strings.Replace(s, "0000:86:00.0", "0000:86:00", 1) })},
		{"bad minor", malformed(func(s string) string { return strings.Replace(s, "Device Minor: \t 3", "Device Minor: \t three", 1) })},
		{"not UTF-8", malformed(func(s string) string { return s + "\xff" })},
		{"too long", malformed(func(s string) string { return s + strings.Repeat("x", 70000) })},
		{"duplicate UUID", malformed(func(s string) string { return strings.Replace(s, fakeNode[2].uuid, fakeNode[1].uuid, 1) })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, names := c.make(t)
			got, err := detect.VisibleGPUs(context.Background(), detect.WithEnv(environ.Map{}), detect.WithNvidiaProcfs(dir),
				detect.WithNvidiaSMI(detect.NvidiaSMI{Path: filepath.Join(t.TempDir(), "nvidia-smi")}))
			if err == nil || got != nil {
				t.Fatalf("without nvidia-smi: %v, %v; want an error", got, err)
			}
			if names == "" {
				if !errors.Is(err, detect.ErrNoGPUDriver) {
					t.Errorf("err %v, want ErrNoGPUDriver", err)
				}
			} else if !strings.Contains(err.Error(), names) || errors.Is(err, detect.ErrNoGPUDriver) {
				t.Errorf("err %v does not name %s", err, names)
			}
			smi := writeSMI(t, fakeNode, nil)
			got, err = detect.VisibleGPUs(context.Background(), detect.WithEnv(environ.Map{"CUDA_VISIBLE_DEVICES": "2"}),
				detect.WithNvidiaProcfs(dir), detect.WithNvidiaSMI(detect.NvidiaSMI{Path: smi}))
			if err != nil || len(got) != 1 || got[0].UUID != fakeNode[2].uuid || got[0].Source != "nvidia-smi" {
				t.Errorf("with nvidia-smi: %v, %v; want GPU 2 from nvidia-smi", got, err)
			}
		})
	}
}

// TestVisibleGPUsEnvDefault: LENS_NVIDIA_PROCFS names the tree when no
// option does.
func TestVisibleGPUsEnvDefault(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, fakeNode[:2])
	got, err := detect.VisibleGPUs(context.Background(), detect.WithEnv(environ.Map{"LENS_NVIDIA_PROCFS": dir}))
	if err != nil || len(got) != 2 {
		t.Errorf("%v, %v; want the 2 GPUs of LENS_NVIDIA_PROCFS", got, err)
	}
}

func FuzzVisibleGPUs(f *testing.F) {
	for _, row := range gpuRows {
		f.Add(row.env["CUDA_VISIBLE_DEVICES"], row.env["NVIDIA_VISIBLE_DEVICES"], row.env["SLURM_STEP_GPUS"], row.env["CUDA_DEVICE_ORDER"])
	}
	dir := writeTree(f, fakeNode)
	f.Fuzz(func(t *testing.T, cvd, nvd, step, order string) {
		env := environ.Map{"CUDA_VISIBLE_DEVICES": cvd, "NVIDIA_VISIBLE_DEVICES": nvd, "SLURM_STEP_GPUS": step, "CUDA_DEVICE_ORDER": order}
		got, err := detect.VisibleGPUs(context.Background(), detect.WithEnv(env), detect.WithNvidiaProcfs(dir),
			detect.WithNvidiaSMI(detect.NvidiaSMI{Path: "/nonexistent/nvidia-smi"}))
		if err != nil && got != nil {
			t.Fatalf("devices %v with error %v", got, err)
		}
		if n := strings.Count(cvd, ",") + 1; len(got) > n {
			t.Fatalf("%d devices from %d CUDA_VISIBLE_DEVICES items", len(got), n)
		}
		seen := map[string]bool{}
		for i, d := range got {
			key := d.UUID + "/" + d.MIG
			if d.Ordinal != i || seen[key] || !slices.ContainsFunc(fakeNode, func(g fakeGPU) bool { return g.uuid == d.UUID }) {
				t.Fatalf("device %d: %+v (seen %v)", i, d, seen[key])
			}
			seen[key] = true
		}
	})
}

// BenchmarkVisibleGPUs: a node of N GPUs (a fake driver tree) with every
// GPU named in CUDA_VISIBLE_DEVICES by UUID prefix, in reverse order; the
// cost grows linearly with N (compare ns/op and allocs/op across sizes).
func BenchmarkVisibleGPUs(b *testing.B) {
	for _, n := range []int{8, 64, 512} {
		b.Run(fmt.Sprint("gpus=", n), func(b *testing.B) {
			gpus := make([]fakeGPU, n)
			items := make([]string, n)
			for i := range gpus {
				uuid := fmt.Sprintf("GPU-%08x-aaaa-bbbb-cccc-%012x", i, i)
				gpus[i] = fakeGPU{fmt.Sprintf("%04x:%02x:00.0", i/256, i%256), uuid, "NVIDIA H100", i, false}
				items[n-1-i] = uuid[:12]
			}
			dir := writeTree(b, gpus)
			env := environ.Map{"CUDA_VISIBLE_DEVICES": strings.Join(items, ",")}
			for b.Loop() {
				got, err := detect.VisibleGPUs(context.Background(), detect.WithEnv(env), detect.WithNvidiaProcfs(dir))
				if err != nil || len(got) != n {
					b.Fatalf("%d devices, %v", len(got), err)
				}
			}
		})
	}
}
