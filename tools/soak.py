#!/usr/bin/env python3
"""Soak test: sentry on the looped demo clip for MINUTES against a serial
path that is unplugged and replugged at random (a symlink to a new pty each
time), while resident memory and open file descriptors are sampled.

  tools/soak.py --sentry .build/release/sentry --clip .cache/demo.mkv [--minutes 10]

Passes when: every byte on the line is protocol, sentry reconnects after every
replug and keeps aiming after the last one, resident memory grows by less than
1 MiB after warm-up, and the number of open descriptors stays the same.
"""
import argparse
import atexit
import os
import pty
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tty

COMMAND = re.compile(rb"X\d{1,3}\.|Y\d{1,3}\.|L")


def new_port(link):
    master, slave = pty.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(os.ttyname(slave), link)
    return master, slave


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentry", default=".build/release/sentry")
    parser.add_argument("--clip", default=".cache/demo.mkv")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    random.seed(args.seed)

    directory = tempfile.mkdtemp(prefix="sentry-soak-")
    atexit.register(shutil.rmtree, directory, True)
    link = os.path.join(directory, "ttyACM-soak")
    master, slave = new_port(link)
    sentry = subprocess.Popen([args.sentry, "--camera", args.clip, "--loop", "--serial", link, "--quiet"],
                              stderr=subprocess.DEVNULL)
    start = time.monotonic()
    end = start + args.minutes * 60
    warmup = start + min(60, args.minutes * 60 / 5)
    next_unplug = start + random.uniform(10, 40)
    next_sample = start
    samples = []          # (seconds, rss KiB, fds)
    replugs = 0
    received = b""
    aims_since_replug = 0
    stray = b""
    try:
        while time.monotonic() < end:
            if sentry.poll() is not None:
                sys.exit(f"soak: sentry exited with {sentry.returncode}")
            try:
                chunk = os.read(master, 4096)
            except (BlockingIOError, OSError):
                chunk = b""
            if chunk:
                received += chunk
                aims_since_replug += len(re.findall(rb"X\d{1,3}\.", chunk))
            now = time.monotonic()
            if now >= next_unplug and now < end - 30:
                os.close(master)
                os.close(slave)
                os.unlink(link)
                time.sleep(random.uniform(0.2, 3))
                # What was received before the unplug must be whole commands.
                stray += COMMAND.sub(b"", received)
                received = b""
                master, slave = new_port(link)
                replugs += 1
                aims_since_replug = 0
                next_unplug = time.monotonic() + random.uniform(10, 40)
            if now >= next_sample:
                samples.append((now - start, rss_kib(sentry.pid), len(os.listdir(f"/proc/{sentry.pid}/fd"))))
                next_sample = now + 5
            if not chunk:
                time.sleep(0.005)
    finally:
        sentry.send_signal(signal.SIGTERM)
        sentry.wait(timeout=10)
    stray += COMMAND.sub(b"", received)

    after_warmup = [s for s in samples if s[0] >= warmup - start]
    growth = after_warmup[-1][1] - after_warmup[0][1] if after_warmup else 0
    # Descriptors: the port is closed for a moment at each unplug, so count
    # growth (the most open late in the run against the most open early on).
    third = max(1, len(after_warmup) // 3)
    fds_early, fds_late = max(s[2] for s in after_warmup[:third]), max(s[2] for s in after_warmup[-third:])
    fds = sorted({s[2] for s in after_warmup})
    print(f"soak: {args.minutes:g} min, {replugs} unplug/replug cycles, {len(samples)} samples")
    print(f"soak: resident memory after warm-up {after_warmup[0][1]} KiB -> {after_warmup[-1][1]} KiB (growth {growth} KiB), "
          f"peak {max(s[1] for s in samples)} KiB")
    print(f"soak: open descriptors after warm-up {fds} (most open: {fds_early} early, {fds_late} late)")
    print("soak: samples (s, RSS KiB, fds): " + " ".join(f"{t:.0f}/{r}/{f}" for t, r, f in samples[::6]))
    print(f"soak: aims after the last replug {aims_since_replug}; non-protocol bytes {len(stray)}")
    ok = growth < 1024 and fds_late <= fds_early and aims_since_replug > 0 and not stray and replugs > 0
    print("soak: PASS" if ok else "soak: FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
