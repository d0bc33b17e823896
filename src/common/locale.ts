/**
 * The display language's formats for numbers and times. The extension host sets it from
 * `vscode.env.language` at activation; each webview from the language its host sends.
 * English until then, so tests and the command line read the same as before.
 */
let current = 'en-US';

export function setDisplayLocale(language: string): void {
  try {
    current = Intl.getCanonicalLocales(language)[0] ?? 'en-US';
  } catch {
    current = 'en-US';
  }
}

export const displayLocale = (): string => current;

/** A whole number with the display language's grouping: 12,345 (en) or 12,345 (zh-CN) or 12 345 (fr). */
export const formatCount = (n: number): string => n.toLocaleString(current);

/** A time of day in the display language: 3:05 PM (en), 15:05 (zh-CN). */
export const formatTime = (t: Date | number): string => new Date(t).toLocaleTimeString(current, { hour: 'numeric', minute: '2-digit' });

/** A date and time in the display language. */
export const formatDateTime = (t: Date | number): string => new Date(t).toLocaleString(current, { dateStyle: 'medium', timeStyle: 'short' });

/** A short moment: the time for today (3:05 PM), else the day and time (Nov 27, 3:05 PM). */
export const formatWhen = (t: Date | number, now = Date.now()): string => {
  const d = new Date(t);
  return d.toDateString() === new Date(now).toDateString()
    ? formatTime(d)
    : d.toLocaleString(current, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
};
