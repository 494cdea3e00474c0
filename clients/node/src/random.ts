/** A small seeded generator (xoshiro128**, seeded by splitmix32): deterministic per seed. */

export class Prng {
  #s = new Uint32Array(4);

  constructor(seed: number) {
    this.seed(seed);
  }

  seed(seed: number): void {
    let x = seed >>> 0;
    // splitmix32 (the seed may be any integer: fold the high bits in).
    const hi = Math.floor(seed / 2 ** 32) >>> 0;
    x = (x ^ Math.imul(hi, 0x9e3779b9)) >>> 0;
    for (let i = 0; i < 4; i++) {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      this.#s[i] = (z ^ (z >>> 16)) >>> 0;
    }
    if ((this.#s[0] | this.#s[1] | this.#s[2] | this.#s[3]) === 0) this.#s[0] = 1;
  }

  /** The next 32 random bits. */
  nextU32(): number {
    const s = this.#s;
    const r = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return r;
  }

  /** A double in [0, 1) with 53 random bits, as `Math.random` returns. */
  nextFloat(): number {
    const a = this.nextU32() >>> 5;
    const b = this.nextU32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  fill(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i += 4) {
      let v = this.nextU32();
      for (let j = i; j < Math.min(i + 4, bytes.length); j++) {
        bytes[j] = v & 0xff;
        v >>>= 8;
      }
    }
  }

  /** A version-4 UUID from this stream. */
  uuid4(): string {
    const b = new Uint8Array(16);
    this.fill(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
