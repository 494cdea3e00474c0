/** The protocol's channel: JSON lines, read with blocking reads (between turns the process waits). */

import * as fs from "node:fs";

import { NotUnderSimulatorError } from "./errors.js";

const pause = new Int32Array(new SharedArrayBuffer(4));

function retryable(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === "EAGAIN" || code === "EINTR";
}

export class Channel {
  readonly fdIn: number;
  readonly fdOut: number;
  #pending: Buffer[] = [];
  readonly #chunk = Buffer.alloc(65536);

  constructor(fdIn: number, fdOut: number) {
    this.fdIn = fdIn;
    this.fdOut = fdOut;
  }

  /** The next line (without its `\n`); `null` at EOF. Blocks. */
  readLine(): string | null {
    for (;;) {
      const last = this.#pending[this.#pending.length - 1];
      const at = last === undefined ? -1 : last.indexOf(10);
      if (last !== undefined && at >= 0) {
        const all = Buffer.concat(this.#pending);
        const end = all.length - last.length + at;
        const line = all.subarray(0, end).toString("utf8");
        const rest = all.subarray(end + 1);
        this.#pending = rest.length > 0 ? [Buffer.from(rest)] : [];
        return line;
      }
      let n: number;
      try {
        n = fs.readSync(this.fdIn, this.#chunk, 0, this.#chunk.length, null);
      } catch (e) {
        if (retryable(e)) {
          // A non-blocking descriptor: wait a little (this never decides anything).
          Atomics.wait(pause, 0, 0, 1);
          continue;
        }
        throw e;
      }
      if (n === 0) return null; // EOF (a partial last line is dropped: the simulator is gone)
      this.#pending.push(Buffer.from(this.#chunk.subarray(0, n)));
    }
  }

  writeLine(text: string): void {
    const data = Buffer.from(text + "\n", "utf8");
    let off = 0;
    while (off < data.length) {
      try {
        off += fs.writeSync(this.fdOut, data, off, data.length - off);
      } catch (e) {
        if (retryable(e)) {
          Atomics.wait(pause, 0, 0, 1);
          continue;
        }
        throw e;
      }
    }
  }
}

function isPipe(fd: number): boolean {
  try {
    return fs.fstatSync(fd).isFIFO();
  } catch {
    return false;
  }
}

/** The channel's descriptors: `RETRYLAB_FD_IN`/`RETRYLAB_FD_OUT`, else 3 and 4 if they are pipes. */
export function simulatorFds(): [number, number] {
  const fin = process.env.RETRYLAB_FD_IN;
  const fout = process.env.RETRYLAB_FD_OUT;
  if (fin !== undefined && fout !== undefined) {
    const a = Number(fin);
    const b = Number(fout);
    if (!Number.isInteger(a) || !Number.isInteger(b)) {
      throw new NotUnderSimulatorError(`RETRYLAB_FD_IN=${fin} and RETRYLAB_FD_OUT=${fout} are not descriptor numbers`);
    }
    return [a, b];
  }
  if (isPipe(3) && isPipe(4)) return [3, 4];
  throw new NotUnderSimulatorError(
    "retrylab.run() serves the simulator's protocol on fds 3 and 4, and this process was not " +
      "started by retrylab: run it as `retrylab run MODEL --executor NAME=\"node app.js\"`, or call " +
      "the handlers in production with call() from \"retrylab/production\"",
  );
}
