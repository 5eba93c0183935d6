// Reference authorization server of the conformance harness, one per process (what idp.js says it is). Started by
// conformance.reference.idp; settings come from one JSON file (--config) so that passwords never appear on a
// command line.
//
// Mutants (--mutant NAME) change exactly one behaviour each; see conformance/reference/idp/mutants.toml.

import { parseProviderArgs, startIdp } from './idp.js';

let server;

function shutdown() {
  if (!server) process.exit(0); // still starting: nothing to close
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 1000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

const args = parseProviderArgs(process.argv.slice(2));
const idp = await startIdp(args);
({ server } = idp);
process.stdout.write(`idp listening on https://${args.host}:${args.port} issuer=${idp.config.issuer}\n`);
