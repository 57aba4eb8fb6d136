/** The maximum age (docs/scheduler.md) held by the freshness scheduler. */
import { describe, it } from 'vitest';
import { useHarness } from '../../support/harness.ts';
import { expectMaxAgeHeld } from '../../support/max-age.ts';

describe('maximum age, freshness scheduler', () => {
  const fixture = useHarness();

  it('holds for every stream of an over-asked relay', () => expectMaxAgeHeld(fixture, 'freshness'));
});
