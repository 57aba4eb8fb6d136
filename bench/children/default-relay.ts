/**
 * @module bench/children/default-relay
 * A relay with every option at its default (as `market-relay serve --upstream URL` starts it), against
 * the simulator child at BENCH_UPSTREAM: the relay `npm run soak -- --attacks` attacks. Its CPU is
 * what the attack table reports.
 */
import pino from 'pino';
import { parseCommandLine } from '../../src/config/config.ts';
import { startRelay } from '../../src/relay-server.ts';
import { serveIpc } from '../lib/ipc.ts';
import { sampleUsage } from '../lib/usage.ts';

const command = parseCommandLine(
  // The record's own cost is to be measured apart (issue 47); these baselines stay comparable.
  [
    'serve',
    '--upstream',
    process.env.BENCH_UPSTREAM ?? '',
    '--port',
    '0',
    '--log-level',
    'silent',
    '--history',
    'off',
  ],
  {},
);
if (command.command !== 'serve') throw new Error('expected the serve command');
const relay = await startRelay(command.config, pino({ level: 'silent' }));

serveIpc({
  ready: () => ({ url: relay.url }),
  usage: () => sampleUsage(),
  streams: () => relay.registry.size,
});
process.on('SIGTERM', () => {
  void relay.close().finally(() => process.exit(0));
});
