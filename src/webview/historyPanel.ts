import * as l10n from '@vscode/l10n';
import type { ViewState } from '../common/chatProtocol';
import { formatDateTime } from '../common/locale';
import { button, h } from './dom';
import { request } from './hostLink';
import { showNotice } from './notice';

// The list of saved conversations: open, rename and delete (twice clicked), opened from the bar.

export const historyButton = button(
  '',
  { id: 'history', 'aria-label': l10n.t('Conversations'), title: l10n.t('Conversations'), 'aria-expanded': 'false' },
  'history',
);
export const historyPanel = h('div', { id: 'history-panel', class: 'history', role: 'dialog', 'aria-label': l10n.t('Conversations'), hidden: true });

/** The view's latest state, the list's source. */
let state: ViewState | undefined;

/** Draws the list from the view's state (again after a rename or a delete). */
export function renderHistory(s: ViewState | undefined): void {
  state = s;
  drawHistory();
}

function drawHistory(): void {
  const list = state?.conversations ?? [];
  historyPanel.replaceChildren(
    h('div', { class: 'history-title', text: list.length ? l10n.t('Conversations') : l10n.t('No saved conversations yet') }),
    ...list.map((c) => {
      const row = h('div', { class: `history-row${c.id === state?.conversation?.id ? ' current' : ''}`, 'data-id': c.id });
      row.append(
        button(c.title, { class: 'history-open', 'data-open': c.id, title: formatDateTime(c.updatedAt) }),
        button('', { 'data-rename': c.id, 'aria-label': l10n.t('Rename {0}', c.title), title: l10n.t('Rename') }, 'edit'),
        button('', { 'data-delete': c.id, 'aria-label': l10n.t('Delete {0}', c.title), title: l10n.t('Delete') }, 'trash'),
      );
      return row;
    }),
  );
}

/** Closes the conversation list; the keyboard goes back to the button that opened it. */
export function closeHistory(): void {
  const hadFocus = historyPanel.contains(document.activeElement);
  historyPanel.hidden = true;
  historyButton.setAttribute('aria-expanded', 'false');
  if (hadFocus) historyButton.focus();
}

/** Opens and closes the list on its button, and acts on its rows; `input` gets the keyboard once a conversation is opened. */
export function listenHistory(input: HTMLTextAreaElement): void {
  historyButton.addEventListener('click', () => {
    if (!historyPanel.hidden) return closeHistory();
    historyPanel.hidden = false;
    historyButton.setAttribute('aria-expanded', 'true');
    historyPanel.querySelector<HTMLButtonElement>('button')?.focus();
  });

  historyPanel.addEventListener('click', (e) => {
    const b = (e.target as HTMLElement).closest('button');
    if (!b) return;
    if (b.dataset.open) {
      closeHistory();
      // The conversation opened: the keyboard is where the next question is typed.
      input.focus();
      void request({ type: 'open-conversation', id: b.dataset.open }).then((r) => {
        if (!r.ok) showNotice(r.message ?? l10n.t('That conversation could not be opened.'));
      });
    } else if (b.dataset.delete) {
      if (b.dataset.confirm === 'true') {
        b.disabled = true;
        void request({ type: 'delete-conversation', id: b.dataset.delete }).then((r) => {
          if (!r.ok) showNotice(r.message ?? l10n.t('The conversation could not be deleted.'));
          drawHistory();
        });
      } else {
        b.dataset.confirm = 'true';
        b.classList.add('danger');
        b.title = l10n.t('Click again to delete');
        b.setAttribute('aria-label', l10n.t('Click again to delete'));
        setTimeout(() => {
          b.dataset.confirm = '';
          b.classList.remove('danger');
        }, 3000);
      }
    } else if (b.dataset.rename) {
      const row = b.closest('.history-row')!;
      const current = row.querySelector('.history-open')?.textContent ?? '';
      const field = h('input', { type: 'text', value: current, 'aria-label': l10n.t('New title'), class: 'rename' });
      row.replaceChildren(field);
      field.focus();
      field.select();
      let finished = false;
      const done = (save: boolean) => {
        if (finished) return;
        finished = true;
        if (save && field.value.trim() && field.value.trim() !== current) {
          field.disabled = true;
          void request({ type: 'rename-conversation', id: b.dataset.rename!, title: field.value.trim().slice(0, 200) }).then((r) => {
            if (!r.ok) showNotice(r.message ?? l10n.t('The conversation could not be renamed.'));
            drawHistory();
          });
        } else drawHistory();
      };
      field.addEventListener('keydown', (k) => {
        if (k.key === 'Enter') done(true);
        if (k.key === 'Escape') done(false);
      });
      field.addEventListener('blur', () => done(true));
    }
  });
}
