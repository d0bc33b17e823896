import { strict as assert } from 'node:assert';
import { commandLineOf, inputsUsed, parseEnvFile, parseServers, resolveVariables } from '../../src/mcp/core/config';
import { definitionOf, qualifiedName, resultImages, resultText, templateArguments, toParameters } from '../../src/mcp/core/tools';
import {
  chooseModel,
  describeRequest,
  inputTokens,
  SamplingRefusal,
  stopReasonOf,
  toChatRequest,
  worstCaseDollars,
  type SamplingParams,
} from '../../src/mcp/core/sampling';
import { asksForSecret, defaultText, fieldsOf, formSummary, problemWith, valueOf } from '../../src/mcp/core/elicitation';
import { AjvJsonSchemaValidator } from '../../src/mcp/core/jsonSchemaValidator';

describe("MCP: configuration (VS Code's mcp.json format)", () => {
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
        inputs: [
          { type: 'promptString', id: 'token', description: 'API token', password: true },
          { type: 'pickString', id: 'x' },
        ],
      },
      'workspace',
    );
    assert.deepEqual(
      r.servers.map((s) => [s.name, s.spec.kind]),
      [
        ['everything', 'stdio'],
        ['web', 'http'],
        ['old', 'sse'],
        ['implicit', 'http'],
      ],
    );
    assert.deepEqual(r.servers[0].spec, { kind: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { DEBUG: '1' } });
    assert.equal(r.inputs.length, 1);
    assert.equal(r.problems.length, 3, r.problems.join('; '));
    assert.match(r.problems.join('; '), /"broken": needs a "command"/);
    assert.deepEqual(parseServers('not an object', 'user').servers, []);
  });

  it('shows the exact command line to confirm, quoting what a shell would split', () => {
    assert.equal(
      commandLineOf({ kind: 'stdio', command: 'node', args: ['server.js', 'a b', "it's"], env: { TOKEN: 'x y' } }),
      "TOKEN='x y' node server.js 'a b' 'it'\\''s'",
    );
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
    assert.deepEqual(
      toParameters({ $schema: 'x', type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'ghost'], additionalProperties: false }),
      {
        type: 'object',
        properties: { a: { type: 'string' } },
        required: ['a'],
        additionalProperties: false,
      },
    );
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
    assert.match(
      text,
      /^hello\n\[image image\/png, 3 KB: not readable here \(the data is not a PNG, JPEG or WEBP image[^\n]*\)\]\n\[resource link: a\.txt file:\/\/\/a\.txt\]\n\[resource mem:\/\/r\]\ninside$/,
    );
    assert.equal(resultText([], { sum: 3 }), '{\n  "sum": 3\n}');
    assert.equal(resultText([]), '(the tool returned nothing)');
    const long = resultText([{ type: 'text', text: `START${'x'.repeat(100_000)}END` }]);
    assert.ok(long.startsWith('START') && long.endsWith('END') && long.length < 70_000 && /characters left out/.test(long));
  });
});

describe('MCP: image results', () => {
  // A 1×1 PNG (the everything server's get-tiny-image returns one like it).
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString('base64');
  it('keeps readable images (PNG, JPEG, WEBP whose bytes match), at most four; the text says which went where', () => {
    const parts = [
      { type: 'text', text: 'Here:' },
      ...Array.from({ length: 5 }, () => ({ type: 'image', mimeType: 'image/png', data: png })),
      { type: 'image', mimeType: 'image/gif', data: 'R0lGODlhAQABAAAAACw=' },
      { type: 'image', mimeType: 'image/jpeg', data: png },
    ];
    const images = resultImages(parts);
    assert.equal(images.length, 4);
    assert.deepEqual(
      images.map((i) => [i.name, i.mediaType]),
      [
        ['image-1', 'image/png'],
        ['image-2', 'image/png'],
        ['image-3', 'image/png'],
        ['image-4', 'image/png'],
      ],
    );
    const text = resultText(parts);
    assert.equal(text.match(/given to a model that reads images/g)?.length, 4);
    assert.match(text, /\[image image\/png, 0 KB: not readable here \(too many images\)\]/);
    assert.match(text, /\[image image\/gif, 0 KB: not readable here \(.*GIF|gif.*\)\]/i);
    assert.match(text, /\[image image\/jpeg, 0 KB: not readable here \(.+\)\]/, 'bytes that are not what the type says');
  });
});

const PNG_1PX = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString('base64');

describe("MCP: sampling (a server asks the person's model)", () => {
  const params = (o: Partial<SamplingParams> = {}): SamplingParams => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
    maxTokens: 100,
    ...o,
  });
  const listed = ['claude-3-5-sonnet-20241022', 'claude-3-5-haiku-20241022', 'gpt-4o', 'gpt-4o-mini'];

  it('takes the first hint a listed model matches (exact, else the shortest that contains it), else the chat model', () => {
    assert.equal(chooseModel({ hints: [{ name: 'gpt-4o-mini' }] }, listed, 'gpt-4o')?.model, 'gpt-4o-mini');
    assert.equal(chooseModel({ hints: [{ name: 'gpt-4o' }] }, listed, undefined)?.model, 'gpt-4o', 'an exact id wins over longer ones that contain it');
    assert.equal(
      chooseModel({ hints: [{ name: 'gemini' }, { name: 'haiku' }] }, listed, 'gpt-4o')?.model,
      'claude-3-5-haiku-20241022',
      'a hint nobody matches is passed over',
    );
    const none = chooseModel({ hints: [{ name: 'gemini' }] }, listed, 'gpt-4o');
    assert.equal(none?.model, 'gpt-4o');
    assert.match(none.why, /no model of the gateway matches the server's hints \(gemini\)/);
    assert.equal(chooseModel(undefined, listed, 'not-listed')?.model, 'claude-3-5-sonnet-20241022', 'a chat model the gateway no longer lists is not used');
    assert.equal(chooseModel(undefined, [], 'gpt-4o')?.model, 'gpt-4o', 'an unreadable list keeps the chat model');
    assert.equal(chooseModel(undefined, [], undefined), undefined);
  });

  it('becomes a chat completion: system prompt, text and images, the limits; refuses what a chat model cannot take', () => {
    const r = toChatRequest(
      params({
        systemPrompt: 'Be brief.',
        temperature: 3,
        stopSequences: ['a', 'b', 'c', 'd', 'e'],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', data: PNG_1PX, mimeType: 'image/png' },
            ],
          },
          { role: 'assistant', content: { type: 'text', text: 'A dot.' } },
          { role: 'user', content: { type: 'text', text: 'Sure?' } },
        ],
      }),
      'gpt-4o',
    );
    assert.deepEqual(r.messages, [
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1PX}` } },
        ],
      },
      { role: 'assistant', content: 'A dot.' },
      { role: 'user', content: 'Sure?' },
    ]);
    assert.equal(r.max_tokens, 100);
    assert.equal(r.temperature, 2, 'clamped to what the gateway takes');
    assert.deepEqual(r.stop, ['a', 'b', 'c', 'd'], 'at most four stop sequences');
    assert.throws(
      () => toChatRequest(params({ messages: [{ role: 'user', content: { type: 'audio', data: 'x', mimeType: 'audio/wav' } }] }), 'm'),
      (e: Error) => e instanceof SamplingRefusal && /audio content/.test(e.message),
    );
    assert.throws(
      () => toChatRequest(params({ messages: [{ role: 'user', content: { type: 'image', data: 'x', mimeType: 'image/tiff' } }] }), 'm'),
      /an image of the request: /,
    );
    assert.throws(() => toChatRequest(params({ tools: [{ name: 't' }] }), 'm'), /sampling with tools/);
    assert.throws(() => toChatRequest(params({ maxTokens: 0 }), 'm'), /maxTokens/);
  });

  it('costs at most its input and every token it may answer with; unknown prices count high', () => {
    const priced = worstCaseDollars(params({ maxTokens: 1000 }), (u) => (u.input * 1 + u.output * 2) / 1e6);
    assert.equal(priced.priced, true);
    assert.ok(priced.dollars > 2000 / 1e6 && priced.dollars < 2100 / 1e6, String(priced.dollars));
    const unknown = worstCaseDollars(params({ maxTokens: 1000 }), () => undefined);
    assert.equal(unknown.priced, false);
    assert.ok(unknown.dollars >= 0.03, 'the fallback price is deliberately high');
    assert.ok(
      inputTokens(params({ messages: [{ role: 'user', content: { type: 'image', data: 'x', mimeType: 'image/png' } }] })) >= 1000,
      'an image counts as a picture, not its bytes',
    );
  });

  it('is shown to the person with every speaker, clipped, and its limits; the stop reason maps back', () => {
    const shown = describeRequest(
      params({ systemPrompt: 'You are a test server.', temperature: 0.7, messages: [{ role: 'user', content: { type: 'text', text: 'x'.repeat(2000) } }] }),
    );
    assert.match(shown, /^System: You are a test server\.\n\nUser: x{1200}… \(800 more characters\)\n\n\(at most 100 tokens, temperature 0\.7\)$/);
    assert.equal(stopReasonOf('length'), 'maxTokens');
    assert.equal(stopReasonOf('stop'), 'endTurn');
    assert.equal(stopReasonOf('content_filter'), 'content_filter');
  });
});

describe('MCP: elicitation forms', () => {
  // The everything server's form (trimmed): every kind of field MCP allows.
  const schema = {
    type: 'object',
    properties: {
      name: { title: 'String', type: 'string', description: 'Your full, legal name' },
      check: { type: 'boolean', default: false },
      email: { type: 'string', format: 'email' },
      birthdate: { type: 'string', format: 'date' },
      integer: { title: 'Integer', type: 'integer', minimum: 1, maximum: 100, default: 42 },
      pet: { type: 'string', enum: ['pet-1', 'pet-2'], enumNames: ['Cats', 'Dogs'], default: 'pet-1' },
      hero: {
        type: 'string',
        oneOf: [
          { const: 'hero-1', title: 'Superman' },
          { const: 'hero-2', title: 'Wonder Woman' },
        ],
      },
      fish: {
        type: 'array',
        minItems: 1,
        maxItems: 2,
        items: {
          anyOf: [
            { const: 'fish-1', title: 'Tuna' },
            { const: 'fish-2', title: 'Salmon' },
          ],
        },
        default: ['fish-1'],
      },
      tools: { type: 'array', items: { type: 'string', enum: ['Guitar', 'Piano'] } },
    },
    required: ['name'],
  };

  it('reads each field of the flat schema, titled options and defaults included', () => {
    const fields = fieldsOf(schema);
    assert.deepEqual(
      fields.map((f) => [f.key, f.kind, f.label, f.required]),
      [
        ['name', 'text', 'String', true],
        ['check', 'boolean', 'check', false],
        ['email', 'text', 'email', false],
        ['birthdate', 'text', 'birthdate', false],
        ['integer', 'number', 'Integer', false],
        ['pet', 'choice', 'pet', false],
        ['hero', 'choice', 'hero', false],
        ['fish', 'choices', 'fish', false],
        ['tools', 'choices', 'tools', false],
      ],
    );
    const pet = fields.find((f) => f.key === 'pet');
    assert.deepEqual(pet?.kind === 'choice' && pet.options, [
      { value: 'pet-1', label: 'Cats' },
      { value: 'pet-2', label: 'Dogs' },
    ]);
    const fish = fields.find((f) => f.key === 'fish');
    assert.deepEqual(fish?.kind === 'choices' && [fish.options.map((o) => o.label), fish.default, fish.maxItems], [['Tuna', 'Salmon'], ['fish-1'], 2]);
    assert.equal(defaultText(fields.find((f) => f.key === 'integer')!), '42');
    assert.match(formSummary(fields), /^String \(required\), check, email/);
    assert.throws(() => fieldsOf({ properties: { deep: { type: 'object' } } }), /type object, which a form cannot ask for/);
    assert.throws(() => fieldsOf({ nothing: true }), /not a flat object/);
  });

  it('checks each answer against its field and converts it; empty optional answers are left out', () => {
    const f = Object.fromEntries(fieldsOf(schema).map((x) => [x.key, x]));
    assert.equal(problemWith(f.name, '  '), 'String is required');
    assert.equal(problemWith(f.email, ''), undefined);
    assert.match(problemWith(f.email, 'nobody')!, /email address/);
    assert.equal(problemWith(f.email, 'a@example.com'), undefined);
    assert.match(problemWith(f.birthdate, '12/31/1990')!, /YYYY-MM-DD/);
    assert.match(problemWith(f.integer, '4.5')!, /whole number/);
    assert.match(problemWith(f.integer, '101')!, /at most 100/);
    assert.equal(valueOf(f.integer, ' 7 '), 7);
    assert.equal(valueOf(f.email, ' '), undefined);
  });

  it('notices a field that asks for a secret', () => {
    const [password, apiKey, name] = fieldsOf({
      properties: {
        pw: { type: 'string', title: 'Password' },
        k: { type: 'string', description: 'Your OpenAI API key' },
        n: { type: 'string', title: 'Name' },
      },
    });
    assert.equal(asksForSecret(password), true);
    assert.equal(asksForSecret(apiKey), true);
    assert.equal(asksForSecret(name), false);
  });
});

describe("MCP: the SDK's JSON Schema validator on zod (in ajv's place in the bundle)", () => {
  it('accepts structured content that matches a tool output schema and refuses what does not, saying why', () => {
    // The everything server's get-structured-content output schema.
    const schema = {
      type: 'object',
      properties: { temperature: { type: 'number' }, conditions: { type: 'string' }, humidity: { type: 'number' } },
      required: ['temperature', 'conditions', 'humidity'],
    };
    const validate = new AjvJsonSchemaValidator().getValidator<{ temperature: number }>(schema);
    const ok = validate({ temperature: 22.5, conditions: 'Partly cloudy', humidity: 65 });
    assert.equal(ok.valid, true);
    const bad = validate({ temperature: 'warm', conditions: 'Sunny' });
    assert.equal(bad.valid, false);
    assert.match(bad.errorMessage ?? '', /temperature|humidity/);
  });

  it('a schema zod cannot read is not held against the server', () => {
    const validate = new AjvJsonSchemaValidator().getValidator({ $ref: 'https://example.com/elsewhere.json' });
    assert.equal(validate({ anything: 1 }).valid, true);
  });
});

describe('MCP: resource templates', () => {
  it('names the arguments of a URI template in order, once each, without modifiers', () => {
    assert.deepEqual(templateArguments('demo://resource/dynamic/text/{resourceId}'), ['resourceId']);
    assert.deepEqual(templateArguments('repo://{owner}/{repo}/blob{/path*}{?ref,lines:3}{&ref}'), ['owner', 'repo', 'path', 'ref', 'lines']);
    assert.deepEqual(templateArguments('file:///plain.txt'), []);
  });
});
