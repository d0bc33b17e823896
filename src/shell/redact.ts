import { redactSecrets, registerSecret } from '../gateway/core/redact';

export { registerSecret };

/**
 * Removes secrets from text before it is logged, shown or stored: every credential this window
 * has loaded or been given (registered by `Credentials`, in every form a server echoes them),
 * anything shaped like a key, and credentials in headers, JSON and URLs.
 *
 * The shell bundle (`dist/extension.js`) carries its own copy of the redaction module, apart from
 * the gateway bundle's: this is the shell's one registry, fed by `Credentials` alone.
 */
export function redact(text: string): string {
  return redactSecrets(text);
}
