#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""One run per output folder (runtime/output_lock.hpp; issue 50):

  check_output_lock.py --mpiexec M --np N --edgefem E --out DIR JOB

JOB: tests/data/lock_run.yaml, a dynamic run of several seconds with checkpoints.
1. A second run on the folder of a live run is refused (exit 1 on every rank) with a message naming the first (its
   run id and pid from the lock file); the first goes on. SIGUSR1 (through mpiexec) stops the first after a step
   (exit 85) and its lock is gone.
2. A run killed outright (SIGKILL to mpiexec and every rank) leaves its lock: `--restart DIR` takes it over with a
   warning and finishes (exit 0); the lock is gone after it.
3. A lock of another host is refused with its host and age, and nothing is written to the folder.
"""
import argparse
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time


def fail(message):
    print(f"check_output_lock: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def command(args, out, *extra, job=None):
    return [args.mpiexec, "-n", str(args.np), "--oversubscribe", args.edgefem, "run", job or args.job, "--quiet",
            "--output", out, *extra]


def start(args, out, *extra, job=None):
    return subprocess.Popen(command(args, out, *extra, job=job), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def wait_for(path, seconds, process):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if process.poll() is not None:
            fail(f"the run ended (exit {process.returncode}) before {path} appeared:\n{process.stdout.read()}")
        if time.monotonic() > deadline:
            fail(f"{path} did not appear within {seconds} s")
        time.sleep(0.05)


def wait_for_any(folder, pattern, seconds, process):
    deadline = time.monotonic() + seconds
    while not glob.glob(os.path.join(folder, pattern)):
        if process.poll() is not None:
            fail(f"the run ended (exit {process.returncode}) before {folder}/{pattern} appeared:\n{process.stdout.read()}")
        if time.monotonic() > deadline:
            fail(f"{folder}/{pattern} did not appear within {seconds} s")
        time.sleep(0.02)


def descendants(pid):
    """The processes under `pid` (Open MPI starts the ranks in their own process groups)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def kill_tree(pid):
    for p in descendants(pid):
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def job_ending_at(args, name, end_time):
    """A copy of the test's job (in args.out, named `name`) with analysis.end_time = end_time."""
    path = os.path.join(args.out, name)
    os.makedirs(args.out, exist_ok=True)
    with open(args.job, encoding="utf-8") as f, open(path, "w", encoding="utf-8") as g:
        g.write(re.sub(r"end_time: [0-9.]+", f"end_time: {end_time}", f.read()))
    return path


def live_lock_refused(args):
    out = os.path.join(args.out, "live")
    shutil.rmtree(out, ignore_errors=True)
    # The job ten times longer: it must outlive the second run's start (SIGUSR1 stops it).
    long_job = job_ending_at(args, "long_run.yaml", 600.0)
    first = start(args, out, job=long_job)
    lock = os.path.join(out, ".edgefem.lock")
    wait_for(lock, 60, first)
    holder = dict(line.split(": ", 1) for line in open(lock, encoding="utf-8").read().splitlines())
    second = subprocess.run(command(args, out), capture_output=True, text=True, timeout=120)
    text = second.stdout + second.stderr
    check(second.returncode == 1, f"second run: exit {second.returncode}, expected 1:\n{text}")
    check(f"is in use by another run: run {holder['run']} (pid {holder['pid']} on this host" in text,
          f"second run: the message does not name the first:\n{text}")
    check(first.poll() is None, "the first run did not survive the second's refusal")
    os.kill(first.pid, signal.SIGUSR1)  # mpiexec forwards it: stop after the step
    code = first.wait(timeout=120)
    log = first.stdout.read()
    check(code == 85, f"first run: exit {code} after SIGUSR1, expected 85:\n{log}")
    check(not os.path.exists(lock), "the lock is left after a stop signal")
    print("check_output_lock: a live run's folder refused, released on a stop signal")


def crash_then_restart(args):
    out = os.path.join(args.out, "crash")
    shutil.rmtree(out, ignore_errors=True)
    # The job 2.5 times longer (3000 steps), so that it still runs when its first checkpoint appears even on a fast
    # machine (the short job can end before the poll sees a checkpoint; older ones are removed as newer ones come).
    medium_job = job_ending_at(args, "medium_run.yaml", 150.0)
    run = start(args, out, job=medium_job)
    wait_for_any(out, "checkpoint_*.ckpt", 60, run)
    kill_tree(run.pid)
    run.wait(timeout=60)
    time.sleep(0.5)
    lock = os.path.join(out, ".edgefem.lock")
    check(os.path.exists(lock), "SIGKILL left no lock: the test cannot check its take-over")
    again = subprocess.run(command(args, out, "--restart", out, job=medium_job), capture_output=True, text=True,
                           timeout=300)
    text = again.stdout + again.stderr
    check(again.returncode == 0, f"--restart after the crash: exit {again.returncode}:\n{text}")
    check(re.search(r"warning: output.directory '[^']+': took over the stale lock of run \S+ \(pid [0-9]+ on this "
                    r"host .*whose process no longer runs", text), f"no take-over warning:\n{text}")
    check(not os.path.exists(lock), "the lock is left after the restarted run")
    print("check_output_lock: a crashed run's stale lock taken over by --restart")


def other_host_refused(args):
    out = os.path.join(args.out, "other_host")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    lock = os.path.join(out, ".edgefem.lock")
    started = int(time.time()) - 3 * 3600
    with open(lock, "w", encoding="utf-8") as f:
        f.write(f"run: run-elsewhere\nhost: not-{socket.gethostname()}\npid: 4242\npid_start: 1\nstarted: {started}\n"
                "job: far.yaml\nscheduler_id: no\n")
    p = subprocess.run(command(args, out), capture_output=True, text=True, timeout=120)
    text = p.stdout + p.stderr
    check(p.returncode == 1, f"other host: exit {p.returncode}, expected 1:\n{text}")
    check(f"is locked by run run-elsewhere (pid 4242 on host not-{socket.gethostname()}, job far.yaml" in text,
          f"other host: the message does not name the holder:\n{text}")
    check("3 h 0 min ago" in text, f"other host: no age:\n{text}")
    check(os.listdir(out) == [".edgefem.lock"], f"other host: files written: {os.listdir(out)}")
    print("check_output_lock: another host's lock refused with its host and age")


def main():
    parser = argparse.ArgumentParser()
    for name in ("--mpiexec", "--edgefem", "--out"):
        parser.add_argument(name, required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("job")
    args = parser.parse_args()
    live_lock_refused(args)
    crash_then_restart(args)
    other_host_refused(args)
    print("check_output_lock: output lock OK")


if __name__ == "__main__":
    main()
