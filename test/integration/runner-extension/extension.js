// Test-only extension: runs the integration suite inside the real extension host and writes the
// results where the launcher waits for them. config.json is written by the launcher.
const fs = require('fs');
const path = require('path');

exports.activate = async function activate() {
  const config = JSON.parse(fs.readFileSync(path.join(__dirname, 'config.json'), 'utf8'));
  globalThis.__modelGatewayTestConfig = config;
  // The API as VS Code gives it to this extension: requests through it are named as coming from
  // "model-gateway-tests.integration-runner" (the suite's bundle lives outside any extension
  // folder, so VS Code names its requests "nullExtensionDescription").
  const vscode = require('vscode');
  globalThis.__modelGatewayRunnerVscode = vscode;
  // A tool of another extension, for the test that our chat offers and calls such tools.
  if (vscode.lm && typeof vscode.lm.registerTool === 'function') {
    vscode.lm.registerTool('integration_weather', {
      invoke: async (options) =>
        new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(`Sunny in ${options.input.city}, 21 °C (from the other extension)`)]),
    });
  }
  let results;
  try {
    const suite = require(config.suiteIndex);
    results = await suite.run();
  } catch (err) {
    results = { passed: 0, failed: 1, tests: [{ title: 'integration runner', state: 'failed', error: String((err && err.stack) || err) }] };
  }
  fs.writeFileSync(config.resultsFile + '.tmp', JSON.stringify(results, null, 2));
  fs.renameSync(config.resultsFile + '.tmp', config.resultsFile);
};

exports.deactivate = function deactivate() {};
