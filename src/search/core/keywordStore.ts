/**
 * The keyword index stored beside a snapshot (`keywords-G.bin`), so that a load reads it back
 * instead of reading and tokenising every file again (8–13 s at 100,000 chunks). It is a cache:
 * written atomically after each snapshot, checked against the snapshot when read, and anything
 * missing, stale or damaged falls back to tokenising the files.
 *
 * Layout: a 4-byte length, a small JSON header (the files with their chunk counts, in the order
 * of the sections; the sections' places), then the sections, each 4-byte aligned: the term names
 * (UTF-8, one per line) and the numbers of `KeywordState`. A chunk's file, lines and hash are the
 * snapshot's own (the chunks of each file in the snapshot's order), so they are not stored twice.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { writeAtomic } from '../../storage/atomicFile';
import type { StoredFile } from './indexStore';
import type { KeywordState } from './keywords';
import type { IndexedChunk } from './semanticIndex';

const NUMBERS = ['lengths', 'termCounts', 'termIds', 'defCounts', 'defIds', 'tfs'] as const;
type Section = (typeof NUMBERS)[number] | 'terms';

const HeaderSchema = z.object({
  version: z.literal(2),
  generation: z.number(),
  /** [file, chunk count] in order. */
  files: z.array(z.tuple([z.string(), z.number()])),
  sections: z.record(z.string(), z.tuple([z.number(), z.number()])),
});

export const keywordFile = (dir: string, generation: number) => join(dir, `keywords-${generation}.bin`);

export async function writeKeywords(dir: string, generation: number, s: KeywordState<IndexedChunk>): Promise<void> {
  const parts: Record<Section, Uint8Array> = {
    terms: Buffer.from(s.terms.join('\n'), 'utf8'),
    ...(Object.fromEntries(NUMBERS.map((n) => [n, new Uint8Array(s[n].buffer, s[n].byteOffset, s[n].byteLength)])) as Record<(typeof NUMBERS)[number], Uint8Array>),
  };
  const sections: Record<string, [number, number]> = {};
  let at = 0;
  for (const name of ['terms', ...NUMBERS] as Section[]) {
    sections[name] = [at, name === 'terms' ? parts.terms.length : s[name].length];
    at += Math.ceil(parts[name].length / 4) * 4;
  }
  const header = Buffer.from(JSON.stringify({ version: 2, generation, files: s.files.map((f) => [f.file, f.items.length]), sections }), 'utf8');
  const pad = (n: number) => new Uint8Array((4 - (n % 4)) % 4);
  const head = Buffer.alloc(4);
  head.writeUInt32LE(header.length, 0);
  const out: Uint8Array[] = [head, header, pad(4 + header.length)];
  for (const name of ['terms', ...NUMBERS] as Section[]) out.push(parts[name], pad(parts[name].length));
  await writeAtomic(keywordFile(dir, generation), out);
}

/**
 * The stored state for `generation`, its chunks taken from the snapshot's files; undefined when
 * there is none, it does not read, or it does not hold exactly the snapshot's files and chunks.
 */
export async function readKeywords(dir: string, generation: number, snapshotFiles: Record<string, StoredFile>, yieldNow: () => Promise<void>): Promise<KeywordState<IndexedChunk> | undefined> {
  const bytes = await readFile(keywordFile(dir, generation)).catch(() => undefined);
  if (!bytes || bytes.length < 4) return undefined;
  const length = bytes.readUInt32LE(0);
  if (4 + length > bytes.length) return undefined;
  let header: z.infer<typeof HeaderSchema>;
  try {
    const r = HeaderSchema.safeParse(JSON.parse(bytes.toString('utf8', 4, 4 + length)));
    if (!r.success || r.data.generation !== generation) return undefined;
    header = r.data;
  } catch {
    return undefined;
  }
  // The sections, copied into a buffer of their own (aligned, whatever the file buffer's offset).
  const bodyStart = 4 + length + ((4 - ((4 + length) % 4)) % 4);
  const body = new Uint8Array(Math.max(0, bytes.length - bodyStart));
  body.set(bytes.subarray(Math.min(bodyStart, bytes.length)));
  const place = (name: Section, size: number) => {
    const s = header.sections[name];
    return s && s[0] % 4 === 0 && s[0] + s[1] * size <= body.length ? s : undefined;
  };
  const i32 = (name: (typeof NUMBERS)[number]) => {
    const s = place(name, 4);
    return s && new Int32Array(body.buffer, s[0], s[1]);
  };
  const lengths = i32('lengths');
  const termCounts = i32('termCounts');
  const termIds = i32('termIds');
  const defCounts = i32('defCounts');
  const defIds = i32('defIds');
  const tfsAt = place('tfs', 2);
  const termsAt = place('terms', 1);
  if (!lengths || !termCounts || !termIds || !defCounts || !defIds || !tfsAt || !termsAt) return undefined;
  const tfs = new Uint16Array(body.buffer, tfsAt[0], tfsAt[1]);
  const count = header.files.reduce((n, [, c]) => n + c, 0);
  if ([lengths, termCounts, defCounts].some((a) => a.length !== count) || header.files.length !== Object.keys(snapshotFiles).length) return undefined;
  const files: KeywordState<IndexedChunk>['files'] = [];
  for (const [file, n] of header.files) {
    const chunks = snapshotFiles[file]?.chunks;
    if (chunks?.length !== n) return undefined;
    files.push({ file, items: chunks.map(([start, end, hash]) => ({ file, start, end, hash })) });
    await yieldNow();
  }
  const termsText = Buffer.from(body.buffer, termsAt[0], termsAt[1]).toString('utf8');
  return { terms: termsText ? termsText.split('\n') : [], files, lengths, termCounts, termIds, tfs, defCounts, defIds };
}
