import * as vscode from 'vscode';

export type PromptAnswer = string | boolean | undefined;

/**
 * The questions commands ask the person (secrets, URLs, confirmations). Commands that change
 * where credentials go, reveal them or destroy something take no answers from their callers:
 * any extension can run a command with arguments. The integration tests answer through
 * `answerNext`, reachable only from the testing API (MODEL_GATEWAY_TEST=1).
 */
export class Prompts {
  private readonly queued: PromptAnswer[] = [];

  /** Test-only: the next questions get these answers, in order, instead of a dialog. */
  answerNext(...answers: PromptAnswer[]): void {
    this.queued.push(...answers);
  }

  async input(options: vscode.InputBoxOptions): Promise<string | undefined> {
    if (this.queued.length > 0) {
      const answer = this.queued.shift();
      if (typeof answer !== 'string') return undefined;
      const problem = await options.validateInput?.(answer);
      if (problem) throw new Error(`test answer refused by the input box: ${typeof problem === 'string' ? problem : problem.message}`);
      return answer;
    }
    return vscode.window.showInputBox(options);
  }

  /** A quick pick; a test answers with the label of the item to choose, or true for the first. */
  async pick<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Promise<T | undefined> {
    if (this.queued.length > 0) {
      const answer = this.queued.shift();
      if (answer === true) return items[0];
      return typeof answer === 'string' ? items.find((i) => i.label === answer) : undefined;
    }
    return vscode.window.showQuickPick(items, options);
  }

  /** A quick pick of several items; a test answers with their labels joined by "|" ("" for none). */
  async pickMany<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Promise<readonly T[] | undefined> {
    if (this.queued.length > 0) {
      const answer = this.queued.shift();
      if (typeof answer !== 'string') return undefined;
      const labels = answer ? answer.split('|') : [];
      return items.filter((i) => labels.includes(i.label));
    }
    return vscode.window.showQuickPick(items, { ...options, canPickMany: true });
  }

  /** A modal question with one action; true when the person chose it. */
  async confirm(message: string, detail: string | undefined, action: string, level: 'warning' | 'info' = 'warning'): Promise<boolean> {
    if (this.queued.length > 0) return this.queued.shift() === true;
    const show = level === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    return (await show(message, { modal: true, detail }, action)) === action;
  }

  /** A modal question with several actions; the one chosen, or undefined when dismissed. A test answers with the action's label. */
  async choose<T extends string>(message: string, detail: string | undefined, actions: readonly T[]): Promise<T | undefined> {
    if (this.queued.length > 0) {
      const answer = this.queued.shift();
      return actions.find((a) => a === answer);
    }
    return vscode.window.showWarningMessage(message, { modal: true, detail }, ...actions);
  }

  /** A notification (not modal) with buttons; the one pressed, or undefined when it was closed. A test answers with the button's label. */
  async notify<T extends string>(message: string, actions: readonly T[]): Promise<T | undefined> {
    if (this.queued.length > 0) {
      const answer = this.queued.shift();
      return actions.find((a) => a === answer);
    }
    return vscode.window.showInformationMessage(message, ...actions);
  }

  /** Test-only: answers queued and not yet used. */
  pendingAnswers(): number {
    return this.queued.length;
  }

  /** Test-only: drops answers a command did not ask for (it stopped before the question). */
  discardAnswers(): void {
    this.queued.length = 0;
  }
}
