/**
 * @module test/support/property-runs
 * How many cases a property test tries: the file's own count, sized so the file stays within a few
 * seconds on a loaded two-core CI machine, or `PROPERTY_RUNS` for a deeper run
 * (`PROPERTY_RUNS=20000 npx vitest run test/protocol/compact.property.test.ts`).
 */
export function propertyRuns(ciRuns: number): number {
  const asked = Number(process.env.PROPERTY_RUNS);
  return Number.isInteger(asked) && asked > 0 ? asked : ciRuns;
}
