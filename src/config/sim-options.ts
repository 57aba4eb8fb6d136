/**
 * @module config/sim-options
 * The simulator's options, which `sim` and `serve --upstream sim` share: its markets, seed and
 * profile (docs/upstream.md).
 */
import { z } from 'zod';
import { allSimulatorProfileNames } from '../sim/profile.ts';
import { integerOption, type OptionSpec } from './option-spec.ts';

/** The name of the simulated markets' option, `--markets` (a count; the channel of that name is another thing). */
export const MARKETS_OPTION = 'markets';
export const markets = integerOption({
  env: 'SIM_MARKETS',
  doc: 'simulated markets (`sim`, and `serve --upstream sim`)',
  min: 1,
  max: 10_000,
  default: '50',
  help: 'number of simulated markets',
});
export const seed = integerOption({
  env: 'SIM_SEED',
  doc: 'simulator seed',
  min: -(2 ** 31),
  max: 2 ** 31 - 1,
  default: '1',
  help: 'simulator seed (same seed, same markets)',
});
export const simProfile: OptionSpec = {
  env: 'SIM_PROFILE',
  doc: "`sim` only: the simulator's answers where upstream's interface leaves them open, and how they travel: `default`, `terse`, `capped`, `verbose` or `redirect` ([docs/upstream.md](upstream.md#open-choices-and-simulator-profiles))",
  schema: z.enum(allSimulatorProfileNames),
  default: 'default',
  expected: `one of ${allSimulatorProfileNames.join(', ')}`,
  placeholder: 'NAME',
  help: "simulator's answers where upstream's interface leaves them open (docs/upstream.md)",
};
