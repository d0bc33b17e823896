import { strict as assert } from 'node:assert';
import { readFileSync, readlinkSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_NICENESS, lowerThisThreadsPriority } from '../../src/search/core/snapshot/threadPriority';

/** A thread's niceness as the kernel reports it (field 19 of /proc/<pid>/task/<tid>/stat). */
function niceness(tid: number): number {
  const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

describe('a search worker thread gives the extension host the cores first (Linux)', () => {
  before(function () {
    // The niceness of one thread is a Linux notion; elsewhere the function declines (tested below).
    if (process.platform !== 'linux') this.skip();
  });

  it('lowers its own thread only: the worker runs at niceness 10, the main thread stays as it was', async () => {
    const mainBefore = niceness(process.pid);
    const source = `
      const { parentPort } = require('node:worker_threads');
      const { readlinkSync } = require('node:fs');
      require('tsx/cjs/api').register();
      const { lowerThisThreadsPriority } = require(${JSON.stringify(require.resolve('../../src/search/core/snapshot/threadPriority'))});
      const lowered = lowerThisThreadsPriority();
      parentPort.postMessage({ lowered, tid: Number(readlinkSync('/proc/thread-self').split('/').pop()) });
      setTimeout(() => {}, 2000);`;
    const worker = new Worker(source, { eval: true });
    try {
      const reply = await new Promise<{ lowered: boolean; tid: number }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      assert.equal(reply.lowered, true);
      assert.notEqual(reply.tid, process.pid);
      assert.equal(niceness(reply.tid), BACKGROUND_NICENESS);
      assert.equal(niceness(process.pid), mainBefore, "the main thread's niceness is unchanged");
    } finally {
      await worker.terminate();
    }
  });

  it('on the main thread it declines and changes nothing (there it would lower the whole process)', () => {
    const before = niceness(process.pid);
    assert.equal(lowerThisThreadsPriority(), false);
    assert.equal(niceness(process.pid), before);
    assert.equal(Number(readlinkSync('/proc/thread-self').split('/').pop()), process.pid);
  });
});
