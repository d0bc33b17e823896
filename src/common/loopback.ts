/** Whether a host name is this machine (localhost, *.localhost, 127.0.0.0/8, ::1). */
export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h) || h === '0:0:0:0:0:0:0:1';
}
