/* global process, console */
/**
 * The reference Bluesky data server for test/system/bluesky-pds.test.ts, run with the Node 22 that
 * test/conformance installs (the PDS needs Node >= 22; the service runs on Node 20).
 *
 * Starts `@atproto/dev-env`'s network without an AppView (an in-memory PLC directory and one PDS, whose SQLite
 * files and blobs go to a temporary folder removed on exit), creates two accounts (alice.test posts, bob.test is
 * mentioned), signs in as alice with her main password and makes an app password, which is all the service is
 * given. It also serves a small checker beside the PDS, so that the test (on Node 20) can use the Bluesky client
 * library's own code: POST /check {"records": [...]} answers, per record, whether
 * `lexicons.assertValidRecord('app.bsky.feed.post', …)` accepts it and the facets `RichText.detectFacets` finds
 * in its text.
 *
 * Prints one line, `READY {"pds":…,"checker":…,"alice":{…},"bob":{…}}`, then runs until stdin closes or a
 * SIGTERM/SIGINT arrives.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// dev-env puts the PDS's data and blobs under os.tmpdir(): a folder of our own, removed on the way out.
const scratch = mkdtempSync(join(tmpdir(), 'bluesky-pds-'));
process.env.TMPDIR = scratch;

const { TestNetworkNoAppView } = await import('@atproto/dev-env');
const { AtpAgent, RichText, jsonToLex, lexicons } = await import('@atproto/api');

const network = await TestNetworkNoAppView.create({});
const pds = network.pds.url;

async function account(name) {
  const agent = new AtpAgent({ service: pds });
  const password = `${name}-main-password`;
  await agent.createAccount({ email: `${name}@example.com`, handle: `${name}.test`, password });
  return { agent, handle: `${name}.test`, did: agent.session.did, password };
}

const alice = await account('alice');
const bob = await account('bob');
const appPasswordName = 'publisher';
const appPassword = (await alice.agent.com.atproto.server.createAppPassword({ name: appPasswordName })).data.password;

/** Per record: the lexicon's verdict and the client library's facets for its text (mentions resolved at the PDS). */
async function check(record) {
  let valid = true;
  let error = null;
  try {
    lexicons.assertValidRecord('app.bsky.feed.post', jsonToLex(record));
  } catch (e) {
    valid = false;
    error = e instanceof Error ? e.message : String(e);
  }
  const rt = new RichText({ text: typeof record?.text === 'string' ? record.text : '' });
  await rt.detectFacets(alice.agent);
  return { valid, error, facets: rt.facets ?? [] };
}

const checker = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', async () => {
    try {
      if (req.method !== 'POST' || req.url !== '/check') throw new Error(`no such route ${req.method} ${req.url}`);
      const { records } = JSON.parse(body);
      const results = [];
      for (const record of records) results.push(await check(record));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
    } catch (e) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(e instanceof Error ? e.message : String(e));
    }
  });
});
await new Promise((resolve) => checker.listen(0, '127.0.0.1', resolve));

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  checker.close();
  try {
    await network.close();
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    process.exit(0);
  }
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();

const ready = {
  pds,
  checker: `http://127.0.0.1:${checker.address().port}`,
  alice: { handle: alice.handle, did: alice.did, password: alice.password, appPassword, appPasswordName },
  bob: { handle: bob.handle, did: bob.did },
};
console.log(`READY ${JSON.stringify(ready)}`);
