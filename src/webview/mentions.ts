/**
 * `@` and `#` mentions in the input: typing either at a word start opens a list of workspace
 * files (fuzzy, from the host); arrows move, Enter or Tab picks, Escape closes. The pick puts
 * `@path` in the text and attaches the file as context.
 */
import * as l10n from '@vscode/l10n';
import type { FileItem } from '../common/chatProtocol';
import { h, icon } from './dom';
import { mentionAt } from './reducer';

export interface MentionHost {
  /** Asks the host for files (and MCP resources) matching the query, or MCP prompts after `/`; resolves with them (best first). */
  find(query: string, trigger: '@' | '/'): Promise<FileItem[]>;
  /** The person picked a file or resource (`@`), or a prompt (`/`). */
  picked(item: FileItem, trigger: '@' | '/'): void;
}

export class MentionPicker {
  readonly el = h('div', { id: 'mentions', class: 'mentions', role: 'listbox', 'aria-label': l10n.t('Workspace files'), hidden: true });
  private items: FileItem[] = [];
  private selected = 0;
  private active: { start: number; query: string; trigger: '@' | '/' } | undefined;
  private asked = 0;
  private timer = 0;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly host: MentionHost,
  ) {
    input.addEventListener('input', () => this.update());
    input.addEventListener('click', () => this.update());
    // Closed when the focus leaves the input (after a click in the list has landed), not when it came back meanwhile.
    input.addEventListener('blur', () =>
      setTimeout(() => {
        if (document.activeElement !== input) this.close();
      }, 150),
    );
    // Registered before the composer's own keys: while the list is open, its keys win.
    input.addEventListener('keydown', (e) => this.key(e), { capture: true });
    this.el.addEventListener('mousedown', (e) => {
      const row = (e.target as HTMLElement).closest<HTMLElement>('[data-index]');
      if (!row) return;
      e.preventDefault();
      this.pick(Number(row.dataset.index));
    });
  }

  get isOpen(): boolean {
    return !this.el.hidden;
  }

  private update(): void {
    this.active = mentionAt(this.input.value, this.input.selectionStart ?? this.input.value.length);
    if (!this.active) return this.close();
    const query = this.active.query;
    const ask = ++this.asked;
    clearTimeout(this.timer);
    this.timer = window.setTimeout(() => {
      void this.host.find(query, this.active!.trigger).then((items) => {
        if (ask !== this.asked || !this.active) return;
        this.items = items;
        this.selected = 0;
        this.render();
      });
    }, 60);
  }

  private render(): void {
    this.el.hidden = false;
    if (this.items.length === 0) {
      const prompts = this.active?.trigger === '/';
      const empty = prompts
        ? this.active?.query
          ? l10n.t('No MCP prompt matches “{0}”', this.active.query)
          : l10n.t('No MCP server with prompts is running')
        : this.active?.query
          ? l10n.t('No workspace file matches “{0}”', this.active.query)
          : l10n.t('No files in the workspace');
      this.el.replaceChildren(h('div', { class: 'mention-empty', text: empty }));
      return;
    }
    this.el.replaceChildren(
      ...this.items.map((item, i) => {
        const dir = item.path.slice(0, item.path.length - item.name.length).replace(/\/$/, '');
        return h(
          'div',
          {
            class: `mention${i === this.selected ? ' selected' : ''}`,
            role: 'option',
            'aria-selected': String(i === this.selected),
            'data-index': String(i),
            title: item.path,
          },
          icon(this.active?.trigger === '/' ? 'comment-discussion' : item.path.startsWith('mcp:') ? 'plug' : 'file'),
          ' ',
          h('span', { class: 'mention-name', text: item.name }),
          dir ? h('span', { class: 'mention-dir', text: ` ${dir}` }) : undefined,
        );
      }),
    );
    this.el.querySelector('.selected')?.scrollIntoView({ block: 'nearest' });
  }

  private key(e: KeyboardEvent): void {
    if (!this.isOpen) return;
    const stop = () => {
      e.preventDefault();
      e.stopImmediatePropagation();
    };
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      stop();
      if (this.items.length === 0) return;
      this.selected = (this.selected + (e.key === 'ArrowDown' ? 1 : this.items.length - 1)) % this.items.length;
      this.render();
    } else if ((e.key === 'Enter' || e.key === 'Tab') && this.items.length > 0) {
      stop();
      this.pick(this.selected);
    } else if (e.key === 'Escape') {
      stop();
      this.close();
    }
  }

  private pick(index: number): void {
    const item = this.items[index];
    const at = this.active;
    if (!item || !at) return;
    const text = this.input.value;
    const end = at.start + 1 + at.query.length;
    // A prompt's `/name` goes (its text comes from the host); a file or resource stays named in the question.
    const inserted = at.trigger === '/' ? '' : item.path.startsWith('mcp:') ? `@${item.name} ` : `@${item.path} `;
    this.input.value = text.slice(0, at.start) + inserted + text.slice(end);
    const cursor = at.start + inserted.length;
    this.input.setSelectionRange(cursor, cursor);
    this.input.dispatchEvent(new Event('input'));
    this.close();
    this.host.picked(item, at.trigger);
  }

  close(): void {
    this.active = undefined;
    this.asked++;
    this.el.hidden = true;
  }
}
