import { strict as assert } from 'node:assert';
import { commandLineOf, inputsUsed, parseEnvFile, parseServers, resolveVariables } from '../../src/mcp/core/config';
import { definitionOf, qualifiedName, resultText, toParameters } from '../../src/mcp/core/tools';

describe('MCP: configuration (VS Code\'s mcp.json format)', () => {
  it('reads stdio, http and sse servers and promptString inputs; bad entries are named, not fatal', () => {
    const r = parseServers(
      {
        servers: {
          everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { DEBUG: '1', GONE: null } },
          web: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${input:token}' } },
          old: { type: 'sse', url: 'http://127.0.0.1:9000/sse' },
          implicit: { url: 'https://x.example/mcp' },
          broken: { args: ['x'] },
          'bad name!': { command: 'x' },
        },
        inputs: [{ type: 'promptString', id: 'token', description: 'API token', password: true }, { type: 'pickString', id: 'x' }],
      },
      'workspace',
    );
    assert.deepEqual(r.servers.map((s) => [s.name, s.spec.kind]), [['everything', 'stdio'], ['web', 'http'], ['old', 'sse'], ['implicit', 'http']]);
    assert.deepEqual(r.servers[0].spec, { kind: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { DEBUG: '1' } });
    assert.equal(r.inputs.length, 1);
    assert.equal(r.problems.length, 3, r.problems.join('; '));
    assert.match(r.problems.join('; '), /"broken": needs a "command"/);
    assert.deepEqual(parseServers('not an object', 'user').servers, []);
  });

  it('shows the exact command line to confirm, quoting what a shell would split', () => {
    assert.equal(commandLineOf({ kind: 'stdio', command: 'node', args: ['server.js', 'a b', "it's"], env: { TOKEN: 'x y' } }), "TOKEN='x y' node server.js 'a b' 'it'\\''s'");
    assert.equal(commandLineOf({ kind: 'http', url: 'https://h/mcp', headers: {} }), 'HTTP https://h/mcp');
  });

  it('replaces variables; an unanswered input or an unknown variable is an error, not a literal', () => {
    const spec = { kind: 'stdio' as const, command: '${workspaceFolder}/bin/s', args: ['--key=${input:token}', '${env:HOME_X}', '${userHome}'], env: {} };
    assert.deepEqual(inputsUsed(spec), ['token']);
    const v = { workspaceFolder: '/ws', userHome: '/home/u', env: { HOME_X: 'hx' }, inputs: { token: 't0k' } };
    assert.deepEqual(resolveVariables(spec, v), { ...spec, command: '/ws/bin/s', args: ['--key=t0k', 'hx', '/home/u'] });
    assert.throws(() => resolveVariables(spec, { ...v, inputs: {} }), /\$\{input:token\} has no answer yet/);
    assert.throws(() => resolveVariables({ ...spec, command: '${command:evil}' }, v), /not a variable this extension knows/);
  });

  it('reads env files: comments, export, quotes', () => {
    assert.deepEqual(parseEnvFile('# c\nexport A=1\nB="two words"\nC=\'x#y\'\nD=plain # note\nnot a line\n'), { A: '1', B: 'two words', C: 'x#y', D: 'plain' });
  });
});

describe('MCP: tools for both wire formats', () => {
  it('names tools server__tool, valid (^[a-zA-Z0-9_-]{1,64}$) and unique', () => {
    const taken = new Set<string>();
    const a = qualifiedName('my.server', 'get weather', taken);
    taken.add(a);
    assert.equal(a, 'my_server__get_weather');
    const b = qualifiedName('my server', 'get/weather', taken);
    assert.equal(b, 'my_server__get_weather_2');
    const long = qualifiedName('s'.repeat(40), 't'.repeat(40), taken);
    assert.equal(long.length, 64);
    assert.match(long, /^[a-zA-Z0-9_-]{1,64}$/);
    taken.add(long);
    const long2 = qualifiedName('s'.repeat(40), 't'.repeat(41), taken);
    assert.ok(long2 !== long && long2.length <= 64 && /_2$/.test(long2));
  });

  it('makes every input schema an object schema with properties; drops $schema; caps size', () => {
    assert.deepEqual(toParameters(undefined), { type: 'object', properties: {}, required: [] });
    assert.deepEqual(toParameters({ $schema: 'x', type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'ghost'], additionalProperties: false }), {
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
      additionalProperties: false,
    });
    assert.deepEqual(toParameters({ type: 'object', properties: { big: { description: 'x'.repeat(70_000) } } }).properties, {});
    const d = definitionOf('everything', { name: 'echo', description: 'Echoes back' }, 'everything__echo');
    assert.equal(d.description, 'Echoes back (MCP server "everything", tool "echo")');
  });

  it('turns a result into text: text, resource links, embedded resources; images named; long results keep both ends', () => {
    const text = resultText([
      { type: 'text', text: 'hello' },
      { type: 'image', mimeType: 'image/png', data: 'A'.repeat(4096) },
      { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
      { type: 'resource', resource: { uri: 'mem://r', text: 'inside' } },
    ]);
    assert.match(text, /^hello\n\[image image\/png, 3 KB: shown to the person in the tool card, not readable here\]\n\[resource link: a\.txt file:\/\/\/a\.txt\]\n\[resource mem:\/\/r\]\ninside$/);
    assert.equal(resultText([], { sum: 3 }), '{\n  "sum": 3\n}');
    assert.equal(resultText([]), '(the tool returned nothing)');
    const long = resultText([{ type: 'text', text: `START${'x'.repeat(100_000)}END` }]);
    assert.ok(long.startsWith('START') && long.endsWith('END') && long.length < 70_000 && /characters left out/.test(long));
  });
});
