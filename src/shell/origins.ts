/**
 * Where credentials may travel: a stored key or token belongs to the origin (scheme, host, port)
 * it was entered for, and is sent nowhere else until the person says so. Pure: no `vscode`.
 */
import * as l10n from '@vscode/l10n';

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

/** The credentials' names as a person reads them. */
export const credentialName = (kind: CredentialKind): string => (kind === 'apiKey' ? l10n.t('API key') : l10n.t('system access token'));

/** Why a credential held for another origin (or not yet confirmed for this one) is not sent. */
export function withheldReason(kind: CredentialKind, boundTo: string | undefined, origin: string): string {
  const what = credentialName(kind);
  const run = l10n.t('run "Model Gateway: Use My Credentials with This Gateway"');
  if (boundTo && boundTo !== origin) {
    return l10n.t(
      'Your {0} was entered for {1}, and the gateway URL now names {2}, so it is not sent there. If {3} is your gateway, {4}; otherwise set the gateway URL back or set a new {0}.',
      what,
      boundTo,
      origin,
      hostOf(origin),
      run,
    );
  }
  return l10n.t(
    'The gateway {0} uses plain http to another machine: your {1} would cross the network unencrypted, so it is not sent until you confirm ({2}) or switch to https.',
    origin,
    what,
    run,
  );
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
