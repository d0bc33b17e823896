// `node scripts/render-icon.mjs`: renders media/icon.svg to media/icon.png (128×128, what the
// Marketplace and Open VSX show; they take no SVG icon) with the test machine's Chromium.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const root = join(import.meta.dirname, '..');
const svg = readFileSync(join(root, 'media', 'icon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 }, deviceScaleFactor: 1 });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  writeFileSync(join(root, 'media', 'icon.png'), await page.locator('svg').screenshot({ omitBackground: true }));
} finally {
  await browser.close();
}
