import * as l10n from '@vscode/l10n';
import { button, h } from './dom';
import { shared } from './turnView';

// The conversation's scrolling area, which stays at the newest content until the person scrolls
// away from it.

// Not a live region: a screen reader would read every token. The end of a turn is announced instead.
export const messages = h('main', { id: 'messages', 'aria-label': l10n.t('Conversation') });
/** The turns; its size changes (markdown drawn late, images loading) keep the view at the newest. */
export const thread = h('div', { id: 'thread' });
messages.append(thread);
export const jumpButton = button(
  l10n.t('Jump to newest'),
  { id: 'jump', class: 'jump', 'aria-label': l10n.t('Jump to the newest message'), hidden: true },
  'arrow-down',
);

/** Whether the view follows the newest content: true until the person scrolls up. */
let stick = true;
/** scrollTop our own scrolling produced, so its scroll event is not read as the person's. */
let ownScrollTop = -1;

function atBottom(): boolean {
  return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 24;
}

function toBottom(): void {
  messages.scrollTop = messages.scrollHeight;
  ownScrollTop = messages.scrollTop;
  jumpButton.hidden = true;
}

/** Keeps the newest content in view while the person has not scrolled away (or when forced). */
export function scrollToEnd(force = false): void {
  if (force) stick = true;
  if (stick) toBottom();
  else jumpButton.hidden = atBottom();
}

/**
 * Stops following at once on the person's intent to go up, before the scroll it causes: a render
 * landing between their scroll and its event does not pull the view back. (The position alone
 * cannot say it: turns off screen change height as they are laid out, which moves scrollTop too.)
 */
function leaveEnd(): void {
  stick = false;
  jumpButton.hidden = atBottom();
}

messages.addEventListener('scroll', () => {
  if (messages.scrollTop === ownScrollTop) return;
  stick = atBottom();
  jumpButton.hidden = stick;
});
messages.addEventListener('wheel', (e) => e.deltaY < 0 && leaveEnd(), { passive: true });
messages.addEventListener('touchmove', () => leaveEnd(), { passive: true });
messages.addEventListener('keydown', (e) => ['PageUp', 'ArrowUp', 'Home'].includes(e.key) && leaveEnd());
// Markdown renders a frame later and off-screen turns skip layout: whenever the thread changes
// size, follow it if following.
shared.scrollToEnd = scrollToEnd;
new ResizeObserver(() => scrollToEnd()).observe(thread);
jumpButton.addEventListener('click', () => scrollToEnd(true));
// Opening a summary card shows it from its top, and opening a tool card or the thinking brings
// what it holds into view (as little scrolling as that takes): the view stops following the newest
// content (toggle does not bubble, hence the capture).
thread.addEventListener(
  'toggle',
  (e) => {
    const card = e.target as HTMLElement;
    if (!(card as HTMLDetailsElement).open) return;
    if (card.classList?.contains('condensed')) {
      stick = false;
      card.scrollIntoView({ block: 'start' });
    } else if (card.classList?.contains('tool') || card.classList?.contains('thinking')) {
      requestAnimationFrame(() => {
        const view = messages.getBoundingClientRect();
        const r = card.getBoundingClientRect();
        if (r.top >= view.top && r.bottom <= view.bottom) return;
        stick = false;
        card.scrollIntoView({ block: r.height > view.height ? 'start' : 'nearest' });
      });
    }
  },
  true,
);
