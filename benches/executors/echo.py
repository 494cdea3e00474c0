"""The raw pipe ping-pong the protocol is compared with: every line read on fd 3 is written
back on fd 4, with nothing parsed (the benchmark's floor for one round trip)."""
import os

fin = os.fdopen(3, "rb", buffering=0)
fout = os.fdopen(4, "wb", buffering=0)
buf = b""
while True:
    chunk = fin.read(65536)
    if not chunk:
        break
    buf += chunk
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        fout.write(line + b"\n")
