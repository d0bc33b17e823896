/**
 * Where credentials may travel: a stored key or token belongs to the origin (scheme, host, port)
 * it was entered for, and is sent nowhere else until the person says so. Pure: no `vscode`.
 */

/** The origin of a gateway URL (`https://gw.example:8443`), or undefined when it is not a valid http(s) URL. */
export function gatewayOrigin(url: string): string | undefined {
  try {
    const u = new URL(url.trim());
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/** Whether an origin is this machine: plain http to it never crosses a network. */
export function isLoopbackOrigin(origin: string): boolean {
  let host: string;
  try {
    host = new URL(origin).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Plain http to another machine: the key would cross the network readable by anyone on the path. */
export function isCleartextRemote(origin: string): boolean {
  return origin.startsWith('http:') && !isLoopbackOrigin(origin);
}

/** The host as people read it (`gw.example:8443`), for messages. */
export function hostOf(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    return origin;
  }
}

export type CredentialKind = 'apiKey' | 'accessToken';

export const CREDENTIAL_NAMES: Record<CredentialKind, string> = { apiKey: 'API key', accessToken: 'system access token' };

/** Why a credential held for another origin (or not yet confirmed for this one) is not sent. */
export function withheldReason(kind: CredentialKind, boundTo: string | undefined, origin: string): string {
  const what = CREDENTIAL_NAMES[kind];
  const run = 'run "Model Gateway: Use My Credentials with This Gateway"';
  if (boundTo && boundTo !== origin) {
    return `Your ${what} was entered for ${boundTo}, and the gateway URL now names ${origin}, so it is not sent there. If ${hostOf(origin)} is your gateway, ${run}; otherwise set the gateway URL back or set a new ${what}.`;
  }
  return `The gateway ${origin} uses plain http to another machine: your ${what} would cross the network unencrypted, so it is not sent until you confirm (${run}) or switch to https.`;
}

/**
 * Whether a credential may go to `origin`, and whether it should be bound there first.
 * - bound to this origin: send;
 * - bound elsewhere: withhold until the person confirms the new origin;
 * - never bound (stored before origins were recorded, or entered before any URL): bind to the
 *   first origin the user's own settings name, unless that is plain http to another machine.
 */
export function credentialDecision(boundTo: string | undefined, origin: string): 'send' | 'bind' | 'withhold' {
  if (boundTo === origin) return 'send';
  if (boundTo === undefined && !isCleartextRemote(origin)) return 'bind';
  return 'withhold';
}
