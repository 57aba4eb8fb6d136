/** The maximum age (docs/scheduler.md) held by the round-robin scheduler too. */
import { describe, it } from 'vitest';
import { useHarness } from '../../support/harness.ts';
import { expectMaxAgeHeld } from '../../support/max-age.ts';

describe('maximum age, round-robin scheduler', () => {
  const fixture = useHarness();

  it('holds for every stream of an over-asked relay', () => expectMaxAgeHeld(fixture, 'round-robin'));
});
