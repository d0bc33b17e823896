import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Suffix of the temporary files an atomic write renames into place. */
const TEMP = /\.[0-9a-f]{8}\.tmp$/;

/**
 * Writes a file so that a crash at any moment leaves either the old content or the new one,
 * and once this resolves the new content survives a power cut: the data goes to a temporary
 * file beside the target, is flushed to disk (fsync), renamed over the target, and the folder
 * holding it is flushed so the rename itself is durable.
 */
export async function writeAtomic(path: string, data: string | Uint8Array | Iterable<Uint8Array>): Promise<void> {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const file = await open(tmp, 'wx');
    try {
      // Parts are written one after another (made as they are written, from a generator): a large
      // file is never joined into one buffer first.
      if (typeof data === 'string' || data instanceof Uint8Array) await file.writeFile(data);
      else for (const part of data) await file.write(part);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await syncFolder(dirname(path));
}

async function syncFolder(dir: string): Promise<void> {
  // Folders cannot be opened for fsync everywhere (Windows); the rename is still atomic there.
  const handle = await open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}

/**
 * Removes the temporary files a killed process left behind in a folder (only ours: the name
 * of a real file plus `.<8 hex>.tmp`). Returns how many were removed.
 */
export async function removeOrphanTemps(dir: string): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!TEMP.test(name)) continue;
    await rm(join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

/** The few file operations the stores need; writes are atomic and durable. */
export interface StoreFs {
  read(path: string): Promise<string | undefined>;
  writeAtomic(path: string, data: string | Uint8Array | Iterable<Uint8Array>): Promise<void>;
  remove(path: string): Promise<void>;
  list(dir: string): Promise<string[]>;
  mkdirp(dir: string): Promise<void>;
  removeOrphanTemps(dir: string): Promise<number>;
}

export const nodeFs: StoreFs = {
  read: (p) => readFile(p, 'utf8').catch(() => undefined),
  writeAtomic,
  remove: (p) => rm(p, { force: true }),
  list: (d) => readdir(d).catch(() => []),
  mkdirp: async (d) => {
    await mkdir(d, { recursive: true });
  },
  removeOrphanTemps,
};
