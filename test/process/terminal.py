"""Runs a command on a real pseudo-terminal (its stdin, stdout and stderr), as a person at a terminal would.

Usage: python3 terminal.py '<json>' with {"argv": [...], "cwd": "...", "env": {...}, "steps": [{"expect": "...", "send": "..."}], "timeout": s}.
Each step waits until `expect` has appeared in the terminal's output (after the previous step's), then
types `send`. Prints {"output": everything the terminal showed, "code": the exit code, or null when a
step timed out and the command was killed} as JSON.
"""
import json
import os
import pty
import select
import signal
import sys
import time

spec = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.chdir(spec["cwd"])
    os.execvpe(spec["argv"][0], spec["argv"], spec["env"])

deadline = time.time() + spec.get("timeout", 30)
output = b""


def read_some(wait):
    """Reads what the terminal has within `wait` seconds; False once the command closed it."""
    global output
    ready, _, _ = select.select([fd], [], [], wait)
    if not ready:
        return True
    try:
        chunk = os.read(fd, 4096)
    except OSError:  # EIO: the command exited and the terminal closed
        return False
    output += chunk
    return len(chunk) > 0


timed_out = False
seen = 0
for step in spec["steps"]:
    expected = step["expect"].encode()
    while output.find(expected, seen) == -1:
        if time.time() > deadline or not read_some(0.1):
            timed_out = True
            break
    if timed_out:
        break
    seen = output.find(expected, seen) + len(expected)
    os.write(fd, step["send"].encode())

while not timed_out and read_some(0.1):
    if time.time() > deadline:
        timed_out = True
if timed_out:
    os.kill(pid, signal.SIGKILL)
_, status = os.waitpid(pid, 0)
code = None if timed_out else os.waitstatus_to_exitcode(status)
print(json.dumps({"output": output.decode("utf-8", "replace"), "code": code}))
