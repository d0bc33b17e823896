/** The sandbox for tests of the runtime's command flow: off (the approvals alone), or the real one (bubblewrap) with a home and a profile of the test's own. */
import type { SandboxedOutcome, SandboxState } from '../src/runtime/core/commandCall';
import { boundaryFor, probeSandbox, runSandboxedCommand } from '../src/runtime/core/sandbox/sandboxedRun';
import type { PathGuard, ResolvedPath } from '../src/tools/pathGuard';

/** No sandbox: the approvals as they are without one. */
export const NO_SANDBOX = {
  sandbox: () => Promise.resolve<SandboxState>({ on: false, runUnasked: false, allowedHosts: [] }),
  inSandbox: (): Promise<SandboxedOutcome> => Promise.reject(new Error('no sandbox in this test')),
};

/** The real sandbox, as the extension runs it, with this home and profile hidden. */
export async function realSandbox(o: { home: string; profile?: string[]; allowedHosts?: string[]; runUnasked?: boolean; readable?: string[] }) {
  const support = await probeSandbox();
  if (!support.available) throw new Error(`the sandbox must work on this machine (CI installs bubblewrap): ${support.reason}`);
  return {
    sandbox: () => Promise.resolve<SandboxState>({ on: true, runUnasked: o.runUnasked ?? true, allowedHosts: o.allowedHosts ?? [] }),
    inSandbox: async (
      guard: PathGuard,
      line: string,
      folder: ResolvedPath,
      hosts: readonly string[],
      r: { timeoutMs: number; signal?: AbortSignal },
    ): Promise<SandboxedOutcome> => {
      return runSandboxedCommand(line, {
        support,
        boundary: await boundaryFor(guard, folder, { home: o.home, profile: o.profile ?? [], ...(o.readable ? { readable: o.readable } : {}) }),
        allowHosts: hosts,
        timeoutMs: r.timeoutMs,
        onData: () => undefined,
        env: { ...process.env, HOME: o.home },
        ...(r.signal ? { signal: r.signal } : {}),
      });
    },
  };
}
