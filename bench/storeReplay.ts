/**
 * A team store's answers, recorded and replayed over the Postgres wire protocol, for the team bench
 * (`team.ts`): the newcomer's build measured as if the store ran on another machine.
 *
 *  - `record <dir> <postgres url>`: a proxy in front of the store; for each connection it keeps
 *    the bytes the server sent after each message of the client (the client waits for each answer
 *    before its next statement), written to `<dir>` when the client closes.
 *  - `replay <dir>`: answers connection i's messages with recording i's bytes, each message
 *    checked against the one recorded (its MD5 and length); a client that says anything else is
 *    disconnected, so a replay can only answer the same build.
 *
 * What it shares with a real store elsewhere: every byte the client reads (PostgreSQL's own
 * answers, `COPY` in binary included) and all of the client's work on them. What it leaves out:
 * the database's work and the network's latency; this process only writes bytes to a socket.
 * Prints "listening on postgres://…"; stops on SIGTERM.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';

/** Cuts the client's bytes into its messages: the first (start-up) has no type byte. */
function messages(onMessage: (m: Buffer) => void): (d: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  let startup = true;
  return (d) => {
    pending = pending.length ? Buffer.concat([pending, d]) : d;
    for (;;) {
      const head = startup ? 0 : 1;
      if (pending.length < head + 4) return;
      const length = pending.readInt32BE(head) + head;
      if (pending.length < length) return;
      onMessage(pending.subarray(0, length));
      pending = pending.subarray(length);
      startup = false;
    }
  };
}

const signature = (m: Buffer) => `${createHash('md5').update(m).digest('hex')}:${m.length}`;
const indexFile = (dir: string, id: number) => join(dir, `connection-${id}.json`);
const bytesFile = (dir: string, id: number) => join(dir, `connection-${id}.bin`);

interface Step {
  message: string;
  bytes: number;
}

function recorder(dir: string, target: URL) {
  let next = 0;
  return (client: Socket) => {
    const id = next++;
    const server = connect(Number(target.port || 5432), target.hostname);
    const steps: { message: string; answer: Buffer[] }[] = [];
    client.on(
      'data',
      messages((m) => {
        steps.push({ message: signature(m), answer: [] });
        server.write(m);
      }),
    );
    server.on('data', (d: Buffer) => {
      steps.at(-1)?.answer.push(d);
      client.write(d);
    });
    client.on('close', () => {
      const answers = steps.map((s) => Buffer.concat(s.answer));
      writeFileSync(bytesFile(dir, id), Buffer.concat(answers));
      writeFileSync(indexFile(dir, id), JSON.stringify(steps.map((s, i): Step => ({ message: s.message, bytes: answers[i].length }))));
      server.end();
    });
    server.on('close', () => client.end());
    for (const s of [client, server]) s.on('error', () => client.destroy());
  };
}

function replayer(dir: string) {
  let next = 0;
  return (client: Socket) => {
    const id = next++;
    if (!existsSync(indexFile(dir, id))) return client.destroy();
    const steps = JSON.parse(readFileSync(indexFile(dir, id), 'utf8')) as Step[];
    const bytes = readFileSync(bytesFile(dir, id));
    let at = 0;
    let k = 0;
    client.on(
      'data',
      messages((m) => {
        const step = steps[k++];
        if (!step || step.message !== signature(m)) {
          process.stderr.write(`store replay: connection ${id}, message ${k - 1} is not the one recorded\n`);
          client.destroy();
          return;
        }
        if (step.bytes) client.write(bytes.subarray(at, at + step.bytes));
        at += step.bytes;
      }),
    );
    client.on('error', () => client.destroy());
  };
}

if (require.main === module) {
  const [mode, dir, target] = process.argv.slice(2);
  const server = createServer(mode === 'record' ? recorder(dir, new URL(target)) : replayer(dir));
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`store ${mode} listening on postgres://postgres@127.0.0.1:${port}/postgres\n`);
  });
  process.on('SIGTERM', () => {
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 1000).unref();
  });
}
