"""Reads a project file by a relative path and writes a relative file in the handler, as
deployed code does with its working directory (docs/executor-protocol.md, section 9): the
read finds the project's README, the write lands in the run's storage, and the log line says
both. With `big` as its argument, it writes 2 MiB to one file and logs what the write said."""

import os
import sys

import retrylab

BIG = len(sys.argv) > 1 and sys.argv[1] == "big"


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> retrylab.Result:
    if BIG:
        try:
            with open("big.bin", "wb") as f:
                f.write(b"\0" * (2 << 20))
            ctx.log("wrote 2 MiB")
        except OSError as e:
            ctx.log(f"the write failed: {e.strerror}")
        return retrylab.failed("done")
    with open("README.md") as f:
        first = f.readline().strip()
    os.makedirs("notes", exist_ok=True)
    with open("notes/receipts.txt", "a") as f:
        f.write(args["ref"] + "\n")
    with open("notes/receipts.txt") as f:
        lines = len(f.readlines())
    here = os.getcwd() == os.environ["RETRYLAB_WORKER_DIR"]
    ctx.log(f"read {first!r}; notes/receipts.txt has {lines} line(s); cwd is the worker's directory: {here}")
    return retrylab.failed("done")


if __name__ == "__main__":
    retrylab.run()
