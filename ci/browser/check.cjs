// Renders a retrylab report.html in headless Chromium and checks it (run by .ci/browser-test).
//
// usage: node check.cjs REPORT_DIR OUT_DIR INSTALL_DIR
// Exit 0 when every check passes, 1 when one fails (each failure is printed on stderr).
"use strict";

const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");
const { pathToFileURL } = require("url");

const [reportDir, outDir, installDir] = process.argv.slice(2);
const { chromium } = createRequire(path.join(installDir, "package.json"))("playwright-core");

const CHROMIUM = process.env.BROWSER_TEST_CHROMIUM || "/usr/bin/chromium";
// Required on this machine's closed network; playwright makes a fresh, empty user-data-dir.
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const DESKTOP = { width: 1400, height: 900 };
// The summary (#summary: what to pick, the headline) must fit a few screens at DESKTOP.
const SUMMARY_MAX_HEIGHT = 4000;
const PHONE = { width: 390, height: 844 };
const TIMEOUT_MS = 30000;

const failures = [];
const fail = (msg) => failures.push(msg);

function readCharts() {
  const file = path.join(reportDir, "report.json");
  if (!fs.existsSync(file)) {
    fail(`${file}: no such file`);
    return null;
  }
  let json;
  try {
    json = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    fail(`${file}: cannot read it as JSON: ${e.message}`);
    return null;
  }
  if (!Array.isArray(json.charts)) {
    fail(`${file}: no top-level array "charts"`);
    return null;
  }
  if (json.charts.length === 0) {
    fail(`${file}: "charts" is empty; a report has at least one chart`);
  }
  return json.charts;
}

// Watches one page: console errors, uncaught exceptions, failed requests, and every request
// other than the report itself (aborted, so the page never reaches the network).
const blocked = new Set();

function watch(page, reportUrl) {
  page.on("console", (m) => {
    if (m.type() === "error") {
      const loc = m.location();
      // Chromium logs each blocked request too; it is reported once, as a request, below.
      if (loc && blocked.has(loc.url) && m.text().startsWith("Failed to load resource")) return;
      const at = loc && loc.url ? ` (at ${loc.url}:${loc.lineNumber + 1})` : "";
      fail(`console error: ${m.text()}${at}`);
    }
  });
  page.on("pageerror", (e) => fail(`uncaught exception in the page: ${e.message}`));
  page.on("requestfailed", (r) => {
    if (r.url() === reportUrl) {
      fail(`the report itself failed to load: ${r.failure() && r.failure().errorText}`);
    }
  });
  page.on("request", (r) => {
    if (r.url() !== reportUrl) {
      blocked.add(r.url());
      fail(
        `the page is not self-contained: it requested ${r.resourceType()} ${r.url()}` +
          " (a report must inline its CSS, fonts, images and charts; no script, no link)",
      );
    }
  });
  return page.route("**/*", (route) =>
    route.request().url() === reportUrl ? route.continue() : route.abort("blockedbyclient"),
  );
}

async function open(browser, label, viewport, extra, reportUrl) {
  const context = await browser.newContext({ viewport, ...extra });
  // Also block at the context level: requests from workers or frames come through here.
  await context.route("**/*", (route) =>
    route.request().url() === reportUrl ? route.continue() : route.abort("blockedbyclient"),
  );
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  await watch(page, reportUrl);
  try {
    await page.goto(reportUrl, { waitUntil: "load", timeout: TIMEOUT_MS });
  } catch (e) {
    fail(`${label}: the page did not load: ${e.message.split("\n")[0]}`);
    return null;
  }
  // Let late console messages and requests (timers, lazy images) arrive.
  await page.waitForTimeout(300);
  return page;
}

async function svgBoxes(page) {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll("svg")).map((s, i) => {
      const r = s.getBoundingClientRect();
      const box = s.closest("[id]");
      return { i, id: s.id || (box ? box.id : ""), width: r.width, height: r.height };
    }),
  );
}

// Every element that scrolls sideways inside the page (its content wider than its box), the
// page itself included: at most five, each named.
async function scrollingSideways(page) {
  return page.evaluate(() => {
    const out = [];
    for (const el of [document.scrollingElement, ...document.body.querySelectorAll("*")]) {
      // Inside an <svg>, boxes are the drawing's own (a label's box is its text's).
      if (el instanceof SVGElement && el.tagName.toLowerCase() !== "svg") continue;
      if (el.clientWidth === 0 || el.scrollWidth <= el.clientWidth + 1) continue;
      let name = el.tagName.toLowerCase();
      if (el.id) name += `#${el.id}`;
      else if (typeof el.className === "string" && el.className.trim())
        name += `.${el.className.trim().split(/\s+/).join(".")}`;
      const inside = el.closest("[id]");
      const where = inside && inside !== el ? ` in #${inside.id}` : "";
      out.push(`<${name}>${where}: content ${el.scrollWidth} px wide in a ${el.clientWidth} px box`);
      if (out.length === 5) break;
    }
    return out;
  });
}

// Opens every <details> (folded model sections, diagrams) so that what is inside lays out.
async function unfold(page) {
  await page.evaluate(() => {
    for (const d of document.querySelectorAll("details")) d.open = true;
  });
}

// The counterexamples (ul.cx li) without a sequence diagram: neither one of their own
// (details.diagram holding one <svg>) nor a link to an item that has one.
async function withoutDiagram(page) {
  return page.evaluate(() => {
    const has = (li) => {
      const d = li.querySelector("details.diagram");
      return d !== null && d.querySelectorAll("svg").length === 1;
    };
    const out = [];
    for (const li of document.querySelectorAll("ul.cx > li")) {
      if (has(li)) continue;
      const link = li.querySelector('a[href^="#"]');
      const target = link ? document.getElementById(link.getAttribute("href").slice(1)) : null;
      if (target && has(target)) continue;
      out.push(li.id || li.textContent.slice(0, 80));
    }
    return out;
  });
}

// The outermost elements that stick out past the right edge of the viewport.
async function overflowing(page, width) {
  return page.evaluate((vw) => {
    const out = [];
    for (const el of document.body.querySelectorAll("*")) {
      const r = el.getBoundingClientRect();
      if (r.right <= vw + 1 || r.width === 0) continue;
      const parent = el.parentElement;
      const pr = parent ? parent.getBoundingClientRect() : null;
      if (parent && parent !== document.body && pr.right > vw + 1) continue;
      let name = el.tagName.toLowerCase();
      if (el.id) name += `#${el.id}`;
      else if (typeof el.className === "string" && el.className.trim())
        name += `.${el.className.trim().split(/\s+/).join(".")}`;
      out.push(`<${name}> ${Math.round(r.width)} px wide, right edge at ${Math.round(r.right)} px`);
      if (out.length === 5) break;
    }
    return out;
  }, width);
}

// A full-page screenshot of a long report makes Chromium lay out and paint the whole page
// at once (about a minute for the bundled report): the screenshot keeps the top of the page
// (the headline, the comparisons and the matrix come first), at most this many pixels, by
// growing the viewport to that height.
const SHOT_MAX_HEIGHT = 6000;

async function shot(page, file, width) {
  const height = await page.evaluate(() => document.scrollingElement.scrollHeight);
  await page.setViewportSize({ width, height: Math.min(height, SHOT_MAX_HEIGHT) });
  await page.screenshot({ path: file, timeout: 120000 });
}

// Chromium on a loaded CI machine now and then dies as it starts (seen: SIGSEGV before its
// first page, "Target page, context or browser has been closed"); that says nothing of the
// report, so a failed start is tried again, at most LAUNCH_TRIES times in all.
const LAUNCH_TRIES = 3;

async function launch() {
  for (let attempt = 1; ; attempt++) {
    try {
      return await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: FLAGS,
        timeout: 60000,
      });
    } catch (e) {
      if (attempt >= LAUNCH_TRIES) throw e;
      const first = String(e && e.message ? e.message : e).split("\n")[0];
      process.stderr.write(
        `browser-test: chromium did not start (try ${attempt} of ${LAUNCH_TRIES}): ${first}; trying again\n`,
      );
    }
  }
}

async function main() {
  const charts = readCharts();
  const reportFile = path.resolve(reportDir, "report.html");
  if (!fs.existsSync(reportFile)) {
    fail(`${reportFile}: no such file`);
    return null;
  }
  const reportUrl = pathToFileURL(reportFile).href;
  fs.mkdirSync(outDir, { recursive: true });
  const shotDesktop = path.join(outDir, "report-screenshot.png");
  const shotPhone = path.join(outDir, "report-phone.png");
  const shotChart = path.join(outDir, "report-chart.png");

  const browser = await launch();
  const summary = { charts: 0, shots: [], browser: browser.version() };
  try {
    // Desktop: the summary's height as the page opens; then, every <details> open, count
    // and measure the charts and diagrams, look for sideways scrolling, take a screenshot.
    const page = await open(browser, "desktop", DESKTOP, {}, reportUrl);
    if (page) {
      const summaryHeight = await page.evaluate(() => {
        const s = document.getElementById("summary");
        return s ? s.getBoundingClientRect().height : null;
      });
      if (summaryHeight === null) {
        fail("desktop: no #summary element (what to pick and the headline, first on the page)");
      } else if (summaryHeight > SUMMARY_MAX_HEIGHT) {
        fail(
          `desktop: the summary (#summary) is ${Math.round(summaryHeight)} px tall at ` +
            `${DESKTOP.width} px wide; at most ${SUMMARY_MAX_HEIGHT} px, a few screens`,
        );
      }
      summary.summaryHeight = summaryHeight;
      await unfold(page);
      const sideways = await scrollingSideways(page);
      if (sideways.length) {
        fail(
          `desktop: at ${DESKTOP.width} px wide something scrolls sideways: ` +
            sideways.join("; ") +
            ". A table or chart must fit the window (wrap its cells, split or transpose it)",
        );
      }
      const missingDiagrams = await withoutDiagram(page);
      for (const id of missingDiagrams.slice(0, 5)) {
        fail(`desktop: counterexample ${id} has no sequence diagram (details.diagram with one <svg>)`);
      }
      const diagrams = await page.evaluate(() => document.querySelectorAll("details.diagram svg").length);
      summary.diagrams = diagrams;
      const boxes = await svgBoxes(page);
      summary.charts = boxes.length - diagrams;
      if (boxes.length === 0) fail("desktop: the page has no <svg> element: no chart rendered");
      if (charts && boxes.length !== charts.length + diagrams) {
        fail(
          `desktop: the page has ${boxes.length} <svg> elements but report.json lists ` +
            `${charts.length} charts and the page has ${diagrams} diagrams; each chart is ` +
            "exactly one <svg> in its <figure>, each diagram one in its details.diagram",
        );
      }
      // Each chart of report.json is a <figure id="ID"> holding exactly one <svg>.
      if (charts) {
        const missing = await page.evaluate(
          (ids) =>
            ids.filter((id) => {
              const f = document.getElementById(id);
              return !f || f.tagName !== "FIGURE" || f.querySelectorAll("svg").length !== 1;
            }),
          charts.map((c) => c.id),
        );
        for (const id of missing.slice(0, 10)) {
          fail(`desktop: chart ${id} of report.json is not a <figure id> holding one <svg>`);
        }
        if (missing.length > 10) fail(`desktop: ${missing.length - 10} more charts missing`);
        if (charts.length > 0 && missing.length === 0) {
          // One chart on its own, for a look at the drawing itself.
          const first = page.locator(`[id="${charts[0].id}"]`);
          await first.screenshot({ path: shotChart, timeout: 60000 });
          summary.shots.push(shotChart);
        }
      }
      for (const b of boxes) {
        if (!(b.width > 0 && b.height > 0)) {
          const which = charts && charts[b.i] && charts[b.i].id ? ` (chart ${charts[b.i].id}?)` : "";
          fail(
            `desktop: <svg> number ${b.i + 1}${b.id ? ` in #${b.id}` : ""}${which} renders ` +
              `${b.width} x ${b.height} px; a chart or diagram must have a non-zero size`,
          );
        }
      }
      await shot(page, shotDesktop, DESKTOP.width);
      summary.shots.push(shotDesktop);
    }

    // Phone: a 390 px wide mobile viewport; the page must not scroll sideways.
    const phone = await open(
      browser,
      "phone",
      PHONE,
      { isMobile: true, hasTouch: true, deviceScaleFactor: 1 },
      reportUrl,
    );
    if (phone) {
      await unfold(phone);
      const meta = await phone.evaluate(() => {
        const m = document.querySelector('meta[name="viewport"]');
        return m ? m.getAttribute("content") || "" : null;
      });
      if (meta === null || !/width\s*=\s*device-width/.test(meta)) {
        fail(
          'phone: no <meta name="viewport" content="width=device-width, initial-scale=1">: ' +
            "a phone lays the page out 980 px wide and shrinks it, unreadable on a phone",
        );
      }
      // Measured against the 390 px of the screen, not window.innerWidth: a mobile browser
      // zooms out to show content that overflows, which widens innerWidth.
      const scrollWidth = await phone.evaluate(() => document.scrollingElement.scrollWidth);
      if (scrollWidth > PHONE.width + 1) {
        const culprits = await overflowing(phone, PHONE.width);
        fail(
          `phone: at ${PHONE.width} px wide the page scrolls horizontally (content is ` +
            `${scrollWidth} px wide), not readable on a phone; wider than the screen: ` +
            (culprits.length ? culprits.join("; ") : "(no single element found)") +
            ". Let wide tables scroll in their own box (overflow-x: auto) and charts shrink " +
            "(max-width: 100%; height: auto)",
        );
      }
      for (const b of await svgBoxes(phone)) {
        if (!(b.width > 0 && b.height > 0)) {
          fail(`phone: <svg> number ${b.i + 1} renders ${b.width} x ${b.height} px`);
        }
      }
      await shot(phone, shotPhone, PHONE.width);
      summary.shots.push(shotPhone);
    }
  } finally {
    await browser.close();
  }
  return summary;
}

main()
  .then((summary) => {
    // A message can be recorded twice (desktop and phone load the same page).
    const unique = [...new Set(failures)];
    if (unique.length) {
      for (const f of unique) console.error(`browser-test: FAIL: ${f}`);
      if (summary && summary.shots.length) {
        console.error(`browser-test: screenshots for a look: ${summary.shots.join(", ")}`);
      }
      process.exit(1);
    }
    console.log(
      `browser-test: ${summary.browser}: ${summary.charts} charts and ${summary.diagrams} ` +
        "sequence diagrams rendered, each non-empty; every counterexample has its diagram;",
    );
    console.log(
      `browser-test: the summary is ${Math.round(summary.summaryHeight)} px tall at ` +
        `${DESKTOP.width} px (at most ${SUMMARY_MAX_HEIGHT}); nothing scrolls sideways there;`,
    );
    console.log("browser-test: no console error, no page error, no request but the report;");
    console.log(`browser-test: no horizontal scroll at ${PHONE.width} px;`);
    console.log(`browser-test: screenshots: ${summary.shots.join(", ")}`);
    process.exit(0);
  })
  .catch((e) => {
    for (const f of [...new Set(failures)]) console.error(`browser-test: FAIL: ${f}`);
    console.error(`browser-test: FAIL: ${e && e.stack ? e.stack : e}`);
    process.exit(1);
  });
