// Several reference IdPs in one Node process, for a test suite that starts many stacks (the mutant matrix): Node
// starts once and its JIT stays warm, while every stack still meets an IdP of its own, a fresh Provider instance
// (idp.js: its own store, accounts, mutants, keys, caches, port and TLS server). Driven by conformance.reference.idp.
// host (IdpHost) through JSON lines:
//   stdin  {"op": "start", "id": ID, "args": [provider.js arguments...], "log": PATH}
//   ANSWERS {"op": "start", "id": ID, "ok": true}  once it listens, or  {"op": "start", "id": ID, "ok": false,
//          "error": MESSAGE}  (its log says more; the other instances keep serving)
//   stdin  {"op": "stop", "id": ID}  ->  ANSWERS {"op": "stop", "id": ID, "ok": true}  once its server has closed
// ANSWERS is the file descriptor given by --answers-fd (not stdout, where the library prints its notices). Each
// instance writes what provider.js would print to its own log file; the host's own output is the host's. The host exits when stdin ends (whoever
// started it is gone). NODE_EXTRA_CA_CERTS is read once per process: every instance's outbound fetches (CIMD
// documents, JWKS) trust that one CA, so every stack it serves must use it.

import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { parseArgs } from 'node:util';

import { parseProviderArgs, startIdp } from './idp.js';

const { values: options } = parseArgs({ options: { 'answers-fd': { type: 'string' } } });
const answers = fs.createWriteStream(null, { fd: Number(options['answers-fd']) });
const instances = new Map(); // id -> {log, ready: a promise of startIdp()'s handle}

function answer(message) {
  answers.write(`${JSON.stringify(message)}\n`);
}

function describe(err) {
  return err?.stack ?? String(err);
}

function endLog(log, text = '') {
  if (log.writableEnded) return Promise.resolve();
  return new Promise((resolve) => { log.end(text, resolve); });
}

async function start({ id, args: argv, log: logPath }) {
  if (instances.has(id)) throw new Error(`instance ${id} exists`);
  const log = fs.createWriteStream(null, { fd: fs.openSync(logPath, 'w') }); // a bad path fails this start
  const write = (text) => { if (!log.writableEnded) log.write(text); };
  const ready = (async () => {
    const args = parseProviderArgs(argv);
    // What Koa would print to stderr (errors no route handled) goes to the instance's log.
    const idp = await startIdp(args, { onError: (err) => write(`${describe(err)}\n`) });
    write(`idp listening on https://${args.host}:${args.port} issuer=${idp.config.issuer}\n`);
    return idp;
  })();
  const entry = { log, ready };
  instances.set(id, entry);
  try {
    await ready;
  } catch (err) {
    if (instances.get(id) === entry) instances.delete(id);
    await endLog(log, `${describe(err)}\n`);
    throw err;
  }
}

async function stop({ id }) {
  const entry = instances.get(id);
  if (!entry) return; // never started, or its start failed: nothing to close
  instances.delete(id);
  const idp = await entry.ready.catch(() => undefined); // a stop during the start waits for it
  await idp?.close();
  await endLog(entry.log);
}

const handlers = { start, stop };

async function handle(line) {
  let command;
  try {
    command = JSON.parse(line);
  } catch (err) {
    answer({ ok: false, error: `not JSON: ${err.message}` });
    return;
  }
  const { op, id } = command;
  try {
    if (!handlers[op]) throw new Error(`unknown op ${op}`);
    await handlers[op](command);
    answer({ op, id, ok: true });
  } catch (err) {
    answer({ op, id, ok: false, error: String(err?.message ?? err) });
  }
}

// A failure in one instance's code outside a request (a timer, a stray rejection) must not end the others.
process.on('uncaughtException', (err) => { process.stderr.write(`uncaught: ${describe(err)}\n`); });
process.on('unhandledRejection', (err) => { process.stderr.write(`unhandled rejection: ${describe(err)}\n`); });

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => { if (line.trim()) handle(line); });
lines.on('close', () => process.exit(0));
