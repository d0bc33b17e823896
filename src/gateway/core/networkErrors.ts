/**
 * Why a request never reached the gateway, in words a person can act on: the proxy's refusal
 * (407, its own 502/403, a proxy host that does not resolve) or a TLS failure (an issuer this
 * machine does not trust, an expired certificate, another host's name). Never "fetch failed".
 */
import * as l10n from '@vscode/l10n';
import { request as httpRequest } from 'node:http';
import { connect as tlsConnect, type DetailedPeerCertificate, type PeerCertificate } from 'node:tls';
import { ProxyError, TlsError, type TlsFailure } from './errors';
import { describeProxy, normalizeProxyUrl, proxyFor, type NetworkOptions } from './network';

const UNTRUSTED = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const HOSTNAME = new Set(['ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH']);
const UNREACHABLE = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH']);

interface ErrorLike {
  code?: string;
  message?: string;
  hostname?: string;
  address?: string;
  port?: number;
  cert?: PeerCertificate;
  cause?: unknown;
}

/** The error and its causes, outermost first. */
function chain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  for (let e = err as ErrorLike | undefined, i = 0; e && typeof e === 'object' && i < 5; e = e.cause as ErrorLike | undefined, i++) out.push(e);
  return out;
}

export function tlsFailureOf(code: string | undefined): TlsFailure | undefined {
  if (!code) return undefined;
  if (UNTRUSTED.has(code)) return 'untrusted';
  if (EXPIRED.has(code)) return 'expired';
  if (HOSTNAME.has(code)) return 'hostname';
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO') return 'handshake';
  return undefined;
}

/** What a probe of the server's certificate learned (names for the message). */
export interface CertificateFacts {
  subject?: string;
  issuer?: string;
  validTo?: string;
  altNames?: string;
}

const caAdvice = (): string =>
  l10n.t(
    'If your company inspects TLS (a proxy or firewall re-signs traffic), add its root certificate: the PEM file in the setting modelGateway.tls.caFiles (or NODE_EXTRA_CA_CERTS), or in the operating system store with http.systemCertificates on.',
  );

/**
 * A proxy or TLS failure for a request to `target`, or undefined when the error is neither. The
 * certificate facts (from `probeCertificate`) name the issuer; without them the message is general.
 */
export function networkFailure(err: unknown, target: string, network: NetworkOptions | undefined, facts?: CertificateFacts): ProxyError | TlsError | undefined {
  const url = new URL(target);
  const where = url.host;
  const proxyUrl = proxyFor(url, network?.proxy);
  const errors = chain(err);

  if (proxyUrl) {
    const proxy = describeProxy(proxyUrl);
    const source = network?.proxy?.source ?? l10n.t('the proxy setting');
    const status = errors.map((e) => /Proxy response \((\d{3})\)|\((407)\)/.exec(e.message ?? '')).find(Boolean);
    const code = status ? Number(status[1] ?? status[2]) : undefined;
    if (code === 407) {
      const gave = !!network?.proxy?.authorization || !!normalizeProxyUrl(proxyUrl).username;
      return new ProxyError(
        gave
          ? l10n.t(
              'The proxy at {0} (from {1}) refused the credentials given (HTTP 407): check the user and password in http.proxyAuthorization or the proxy URL.',
              proxy,
              source,
            )
          : l10n.t(
              'The proxy at {0} (from {1}) asks for credentials (HTTP 407): set http.proxyAuthorization (for example "Basic " + base64 of user:password), or put user:password@ in the proxy URL.',
              proxy,
              source,
            ),
        proxy,
        407,
        { cause: err, status: 407 },
      );
    }
    if (code !== undefined) {
      return new ProxyError(
        l10n.t(
          'The proxy at {0} (from {1}) could not open a connection to {2} (HTTP {3}{4}). If the gateway is reachable directly, add its host to http.noProxy.',
          proxy,
          source,
          where,
          code,
          code === 403
            ? l10n.t(': its policy blocks this host')
            : code === 502 || code === 504
              ? l10n.t(': the gateway could not be reached from the proxy')
              : '',
        ),
        proxy,
        code,
        { cause: err },
      );
    }
    const p = normalizeProxyUrl(proxyUrl);
    const atProxy = errors.find(
      (e) => e.code && UNREACHABLE.has(e.code) && (e.hostname === p.hostname || (e.address !== undefined && String(e.port) === (p.port || '80'))),
    );
    if (atProxy) {
      const why =
        atProxy.code === 'ENOTFOUND' || atProxy.code === 'EAI_AGAIN'
          ? l10n.t('its host name {0} does not resolve', p.hostname)
          : l10n.t('it did not accept the connection ({0})', atProxy.code ?? '');
      return new ProxyError(
        l10n.t('The proxy at {0} (from {1}) cannot be reached: {2}. Check the proxy setting, or remove it if this network has none.', proxy, source, why),
        proxy,
        undefined,
        { cause: err },
      );
    }
  }

  const tlsError = errors.find((e) => tlsFailureOf(e.code));
  if (!tlsError) return undefined;
  const reason = tlsFailureOf(tlsError.code)!;
  const via = proxyUrl ? l10n.t(' (through the proxy at {0})', describeProxy(proxyUrl)) : '';
  const code = tlsError.code;
  switch (reason) {
    case 'untrusted': {
      const said = facts?.issuer
        ? l10n.t('The certificate of {0}{1} is issued by "{2}", which this machine does not trust ({3}).', where, via, facts.issuer, code ?? '')
        : l10n.t('The certificate of {0}{1} has an issuer this machine does not trust ({2}).', where, via, code ?? '');
      return new TlsError(`${said} ${caAdvice()}`, reason, { cause: err, code });
    }
    case 'expired': {
      const when = facts?.validTo ?? tlsError.cert?.valid_to;
      return new TlsError(
        code === 'CERT_NOT_YET_VALID'
          ? l10n.t("The certificate of {0}{1} is not valid yet: the gateway's operator must renew it; check this machine's clock too.", where, via)
          : when
            ? l10n.t(
                "The certificate of {0}{1} expired (valid to {2}): the gateway's operator must renew it; check this machine's clock too.",
                where,
                via,
                when,
              )
            : l10n.t("The certificate of {0}{1} expired: the gateway's operator must renew it; check this machine's clock too.", where, via),
        reason,
        { cause: err, code },
      );
    }
    case 'hostname': {
      const names = facts?.altNames ?? tlsError.cert?.subjectaltname;
      return new TlsError(
        l10n.t(
          'The certificate of {0}{1} is for {2}, not {3}: use the host name the certificate names in the base URL.',
          where,
          via,
          names ? names.replace(/DNS:|IP Address:/g, '') : l10n.t('another host name'),
          url.hostname,
        ),
        reason,
        { cause: err, code },
      );
    }
    case 'handshake':
      return new TlsError(
        l10n.t('The TLS handshake with {0}{1} failed ({2}): is this an https port? A plain-http gateway needs an http:// base URL.', where, via, code ?? ''),
        reason,
        { cause: err, code },
      );
  }
}

function nameOf(fields: PeerCertificate['issuer'] | undefined): string | undefined {
  if (!fields) return undefined;
  const f = fields as unknown as Record<string, string | string[] | undefined>;
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return first(f.CN) ?? first(f.O);
}

/**
 * Reads the certificate the server presents (without trusting it, sending nothing after the
 * handshake), through the proxy when one is used, to name its issuer in the error. Gives up
 * quietly after `timeoutMs`.
 */
export async function probeCertificate(target: string, network: NetworkOptions | undefined, timeoutMs = 3000): Promise<CertificateFacts | undefined> {
  const url = new URL(target);
  const port = Number(url.port || 443);
  const proxyUrl = proxyFor(url, network?.proxy);
  return new Promise<CertificateFacts | undefined>((resolve) => {
    let settled = false;
    const done = (facts: CertificateFacts | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(facts);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    const handshake = (socket?: import('node:net').Socket) => {
      const servername = /^[\d.]+$|:/.test(url.hostname) ? undefined : url.hostname;
      const tls = tlsConnect({ host: url.hostname.replace(/^\[|\]$/g, ''), port, socket, servername, rejectUnauthorized: false }, () => {
        const cert = tls.getPeerCertificate(true);
        let top: DetailedPeerCertificate = cert;
        for (let i = 0; i < 10 && top.issuerCertificate && top.issuerCertificate !== top; i++) top = top.issuerCertificate;
        done({ subject: nameOf(cert.subject), issuer: nameOf(top.issuer) ?? nameOf(cert.issuer), validTo: cert.valid_to, altNames: cert.subjectaltname });
        tls.destroy();
      });
      tls.on('error', () => done(undefined));
    };
    if (!proxyUrl) return handshake();
    const p = normalizeProxyUrl(proxyUrl);
    if (p.protocol !== 'http:') return done(undefined);
    const headers: Record<string, string> = { host: url.host };
    const auth =
      network?.proxy?.authorization ??
      (p.username ? `Basic ${Buffer.from(`${decodeURIComponent(p.username)}:${decodeURIComponent(p.password)}`).toString('base64')}` : undefined);
    if (auth) headers['proxy-authorization'] = auth;
    const req = httpRequest({ host: p.hostname, port: Number(p.port || 80), method: 'CONNECT', path: `${url.hostname}:${port}`, headers });
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        return done(undefined);
      }
      handshake(socket);
    });
    req.on('error', () => done(undefined));
    req.end();
  });
}
