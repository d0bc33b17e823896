import { redactSecrets } from '../gateway/core/redact';

/**
 * Removes secrets from text before it is logged, shown or stored: the given values in use (in
 * every form a server echoes them), anything shaped like a key, and credentials in headers,
 * JSON and URLs. The shell bundle has its own copy of the gateway's redaction module, so the
 * secrets in use are passed in rather than read from the gateway's registry.
 */
export function redact(text: string, secrets: readonly string[]): string {
  return redactSecrets(text, secrets);
}
