"""Ends the processes of a local Ray when the command that started it dies, `kill -9` included.

Ray's workers end with their raylet, but its agents outlive it by a minute. The command starts
this watcher with Ray's process ids and keeps its stdin open; end-of-file means the command is
gone (or done with Ray), and every listed process still running is killed.

    python -m wikiskill.run.executors.ray_reaper PID...
"""

from __future__ import annotations

import signal
import sys

import psutil


def main(pids: list[int]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the command's, which then closes stdin
    processes = []
    for pid in pids:
        try:
            processes.append(psutil.Process(pid))  # remembers its start time: a reused pid is not it
        except psutil.NoSuchProcess:
            continue
    sys.stdin.buffer.read()
    for process in processes:
        try:
            if process.is_running():
                process.kill()
        except psutil.NoSuchProcess:
            continue


if __name__ == "__main__":
    main([int(pid) for pid in sys.argv[1:]])
