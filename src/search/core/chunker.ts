import { createHash } from 'node:crypto';

export interface Chunk {
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  text: string;
  /** Hash of what is embedded (the path and the text): equal hashes share one embedding. */
  hash: string;
}

export interface ChunkOptions {
  /** Upper bound per chunk, in tokens (estimated at 4 characters a token). Default 300. */
  maxTokens?: number;
  /** Lines repeated at the start of the next chunk. Default 2. */
  overlapLines?: number;
}

/** What is sent to the embedding model for a chunk: the file's path gives the text its place. */
export function embeddingText(path: string, text: string): string {
  return `${path}\n${text}`;
}

export function chunkHash(path: string, text: string): string {
  // The first 16 bytes written as hex, not the whole digest's hex cut to 32 characters: a cut string
  // is a view that keeps the 64-character one alive, 120 bytes a hash against 56 (64 MB of the
  // extension host's heap at a million chunks, and twice the objects for its collector).
  return createHash('sha256').update(path).update('\u0000').update(text).digest().toString('hex', 0, 16);
}

const indentOf = (line: string) => line.length - line.trimStart().length;

/**
 * Splits a text file into overlapping chunks of at most `maxTokens`, following the code's shape
 * where it is cheap: a chunk ends, by preference, before a blank line or before a line at the
 * outermost indentation (a new top-level declaration), in the second half of the window. Lines
 * longer than the budget are cut.
 */
export function chunkText(path: string, text: string, options: ChunkOptions = {}): Chunk[] {
  const maxChars = (options.maxTokens ?? 300) * 4;
  const overlap = Math.max(0, options.overlapLines ?? 2);
  const lines = text.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const chunks: Chunk[] = [];
  let start = 0;
  while (start < lines.length) {
    let end = start;
    let size = 0;
    while (end < lines.length && (end === start || size + lines[end].length + 1 <= maxChars)) {
      size += lines[end].length + 1;
      end++;
    }
    // end is exclusive. Look back for a natural boundary in the second half of the window.
    if (end < lines.length) {
      const minEnd = start + Math.max(1, Math.floor((end - start) / 2));
      let cut = -1;
      for (let i = end; i > minEnd; i--) {
        if (lines[i]?.trim() === '') {
          cut = i;
          break;
        }
      }
      if (cut === -1) {
        for (let i = end; i > minEnd; i--) {
          if (lines[i] !== undefined && lines[i].trim() !== '' && indentOf(lines[i]) === 0) {
            cut = i;
            break;
          }
        }
      }
      if (cut !== -1) end = cut;
    }
    let body = lines.slice(start, end).join('\n');
    if (body.length > maxChars) body = body.slice(0, maxChars);
    if (body.trim()) chunks.push({ startLine: start + 1, endLine: end, text: body, hash: chunkHash(path, body) });
    if (end >= lines.length) break;
    start = Math.max(start + 1, end - overlap);
    // Do not start a chunk on blank lines.
    while (start < lines.length && lines[start].trim() === '' && start < end) start++;
  }
  return chunks;
}

/**
 * What a chunk's hash depends on besides its text: how files are cut and what is embedded. Teams
 * share vectors by hash only where this is equal (a team store records it).
 */
export function chunkerId(maxTokens: number, overlapLines = 2): string {
  return `lines-v1/${maxTokens}t/${overlapLines}o/path+text`;
}
