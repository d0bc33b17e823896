import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as tls from 'node:tls';
import * as vscode from 'vscode';
import type * as Gateway from '../gateway';
import { userValue } from './config';

/**
 * The network the user's VS Code is set up for, as the gateway client's options: VS Code's
 * `http.proxy`, `http.proxyAuthorization`, `http.noProxy`, `http.proxyStrictSSL`,
 * `http.systemCertificates` (user settings only: a cloned repository's settings must not route
 * the key through its proxy or turn certificate checks off), else the proxy environment
 * variables; and the certificates to trust: Node's, the OS store's, `NODE_EXTRA_CA_CERTS`, and
 * `modelGateway.tls.caFiles`.
 */
export interface NetworkChoice {
  options: Gateway.NetworkOptions;
  /** Lines for the status bar's tooltip: the proxy in use, certificate checks off, unreadable CA files. */
  notes: string[];
  /** Whether certificate checks are off (the status bar warns). */
  insecure: boolean;
  /** Changes whenever the options do (the client is rebuilt). Kept in memory only: it holds the proxy's credentials. */
  signature: string;
}

interface HttpSettings {
  proxy?: string;
  authorization?: string;
  noProxy: string[];
  strictSSL: boolean;
  systemCertificates: boolean;
  proxySupport: string;
}

function httpSettings(): HttpSettings {
  const c = vscode.workspace.getConfiguration('http');
  const str = (k: string) => {
    const v = userValue(c, k);
    return typeof v === 'string' && v.trim() ? v.trim() : undefined;
  };
  const bool = (k: string, fallback: boolean) => {
    const v = userValue(c, k);
    return typeof v === 'boolean' ? v : fallback;
  };
  const list = userValue(c, 'noProxy');
  return {
    proxy: str('proxy'),
    authorization: str('proxyAuthorization'),
    noProxy: Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [],
    strictSSL: bool('proxyStrictSSL', true),
    systemCertificates: bool('systemCertificates', true),
    proxySupport: str('proxySupport') ?? 'override',
  };
}

let systemCertificates: { certs: string[]; error?: string } | undefined;

/** The OS store: Node's own reader where it has one (22.15+), else the `system-ca` library. Read once. */
function osCertificates(): { certs: string[]; error?: string } {
  if (systemCertificates) return systemCertificates;
  const nodeReader = (tls as { getCACertificates?: (which: string) => string[] }).getCACertificates;
  try {
    if (nodeReader) systemCertificates = { certs: nodeReader('system') };
    else {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { systemCertsSync } = require('system-ca') as { systemCertsSync: () => string[] };
      systemCertificates = { certs: systemCertsSync() };
    }
  } catch (err) {
    systemCertificates = { certs: [], error: err instanceof Error ? err.message : String(err) };
  }
  return systemCertificates;
}

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function expandHome(path: string): string {
  return path.replace(/^~(?=$|[\\/])/, homedir()).replace(/\$\{userHome\}/g, homedir());
}

/** The certificates in a PEM file, or why there are none. */
function certificatesIn(path: string): { certs: string[]; problem?: string } {
  try {
    const certs = readFileSync(path, 'utf8').match(PEM) ?? [];
    return certs.length ? { certs } : { certs, problem: vscode.l10n.t('{0} holds no PEM certificate (-----BEGIN CERTIFICATE-----)', path) };
  } catch (err) {
    return { certs: [], problem: vscode.l10n.t("{0} can't be read ({1})", path, (err as { code?: string }).code ?? String(err)) };
  }
}

export function readNetwork(gw: Pick<typeof Gateway, 'proxyFromEnv' | 'describeProxy'>, env: NodeJS.ProcessEnv = process.env): NetworkChoice {
  const http = httpSettings();
  const notes: string[] = [];

  let proxy: Gateway.ProxySettings | undefined;
  const envProxy = gw.proxyFromEnv(env);
  if (http.proxySupport !== 'off') {
    const noProxy = [...http.noProxy, ...(envProxy?.noProxy ?? [])];
    if (http.proxy) proxy = { http: http.proxy, https: http.proxy, source: 'http.proxy', authorization: http.authorization, noProxy };
    else if (envProxy) proxy = { ...envProxy, authorization: http.authorization, noProxy };
  }
  if (proxy) {
    const at = gw.describeProxy(proxy.https ?? proxy.http ?? '');
    notes.push(
      proxy.authorization
        ? vscode.l10n.t('Through the proxy at {0} (from {1}, with http.proxyAuthorization).', at, proxy.source)
        : vscode.l10n.t('Through the proxy at {0} (from {1}).', at, proxy.source),
    );
  }

  const extra: string[] = [];
  if (http.systemCertificates) {
    const os = osCertificates();
    extra.push(...os.certs);
    // Elsewhere the store's readers are native modules we do not ship: VS Code's Node (22.15+) reads it instead.
    if (os.error && process.platform === 'linux')
      notes.push(vscode.l10n.t("The operating system's certificates could not be read ({0}); add your CA in modelGateway.tls.caFiles.", os.error));
  }
  const extraFiles = [
    ...(env.NODE_EXTRA_CA_CERTS ? [{ path: env.NODE_EXTRA_CA_CERTS, from: 'NODE_EXTRA_CA_CERTS' }] : []),
    ...caFilesSetting().map((path) => ({ path: expandHome(path), from: 'modelGateway.tls.caFiles' })),
  ];
  for (const f of extraFiles) {
    const read = certificatesIn(f.path);
    extra.push(...read.certs);
    if (read.problem) notes.push(`${f.from}: ${read.problem}.`);
  }
  const ca = extra.length ? [...new Set([...tls.rootCertificates, ...extra])] : undefined;

  const insecure = !http.strictSSL;
  if (insecure)
    notes.push(
      vscode.l10n.t(
        '⚠ Certificate checks are off (http.proxyStrictSSL is false): anyone on the network path can read your API key. Turn it back on and add your CA in modelGateway.tls.caFiles.',
      ),
    );

  const options: Gateway.NetworkOptions = { ...(proxy ? { proxy } : {}), ...(ca ? { ca } : {}), ...(insecure ? { rejectUnauthorized: false } : {}) };
  const signature = JSON.stringify([proxy ?? null, extraFiles, ca ? createHash('sha256').update(ca.join('')).digest('hex') : null, insecure]);
  return { options, notes, insecure, signature };
}

function caFilesSetting(): string[] {
  const v = userValue(vscode.workspace.getConfiguration('modelGateway'), 'tls.caFiles');
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim()) : [];
}

/** Whether a configuration change can change the network. */
export function affectsNetwork(e: vscode.ConfigurationChangeEvent): boolean {
  return [
    'http.proxy',
    'http.proxyAuthorization',
    'http.noProxy',
    'http.proxyStrictSSL',
    'http.systemCertificates',
    'http.proxySupport',
    'modelGateway.tls',
  ].some((k) => e.affectsConfiguration(k));
}
