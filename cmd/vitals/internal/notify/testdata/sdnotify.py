#!/usr/bin/env python3
"""An sd_notify client of its own, as a daemon written for systemd has one
(sd_notify(3)): each message is one datagram to $NOTIFY_SOCKET, sent with
socket.sendmsg, its assignments one a line.

  sdnotify.py [--barrier [--sent FILE]] ASSIGNMENT...
      sends one message and exits; with --barrier, then waits as
      sd_notify_barrier(3) does: it sends BARRIER=1 with the write end of a
      pipe, and waits (5s at most, then exits 3) for the manager to close it.
      With --sent, it makes FILE once both are sent, before it waits: for a
      test to know that it waits.

  sdnotify.py --daemon INFO CONTROL
      a workload that says what it is told: it writes its pid and its
      NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID to INFO as JSON, then
      reads commands from the FIFO CONTROL, one a line, reopening it at
      each end:
        send ASSIGNMENT...      one message
        barrier ASSIGNMENT...   one message, then the barrier
        exit CODE               exits with CODE
"""

import array
import json
import os
import select
import shlex
import socket
import sys


def address():
    path = os.environ["NOTIFY_SOCKET"]
    if path.startswith("@"):  # an abstract socket
        path = "\0" + path[1:]
    return path


def send(assignments, fds=()):
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        ancillary = []
        if fds:
            ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
        sock.sendmsg(["\n".join(assignments).encode()], ancillary, 0, address())


def barrier(sent=None):
    r, w = os.pipe()
    send(["BARRIER=1"], [w])
    os.close(w)
    if sent:
        open(sent, "w").close()
    poll = select.poll()
    poll.register(r, select.POLLHUP)
    if not poll.poll(5000):
        sys.exit(3)
    os.close(r)


def daemon(info, control):
    with open(info + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), **{k: os.environ.get(k, "") for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}}, f)
    os.rename(info + ".tmp", info)
    while True:
        with open(control) as commands:
            for line in commands:
                words = shlex.split(line)
                if not words:
                    continue
                if words[0] == "exit":
                    sys.exit(int(words[1]))
                send(words[1:])
                if words[0] == "barrier":
                    barrier()


def main(args):
    if args[:1] == ["--daemon"]:
        daemon(args[1], args[2])
    elif args[:1] == ["--barrier"]:
        sent = None
        if args[1:2] == ["--sent"]:
            sent, args = args[2], args[2:]
        send(args[1:])
        barrier(sent)
    else:
        send(args)


main(sys.argv[1:])
