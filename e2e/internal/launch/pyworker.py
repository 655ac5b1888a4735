"""The Python worker of the launcher end-to-end tests (e2e/internal/launch).

It runs as an MPI rank or a torchrun worker, bare or under `lens exec`, and
writes one JSON record, OUT/<label>.<pid>.json, with what it saw: its pids,
process group and session, the launcher and lens variables it received, the
signals it got, and how it ended. Only the standard library, and torch with
--torch.

  --out DIR --label L       where the record goes
  --rank-var VAR            the variable holding this process's rank
  --fail-rank R --fail-status S
                            the rank that exits with status S once ready
  --fail-after-ready N      the failing rank first waits for N ready files
                            (all ranks' handlers installed)
  --wait                    the others wait, counting SIGTERM, SIGINT, SIGUSR1
                            and SIGHUP, until the Nth of a signal of --stop-on
                            (default SIGTERM=1,SIGINT=1), and exit 128+signal;
                            the record is rewritten at each signal
  --torch                   torchrun mode: gloo process group; every worker
                            contributes 1 to an all_reduce when it is the
                            failing one (--fail-if VAR=VALUE holds, LOCAL_RANK
                            is 0 and TORCHELASTIC_RESTART_COUNT <
                            --fail-until); with a sum above 0 the failing one
                            exits --fail-status and the others wait for the
                            agent's SIGTERM; with 0 all pass a barrier and
                            exit 0
  -- COMMAND...             run COMMAND first (the Go worker) and record its
                            status

A file OUT/ready.<label>.<pid> says the handlers are installed.
"""
import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time

ENV = ("LENS_E2E_NODE", "NEMO_LENS_RUN_ID", "NEMO_LENS_RUN_ID_DRAWN", "OTEL_RESOURCE_ATTRIBUTES", "TRACEPARENT",
       "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
       "PMIX_RANK", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
       "RANK", "WORLD_SIZE", "LOCAL_RANK", "GROUP_RANK", "TORCHELASTIC_RUN_ID",
       "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_USE_AGENT_STORE", "MASTER_ADDR", "MASTER_PORT")
COUNTED = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGHUP)

counts = {}
stop = threading.Event()
stopped_by = [0]


stop_on = {"SIGTERM": 1, "SIGINT": 1}
on_count = [None]


def on_signal(sig, _frame):
    name = signal.Signals(sig).name
    counts[name] = counts.get(name, 0) + 1
    if on_count[0] is not None:
        on_count[0]()
    # >=: a handler may run inside another one (a second signal arrives
    # while the first is handled), and both see the larger count.
    if counts[name] >= stop_on.get(name, 1 << 30) and not stop.is_set():
        stopped_by[0] = sig
        stop.set()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--label", required=True)
    p.add_argument("--rank-var", default="RANK")
    p.add_argument("--fail-rank", type=int, default=-1)
    p.add_argument("--fail-status", type=int, default=3)
    p.add_argument("--fail-if", default="", help="VAR=VALUE: in torchrun mode, the node whose agent has it fails")
    p.add_argument("--fail-until", type=int, default=0)
    p.add_argument("--fail-after-ready", type=int, default=0)
    p.add_argument("--wait", action="store_true")
    p.add_argument("--stop-on", default="SIGTERM=1,SIGINT=1",
                   help="with --wait: exit on the Nth of a signal, 128+signal")
    p.add_argument("--torch", action="store_true")
    p.add_argument("command", nargs="*")
    a = p.parse_args()

    stop_on.clear()
    for item in a.stop_on.split(","):
        name, _, n = item.partition("=")
        stop_on[name] = int(n)
    for s in COUNTED:
        signal.signal(s, on_signal)
    rec = {"exit": None, "label": a.label, "pid": os.getpid(), "ppid": os.getppid(), "pgid": os.getpgid(0),
           "sid": os.getsid(0), "env": {k: os.environ[k] for k in ENV if k in os.environ}}
    out = os.path.join(a.out, "%s.%d.json" % (a.label, os.getpid()))

    state = {"writing": False, "dirty": False}

    def write(status):
        # A signal handler may call it while it runs: the running call
        # then writes once more, with the newer counts.
        if status is not None:
            rec["exit"] = status  # kept by the rewrites of later signals
        if state["writing"]:
            state["dirty"] = True
            return
        state["writing"] = True
        try:
            while True:
                state["dirty"] = False
                rec["signals"] = dict(counts)
                tmp = out + ".tmp"
                with open(tmp, "w") as f:
                    json.dump(rec, f)
                os.rename(tmp, out)
                if not state["dirty"]:
                    break
        finally:
            state["writing"] = False

    on_count[0] = lambda: write(None)  # the record says what arrived, even if killed later
    if a.command:
        rec["command_status"] = subprocess.run(a.command).returncode
    write(None)
    with open(os.path.join(a.out, "ready.%s.%d" % (a.label, os.getpid())), "w"):
        pass

    failing = False
    if a.torch:
        import torch
        import torch.distributed as dist
        var, _, value = a.fail_if.partition("=")
        failing = (var != "" and os.environ.get(var) == value and os.environ["LOCAL_RANK"] == "0"
                   and int(os.environ["TORCHELASTIC_RESTART_COUNT"]) < a.fail_until)
        dist.init_process_group("gloo")
        x = torch.tensor([1.0 if failing else 0.0])
        dist.all_reduce(x)
        rec["failing_workers"] = int(x.item())
        if rec["failing_workers"] == 0:
            dist.barrier()
            write(0)
            return 0
        a.wait = True
    elif a.fail_rank >= 0 and int(os.environ.get(a.rank_var, "-1")) == a.fail_rank:
        failing = True

    if failing:
        # Polls for a condition (the other ranks ready), not for time.
        while len(glob.glob(os.path.join(a.out, "ready.%s.*" % a.label))) < a.fail_after_ready:
            time.sleep(0.05)
        write(a.fail_status)
        return a.fail_status
    if a.wait:
        while not stop.wait(1.0):
            pass
        status = 128 + stopped_by[0]
        write(status)
        return status
    write(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
