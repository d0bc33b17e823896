/**
 * The zod (classic) API the gateway uses, re-exported by name. `import { z } from 'zod'` brings the
 * whole library, every locale included, into the bundle (about 440 KB minified); named imports let
 * esbuild keep only what is used. Files import it as `import * as z from './core/z'` and read the
 * same as before (`z.string()`, `z.input<typeof S>`).
 */
export { array, boolean, custom, discriminatedUnion, enum, literal, looseObject, null, number, record, string, union, unknown } from 'zod';
export type { input, output, ZodType } from 'zod';
