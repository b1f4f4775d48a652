// Drives the query page in headless Chromium as a user would, and prints what it saw as
// one JSON object for the Rust test (crates/quiver-cli/tests/query_page.rs) to check:
//
//   node web/test/page.mjs BASE_URL
//
// with CHROMIUM naming the browser. It types a query into the editor and runs it (rows of
// the results table), opens the Explain tab (its text), runs a malformed query (the error
// shown), asks the editor for completions (prefix and class), with UPDATE_TOKEN set runs the
// update UPDATE with that token and then the query UPDATE_CHECK, and records every request
// the page made (URLs outside BASE_URL are a failure the test reports).
import { chromium } from "playwright-core";

const base = new URL(process.argv[2]);
const executablePath = process.env.CHROMIUM;
if (!executablePath) {
  console.error("CHROMIUM must name a Chromium binary");
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const report = { requests: [], console: [] };
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(20000);
  page.on("request", (request) => report.requests.push(request.url()));
  page.on("console", (message) => {
    // The browser logs each 4xx response (the malformed query's) as an error: not the page's.
    const text = message.text();
    if (message.type() === "error" && !text.startsWith("Failed to load resource")) report.console.push(text);
  });
  page.on("pageerror", (error) => report.console.push(String(error)));

  await page.goto(base.href);
  await page.waitForSelector("body[data-state=ready]");
  report.title = await page.title();
  report.store = await page.textContent("#store");
  report.examples = await page.$$eval("#examples option", (options) => options.map((o) => o.textContent));

  // Replaces the editor's text by typing, as a user would.
  async function type(text) {
    await page.click(".CodeMirror");
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Delete");
    await page.keyboard.type(text);
    await page.keyboard.press("Escape"); // closes a completion list, if one opened
  }
  async function run() {
    await page.evaluate(() => (document.body.dataset.state = "typed"));
    await page.click(".yasqe_queryButton");
    await page.waitForSelector("body[data-state=done], body[data-state=error]");
    return page.evaluate(() => document.body.dataset.state);
  }

  // A query typed and run: the rows of the results table.
  await type(process.env.QUERY);
  report.state = await run();
  await page.waitForSelector(".yasr table tbody tr");
  report.header = await page.$$eval(".yasr table thead th", (cells) => cells.map((c) => c.textContent.trim()));
  report.rows = await page.$$eval(".yasr table tbody tr", (rows) =>
    rows.map((row) => [...row.querySelectorAll("td")].map((cell) => cell.textContent.trim())),
  );
  report.summary = await page.textContent("#summary");

  // The Explain tab of the same results.
  await page.click(".yasr .select_explain");
  await page.waitForFunction(() => {
    const pre = document.querySelector(".quiver-explain");
    return pre && pre.textContent !== "explaining…";
  });
  report.explain = await page.textContent(".quiver-explain");

  // A malformed query: the server's message, with its line and column.
  await type("SELECT ?x WHERE {\n  ?x ?p \n");
  report.error_state = await run();
  report.error_summary = await page.textContent("#summary");
  report.error_shown = await page.$eval(".yasr", (yasr) => yasr.textContent);

  // Completion of a prefix declaration: the store's own prefixes are offered.
  await page.click(".CodeMirror");
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await page.keyboard.type("PREFIX ");
  await page.keyboard.press("Control+Space");
  await page.waitForSelector(".CodeMirror-hints li");
  report.prefix_hints = await page.$$eval(".CodeMirror-hints li", (items) => items.map((i) => i.textContent));
  await page.keyboard.press("Escape");

  // Completion of a class after `a`: the store's own classes.
  await type(process.env.CLASS_PREFIX);
  await page.keyboard.press("End");
  await page.keyboard.press("Control+Space");
  await page.waitForSelector(".CodeMirror-hints li");
  report.class_hints = await page.$$eval(".CodeMirror-hints li", (items) => items.map((i) => i.textContent));

  // On a writable server: an update typed with the token, then a query that sees it.
  if (process.env.UPDATE_TOKEN) {
    report.token_box = await page.isVisible("#token");
    await page.fill("#token", process.env.UPDATE_TOKEN);
    await page.dispatchEvent("#token", "change");
    await type(process.env.UPDATE);
    report.update_state = await run();
    report.update_summary = await page.textContent("#summary");
    await type(process.env.UPDATE_CHECK);
    report.check_state = await run();
    // The update's answer was shown as the raw response: back to the table.
    await page.click(".yasr .select_table");
    await page.waitForSelector(".yasr table tbody tr");
    report.check_rows = await page.$$eval(".yasr table tbody tr", (rows) =>
      rows.map((row) => [...row.querySelectorAll("td")].map((cell) => cell.textContent.trim())),
    );
  }
} catch (error) {
  report.failure = String(error && error.stack ? error.stack : error);
} finally {
  await browser.close();
}
report.foreign_requests = report.requests.filter((url) => {
  if (url.startsWith("data:")) return false;
  return new URL(url).origin !== base.origin;
});
console.log(JSON.stringify(report));
