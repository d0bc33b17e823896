/** The pass a suite runs in: the emulator's profile, and the VS Code for the suites that run in one. */
export interface Pass {
  profile: 'new-api' | 'one-api';
  vscode?: 'oldest' | 'newest';
}
export function inScope(file: string, pass: Pass, env?: NodeJS.ProcessEnv): boolean;
export function markersOf(file: string): { vscodeSpecific: boolean; profileDependent: boolean };
