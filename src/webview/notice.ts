import { h } from './dom';

/** The chat's notice above the input: why something was not done, or what to do next. */
export const notice = h('div', { id: 'notice', class: 'notice', role: 'alert', hidden: true });

/** Shows a notice for six seconds (unless another replaced it meanwhile). */
export function showNotice(text: string, level: 'info' | 'error' = 'error'): void {
  notice.textContent = text;
  notice.className = `notice ${level}`;
  notice.hidden = false;
  setTimeout(() => {
    if (notice.textContent === text) notice.hidden = true;
  }, 6000);
}
