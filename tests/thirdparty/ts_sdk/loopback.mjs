// Preloaded with `node --import`: a server that listens without naming a host binds 127.0.0.1 instead of every
// interface, so the unmodified SDK example stays on loopback (the project's tests never listen elsewhere).
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenOnLoopback(...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    const [port, ...rest] = args;
    const host = typeof rest[0] === 'string' ? rest.shift() : '127.0.0.1';
    return listen.call(this, Number(port), host, ...rest);
  }
  if (args[0] && typeof args[0] === 'object' && args[0].host === undefined && args[0].path === undefined) {
    return listen.call(this, { ...args[0], host: '127.0.0.1' }, ...args.slice(1));
  }
  return listen.apply(this, args);
};
