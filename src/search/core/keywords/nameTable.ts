/** What each ASCII character is to an identifier (`[A-Za-z_$][A-Za-z0-9_$]*`): 1 starts or continues one, 2 only continues one. */
const KIND = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const s = String.fromCharCode(c);
  if (/[A-Za-z_$]/.test(s)) KIND[c] = 1;
  else if (/[0-9]/.test(s)) KIND[c] = 2;
}

/**
 * The identifiers of a text, each looked up by its characters where the text holds them: a name
 * seen before costs no string and no hashing of one (a substring per identifier and a map lookup
 * of it were most of the keyword index's work). Each name maps to the number `valueOf` gave it the
 * first time, until `clear`.
 */
export class NameTable {
  private found = new Int32Array(256);
  private slots = new Int32Array(1 << 12);
  private hashes = new Int32Array(1 << 10);
  private starts = new Int32Array(1 << 10);
  private lengths = new Int32Array(1 << 10);
  private valueOfName = new Int32Array(1 << 10);
  private chars = new Uint8Array(1 << 16);
  private charsUsed = 0;
  private names = 0;

  /** Per identifier of the last `scan`, its name's value. */
  get values(): Int32Array {
    return this.found;
  }

  /** Names held. */
  get size(): number {
    return this.names;
  }

  /** Forgets every name (and its value). */
  clear(): void {
    this.slots.fill(0);
    this.names = 0;
    this.charsUsed = 0;
  }

  /** Fills `values` with the value of each identifier in `text`, in order; returns how many. */
  scan(text: string, valueOf: (name: string) => number): number {
    let count = 0;
    const n = text.length;
    let i = 0;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c >= 128 || KIND[c] !== 1) {
        i++;
        continue;
      }
      const start = i;
      let h = Math.imul(2166136261 ^ c, 16777619);
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d >= 128 || KIND[d] === 0) break;
        h = Math.imul(h ^ d, 16777619);
      }
      if (count === this.found.length) this.found = grow(this.found, count + 1);
      this.found[count++] = this.lookup(text, start, i - start, h, valueOf);
    }
    return count;
  }

  private lookup(text: string, start: number, length: number, hash: number, valueOf: (name: string) => number): number {
    const mask = this.slots.length - 1;
    let at = (hash ^ (hash >>> 15)) & mask;
    for (;;) {
      const id = this.slots[at] - 1;
      if (id < 0) break;
      if (this.hashes[id] === hash && this.lengths[id] === length && this.same(id, text, start, length)) return this.valueOfName[id];
      at = (at + 1) & mask;
    }
    const value = valueOf(text.slice(start, start + length));
    const id = this.names++;
    if (id === this.hashes.length) {
      this.hashes = grow(this.hashes, id + 1);
      this.starts = grow(this.starts, id + 1);
      this.lengths = grow(this.lengths, id + 1);
      this.valueOfName = grow(this.valueOfName, id + 1);
    }
    if (this.charsUsed + length > this.chars.length) this.chars = grow(this.chars, this.charsUsed + length);
    for (let k = 0; k < length; k++) this.chars[this.charsUsed + k] = text.charCodeAt(start + k);
    this.hashes[id] = hash;
    this.starts[id] = this.charsUsed;
    this.lengths[id] = length;
    this.valueOfName[id] = value;
    this.charsUsed += length;
    this.slots[at] = id + 1;
    if (this.names * 2 > this.slots.length) this.rehash();
    return value;
  }

  private same(id: number, text: string, start: number, length: number): boolean {
    const from = this.starts[id];
    for (let k = 0; k < length; k++) if (this.chars[from + k] !== text.charCodeAt(start + k)) return false;
    return true;
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let id = 0; id < this.names; id++) {
      const h = this.hashes[id];
      let at = (h ^ (h >>> 15)) & mask;
      while (slots[at] !== 0) at = (at + 1) & mask;
      slots[at] = id + 1;
    }
    this.slots = slots;
  }
}

/** A copy of `a` with room for at least `need` (doubling). */
function grow<A extends Int32Array<ArrayBuffer> | Uint8Array<ArrayBuffer>>(a: A, need: number): A {
  const b = new (a.constructor as new (n: number) => A)(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}
