package e2e_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/jaeger"
	"github.com/nemolens/lens-go/e2e/internal/launch"
	"github.com/nemolens/lens-go/e2e/internal/slurm"
	"github.com/nemolens/lens-go/e2e/internal/worker"
)

// TestMPIRunReal (issue 28): a real Open MPI mpirun (Debian's openmpi-bin,
// as root with --allow-run-as-root --oversubscribe) starts `lens exec
// --rank-from mpi` around a Python worker and a Go worker, and each scenario
// runs bare too. Expected values come from the ranks' own Open MPI variables
// (OMPI_COMM_WORLD_*, PMIX_NAMESPACE), never from lens:
//
//   - identity: every rank's carrier holds its rank, the world size and its
//     local rank; every rank's run id is the job's PMIX_NAMESPACE (one per
//     mpirun), also when a lens exec around mpirun drew a random one
//     (docs/resource.md#run-id-launcher); the Go workers' and lens exec
//     spans' service.instance.ids are all distinct, and bare Go workers
//     (lens.WithRankFrom("mpi")) report the same ranks and run id;
//   - SIGTERM to mpirun reaches every rank exactly once, and mpirun's status
//     is the bare one;
//   - a failing rank's status is what mpirun reports bare, and the other
//     ranks are stopped as bare.
func TestMPIRunReal(t *testing.T) {
	elapsed(t)
	mpirun := needMPIRun(t)
	lensBin := lensBinary(t)
	py := pyWorker(t)
	base := lensEnv(os.Environ(), "OMPI_MCA_btl_tcp_if_include=lo")
	under := map[string][]string{
		"bare": nil,
		"lens": {lensBin, "exec", "--rank-from", "mpi", "--"},
	}

	t.Run("python-identity", func(t *testing.T) {
		for _, layout := range []string{"bare", "lens", "lens-around-mpirun"} {
			t.Run(layout, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
				defer cancel()
				out := outDir(t)
				const np = 4
				var argv []string
				switch layout {
				case "bare":
					argv = append([]string{mpirun}, launch.MPIRunArgs(np, launch.SystemPython, py, "--out", out, "--label", "p")...)
				case "lens":
					argv = append([]string{mpirun}, launch.MPIRunArgs(np, append(under["lens"], launch.SystemPython, py, "--out", out, "--label", "p")...)...)
				default:
					argv = append([]string{lensBin, "exec", "--", mpirun}, launch.MPIRunArgs(np, append(under["lens"], launch.SystemPython, py, "--out", out, "--label", "p")...)...)
				}
				if status, output := runStatus(ctx, t, base, argv[0], argv[1:]...); status != 0 {
					t.Fatalf("%q: exit status %d\n%s", argv, status, output)
				}
				recs := pyRecords(t, out, "p", np)
				ns := recs[0].Env["PMIX_NAMESPACE"]
				var ranks, pids []string
				for _, r := range recs {
					rank := r.Env["OMPI_COMM_WORLD_RANK"]
					ranks = append(ranks, rank)
					pids = append(pids, itoa(r.PID))
					if r.Env["PMIX_NAMESPACE"] != ns || ns == "" {
						t.Errorf("rank %s: PMIX_NAMESPACE %q, want the job's %q", rank, r.Env["PMIX_NAMESPACE"], ns)
					}
					if layout == "bare" {
						if v, ok := r.Env["NEMO_LENS_RUN_ID"]; ok {
							t.Errorf("rank %s: bare, NEMO_LENS_RUN_ID=%q", rank, v)
						}
						continue
					}
					if want := carrierText("nv.dl.rank", rank, "nv.dl.world_size", itoa(np), "nv.dl.local_rank", r.Env["OMPI_COMM_WORLD_LOCAL_RANK"]); r.Env["OTEL_RESOURCE_ATTRIBUTES"] != want {
						t.Errorf("rank %s: carrier %q, want %q", rank, r.Env["OTEL_RESOURCE_ATTRIBUTES"], want)
					}
					if r.Env["NEMO_LENS_RUN_ID"] != ns {
						t.Errorf("rank %s: NEMO_LENS_RUN_ID %q, want the job's PMIX_NAMESPACE %q", rank, r.Env["NEMO_LENS_RUN_ID"], ns)
					}
					if v, ok := r.Env["NEMO_LENS_RUN_ID_DRAWN"]; ok {
						t.Errorf("rank %s: NEMO_LENS_RUN_ID_DRAWN=%q handed down with a launcher's run id", rank, v)
					}
				}
				if !slices.Equal(sorted2(ranks), []string{"0", "1", "2", "3"}) || !distinct(pids) {
					t.Errorf("ranks %q, pids %q: want 0..3, distinct processes", ranks, pids)
				}
			})
		}
	})

	t.Run("go-identity", func(t *testing.T) {
		j := jaeger.StartForTest(t)
		workerBin := workerBinary(t)
		ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
		defer cancel()
		const np = 2
		service := uniqueName("lens-e2e-mpirun")
		env := lensEnv(base, exportTo(j, service)...)
		out := outDir(t)
		bareArgs := launch.MPIRunArgs(np, workerBin, "-rank-from", "mpi", "-span", "mpi-work", "-out", out, "-label", "gb")
		runCmd(ctx, t, env, 0, mpirun, bareArgs...)
		lensArgs := launch.MPIRunArgs(np, append(under["lens"], workerBin, "-span", "mpi-work", "-out", out, "-label", "gl")...)
		runCmd(ctx, t, env, 0, mpirun, lensArgs...)

		var ids []string
		for _, layout := range []string{"gb", "gl"} {
			recs := records(t, out, layout, np)
			ns := recs[0].Env["PMIX_NAMESPACE"]
			for _, rec := range recs {
				rank := rec.Env["OMPI_COMM_WORLD_RANK"]
				if rec.RunID != ns || ns == "" || rec.Env["PMIX_NAMESPACE"] != ns {
					t.Errorf("%s rank %s: run id %q, want the job's PMIX_NAMESPACE %q", layout, rank, rec.RunID, ns)
				}
				for key, want := range map[string]string{"nv.dl.rank": rank, "nv.dl.world_size": itoa(np), "nv.dl.local_rank": rec.Env["OMPI_COMM_WORLD_LOCAL_RANK"]} {
					a, _ := slurm.Lookup(rec.Resource, key)
					if v, ok := a.Int64(); !ok || itoa(int(v)) != want {
						t.Errorf("%s rank %s: %s = %s, want %s", layout, rank, key, a.Value, want)
					}
				}
				id, _ := attrString(rec, "service.instance.id")
				if want := ns + "-rank" + rank; id != want {
					t.Errorf("%s rank %s: service.instance.id %q, want %q", layout, rank, id, want)
				}
				ids = append(ids, id)
				if layout == "gl" {
					ids = append(ids, checkMPIWrapper(ctx, t, j, rec, id, "lens exec "+filepath.Base(workerBin)))
				}
			}
		}
		if !distinct(ids[2:]) { // bare and lens runs are two jobs: compare within each
			t.Errorf("service.instance.ids of the lens run %q are not distinct", ids[2:])
		}
	})

	// The signal and status scenarios run bare and under lens exec; what
	// each rank got and mpirun's status must be the same.
	type outcome struct {
		status  int
		signals map[string]int
		exits   map[string]int
	}
	scenario := func(t *testing.T, how string, np int, signal bool, extra ...string) outcome {
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		defer cancel()
		out := outDir(t)
		cmd := append(append(append([]string{}, under[how]...), launch.SystemPython, py, "--out", out, "--label", "s", "--wait", "--rank-var", "OMPI_COMM_WORLD_RANK"), extra...)
		s := start(t, base, true, mpirun, launch.MPIRunArgs(np, cmd...)...)
		if signal {
			if err := launch.WaitReady(ctx, out, "s", np); err != nil {
				t.Fatalf("%v\n%s", err, s.out.String())
			}
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}
		status := s.wait(ctx, t)
		recs := pyRecords(t, out, "s", np)
		return outcome{status, signalCounts(recs, "OMPI_COMM_WORLD_RANK", "SIGTERM"), exits(recs, "OMPI_COMM_WORLD_RANK")}
	}
	compare := func(t *testing.T, bare, lens outcome) {
		t.Helper()
		t.Logf("bare: %+v; lens: %+v", bare, lens)
		if bare.status != lens.status {
			t.Errorf("mpirun's exit status: %d under lens, %d bare", lens.status, bare.status)
		}
		if !maps.Equal(bare.signals, lens.signals) {
			t.Errorf("SIGTERMs per rank: %v under lens, %v bare", lens.signals, bare.signals)
		}
		if !maps.Equal(bare.exits, lens.exits) {
			t.Errorf("the ranks' statuses: %v under lens, %v bare", lens.exits, bare.exits)
		}
	}

	t.Run("sigterm", func(t *testing.T) {
		bare := scenario(t, "bare", 3, true)
		for rank, n := range bare.signals {
			if n != 1 {
				t.Errorf("bare: rank %s got %d SIGTERM, want 1", rank, n)
			}
		}
		compare(t, bare, scenario(t, "lens", 3, true))
	})

	t.Run("failing-rank", func(t *testing.T) {
		bare := scenario(t, "bare", 3, false, "--fail-rank", "1", "--fail-status", "3")
		if bare.status != 3 || bare.exits["1"] != 3 {
			t.Errorf("bare: mpirun exit status %d, rank 1 status %d; want both 3", bare.status, bare.exits["1"])
		}
		compare(t, bare, scenario(t, "lens", 3, false, "--fail-rank", "1", "--fail-status", "3"))
	})
}

// checkMPIWrapper checks, in Jaeger, the lens exec span above a Go worker
// started by mpirun: its resource has the worker's ranks and
// "<worker id>.lens-exec.<lens's pid>" as instance id, which it returns.
func checkMPIWrapper(ctx context.Context, t *testing.T, j *jaeger.Jaeger, rec worker.Record, workerID, wrapperName string) string {
	t.Helper()
	tr, err := j.WaitSpans(ctx, rec.TraceID, 2)
	if err != nil {
		t.Fatal(err)
	}
	wrapper, child := execSpans(t, tr, wrapperName, "mpi-work", 2)
	if wrapper == nil || child == nil {
		return ""
	}
	want := wrapperInstanceID(workerID, rec.PPID)
	checkTags(t, "lens exec under mpirun", processTags(t, tr, wrapper), wstr("service.instance.id", want), wstr("nemo.run.id", rec.RunID))
	return want
}
