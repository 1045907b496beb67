// The live page of `agentmeterctl web` in a real Chromium, driven by
// puppeteer-core (tests/system/web.t): prints "RESULT 0|1 description"
// lines for the test to count. Everything it needs comes in the environment:
//   WEB_URL (with the secret), WEB_PORT, CHROMIUM, OUT (screenshots),
//   APPEND (a shell command that appends one call), RESTART (a shell command
//   that stops the daemon, appends one call, starts the daemon again),
//   WANT1/WANT2/WANT3 (today's cost as the page must show it after 0, 1, 2
//   appended calls), CALLS3 (the number of last calls expected at the end).
'use strict';
const { execSync } = require('child_process');
const path = require('path');
const puppeteer = require(process.env.PUPPETEER || 'puppeteer-core');
const E = process.env;
let failed = 0;
function result(ok, what, extra) {
  if (!ok) failed++;
  console.log(`RESULT ${ok ? 0 : 1} ${what}`);
  if (!ok && extra) console.log(`# ${String(extra).replace(/\n/g, '\n# ')}`);
}
const today = () => document.querySelector('#periods [data-period=today] .v')?.textContent ?? null;

(async () => {
  const browser = await puppeteer.launch({
    executablePath: E.CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-extensions',
           '--host-resolver-rules=MAP rebind.example 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
  });
  try {
    const page = await browser.newPage();
    const asked = [];
    page.on('request', (r) => asked.push(r.url()));
    await page.setViewport({ width: 1200, height: 1000 });
    await page.goto(E.WEB_URL, { waitUntil: 'domcontentloaded' });
    let shown = await page.waitForFunction((w) => {
      const v = document.querySelector('#periods [data-period=today] .v');
      return v && v.textContent === w;
    }, { timeout: 5000 }, E.WANT1).then(() => true, () => false);
    result(shown, `the page shows today's spend ${E.WANT1}`, await page.evaluate(today));
    const charts = await page.evaluate(() => document.querySelectorAll('#view figure.chart svg rect').length);
    result(charts > 0, `the month's cost chart is drawn (${charts} bars)`);
    const esc = await page.evaluate(() => ({
      text: document.body.innerText,
      tags: document.querySelectorAll('#view i, #calls i, #view u, #calls u').length,
    }));
    result(esc.text.includes('model-<i>a') && esc.text.includes('<u>proj') && esc.tags === 0,
           'names from the ledger are shown as text, never as markup', JSON.stringify(esc.tags));
    const status = await page.$eval('#status', (e) => e.textContent);
    result(status === 'live', `the page says it is live (${status})`);

    // a call appended now shows without a reload, within 3 s
    await page.evaluate(() => { window.__sameDocument = true; });
    execSync(E.APPEND);
    shown = await page.waitForFunction((w) => {
      const v = document.querySelector('#periods [data-period=today] .v');
      return v && v.textContent === w;
    }, { timeout: 3000 }, E.WANT2).then(() => true, () => false);
    result(shown, `an appended call shows within 3 s: today ${E.WANT2}`, await page.evaluate(today));
    result(await page.evaluate(() => window.__sameDocument === true), '... without a reload');
    const light = path.join(E.OUT, 'web-light.png'), dark = path.join(E.OUT, 'web-dark.png');
    await page.screenshot({ path: light, fullPage: true });
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.screenshot({ path: dark, fullPage: true });
    result(bg === 'rgb(13, 17, 23)', `the dark scheme applies (body ${bg})`);
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);

    // the daemon restarts with a call committed while it was away: the page
    // resumes with it, once
    execSync(E.RESTART);
    shown = await page.waitForFunction((w, n) => {
      const v = document.querySelector('#periods [data-period=today] .v');
      return v && v.textContent === w && document.querySelectorAll('#calls tr[data-key]').length === n &&
        document.getElementById('status').textContent === 'live';
    }, { timeout: 10000 }, E.WANT3, Number(E.CALLS3)).then(() => true, () => false);
    const after = await page.evaluate(() => {
      const keys = [...document.querySelectorAll('#calls tr[data-key]')].map((r) => r.dataset.key);
      return { today: document.querySelector('#periods [data-period=today] .v')?.textContent, keys,
               unique: new Set(keys).size };
    });
    result(shown && after.unique === after.keys.length,
           `after a daemon restart: today ${E.WANT3}, ${E.CALLS3} last calls, none twice`, JSON.stringify(after));
    result(await page.evaluate(() => window.__sameDocument === true), '... still without a reload');
    const own = `http://127.0.0.1:${E.WEB_PORT}/`;
    const foreign = asked.filter((u) => !u.startsWith(own));
    result(foreign.length === 0, 'the page asked nothing of anyone but its server', foreign.join(' '));

    // a phone: another page (puppeteer reloads one whose isMobile changes)
    const phone = await browser.newPage();
    await phone.setViewport({ width: 390, height: 844, isMobile: true });
    await phone.goto(E.WEB_URL, { waitUntil: 'domcontentloaded' });
    await phone.waitForSelector('#periods', { timeout: 5000 }).catch(() => {});
    const wide = await phone.evaluate(() => document.documentElement.scrollWidth);
    await phone.screenshot({ path: path.join(E.OUT, 'web-phone.png'), fullPage: true });
    result(wide <= 390, `a phone-sized viewport needs no sideways scroll (${wide}px)`);

    // without the secret, with a wrong one, and through a rebinding name
    const bare = await browser.newPage();
    let resp = await bare.goto(own, { waitUntil: 'load' });
    let body = await bare.evaluate(() => document.body.innerText);
    result(resp.status() === 401 && !/\$\d/.test(body) && !(await bare.$('#periods')),
           `without the secret: ${resp.status()}, no figure`, body);
    resp = await bare.goto(own + '?token=' + '0'.repeat(64), { waitUntil: 'load' });
    body = await bare.evaluate(() => document.body.innerText);
    result(resp.status() === 403 && !/\$\d/.test(body), `a wrong secret: ${resp.status()}, no figure`, body);
    resp = await bare.goto(E.WEB_URL.replace('127.0.0.1', 'rebind.example'), { waitUntil: 'load' });
    body = await bare.evaluate(() => document.body.innerText);
    result(resp.status() === 403 && !/\$\d/.test(body),
           `the secret URL under another host name (DNS rebinding): ${resp.status()}, no figure`, body);
  } catch (e) {
    result(false, 'the browser session ran to its end', e.stack);
  } finally {
    await browser.close();
  }
  process.exit(failed ? 1 : 0);
})();
