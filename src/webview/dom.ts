/** The webview's handle on the host, and small helpers to build elements. */
export { vscode } from './channel';

export type Attrs = Record<string, string | boolean | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'text') el.textContent = String(v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}

export const icon = (name: string) => h('span', { class: `codicon codicon-${name}`, 'aria-hidden': 'true' });

export function button(label: string, attrs: Attrs = {}, iconName?: string): HTMLButtonElement {
  const b = h('button', { type: 'button', ...attrs });
  if (iconName) b.append(icon(iconName));
  if (label) b.append(iconName ? ` ${label}` : label);
  return b;
}

// ---------- layout ----------
