import { strict as assert } from 'node:assert';
import type * as vscode from 'vscode';
import { counted, listenerCounts } from '../../src/shell/listeners';

/** The smallest event there is: the listeners in a set, each subscription removing its own. */
function plainEvent<T>(): { event: vscode.Event<T>; fire: (value: T) => void; size: () => number } {
  const listeners = new Set<(value: T) => unknown>();
  const event: vscode.Event<T> = (listener, thisArgs) => {
    const bound = (value: T): void => void listener.call(thisArgs, value);
    listeners.add(bound);
    return { dispose: () => listeners.delete(bound) };
  };
  return { event, fire: (value) => listeners.forEach((l) => l(value)), size: () => listeners.size };
}

describe('listeners counted on our events', () => {
  it('counts each subscription until it is disposed, once, and still delivers the events', () => {
    const source = plainEvent<number>();
    const onChange = counted('test.onChange', source.event);
    const seen: number[] = [];
    const a = onChange((n) => seen.push(n));
    const b = onChange((n) => seen.push(n * 10));
    assert.equal(listenerCounts()['test.onChange'], 2);
    source.fire(1);
    assert.deepEqual(seen, [1, 10]);
    a.dispose();
    a.dispose();
    assert.equal(listenerCounts()['test.onChange'], 1, 'a second dispose does not count twice');
    assert.equal(source.size(), 1, 'the subscription underneath is gone too');
    b.dispose();
    assert.equal(listenerCounts()['test.onChange'], undefined, 'an event without listeners is left out');
  });

  it('a subscription handed a disposables list is counted off when that list is disposed', () => {
    const source = plainEvent<void>();
    const onChange = counted('test.withList', source.event);
    const list: vscode.Disposable[] = [];
    onChange(() => {}, undefined, list);
    assert.equal(list.length, 1);
    assert.equal(listenerCounts()['test.withList'], 1);
    for (const d of list) d.dispose();
    assert.equal(listenerCounts()['test.withList'], undefined);
    assert.equal(source.size(), 0);
  });

  it('a listener never disposed stays counted: the leak the soak looks for', () => {
    const source = plainEvent<void>();
    const onChange = counted('test.leak', source.event);
    for (let i = 0; i < 3; i++) onChange(() => {});
    assert.equal(listenerCounts()['test.leak'], 3);
  });
});
