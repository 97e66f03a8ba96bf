// Steps on the VS Code page that the end-to-end driver (vscode_e2e.js) and the latency benchmark
// (bench/vscode_latency.js) both take. Each waits at most `wait` ms for what it needs.

/** Quick Open (Ctrl+P) the workspace file `name`, and wait until its editor shows its lines. */
async function openFile(page, name, wait) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: wait });
  await input.fill(name);
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first();
  await row.waitFor({ timeout: wait });
  await row.click();
  await page.locator('.tabs-container .tab.active', { hasText: name }).waitFor({ timeout: wait });
  await page.locator('.editor-instance .monaco-editor .view-lines').first().waitFor({ timeout: wait });
}

/** Put the cursor at 1-based `line` and `column` with Go to Line (Ctrl+G). */
async function goTo(page, line, column, wait) {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: wait });
  await input.fill(`:${line}:${column}`);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: wait });
}

module.exports = { openFile, goTo };
