/**
 * The relay's image input rules, checked by bytes as an upstream would: PNG, JPEG or WEBP (GIF
 * refused), at most 20 MB, `detail` one of auto/low/high. Returns the refusal, or undefined.
 */
type Json = Record<string, unknown>;

const MAX_BYTES = 20 * 1024 * 1024;
const DETAILS = ['auto', 'low', 'high'];

function kindOf(head: Buffer): string | undefined {
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
  if (head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  if (head.toString('latin1', 0, 4) === 'GIF8') return 'gif';
  return undefined;
}

function checkBase64(where: string, b64: string): string | undefined {
  const bytes = Math.floor((b64.replace(/=+$/, '').length * 3) / 4);
  if (bytes > MAX_BYTES) return `${where}: image is ${(bytes / 1048576).toFixed(1)} MB; the limit is 20 MB.`;
  const kind = kindOf(Buffer.from(b64.slice(0, 32), 'base64'));
  if (kind === 'gif') return `${where}: GIF images are not supported; use png, jpeg or webp.`;
  if (!kind) return `${where}: the image data is not a valid png, jpeg or webp image.`;
  return undefined;
}

/** Chat completions: `image_url` parts of user messages. */
export function chatImageProblem(messages: Json[]): string | undefined {
  for (const [i, m] of messages.entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [j, part] of (m.content as Json[]).entries()) {
      if (part?.type !== 'image_url') continue;
      const where = `messages[${i}].content[${j}].image_url`;
      const img = (part.image_url ?? {}) as Json;
      const detail = img.detail === undefined ? undefined : JSON.stringify(img.detail).replace(/^"|"$/g, '');
      if (detail !== undefined && !DETAILS.includes(detail))
        return `${where}.detail: Invalid value: '${detail}'. Supported values are: 'auto', 'low', and 'high'.`;
      const url = typeof img.url === 'string' ? img.url : '';
      const data = /^data:[^,]*;base64,(.*)$/s.exec(url);
      if (data) {
        const problem = checkBase64(where, data[1]);
        if (problem) return problem;
      } else if (/\.gif(\?|$)/i.test(url)) return `${where}: GIF images are not supported; use png, jpeg or webp.`;
    }
  }
  return undefined;
}

/** Messages format: `image` blocks with a base64 source. */
export function messagesImageProblem(messages: Json[]): string | undefined {
  for (const [i, m] of messages.entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [j, block] of (m.content as Json[]).entries()) {
      if (block?.type !== 'image') continue;
      const source = (block.source ?? {}) as Json;
      if (source.type === 'base64' && typeof source.data === 'string') {
        const problem = checkBase64(`messages.${i}.content.${j}.image.source`, source.data);
        if (problem) return problem;
      }
    }
  }
  return undefined;
}
