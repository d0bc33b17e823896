/**
 * What a screen reader hears and where the keyboard goes in the chat: one polite announcement when
 * an answer finishes and one assertive one for an error (never each token), and moving between
 * the conversation's turns from the keyboard.
 */
import * as l10n from '@vscode/l10n';
import type { AssistantTurn } from '../common/conversation';
import { h } from './dom';

/** Visually hidden, still read: the regions the announcements go through. */
export const politeRegion = h('div', { id: 'announce-polite', class: 'sr-only', role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
export const assertiveRegion = h('div', { id: 'announce-assertive', class: 'sr-only', role: 'alert', 'aria-live': 'assertive', 'aria-atomic': 'true' });

/** The part of a long answer an announcement reads; the rest is in the conversation. */
const ANNOUNCED_CHARS = 600;

/**
 * Says `text` once. The region is emptied first and filled a frame later, so the same words twice
 * (two answers alike) are still read, and a region read on load (after a reload) says nothing.
 */
export function announce(text: string, urgent = false): void {
  const region = urgent ? assertiveRegion : politeRegion;
  region.textContent = '';
  requestAnimationFrame(() => (region.textContent = text));
}

/**
 * What is read when a turn ends: the opening of the answer as drawn (`shown`: the text a reader
 * would see, not its markdown), or the error and what fixes it.
 */
export function endOfTurnAnnouncement(t: AssistantTurn, shown: string, fixes: readonly string[]): { text: string; urgent: boolean } | undefined {
  if (t.status === 'error') {
    const message = t.error?.message ?? l10n.t('The answer failed.');
    return { text: fixes.length ? l10n.t('Error: {0} Fix: {1}.', message, fixes.join(', ')) : l10n.t('Error: {0}', message), urgent: true };
  }
  const text = shown.replace(/\s+/g, ' ').trim();
  const excerpt = text.length > ANNOUNCED_CHARS ? `${text.slice(0, ANNOUNCED_CHARS)}…` : text;
  if (t.status === 'stopped') return { text: l10n.t('Stopped. The partial answer is kept: {0}', excerpt), urgent: false };
  if (t.status === 'done') return { text: excerpt ? l10n.t('Answer finished: {0}', excerpt) : l10n.t('Answer finished.'), urgent: false };
  return undefined;
}

/**
 * Keyboard movement between turns (each turn an article the keyboard can land on, one of them in
 * the Tab order): PageUp / PageDown to the previous or next turn, Home / End to the first or last,
 * Alt+Down or Escape back to the input; Alt+Up from the input to the newest turn.
 */
export class TurnNavigation {
  constructor(
    private readonly thread: HTMLElement,
    private readonly input: HTMLTextAreaElement,
  ) {
    thread.addEventListener('keydown', (e) => this.onThreadKey(e));
    // Only a turn itself becomes the one Tab lands on: a button inside it leaves the order as it is
    // (Shift+Tab then passes the turns' controls, not every turn as well).
    thread.addEventListener('focusin', (e) => {
      const turn = this.turnOf(e.target);
      if (turn && e.target === turn) this.makeCurrent(turn);
    });
    input.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowUp' && e.altKey && !e.ctrlKey && !e.metaKey) {
        const last = this.turns().at(-1);
        if (!last) return;
        e.preventDefault();
        this.focus(last);
      }
    });
  }

  /** Called after the thread changed: the newest turn is the one Tab reaches, unless the person is on one. */
  refresh(): void {
    const turns = this.turns();
    const focused = this.turnOf(document.activeElement);
    const current = focused && turns.includes(focused) ? focused : turns.at(-1);
    turns.forEach((t, i) => {
      t.tabIndex = t === current ? 0 : -1;
      const label = t.classList.contains('user')
        ? l10n.t('Your message, {0} of {1}', i + 1, turns.length)
        : l10n.t('Answer from {0}, {1} of {2}', t.dataset.model ?? '', i + 1, turns.length);
      if (t.getAttribute('aria-label') !== label) t.setAttribute('aria-label', label);
    });
  }

  private turns(): HTMLElement[] {
    return Array.from(this.thread.querySelectorAll<HTMLElement>(':scope > [data-turn]'));
  }

  private turnOf(target: EventTarget | null): HTMLElement | null {
    const el = (target as HTMLElement | null)?.closest?.<HTMLElement>('[data-turn]');
    return el && el.parentElement === this.thread ? el : null;
  }

  private makeCurrent(turn: HTMLElement): void {
    for (const t of this.turns()) t.tabIndex = t === turn ? 0 : -1;
  }

  private focus(turn: HTMLElement): void {
    this.makeCurrent(turn);
    turn.focus();
    turn.scrollIntoView({ block: 'nearest' });
  }

  private onThreadKey(e: KeyboardEvent): void {
    const turn = this.turnOf(e.target);
    if (!turn) return;
    // Keys inside a control (a link, a button, an open card) stay that control's, except moving on.
    const onTurn = e.target === turn;
    const turns = this.turns();
    const i = turns.indexOf(turn);
    let next: HTMLElement | undefined;
    if (e.key === 'PageDown') next = turns[i + 1];
    else if (e.key === 'PageUp') next = turns[i - 1];
    else if (e.key === 'Home' && onTurn) next = turns[0];
    else if (e.key === 'End' && onTurn) next = turns.at(-1);
    else if ((e.key === 'ArrowDown' && e.altKey) || (e.key === 'Escape' && onTurn)) {
      e.preventDefault();
      this.input.focus();
      return;
    } else return;
    e.preventDefault();
    if (next) this.focus(next);
  }
}
